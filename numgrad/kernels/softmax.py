"""Softmax and log-softmax over the last dim, forward and backward, as row kernels: each row is read
from cache after its first pass, so a (4096, 1024) softmax costs one read and one write of memory."""
import functools

import numpy as np

from . import codegen, threads
from .cpu import LOOP_HEADER

# Loops that only map vectorise (exp included); sums and maxima use four independent lanes, since a
# single float accumulator is a chain of dependent adds that keeps LLVM from vectorising the loop.
_SOURCE = """
{header}
def _lanes_max(a, start, K):
    m0 = m1 = m2 = m3 = np.{dt}(-np.inf)
    q = K // 4 * 4
    for j in range(start, start + q, 4):
        m0 = a[j] if a[j] > m0 else m0
        m1 = a[j + 1] if a[j + 1] > m1 else m1
        m2 = a[j + 2] if a[j + 2] > m2 else m2
        m3 = a[j + 3] if a[j + 3] > m3 else m3
    for j in range(start + q, start + K):
        m0 = a[j] if a[j] > m0 else m0
    m0 = m1 if m1 > m0 else m0
    m2 = m3 if m3 > m2 else m2
    return m2 if m2 > m0 else m0


{header}
def _lanes_dot(a, b, start, K, use_b):
    s0 = s1 = s2 = s3 = np.float64(0)
    q = K // 4 * 4
    for j in range(start, start + q, 4):
        s0 += a[j] * (b[j] if use_b else np.{dt}(1))
        s1 += a[j + 1] * (b[j + 1] if use_b else np.{dt}(1))
        s2 += a[j + 2] * (b[j + 2] if use_b else np.{dt}(1))
        s3 += a[j + 3] * (b[j + 3] if use_b else np.{dt}(1))
    for j in range(start + q, start + K):
        s0 += a[j] * (b[j] if use_b else np.{dt}(1))
    return (s0 + s1) + (s2 + s3)


{header}
def forward(o0, o1, K, x, out, log):
    for o in range(o0, o1):
        base = o * K
        m = _lanes_max(x, base, K)
        for j in range(base, base + K):
            out[j] = {exp}(x[j] - m)
        s = _lanes_dot(out, out, base, K, False)
        if log:
            shift = m + np.{dt}(math.log(s))
            for j in range(base, base + K):
                out[j] = x[j] - shift
        else:
            r = np.{dt}(1) / np.{dt}(s)
            for j in range(base, base + K):
                out[j] = out[j] * r


{header}
def backward(o0, o1, K, g, y, out, log):
    for o in range(o0, o1):
        base = o * K
        t = np.{dt}(_lanes_dot(g, y, base, K, not log))
        if log:
            for j in range(base, base + K):
                out[j] = g[j] - {exp}(y[j]) * t
        else:
            for j in range(base, base + K):
                out[j] = y[j] * (g[j] - t)
"""


@functools.lru_cache(maxsize=None)
def _module(dtype_name):
    exp = "exp_f32" if dtype_name == "float32" else "math.exp"
    source = codegen.HEADER + _SOURCE.format(header=LOOP_HEADER, dt=dtype_name, exp=exp)
    return codegen.load_module(f"softmax_{dtype_name}", source)


def _rows(kernel, arrays, out_shape, dtype):
    K = out_shape[-1]
    flat = [np.ascontiguousarray(a).reshape(-1) for a in arrays]
    out = np.empty(flat[0].size, dtype)
    rows = flat[0].size // K if K else 0
    threads.over(kernel, rows, K, *flat, out, parallel=flat[0].size >= threads.PARALLEL_MIN)
    return out.reshape(out_shape)


def forward(x, log):
    """softmax (or log_softmax) of array `x` over its last dim."""
    return _rows(lambda a, b, K, x_, o: _module(x.dtype.name).forward(a, b, K, x_, o, log), [x], x.shape, x.dtype)


def backward(g, y, log):
    """The gradient for `g` flowing into softmax (log_softmax) output `y`, over the last dim."""
    return _rows(lambda a, b, K, g_, y_, o: _module(y.dtype.name).backward(a, b, K, g_, y_, o, log), [g, y],
                 y.shape, y.dtype)

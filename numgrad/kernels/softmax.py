"""Softmax and log-softmax over the last dim, forward and backward, as row kernels: each row is read
from cache after its first pass, so a (4096, 1024) softmax costs one read and one write of memory."""
import functools

import numpy as np

from . import codegen, threads
from .cpu import LOOP_HEADER

_SOURCE = """
{header}
def forward(o0, o1, K, x, out, log):
    for o in range(o0, o1):
        base = o * K
        m = np.{dt}(-np.inf)
        for j in range(K):
            v = x[base + j]
            m = v if v > m else m
        s = np.float64(0)
        for j in range(K):
            e = {exp}(x[base + j] - m)
            out[base + j] = e
            s += e
        if log:
            shift = m + np.{dt}(math.log(s))
            for j in range(K):
                out[base + j] = x[base + j] - shift
        else:
            r = np.{dt}(1) / np.{dt}(s)
            for j in range(K):
                out[base + j] = out[base + j] * r


{header}
def backward(o0, o1, K, g, y, out, log):
    for o in range(o0, o1):
        base = o * K
        s = np.float64(0)
        if log:
            for j in range(K):
                s += g[base + j]
            t = np.{dt}(s)
            for j in range(K):
                out[base + j] = g[base + j] - {exp}(y[base + j]) * t
        else:
            for j in range(K):
                s += g[base + j] * y[base + j]
            t = np.{dt}(s)
            for j in range(K):
                out[base + j] = y[base + j] * (g[base + j] - t)
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

"""CUDA reductions over the middle axis of (outer, K, inner): one thread block per output, shared-memory tree."""
import functools
import math

import numpy as np
from numba import cuda as nb_cuda

from .. import loader, lower
from . import kernels as cuda, runtime
from ...spec.table import REDUCTIONS

# Under the simulator a block of 1 or 2 threads is as good as 32 and much cheaper; on a GPU a block is at
# least one warp.
MIN_THREADS = 1 if cuda.SIMULATOR else 32


def reduction_source(update, acc_dtype_name, block=None):
    """kernel(x, out, idx, outer, K, inner): block b folds outputs m = b, b + gridDim, ... Each thread folds
    one contiguous chunk of K with `update` (the op table's statements on ACC, BEST, x_i, k); the partials
    are then combined pairwise in index order (chunk i with chunk i + s, the left one holding the lower
    positions), so a strict comparison keeps the first position on ties as the sequential fold does."""
    block = block or cuda.BLOCK
    return f"""{cuda.HEADER}

{cuda.KERNEL_DECORATOR}
def kernel(x, out, idx, outer, K, inner):
    s_acc = cuda.shared.array({block}, np.{acc_dtype_name})
    s_best = cuda.shared.array({block}, np.int64)
    tid = cuda.threadIdx.x
    nthreads = cuda.blockDim.x
    chunk = (K + nthreads - 1) // nthreads
    nt = (K + chunk - 1) // chunk  # threads with a non-empty chunk: always a prefix of the block
    k0 = tid * chunk
    k1 = min(k0 + chunk, K)
    for m in range(cuda.blockIdx.x, outer * inner, cuda.gridDim.x):
        o = m // inner
        base = o * K * inner + (m - o * inner)
        if k0 < K:
            acc = np.{acc_dtype_name}(x[base + k0 * inner])
            best = k0
            for k in range(k0 + 1, k1):
                x_i = np.{acc_dtype_name}(x[base + k * inner])
{lower.fold_statements(update, 16)}            s_acc[tid] = acc
            s_best[tid] = best
        cuda.syncthreads()
        s = 1
        while s < nt:  # the same bound in every thread: all of them reach each barrier
            if tid % (2 * s) == 0 and tid + s < nt:
                acc = s_acc[tid]
                best = s_best[tid]
                x_i = s_acc[tid + s]
                k = s_best[tid + s]
{lower.fold_statements(update, 16)}                s_acc[tid] = acc
                s_best[tid] = best
            cuda.syncthreads()
            s *= 2
        # slot 0 is written by thread 0 alone: no barrier is needed before the next output's chunk folds
        if tid == 0:
            out[m] = s_acc[0]
            idx[m] = s_best[0]
"""


@functools.cache
def reduction_kernel(name, update, acc_dtype_name):
    """The kernel for one reduction and accumulator dtype (it specialises on the input dtype)."""
    return loader.load_module(f"cuda_reduce_{name}_{acc_dtype_name}",
                               reduction_source(update, acc_dtype_name)).kernel


def layout(x, axes):
    """cpu.kernels._layout for a DeviceArray: a flat contiguous (outer, K, inner) buffer, reduced axes in
    the middle (a gathered copy on the GPU when they are not adjacent or the view is strided)."""
    nd = x.ndim
    if list(axes) != list(range(axes[0], axes[-1] + 1)):
        keep = [d for d in range(nd) if d not in axes]
        x = x.transpose(keep + list(axes))
        axes = tuple(range(len(keep), nd))
    shape = x.shape
    r0, r1 = axes[0], axes[-1] + 1
    return (x.contiguous().flat_buffer(), math.prod(shape[:r0]), math.prod(shape[r0:r1]),
            math.prod(shape[r1:]))


def threads_for(K):
    """A power of two covering K, capped at cuda.BLOCK (the shared arrays' length)."""
    return min(cuda.BLOCK, max(MIN_THREADS, 1 << (K - 1).bit_length()))


def run_reduction(name, update, x, outer, K, inner, acc_dtype_name, want_index=False):
    """Reduces the flat contiguous device array `x`, holding a C-ordered (outer, K, inner) array, over K
    (K >= 1). Returns flat device arrays (values in `acc_dtype_name`, int64 positions along K) of length
    outer * inner; the positions are meaningful for the selecting reductions (max, min) and `want_index`
    is accepted for cpu.run_reduction's interface (they are always computed)."""
    acc_dtype_name = np.dtype(acc_dtype_name).name
    m = outer * inner
    out = runtime.track(nb_cuda.device_array(m, acc_dtype_name))
    idx = runtime.track(nb_cuda.device_array(m, np.int64))
    if m:
        if K < 1:
            raise ValueError("run_reduction needs K >= 1")
        kernel = reduction_kernel(name, tuple(update), acc_dtype_name)
        kernel[min(m, cuda.MAX_BLOCKS), threads_for(K)](x, out, idx, np.int64(outer), np.int64(K), np.int64(inner))
    return out, idx


# (name, input dtype, accumulator dtype) combinations the ops use: sum folds anything into int64 or float64,
# prod computes in its (cast) output dtype, max and min in the input dtype.
SUPPORTED = (
    [("sum", d, acc) for d in ("bool", "int64", "float32", "float64") for acc in ("int64", "float64")]
    + [("prod", d, d) for d in ("int64", "float32", "float64")]
    + [(op, d, d) for op in ("max", "min") for d in ("bool", "int64", "float32", "float64")]
)


def ptx_samples():
    """(kernel py_func, signature) for every supported combination, for numba.cuda.compile_ptx checks."""
    from numba.cuda import types

    def t(name):
        return types.boolean if name == "bool" else getattr(types, name)

    samples = []
    for op, dtype, acc in SUPPORTED:
        kernel = reduction_kernel(op, tuple(REDUCTIONS[op].update), acc)
        sig = types.void(t(dtype)[::1], t(acc)[::1], types.int64[::1], types.int64, types.int64, types.int64)
        samples.append((kernel.py_func, sig))
    return samples

"""CUDA batched matmul of strided views: a TILE x TILE shared-memory kernel, generated per dtype."""
import functools

import numpy as np

from .. import loader
from . import kernels as cuda

# Under the simulator every thread is a Python thread: 4 x 4 blocks keep the tests fast and still cover
# several tiles along each axis.
TILE = 4 if cuda.SIMULATOR else 16
DTYPES = ("float32", "float64")


def matmul_source(dtype_name, tile=None):
    """kernel(a, a_off, a_sb, a_si, a_sk, b, b_off, b_sb, b_sk, b_sj, out, batch, M, N, K): out[bi, i, j] =
    sum over k of a[a_off + bi*a_sb + i*a_si + k*a_sk] * b[b_off + bi*b_sb + k*b_sk + j*b_sj], accumulated in
    `dtype_name`. Blocks stride over (column tile, row tile, batch) as x, y, z, so any grid covers any size;
    the loop bounds depend on the block alone, so every thread of a block reaches every barrier."""
    t = tile or TILE
    return f"""{cuda.HEADER}

{cuda.KERNEL_DECORATOR}
def kernel(a, a_off, a_sb, a_si, a_sk, b, b_off, b_sb, b_sk, b_sj, out, batch, M, N, K):
    sa = cuda.shared.array(({t}, {t}), np.{dtype_name})
    sb = cuda.shared.array(({t}, {t}), np.{dtype_name})
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    for bi in range(cuda.blockIdx.z, batch, cuda.gridDim.z):
        a_b = a_off + bi * a_sb
        b_b = b_off + bi * b_sb
        for ti in range(cuda.blockIdx.y * {t}, M, cuda.gridDim.y * {t}):
            i = ti + ty
            for tj in range(cuda.blockIdx.x * {t}, N, cuda.gridDim.x * {t}):
                j = tj + tx
                acc = np.{dtype_name}(0)
                for k0 in range(0, K, {t}):
                    # thread (ty, tx) loads A[i, k0 + tx] and B[k0 + ty, j]; outside the matrices it loads 0
                    ka = k0 + tx
                    if i < M and ka < K:
                        sa[ty, tx] = a[a_b + i * a_si + ka * a_sk]
                    else:
                        sa[ty, tx] = 0
                    kb = k0 + ty
                    if kb < K and j < N:
                        sb[ty, tx] = b[b_b + kb * b_sk + j * b_sj]
                    else:
                        sb[ty, tx] = 0
                    cuda.syncthreads()
                    # only threads on the output, over the tile's columns inside K: padding is never
                    # multiplied (0 * inf would be NaN)
                    if i < M and j < N:
                        for kk in range(min({t}, K - k0)):
                            acc += sa[ty, kk] * sb[kk, tx]
                    cuda.syncthreads()
                if i < M and j < N:
                    out[(bi * M + i) * N + j] = acc
"""


@functools.cache
def matmul_kernel(dtype_name):
    if dtype_name not in DTYPES:
        raise TypeError(f"CUDA matmul supports {DTYPES}, not {dtype_name}")
    return loader.load_module(f"cuda_matmul_{dtype_name}", matmul_source(dtype_name)).kernel


def _grid(n):
    return max(1, min(cuda.MAX_BLOCKS, n))


def matmul(a, a_offset, a_strides, b, b_offset, b_strides, out, batch, M, N, K):
    """out (flat contiguous, batch * M * N, C order) = A @ B, where A[bi, i, k] is
    a[a_offset + bi*a_strides[0] + i*a_strides[1] + k*a_strides[2]] and B[bi, k, j] likewise in b (strides
    in elements; 0 broadcasts). a, b and out share one dtype, float32 or float64. Returns out."""
    dtype_name = np.dtype(a.dtype).name
    if np.dtype(b.dtype).name != dtype_name or np.dtype(out.dtype).name != dtype_name:
        raise TypeError(f"CUDA matmul needs one dtype, got {a.dtype}, {b.dtype} -> {out.dtype}")
    if batch * M * N == 0:
        return out
    kernel = matmul_kernel(dtype_name)
    grid = (_grid(-(-N // TILE)), _grid(-(-M // TILE)), _grid(batch))
    i64 = np.int64
    kernel[grid, (TILE, TILE)](a, i64(a_offset), *map(i64, a_strides), b, i64(b_offset), *map(i64, b_strides),
                               out, i64(batch), i64(M), i64(N), i64(K))
    return out


def ptx_samples():
    """(kernel py_func, signature) for each dtype, for numba.cuda.compile_ptx checks."""
    from numba.cuda import types

    samples = []
    for dtype_name in DTYPES:
        arr, i64 = getattr(types, dtype_name)[::1], types.int64
        sig = types.void(arr, i64, i64, i64, i64, arr, i64, i64, i64, i64, arr, i64, i64, i64, i64)
        samples.append((matmul_kernel(dtype_name).py_func, sig))
    return samples

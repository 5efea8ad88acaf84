"""Block reductions (cuda_reduce) and the tiled matmul (cuda_matmul) under the simulator, against the CPU
kernel, numpy and torch on tiny shapes."""
import numpy as np
import pytest
import torch
from numba import cuda

from numgrad.kernels.cpu import kernels as cpu
from numgrad.kernels.cuda import matmul as cuda_matmul, reduce as cuda_reduce
from numgrad.kernels.cuda.kernels import BLOCK
from numgrad.spec.table import REDUCTIONS

RNG = np.random.default_rng(0)

# (outer, K, inner): inner == 1, K == 1, K not a multiple of the block, K above the block (chunks of 2 and 3
# elements per thread under the simulator)
SHAPES = [(1, 1, 1), (3, 1, 4), (1, 70, 1), (2, 33, 3), (4, 5, 1), (1, 7, 6), (2, BLOCK, 2)]


def gpu_reduce(op, x, acc):
    outer, K, inner = x.shape
    out, idx = cuda_reduce.run_reduction(op, REDUCTIONS[op].update, cuda.to_device(x.reshape(-1)), outer, K,
                                         inner, acc, want_index=True)
    assert out.dtype == np.dtype(acc) and idx.dtype == np.int64 and out.shape == (outer * inner,)
    return out.copy_to_host().reshape(outer, inner), idx.copy_to_host().reshape(outer, inner)


def cpu_reduce(op, x, acc):
    out, idx = cpu.run_reduction(op, REDUCTIONS[op].update, x, (1,), np.dtype(acc))
    outer, _, inner = x.shape
    return out.reshape(outer, inner), idx.reshape(outer, inner)


def check_select(op, x):
    """max/min: the CPU kernel's values and positions exactly, and torch's (first position on ties,
    the first NaN wins)."""
    out, idx = gpu_reduce(op, x, x.dtype)
    ref, ref_idx = cpu_reduce(op, x, x.dtype)
    np.testing.assert_array_equal(out, ref)
    np.testing.assert_array_equal(idx, ref_idx)
    values, indices = getattr(torch, op)(torch.from_numpy(x), dim=1)
    np.testing.assert_array_equal(out, values.numpy())
    np.testing.assert_array_equal(idx, indices.numpy())


@pytest.mark.parametrize("shape", SHAPES)
def test_sum_prod_float64(shape):
    x = RNG.standard_normal(shape)
    out, _ = gpu_reduce("sum", x, "float64")
    np.testing.assert_allclose(out, x.sum(1), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(out, cpu_reduce("sum", x, "float64")[0], rtol=1e-12, atol=1e-12)
    y = 1 + 0.05 * x
    out, _ = gpu_reduce("prod", y, "float64")
    np.testing.assert_allclose(out, y.prod(1), rtol=1e-12)


@pytest.mark.parametrize("shape", [(2, 33, 3), (1, 70, 1)])
def test_float32_sum_in_float64_and_prod_in_float32(shape):
    x = RNG.standard_normal(shape).astype(np.float32)
    out, _ = gpu_reduce("sum", x, "float64")
    assert out.dtype == np.float64
    np.testing.assert_allclose(out, x.astype(np.float64).sum(1), rtol=1e-12, atol=1e-12)
    y = (1 + 0.05 * x).astype(np.float32)
    out, _ = gpu_reduce("prod", y, "float32")
    assert out.dtype == np.float32
    np.testing.assert_allclose(out, torch.from_numpy(y).prod(1).numpy(), rtol=1e-5)


@pytest.mark.parametrize("shape", [(3, 1, 4), (2, 33, 3), (1, 70, 1)])
def test_bool_and_int64_sum_prod_in_int64(shape):
    b = RNG.random(shape) < 0.5
    out, _ = gpu_reduce("sum", b, "int64")
    np.testing.assert_array_equal(out, b.sum(1, dtype=np.int64))
    assert out.dtype == np.int64
    n = RNG.integers(-1000, 1000, shape)
    out, _ = gpu_reduce("sum", n, "int64")
    np.testing.assert_array_equal(out, n.sum(1))
    p = RNG.integers(-2, 3, shape)
    out, _ = gpu_reduce("prod", p, "int64")
    np.testing.assert_array_equal(out, torch.from_numpy(p).prod(1).numpy())


@pytest.mark.parametrize("op", ["max", "min"])
@pytest.mark.parametrize("shape", SHAPES)
def test_select_ties_take_the_first_index(op, shape):
    check_select(op, RNG.integers(0, 3, shape))  # int64 with many ties
    check_select(op, RNG.integers(0, 3, shape).astype(np.float32))


@pytest.mark.parametrize("op", ["max", "min"])
def test_select_bool(op):
    x = RNG.random((2, 37, 3)) < 0.5
    x[0, :, 0] = True  # all equal rows: position 0
    x[1, :, 1] = False
    check_select(op, x)


@pytest.mark.parametrize("op", ["max", "min"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_select_nan_wins_and_stays(op, dtype):
    x = RNG.standard_normal((3, 67, 2)).astype(dtype)
    x[0, 50, 0] = np.nan  # one NaN late (another thread's chunk than the maximum's, usually)
    x[1, 3, 1] = x[1, 60, 1] = np.nan  # two NaNs: the first one's position
    x[2, 0, 0] = np.nan  # NaN at position 0
    x[2, 10, 1] = np.inf if op == "max" else -np.inf
    x[2, 40, 1] = x[2, 10, 1]  # tied infinities
    x[0, :, 1] = np.nan  # all NaN
    check_select(op, x)


def test_sum_with_nan_and_inf():
    x = RNG.standard_normal((2, 40, 2))
    x[0, 39, 0] = np.nan
    x[1, 0, 1] = np.inf
    out, _ = gpu_reduce("sum", x, "float64")
    np.testing.assert_allclose(out, x.sum(1), rtol=1e-12)


def test_many_outputs_grid_stride():
    # more outputs than blocks (the simulator's grid is tiny): every block folds several outputs
    x = RNG.integers(0, 4, (5, 9, 4)).astype(np.float64)
    check_select("max", x)
    out, _ = gpu_reduce("sum", x, "float64")
    np.testing.assert_array_equal(out, x.sum(1))


def test_empty_output():
    out, idx = cuda_reduce.run_reduction("sum", REDUCTIONS["sum"].update, cuda.to_device(np.zeros(0)), 0, 3, 2,
                                         "float64")
    assert out.shape == (0,) and idx.shape == (0,)


# ---- matmul


def storage_view(base, view):
    """(offset, strides) in elements of a numpy view of the flat `base`."""
    item = base.itemsize
    offset = (view.__array_interface__["data"][0] - base.__array_interface__["data"][0]) // item
    return offset, tuple(s // item for s in view.strides)


def gpu_matmul(a_base, a_view, b_base, b_view):
    batch, M, K = a_view.shape
    N = b_view.shape[2]
    assert b_view.shape[:2] == (batch, K)
    out = cuda.to_device(np.full(batch * M * N, np.nan, a_base.dtype))  # every element must be written
    a_off, a_st = storage_view(a_base, a_view)
    b_off, b_st = storage_view(b_base, b_view)
    r = cuda_matmul.matmul(cuda.to_device(a_base), a_off, a_st, cuda.to_device(b_base), b_off, b_st, out, batch,
                           M, N, K)
    assert r is out
    return out.copy_to_host().reshape(batch, M, N)


def tol(dtype):
    return {"rtol": 1e-5, "atol": 1e-5} if dtype == np.float32 else {"rtol": 1e-12, "atol": 1e-12}


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("batch,M,N,K", [(1, 1, 1, 1), (2, 5, 7, 3), (1, 9, 6, 13), (3, 4, 4, 8)])
def test_matmul_contiguous(dtype, batch, M, N, K):
    a = RNG.standard_normal(batch * M * K).astype(dtype)
    b = RNG.standard_normal(batch * K * N).astype(dtype)
    av, bv = a.reshape(batch, M, K), b.reshape(batch, K, N)
    out = gpu_matmul(a, av, b, bv)
    assert out.dtype == dtype
    np.testing.assert_allclose(out, (torch.from_numpy(av) @ torch.from_numpy(bv)).numpy(), **tol(dtype))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_matmul_transposed_views(dtype):
    batch, M, N, K = 2, 6, 5, 7
    a = RNG.standard_normal(batch * K * M).astype(dtype)
    b = RNG.standard_normal(batch * N * K).astype(dtype)
    av = a.reshape(batch, K, M).transpose(0, 2, 1)  # A^T storage: strides (K*M, 1, M)
    bv = b.reshape(batch, N, K).transpose(0, 2, 1)
    np.testing.assert_allclose(gpu_matmul(a, av, b, bv), av @ bv, **tol(dtype))
    bv2 = b.reshape(N, batch, K).transpose(1, 2, 0)  # batch not outermost
    np.testing.assert_allclose(gpu_matmul(a, av, b, bv2), av @ bv2, **tol(dtype))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_matmul_broadcast_batch_offset_and_negative_strides(dtype):
    M, N, K = 5, 3, 6
    a = RNG.standard_normal(2 + M * K).astype(dtype)
    b = RNG.standard_normal(3 * K * N + 1).astype(dtype)
    a2 = a[2:].reshape(M, K)  # offset 2
    av = np.broadcast_to(a2, (3, M, K))  # batch stride 0
    bv = b[1:].reshape(3, K, N)[:, ::-1, ::-1]  # negative strides
    assert storage_view(a, av)[1][0] == 0
    np.testing.assert_allclose(gpu_matmul(a, av, b, bv), av @ bv, **tol(dtype))
    bv1 = np.broadcast_to(b[:K * N].reshape(K, N), (3, K, N))
    av1 = a[2:].reshape(1, M, K)[:, ::2]  # row stride 2K
    av1 = np.broadcast_to(av1, (3,) + av1.shape[1:])
    np.testing.assert_allclose(gpu_matmul(a, av1, b, bv1), av1 @ bv1, **tol(dtype))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_matmul_k_zero_gives_zeros(dtype):
    a, b = np.zeros(1, dtype), np.zeros(1, dtype)
    av = np.lib.stride_tricks.as_strided(a, (2, 3, 0), (0, 0, a.itemsize))
    bv = np.lib.stride_tricks.as_strided(b, (2, 0, 5), (0, 0, b.itemsize))
    out = gpu_matmul(a, av, b, bv)
    np.testing.assert_array_equal(out, np.zeros((2, 3, 5), dtype))


def test_matmul_inf_does_not_meet_padding():
    # K = 5 leaves padding in the last K tile: an inf must not turn into NaN through 0 * inf
    a = np.full(2 * 5, np.inf)
    b = np.ones(5 * 3)
    out = gpu_matmul(a, a.reshape(1, 2, 5), b, b.reshape(1, 5, 3))
    np.testing.assert_array_equal(out, np.full((1, 2, 3), np.inf))


def test_matmul_rejects_mixed_dtypes():
    a = cuda.to_device(np.zeros(4, np.float32))
    b = cuda.to_device(np.zeros(4, np.float64))
    with pytest.raises(TypeError):
        cuda_matmul.matmul(a, 0, (0, 2, 1), b, 0, (0, 2, 1), cuda.device_array(4, np.float32), 1, 2, 2, 2)

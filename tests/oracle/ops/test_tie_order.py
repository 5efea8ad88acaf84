"""topk, kthvalue and mode pick torch's indices among equal values (its CPU kernels' algorithms, step by step), for
many shapes, dims, ties, NaNs and dtypes; and sort/argsort bind `stable` as torch's signatures do."""
import numpy as np
import pytest
import torch

import numgrad

from helpers.op_compare import check, check_error

SMALL = [[1.0, 1.0, 1.0], [2.0, 1.0, 2.0, 1.0], [1.0, 2.0, 1.0, 2.0, 1.0], [3.0, 3.0, 1.0, 1.0, 2.0, 2.0], [0.0] * 20,
         [5.0], [1.0, float("nan"), 1.0, float("nan"), 0.0]]


def _same(fn, x, dtype="float32"):
    """fn(lib, tensor) in both libraries: the same values and the same indices, exactly."""
    out = [fn(lib, lib.tensor(x).to(getattr(lib, dtype))) for lib in (torch, numgrad)]
    for a, b in zip(*out):
        assert tuple(a.shape) == tuple(b.shape)
        np.testing.assert_array_equal(b.numpy().astype(float), a.numpy().astype(float))


@pytest.mark.parametrize("row", SMALL)
def test_small_rows(row):
    n = len(row)
    for k in range(1, n + 1):
        for largest in (True, False):
            for sort in (True, False):
                _same(lambda lib, t: lib.topk(t, k, largest=largest, sorted=sort), row)
        _same(lambda lib, t: lib.kthvalue(t, k), row)
    _same(lambda lib, t: lib.mode(t), row)


def _rows(seed, shape, levels, nan=False):
    rng = np.random.default_rng(seed)
    x = rng.integers(0, levels, shape).astype(float)
    if nan:
        x[rng.random(shape) < 0.2] = np.nan
    return x


# k * 64 <= n takes torch's partial_sort, otherwise nth_element (then a sort of the first k - 1)
@pytest.mark.parametrize("n", [2, 17, 33, 64, 65, 130, 700, 2000])
@pytest.mark.parametrize("levels", [1, 2, 3, 10])
def test_long_rows_with_ties(n, levels):
    x = _rows(n * 31 + levels, (2, n), levels)
    for k in sorted({1, 2, max(1, n // 64), max(1, n // 3), n} & set(range(1, n + 1))):
        for largest in (True, False):
            for sort in (True, False):
                _same(lambda lib, t: lib.topk(t, k, 1, largest, sort), x)
        _same(lambda lib, t: lib.kthvalue(t, k, 1), x)
    _same(lambda lib, t: lib.mode(t, 1), x)


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "int64", "int32", "uint8"])
def test_dtypes_and_nan(dtype):
    nan = dtype.startswith("float")
    x = _rows(7, (3, 40), 4, nan=nan)
    for k in (1, 5, 40):
        _same(lambda lib, t: lib.topk(t, k, 1), x, dtype)
        _same(lambda lib, t: lib.topk(t, k, 1, largest=False, sorted=False), x, dtype)
        _same(lambda lib, t: lib.kthvalue(t, k, 1, keepdim=True), x, dtype)
    _same(lambda lib, t: lib.mode(t, -1, True), x, dtype)
    _same(lambda lib, t: lib.mode(t, -1), x > 1, "bool")


@pytest.mark.parametrize("shape", [(3, 4), (4, 3), (2, 5, 3), (5, 1, 2)])
def test_every_dim(shape):
    x = _rows(sum(shape), shape, 2)
    for d in range(-len(shape), len(shape)):
        k = min(2, shape[d])
        _same(lambda lib, t: lib.topk(t, k, d), x)
        _same(lambda lib, t: t.topk(k, d, False, False), x)
        _same(lambda lib, t: lib.kthvalue(t, k, d), x)
        _same(lambda lib, t: t.mode(d, keepdim=True), x)
        _same(lambda lib, t: lib.topk(t.transpose(0, -1), k, d), x)  # a non-contiguous input


def test_gradients_follow_the_picked_indices():
    x = np.array([[1.0, 3.0, 3.0, 2.0, 3.0], [2.0, 2.0, 1.0, 1.0, 2.0]], np.float32)
    check(lambda lib, t: lib.topk(t, 2, 1), x)
    check(lambda lib, t: lib.topk(t, 3, 1, sorted=False), x)
    check(lambda lib, t: lib.kthvalue(t, 2, 1), x)
    check(lambda lib, t: lib.mode(t, 1), x)
    check(lambda lib, t: lib.mode(t, 0, keepdim=True), x)


# ---- sort / argsort: `stable` is keyword-only --------------------------------------------------------------

X = np.array([2.0, 1.0, 2.0, 1.0, 3.0, 1.0], np.float32)
ACCEPTED = [
    lambda lib, t: lib.sort(t, stable=True, dim=0),
    lambda lib, t: lib.sort(t, dim=0, stable=True, descending=True),
    lambda lib, t: lib.sort(t, 0, True),
    lambda lib, t: t.sort(stable=True),
    lambda lib, t: t.sort(dim=0, descending=True, stable=True),
    lambda lib, t: lib.sort(t, stable=None),
    lambda lib, t: lib.argsort(t, stable=True, descending=True),
    lambda lib, t: t.argsort(stable=True, dim=0),
    lambda lib, t: lib.argsort(t, 0, True),
]
REFUSED = [
    lambda lib, t: lib.sort(t, 0, False, stable=True),
    lambda lib, t: lib.sort(t, 0, stable=True),
    lambda lib, t: lib.sort(t, 0, True, False),
    lambda lib, t: t.sort(0, stable=True),
    lambda lib, t: t.sort(0, True, stable=False),
    lambda lib, t: t.sort(0, False, True),
    lambda lib, t: lib.argsort(t, 0, stable=True),
    lambda lib, t: lib.argsort(t, 0, True, stable=True),
    lambda lib, t: lib.argsort(t, 0, True, True),
    lambda lib, t: t.argsort(0, stable=True),
    lambda lib, t: t.argsort(0, True, stable=True),
    lambda lib, t: t.argsort(0, True, True),
]


@pytest.mark.parametrize("i", range(len(ACCEPTED)))
def test_sort_accepts(i):
    check(ACCEPTED[i], X)


@pytest.mark.parametrize("i", range(len(REFUSED)))
def test_sort_refuses_positional_arguments_with_stable(i):
    check_error(REFUSED[i], X)

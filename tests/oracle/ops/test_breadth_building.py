"""atleast_1d/2d/3d, cartesian_prod, block_diag, vander, argwhere, isin, Tensor.fill_diagonal_ and index_reduce
against torch: values, dtypes, grad_fn names, gradients, errors, float64 gradchecks."""
import warnings

import numpy as np
import pytest

import numgrad

from helpers.op_compare import F64, check, check_error, rand

NAN = float("nan")


def _gradcheck(fn, *arrays):
    ins = [numgrad.tensor(a, requires_grad=True) for a in arrays]
    assert numgrad.testing.gradcheck(lambda *ts: fn(numgrad, *ts), ins)


@pytest.mark.parametrize("op", ["atleast_1d", "atleast_2d", "atleast_3d"])
@pytest.mark.parametrize("shape", [(), (3,), (2, 3), (1, 2, 3), (2, 1, 2, 1)])
def test_atleast(op, shape):
    x = rand(*shape)
    check(lambda lib, x: getattr(lib, op)(x), x)
    check(lambda lib, x: getattr(lib, op)(x, x * 2), x)
    check(lambda lib, x: getattr(lib, op)([x, x.sum()]), x)
    check(lambda lib: getattr(lib, op)((lib.tensor(x),)))


def test_atleast_edges():
    check(lambda lib: lib.atleast_2d())
    check(lambda lib: lib.atleast_1d(lib.tensor(3)))
    check_error(lambda lib: lib.atleast_1d(3))


def test_cartesian_prod():
    check(lambda lib, a, b: lib.cartesian_prod(a, b), rand(2), rand(3, seed=1))
    check(lambda lib, a, b: lib.cartesian_prod(a, b, a), rand(2), rand(3, seed=1))
    check(lambda lib, a: lib.cartesian_prod(a), rand(4))
    check(lambda lib: lib.cartesian_prod(lib.tensor([1, 2]), lib.tensor([3, 4, 5])))
    check(lambda lib, a: lib.cartesian_prod(a, a[:0]), rand(2))
    _gradcheck(lambda lib, a, b: lib.cartesian_prod(a, b), rand(2, dtype=F64), rand(3, dtype=F64, seed=1))
    check_error(lambda lib: lib.cartesian_prod(lib.tensor([1, 2]), lib.tensor([3.0, 4.0])))
    check_error(lambda lib: lib.cartesian_prod(lib.ones(2, 2)))
    check_error(lambda lib: lib.cartesian_prod())


def test_block_diag():
    check(lambda lib, a, b, c: lib.block_diag(a, b, c), rand(), rand(2, seed=1), rand(2, 3, seed=2))
    check(lambda lib, a: lib.block_diag(a, lib.tensor([1, 2]), lib.ones(2, 2, dtype=lib.int32)), rand(2, 2))
    check(lambda lib: lib.block_diag(lib.tensor([1, 2]), lib.ones(2, 2, dtype=lib.int32)))
    check(lambda lib, a: lib.block_diag(a, a.double()), rand(1, 2))
    check(lambda lib: lib.block_diag())
    check(lambda lib: lib.block_diag(lib.zeros(0, 2), lib.ones(2, 0)))
    _gradcheck(lambda lib, a, b: lib.block_diag(a, b), rand(2, 3, dtype=F64), rand(3, dtype=F64, seed=1))
    check_error(lambda lib: lib.block_diag(lib.zeros(1, 2, 3)))


@pytest.mark.parametrize("n,increasing", [(None, False), (None, True), (1, False), (2, True), (4, False), (0, True)])
def test_vander(n, increasing):
    x = rand(3)
    check(lambda lib: lib.vander(lib.tensor(x), n, increasing))
    check(lambda lib: lib.vander(lib.tensor(x, dtype=lib.float64), N=n, increasing=increasing))
    check(lambda lib: lib.vander(lib.tensor([1, 2, 3], dtype=lib.int8), n, increasing))
    check(lambda lib: lib.vander(lib.tensor([True, False]), n, increasing))
    if (n if n is not None else 3) >= 2:
        # torch's cumprod reads the columns its own copy_ then overwrites: backward refuses, in the same words
        check_error(lambda lib, x: lib.vander(x, n, increasing).sum().backward(), x)
    else:
        check(lambda lib, x: lib.vander(x, n, increasing), x)  # no column holds x: no history


def test_vander_errors():
    check_error(lambda lib: lib.vander(lib.ones(2), -1))
    check_error(lambda lib: lib.vander(lib.ones(2, 2)))
    check_error(lambda lib: lib.vander(lib.tensor(2.0)))


def test_argwhere():
    x = np.array([[0.0, 1.0, NAN], [-0.0, 2.0, 0.0]], np.float32)
    check(lambda lib: lib.argwhere(lib.tensor(x)))
    check(lambda lib: lib.tensor(x).argwhere())
    check(lambda lib: lib.argwhere(lib.tensor(3.0)))
    check(lambda lib: lib.argwhere(lib.tensor(0)))
    check(lambda lib: lib.argwhere(lib.tensor([[True, False]])))
    check(lambda lib: lib.argwhere(lib.zeros(0, 3)))


def test_isin():
    check(lambda lib: lib.isin(lib.tensor([1, 2, 3]), lib.tensor([2.0, 3.5])))
    check(lambda lib: lib.isin(lib.tensor([1.5, 2, 3]), 2))
    check(lambda lib: lib.isin(2, lib.tensor([1.5, 2, 3])))
    check(lambda lib: lib.isin(lib.tensor([NAN, 1.0]), lib.tensor([NAN])))
    check(lambda lib: lib.isin(lib.tensor([[1, 2], [3, 4]]), lib.tensor([[2, 9]]), invert=True))
    check(lambda lib: lib.isin(lib.tensor([[1, 2], [3, 4]]), lib.tensor([4, 1]), assume_unique=True))
    check(lambda lib, x: lib.isin(x, x[:1]), rand(2, 3))
    check(lambda lib: lib.isin(lib.tensor([], dtype=lib.int64), lib.tensor([1])))
    check_error(lambda lib: lib.isin(lib.tensor([True, False]), lib.tensor([1])))
    check_error(lambda lib: lib.isin(2, 3))


@pytest.mark.parametrize("shape,wrap", [((3, 3), False), ((5, 2), True), ((7, 2), True), ((7, 3), True),
                                        ((4, 3), True), ((7, 2), False), ((2, 7), True), ((3, 3, 3), False),
                                        ((2, 2, 2, 2), True)])
def test_fill_diagonal(shape, wrap):
    def fn(lib, x):
        y = x * 1
        out = y.fill_diagonal_(2.5, wrap=wrap)
        assert out is y
        return y
    check(fn, rand(*shape))
    # (torch's wrap through a transposed tall matrix reaches past its storage: not compared)
    check(lambda lib, x: (x.t() * 1 if x.dim() == 2 else x * 1).fill_diagonal_(-1.0, wrap and x.dim() != 2),
          rand(*shape))
    check(lambda lib: lib.zeros(*shape, dtype=lib.long).fill_diagonal_(2.5, wrap))


def test_fill_diagonal_non_contiguous_and_errors():
    check(lambda lib, x: (x * 1).t().fill_diagonal_(3.0), rand(3, 7))
    check(lambda lib, x: (x * 1)[::2].fill_diagonal_(3.0, wrap=True), rand(9, 2))
    check_error(lambda lib: lib.zeros(2, 3, 4).fill_diagonal_(2.0))
    check_error(lambda lib: lib.zeros(3).fill_diagonal_(2.0))
    check_error(lambda lib, x: x.fill_diagonal_(2.0), rand(2, 2))  # a leaf requiring grad


# ---- index_reduce ----------------------------------------------------------------------------------------

SOURCE = np.array([[2.0, 3.0, 4.0], [5.0, 0.0, 7.0]], np.float32)


@pytest.mark.parametrize("reduce", ["prod", "mean", "amax", "amin"])
@pytest.mark.parametrize("include_self", [True, False])
@pytest.mark.parametrize("index", [[0, 2], [0, 0], [3, 3]])
def test_index_reduce(reduce, include_self, index):
    x = np.arange(12, dtype=np.float32).reshape(4, 3)
    x[0, 1] = 3.0  # a tie with the source for amax/amin
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check(lambda lib, x, s: x.index_reduce(0, lib.tensor(index), s, reduce, include_self=include_self), x, SOURCE)
        check(lambda lib, x, s: lib.index_reduce(x, 1, lib.tensor([i % 3 for i in index]), s, reduce,
                                                 include_self=include_self), x, rand(4, 2, seed=5))
        check(lambda lib, x, s: (x * 1).index_reduce_(0, lib.tensor(index), s, reduce, include_self=include_self),
              x, SOURCE)
        check(lambda lib: lib.arange(12).view(4, 3).index_reduce(0, lib.tensor(index), lib.tensor(SOURCE).long(),
                                                                 reduce, include_self=include_self))
        if reduce != "prod":
            _gradcheck(lambda lib, x, s: x.index_reduce(0, lib.tensor(index), s, reduce, include_self=include_self),
                       rand(4, 3, dtype=F64), rand(2, 3, dtype=F64, seed=1))


def test_index_reduce_errors_and_warning():
    x = np.arange(12, dtype=np.float32).reshape(4, 3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check_error(lambda lib, x, s: x.index_reduce(0, lib.tensor([0, 2]), s, "sum"), x, SOURCE)
        check_error(lambda lib, x, s: x.index_reduce(0, lib.tensor([0, 5]), s, "amin"), x, SOURCE)
        check_error(lambda lib, x, s: x.index_reduce(0, lib.tensor([-1, 0]), s, "amin"), x, SOURCE)
        check_error(lambda lib, x, s: x.index_reduce(0, lib.tensor([0, 1, 2]), s, "amin"), x, SOURCE)
        check_error(lambda lib, x, s: x.index_reduce(0, lib.tensor([0.0, 1.0]), s, "amin"), x, SOURCE)
        check_error(lambda lib, x, s: x.index_reduce(0, lib.tensor([0, 1]), s.double(), "amin"), x, SOURCE)
        check_error(lambda lib, x, s: x.index_reduce(0, lib.tensor([[0, 0]]), s, "mean"), x, SOURCE)
        check_error(lambda lib, x: x.index_reduce(0, lib.tensor([0, 1]), lib.ones(2, 4), "mean"), x)
        check_error(lambda lib: lib.tensor([True]).index_reduce(0, lib.tensor([0]), lib.tensor([True]), "prod"))
    messages = []
    for lib_name in ("torch", "numgrad"):
        lib = pytest.importorskip(lib_name)
        lib.set_warn_always(True)  # torch's TORCH_WARN_ONCE then warns every time (numgrad's warn_once too)
        try:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                lib.zeros(2).index_reduce(0, lib.tensor([0]), lib.ones(1), "amax")
        finally:
            lib.set_warn_always(False)
        messages.append([str(w.message).split(" (Triggered")[0] for w in caught])
    assert messages[0] == messages[1] == ["index_reduce() is in beta and the API may change at any time."]

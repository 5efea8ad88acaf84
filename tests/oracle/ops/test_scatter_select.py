"""scatter_reduce, index_add, index_copy, index_fill, masked_scatter, take and take_along_dim against torch: values,
dtypes, grad_fn names, gradients (torch's per-reduction formulas), errors, in-place forms, float64 gradchecks."""
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import numgrad

from helpers.op_compare import F64, check, check_error, hyp, rand

INDEX = np.array([[0, 1, 0, 2], [2, 2, 1, 0]])
REDUCES = ["sum", "prod", "mean", "amax", "amin"]


def _gradcheck(fn, *arrays):
    ins = [numgrad.tensor(a, requires_grad=True) for a in arrays]
    assert numgrad.testing.gradcheck(lambda *ts: fn(numgrad, *ts), ins)


@pytest.mark.parametrize("reduce", REDUCES)
@pytest.mark.parametrize("include_self", [True, False])
def test_scatter_reduce(reduce, include_self):
    def fn(lib, x, s):
        return x.scatter_reduce(1, lib.tensor(INDEX), s, reduce, include_self=include_self)
    check(fn, rand(2, 3), rand(2, 4, seed=1))
    check(lambda lib, x, s: lib.scatter_reduce(x, 0, lib.tensor(INDEX[:, :3] % 2), s[:2, :3], reduce=reduce,
                                               include_self=include_self), rand(2, 3), rand(3, 4, seed=1))
    check_error(lambda lib, x, s: lib.scatter_reduce(x, 0, lib.tensor(INDEX[:, :3] % 2), s, reduce=reduce,
                                                     include_self=include_self).sum().backward(),
                rand(2, 3), rand(3, 4, seed=1))  # torch's engine refuses the index-shaped gradient of a larger src
    ties = np.array([[1., 2., 2.], [0., 3., 1.]])  # equal values share amax/amin gradients; zeros in prod
    check(fn, ties, np.array([[1., 2., 0., 2.], [3., 3., 0., 1.]]))
    check(lambda lib: lib.arange(6).reshape(2, 3).scatter_reduce(1, lib.tensor(INDEX), lib.arange(8).reshape(2, 4),
                                                                 reduce, include_self=include_self))
    if reduce != "prod":
        _gradcheck(fn, rand(2, 3, dtype=F64), rand(2, 4, dtype=F64, seed=1))
    else:  # prod's gradient through zeros: one zero per position (torch refuses the double backward of more)
        _gradcheck(fn, np.array([[1., 0., 2.], [3., 1., 0.]]), np.array([[2., 3., 0., 1.], [1., 2., 3., 0.5]]))


def test_scatter_reduce_in_place_and_errors():
    def fn(lib, x, s):
        y = x.clone()
        y.scatter_reduce_(1, lib.tensor(INDEX), s, "amax", include_self=False)
        return y
    check(fn, rand(2, 3), rand(2, 4, seed=1))
    for case in (lambda lib, x, s: x.scatter_reduce(1, lib.tensor(INDEX), s, "foo"),
                 lambda lib, x, s: x.scatter_reduce(1, lib.tensor(INDEX).float(), s, "sum"),
                 lambda lib, x, s: x.scatter_reduce(1, lib.tensor(INDEX), s.double(), "sum"),
                 lambda lib, x, s: x.scatter_reduce(1, lib.tensor(INDEX) + 5, s, "sum"),
                 lambda lib, x, s: x.scatter_reduce(1, lib.tensor(INDEX)[0], s, "sum"),
                 lambda lib, x, s: x.scatter_reduce(3, lib.tensor(INDEX), s, "sum")):
        check_error(case, rand(2, 3), rand(2, 4, seed=1))


@pytest.mark.parametrize("fn", [
    lambda lib, x, v: x.index_add(1, lib.tensor([0, 2]), v),
    lambda lib, x, v: lib.index_add(x, 1, lib.tensor([2, 2]), v),
    lambda lib, x, v: lib.index_add(x, 1, lib.tensor([0, 2]), v, alpha=2.5),
    lambda lib, x, v: x.index_copy(1, lib.tensor([2, 0]), v),
    lambda lib, x, v: lib.index_copy(x, 1, lib.tensor([1, 0]), v),
    lambda lib, x, v: x.index_fill(1, lib.tensor([0, -1]), -1.5),
    lambda lib, x, v: x.index_fill(0, lib.tensor([1]), v[0, 0]),
    lambda lib, x, v: lib.index_fill(x, -1, lib.tensor([], dtype=lib.int64), 3),
    lambda lib, x, v: x.index_add(0, lib.tensor([1, 0]), v.T[:, :1].expand(2, 3).contiguous()),
])
def test_index_add_copy_fill(fn):
    check(fn, rand(2, 3), rand(2, 2, seed=1))
    _gradcheck(fn, rand(2, 3, dtype=F64), rand(2, 2, dtype=F64, seed=1))


def test_index_ops_in_place_integers_and_errors():
    for op, arg in (("index_add_", "v"), ("index_copy_", "v"), ("index_fill_", 2.0)):
        def fn(lib, x, v, op=op, arg=arg):
            y = x.clone()
            getattr(y, op)(1, lib.tensor([0, 2]), v if arg == "v" else arg)
            return y
        check(fn, rand(2, 3), rand(2, 2, seed=1))
    check(lambda lib: lib.arange(6).reshape(2, 3).index_add(1, lib.tensor([0, 0]), lib.ones(2, 2, dtype=lib.int64)))
    check(lambda lib: lib.arange(6).reshape(2, 3).index_fill(1, lib.tensor([1]), 7))
    for case in (lambda lib, x, v: x.index_add(1, lib.tensor([0., 2.]), v),
                 lambda lib, x, v: x.index_add(1, lib.tensor([0, 2]), v.double()),
                 lambda lib, x, v: x.index_add(1, lib.tensor([[0, 2]]), v),
                 lambda lib, x, v: x.index_add(1, lib.tensor([0, 2]), lib.ones(2, 3)),
                 lambda lib, x, v: x.index_add(1, lib.tensor([0, 5]), v),
                 lambda lib, x, v: x.index_add(1, lib.tensor([0, -1]), v),
                 lambda lib, x, v: x.index_copy(1, lib.tensor([0, -1]), v),
                 lambda lib, x, v: x.index_add(1, lib.tensor([0, 2]), lib.ones(3, 2)),
                 lambda lib, x, v: x.index_copy(1, lib.tensor([0, 5]), v),
                 lambda lib, x, v: x.index_copy(1, lib.tensor([0, 2]), lib.ones(2, 3)),
                 lambda lib, x, v: x.index_fill(1, lib.tensor([0, 5]), 1),
                 lambda lib, x, v: x.index_fill(1, lib.tensor([0, 2]), lib.ones(2))):
        check_error(case, rand(2, 3), rand(2, 2, seed=1))


MASK = np.array([[True, False, True], [False, True, False]])


@pytest.mark.parametrize("fn", [
    lambda lib, x, s: x.masked_scatter(lib.tensor(MASK), s),
    lambda lib, x, s: lib.masked_scatter(x, lib.tensor(MASK[0]), s),
    lambda lib, x, s: x.masked_scatter(lib.tensor(MASK) & False, s),
    lambda lib, x, s: lib.take(x, lib.tensor([[0, 5], [-1, 2]])), lambda lib, x, s: x.take(lib.tensor([1, 1, 1])),
    lambda lib, x, s: lib.take_along_dim(x, lib.tensor([[0, 2, 1], [1, 1, 0]]), 1),
    lambda lib, x, s: lib.take_along_dim(x, lib.tensor([[0], [2]])),
])
def test_masked_scatter_take(fn):
    check(fn, rand(2, 3), rand(2, 3, seed=1))
    _gradcheck(fn, rand(2, 3, dtype=F64), rand(2, 3, dtype=F64, seed=1))


def test_masked_scatter_take_in_place_and_errors():
    def fn(lib, x, s):
        y = x.clone()
        y.masked_scatter_(lib.tensor(MASK), s)
        return y
    check(fn, rand(2, 3), rand(2, 3, seed=1))
    check(lambda lib: lib.take(lib.tensor([[1, 2], [3, 4]]), lib.tensor([3, 0])))
    for case in (lambda lib, x, s: x.masked_scatter(lib.tensor(MASK).long(), s),
                 lambda lib, x, s: x.masked_scatter(lib.tensor(MASK), s.double()),
                 lambda lib, x, s: x.masked_scatter(lib.tensor(MASK), lib.ones(2)),
                 lambda lib, x, s: lib.take(x, lib.tensor([10])), lambda lib, x, s: lib.take(x, lib.tensor([-7])),
                 lambda lib, x, s: lib.take(x, lib.tensor([1.]))):
        check_error(case, rand(2, 3), rand(2, 3, seed=1))


@st.composite
def scatter_cases(draw):
    shape = draw(st.lists(st.integers(1, 3), min_size=1, max_size=3))
    dim = draw(st.integers(0, len(shape) - 1))
    ishape = [draw(st.integers(0, n)) if k != dim else draw(st.integers(0, 4)) for k, n in enumerate(shape)]
    index = np.array(draw(st.lists(st.integers(0, shape[dim] - 1), min_size=int(np.prod(ishape)),
                                   max_size=int(np.prod(ishape))))).reshape(ishape).astype(np.int64)
    return shape, dim, index, draw(st.sampled_from(REDUCES)), draw(st.booleans())


@hyp(60)
@given(scatter_cases())
def test_scatter_reduce_hypothesis(case):
    shape, dim, index, reduce, include_self = case
    check(lambda lib, x, s: x.scatter_reduce(dim, lib.tensor(index), s, reduce, include_self=include_self),
          rand(*shape, dtype=F64), rand(*index.shape, dtype=F64, seed=1), rtol=1e-9, atol=1e-9)

"""sort, argsort, msort, topk, kthvalue, median, nanmedian, mode, unique, unique_consecutive, searchsorted, bucketize,
histc and multinomial against torch: values, indices, dtypes, grad_fn names, gradients, errors; multinomial by its
distribution (the generators differ)."""
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import numgrad
import torch

from helpers.op_compare import F64, check, check_error, hyp, rand

nan = float("nan")
TIES = np.array([[3., 1., 2., 1., nan, 3., 0.], [-0., 0., 5., 5., 5., -1., 2.]])


def _gradcheck(fn, *arrays):
    ins = [numgrad.tensor(a, requires_grad=True) for a in arrays]
    assert numgrad.testing.gradcheck(lambda *ts: fn(numgrad, *ts), ins)


@pytest.mark.parametrize("fn", [
    lambda lib, x: tuple(lib.sort(x)), lambda lib, x: tuple(lib.sort(x, 0)),
    lambda lib, x: tuple(x.sort(descending=True)),
    lambda lib, x: tuple(lib.sort(x, dim=0, descending=True, stable=True)), lambda lib, x: tuple(x.sort(-1, True)),
    lambda lib, x: lib.argsort(x), lambda lib, x: x.argsort(0, descending=True), lambda lib, x: lib.msort(x),
    lambda lib, x: lib.argsort(x, stable=True), lambda lib, x: x.msort(),
    lambda lib, x: tuple(lib.median(x, 1)), lambda lib, x: tuple(lib.nanmedian(x, 1)), lambda lib, x: lib.median(x),
    lambda lib, x: lib.nanmedian(x), lambda lib, x: tuple(x.median(0, keepdim=True)),
    lambda lib, x: tuple(lib.mode(x)),
    lambda lib, x: tuple(lib.mode(x[:, :4], 0)), lambda lib, x: tuple(x.mode(1, True)),
    lambda lib, x: lib.median(x[:, :6]),
    lambda lib, x: tuple(lib.median(x[:, :4], -1)), lambda lib, x: lib.nanmedian(x[0, 4:5]),
    lambda lib, x: tuple(lib.nanmedian(x[:, 4:5], 1)),
])
def test_sort_and_order_statistics_with_ties_and_nans(fn):
    check(fn, TIES)


@pytest.mark.parametrize("fn", [
    lambda lib, x: tuple(lib.topk(x, 3)), lambda lib, x: tuple(lib.topk(x, 2, 0, largest=False)),
    lambda lib, x: tuple(x.topk(5, sorted=True)), lambda lib, x: tuple(lib.topk(x, 0)),
    lambda lib, x: tuple(lib.kthvalue(x, 2)), lambda lib, x: tuple(x.kthvalue(3, 0, True)),
    lambda lib, x: tuple(lib.kthvalue(x, 6, -1)), lambda lib, x: tuple(lib.sort(x)), lambda lib, x: lib.median(x),
    lambda lib, x: tuple(lib.median(x, 0)),
])
def test_topk_kthvalue_distinct_values(fn):
    check(fn, rand(4, 6))
    _gradcheck(lambda lib, x: fn(lib, x)[0] if isinstance(fn(lib, x), tuple) else fn(lib, x), rand(4, 6, dtype=F64))


def test_integer_bool_and_0d_inputs():
    for fn in (lambda lib, x: tuple(lib.sort(x)), lambda lib, x: lib.argsort(x, descending=True),
               lambda lib, x: tuple(lib.topk(x, 1)), lambda lib, x: tuple(lib.kthvalue(x, 1)),
               lambda lib, x: lib.median(x), lambda lib, x: tuple(lib.mode(x)), lambda lib, x: lib.unique(x)):
        check(lambda lib: fn(lib, lib.tensor([[3, 1, 3], [2, 2, 0]])))
        check(lambda lib: fn(lib, lib.tensor(2.5)))
    check(lambda lib: tuple(lib.sort(lib.tensor([True, False, True]))))
    check(lambda lib: tuple(lib.mode(lib.tensor([1, 2, 2, 1, 3]))))
    check(lambda lib: lib.median(lib.zeros(0)))
    check(lambda lib: tuple(lib.median(lib.zeros(0, 2), 1)))


@pytest.mark.parametrize("fn", [
    lambda lib, x: lib.sort(x, 2), lambda lib, x: lib.topk(x, 8), lambda lib, x: lib.topk(x, -1),
    lambda lib, x: lib.kthvalue(x, 0), lambda lib, x: lib.kthvalue(x, 8), lambda lib, x: lib.median(x[:, :0], 1),
    lambda lib, x: lib.mode(x[:, :0], 1), lambda lib, x: lib.unique(x, dim=2),
    lambda lib, x: lib.searchsorted(x[0], x[0], side="foo"), lambda lib, x: lib.searchsorted(x[0], x[0], side="left",
                                                                                              right=True),
    lambda lib, x: lib.searchsorted(x[:1], x[0]), lambda lib, x: lib.bucketize(x[0], x),
    lambda lib, x: lib.histc(x, bins=0), lambda lib, x: lib.histc(x, 3, min=3, max=1), lambda lib, x: lib.histc(x),
    lambda lib, x: lib.histc(x.long()), lambda lib, x: lib.histc(x.clamp(max=1) / x.clamp(min=0)),
    lambda lib, x: lib.unique(x).sum().backward(), lambda lib, x: lib.unique(x, dim=0).sum().backward(),
    lambda lib, x: lib.unique_consecutive(x).sum().backward(),
])
def test_sorting_errors(fn):
    check_error(fn, TIES)


def test_unique_and_unique_consecutive():
    data = [TIES, np.array([[1, 2], [1, 2], [0, 5]]), np.array([1, 1, 2, 2, 3, 1, 1]), np.array([True, False, True])]
    for x in data:
        for inv in (False, True):
            for counts in (False, True):
                # (a float input requiring grad gets Unique2Backward0, whose backward raises: see the errors)
                check(lambda lib: lib.unique(lib.tensor(x), return_inverse=inv, return_counts=counts))
                check(lambda lib: lib.tensor(x).unique(sorted=False, return_inverse=inv, return_counts=counts))
                check(lambda lib: lib.unique_consecutive(lib.tensor(x), return_inverse=inv, return_counts=counts))
                if x.ndim == 2:
                    check(lambda lib: lib.unique(lib.tensor(x), dim=0, return_inverse=inv, return_counts=counts))
                    check(lambda lib: lib.unique_consecutive(lib.tensor(x), return_inverse=inv, return_counts=counts,
                                                             dim=1))
    check(lambda lib: lib.unique(lib.tensor(rand(2, 3)), dim=1))
    for op in ("unique", "unique_consecutive"):
        outs = [getattr(lib, op)(lib.tensor([1., 1.], requires_grad=True)) for lib in (torch, numgrad)]
        assert [o.grad_fn.name() for o in outs] == ["Unique2Backward0" if op == "unique" else
                                                    "UniqueConsecutiveBackward0"] * 2


def test_searchsorted_and_bucketize():
    seq, values = np.array([1, 3, 5, 7]), np.array([[3, 6, 9], [0, 1, 8]])
    for right in (False, True):
        check(lambda lib, s, v: lib.searchsorted(s, v, right=right), seq, values)
        check(lambda lib, s, v: lib.searchsorted(s, v, side="right" if right else "left"), seq, values)
        if hasattr(numgrad, "int32"):
            check(lambda lib, s, v: lib.searchsorted(s, v, right=right, out_int32=True), seq, values)
        else:
            with pytest.raises(NotImplementedError, match="int32"):
                numgrad.searchsorted(numgrad.tensor(seq), numgrad.tensor(values), out_int32=True)
        check(lambda lib, s, v: lib.bucketize(v, s, right=right), seq, values)
        check(lambda lib, s: lib.bucketize(4, s, right=right), seq)
        check(lambda lib, s: lib.searchsorted(s, 5, right=right), seq)
    check(lambda lib, s, v: lib.searchsorted(s, v), np.array([[1., 3, 5], [2, 4, 6]]), np.array([[3., 6], [1, 9]]))
    check(lambda lib, s, v: lib.searchsorted(s, v, sorter=lib.tensor([1, 2, 0])), np.array([5., 1, 3]),
          np.array([2., 4]))
    check(lambda lib, s, v: lib.searchsorted(s, v), np.array([1., 3.]), np.array([2]))


@pytest.mark.parametrize("args", [(4,), (4, 0, 3), (3, 1, 9), (100,), (5, -1, 1), (3, 2.5, 2.5)])
def test_histc(args):
    check(lambda lib, x: lib.histc(x, *args), np.array([0., 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 2, 2, -1]))
    check(lambda lib, x: x.histc(*args), rand(50, dtype=F64))
    check(lambda lib, x: lib.histc(x, *args), np.array([2., 2.]))
    check(lambda lib, x: lib.histc(x, *args), np.zeros(0))


def test_multinomial_shapes_errors_and_distribution():
    numgrad.manual_seed(0)
    probs = numgrad.tensor([0.1, 0.2, 0.7])
    draws = numgrad.multinomial(probs, 20000, replacement=True)
    assert draws.dtype is numgrad.int64 and draws.shape == (20000,)
    freq = np.bincount(draws.numpy(), minlength=3) / 20000
    np.testing.assert_allclose(freq, [0.1, 0.2, 0.7], atol=0.02)
    rows = numgrad.multinomial(numgrad.tensor([[0., 1., 0.], [1., 1., 1.]]), 3)
    assert rows.shape == (2, 3) and rows[0, 0].item() == 1 and sorted(rows[1].tolist()) == [0, 1, 2]
    assert numgrad.multinomial(numgrad.tensor([0., 1., 0.]), 2).tolist() == [1, 0]
    first = np.array([probs.multinomial(1).item() for _ in range(3000)])
    np.testing.assert_allclose(np.bincount(first, minlength=3) / 3000, [0.1, 0.2, 0.7], atol=0.03)
    pairs = np.array([numgrad.multinomial(probs, 2).tolist() for _ in range(3000)])  # without replacement
    assert (pairs[:, 0] != pairs[:, 1]).all()
    expected = torch.stack([torch.multinomial(torch.tensor([0.1, 0.2, 0.7]), 2) for _ in range(3000)]).numpy()
    np.testing.assert_allclose(np.bincount(pairs[:, 1], minlength=3) / 3000,
                               np.bincount(expected[:, 1], minlength=3) / 3000, atol=0.04)
    gen = numgrad.manual_seed(5)
    assert numgrad.multinomial(probs, 4, True, generator=gen).shape == (4,)
    for probs, n in (([0.2, 0.8], 3), ([-.2, .8], 1), ([0., 0.], 1), (1., 1), ([[.2, .8]], 0), ([1, 2], 1),
                     ([.2, nan], 1), ([.2, float("inf")], 1), ([[[1., 1.]]], 1)):
        check_error(lambda lib: lib.multinomial(lib.tensor(probs), n))


@st.composite
def sortable(draw):
    shape = draw(st.lists(st.integers(1, 4), min_size=1, max_size=3))
    values = draw(st.lists(st.sampled_from([0., -0., 1., 2., -1., nan, 3.5]), min_size=int(np.prod(shape)),
                           max_size=int(np.prod(shape))))
    return np.array(values).reshape(shape), draw(st.integers(-len(shape), len(shape) - 1)), draw(st.booleans())


@hyp(60)
@given(sortable())
def test_sorting_hypothesis(case):
    x, dim, flag = case
    check(lambda lib, t: tuple(lib.sort(t, dim, descending=flag)), x)
    check(lambda lib, t: tuple(lib.median(t, dim, keepdim=flag)), x)
    check(lambda lib, t: tuple(lib.nanmedian(t, dim)), x)
    if not np.isnan(x).any():  # torch's mode orders NaNs as std::sort leaves them (unordered)
        check(lambda lib, t: tuple(lib.mode(t, dim)), x)
    check(lambda lib: lib.unique(lib.tensor(x), return_inverse=True, return_counts=flag))
    check(lambda lib: lib.unique_consecutive(lib.tensor(x), return_inverse=True, return_counts=flag))

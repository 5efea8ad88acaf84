"""einsum, tensordot, kron, cross, cumsum, cumprod, cummax, cummin, logcumsumexp and diff against torch: values,
dtypes, grad_fn names, gradients, errors, and float64 gradchecks."""
import warnings

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import numgrad
import torch

from helpers.op_compare import F64, check, check_error, hyp, rand


def _gradcheck(fn, *arrays):
    ins = [numgrad.tensor(a, requires_grad=True) for a in arrays]
    assert numgrad.testing.gradcheck(lambda *ts: fn(numgrad, *ts), ins)


# ---- einsum ------------------------------------------------------------------------------------------

EINSUMS = [
    ("ij,jk->ik", (2, 3), (3, 4)), ("ij,jk", (2, 3), (3, 4)), ("ij->ji", (2, 3)), ("ij->", (2, 3)),
    ("ii->i", (3, 3)), ("ii", (3, 3)), ("bij,bjk->bik", (2, 2, 3), (2, 3, 4)), ("i,j->ij", (2,), (3,)),
    ("...ij,...jk", (2, 2, 3), (3, 4)), ("i,i->", (5,), (5,)), ("ij,ij->ij", (2, 3), (2, 3)),
    ("bhqd,bhkd->bhqk", (2, 3, 4, 5), (2, 3, 6, 5)), ("ij,jk,kl->il", (2, 3), (3, 4), (4, 5)),
    ("i,i,i->i", (4,), (4,), (4,)), ("ijk->kji", (2, 3, 4)), ("iij->j", (3, 3, 2)), ("ij,kj->ik", (1, 3), (4, 3)),
    ("...->...", (2, 3)), ("b...,b...->b", (2, 3, 4), (2, 3, 4)), ("i...j,j->i...", (2, 3, 4), (4,)),
    ("ij,jk->", (2, 3), (3, 4)), ("a b, b c -> a c", (2, 3), (3, 2)), ("Ab,bA->", (2, 3), (3, 2)),
    ("ij,j", (2, 1), (3,)), ("ij,ik->jk", (2, 3), (1, 4)), ("ijk,jl->ilk", (2, 3, 4), (3, 5)),
    ("i,jk->ijk", (2,), (3, 4)), ("ij,ij->", (3, 4), (3, 4)), ("ij,jk->ik", (2, 0), (0, 3)),
]


@pytest.mark.parametrize("case", EINSUMS, ids=[e[0] for e in EINSUMS])
def test_einsum(case):
    eq, *shapes = case
    check(lambda lib, *ts: lib.einsum(eq, *ts), *[rand(*s, seed=i) for i, s in enumerate(shapes)], rtol=1e-5,
          atol=1e-5)


def test_einsum_operand_list_sublist_and_integers():
    a, b = rand(2, 3), rand(3, 4, seed=1)
    check(lambda lib, x, y: lib.einsum("ij,jk->ik", [x, y]), a, b, atol=1e-5)
    check(lambda lib, x, y: lib.einsum(x, [0, 1], y, [1, 2], [0, 2]), a, b, atol=1e-5)
    check(lambda lib, x, y: lib.einsum(x, [Ellipsis, 1], y, [1, 2]), a, b, atol=1e-5)
    check(lambda lib: lib.einsum("ij,jk->ik", lib.arange(6).reshape(2, 3), lib.arange(12).reshape(3, 4)))


@pytest.mark.parametrize("eq, shapes", [
    ("ij,jk->ik", [(2, 3)]), ("ij->ik", [(2, 3)]), ("ij->ii", [(2, 3)]), ("ijk->ij", [(2, 3)]), ("i1->i", [(2, 3)]),
    ("ii->i", [(2, 3)]), ("ij,ij->ij", [(2, 3), (3, 4)]), ("...ij,...ij->...", [(2, 2, 3), (3, 2, 3)]),
    ("ij,jk->ik", [(2, 3), (3, 4), (2, 3)]), ("i->i->i", [(2, 3)]), ("i.j->i", [(2, 3)]),
])
def test_einsum_errors(eq, shapes):
    check_error(lambda lib, *ts: lib.einsum(eq, *ts), *[rand(*s, seed=i) for i, s in enumerate(shapes)])


def test_einsum_gradcheck_and_double_backward():
    _gradcheck(lambda lib, x, y: lib.einsum("bij,bjk->bik", x, y), rand(2, 2, 3, dtype=F64), rand(2, 3, 2, dtype=F64))
    _gradcheck(lambda lib, x: lib.einsum("ii->i", x), rand(3, 3, dtype=F64))
    _gradcheck(lambda lib, x, y: lib.einsum("i...,...->i", x, y), rand(2, 3, dtype=F64), rand(3, dtype=F64))
    x = numgrad.tensor(rand(3, 3, dtype=F64), requires_grad=True)
    tx = torch.tensor(x.detach().numpy(), requires_grad=True)
    grads = []
    for lib, t in ((numgrad, x), (torch, tx)):
        (g,) = lib.autograd.grad(lib.einsum("ij,jk->", t, t), t, create_graph=True)
        grads.append(lib.autograd.grad(g.pow(2).sum(), t)[0].detach().numpy())
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-10)


@st.composite
def einsum_cases(draw):
    letters = "abcd"
    sizes = {c: draw(st.integers(1, 3)) for c in letters}
    terms = [draw(st.lists(st.sampled_from(letters), min_size=0, max_size=3)) for _ in range(draw(st.integers(1, 3)))]
    seen = sorted(set(c for t in terms for c in t))
    out = draw(st.permutations(seen).map(lambda p: p[:draw(st.integers(0, len(p)))])) if seen else []
    eq = ",".join("".join(t) for t in terms) + "->" + "".join(out)
    return eq, [tuple(sizes[c] for c in t) for t in terms]


@hyp(60)
@given(einsum_cases())
def test_einsum_hypothesis(case):
    eq, shapes = case
    check(lambda lib, *ts: lib.einsum(eq, *ts), *[rand(*s, seed=i) for i, s in enumerate(shapes)], rtol=1e-4,
          atol=1e-5)


# ---- tensordot, kron, cross ----------------------------------------------------------------------------

@pytest.mark.parametrize("dims, b_shape", [(2, (3, 4, 5)), (1, (4, 5)), (0, (2, 2)), (([1, 2], [0, 1]), (3, 4, 5)),
                                           (([2, 1], [1, 0]), (3, 4, 5)), (((1,), (0,)), (3, 2))])
def test_tensordot(dims, b_shape):
    check(lambda lib, x, y: lib.tensordot(x, y, dims), rand(2, 3, 4), rand(*b_shape, seed=1), atol=1e-5)


def test_tensordot_broadcast_dims_and_errors():
    check(lambda lib, x, y: lib.tensordot(x, y, ([1], [0])), rand(2, 1), rand(3, 4, seed=1), atol=1e-5)
    for dims in (-1, 4, ([0, 1], [0]), ([0], [1]), (1, 0), 1):
        check_error(lambda lib, x, y: lib.tensordot(x, y, dims), rand(2, 3), rand(2, 4, seed=1))
    _gradcheck(lambda lib, x, y: lib.tensordot(x, y, 1), rand(2, 3, dtype=F64), rand(3, 2, dtype=F64))


@pytest.mark.parametrize("shapes", [((2, 3), (3, 4)), ((2,), (3, 2)), ((2, 1, 2), (3,)), ((), (2,)), ((2, 2), ())])
def test_kron(shapes):
    check(lambda lib, x, y: lib.kron(x, y), rand(*shapes[0]), rand(*shapes[1], seed=1))
    check(lambda lib, x, y: x.kron(y), rand(*shapes[0]), rand(*shapes[1], seed=1))


@pytest.mark.parametrize("case", [((3,), (3,), 0), ((4, 3), (4, 3), 1), ((3, 2), (3, 2), 0), ((1, 3), (4, 3), -1),
                                  ((2, 3, 3), (2, 3, 3), 1)])
def test_cross(case):
    a, b, dim = case
    check(lambda lib, x, y: lib.cross(x, y, dim=dim), rand(*a), rand(*b, seed=1), atol=1e-5)
    check(lambda lib, x, y: x.cross(y, dim), rand(*a), rand(*b, seed=1), atol=1e-5)
    _gradcheck(lambda lib, x, y: lib.cross(x, y, dim), rand(*a, dtype=F64), rand(*b, dtype=F64, seed=1))


def test_cross_default_dim_warns_and_errors():
    for lib in (numgrad, torch):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            lib.cross(lib.ones(3, 2), lib.ones(3, 2))
    check(lambda lib, x, y: lib.cross(x, y), rand(2, 3), rand(2, 3, seed=1), atol=1e-5)
    check_error(lambda lib, x, y: lib.cross(x, y, dim=1), rand(4, 2), rand(4, 2, seed=1))
    check_error(lambda lib, x, y: lib.cross(x, y, dim=0), rand(3, 3), rand(3, seed=1))
    check_error(lambda lib, x, y: lib.cross(x, y, dim=0), rand(3, 3), rand(3, 2, seed=1))


# ---- scans -------------------------------------------------------------------------------------------

SCAN_SHAPES = [((3, 4), 0), ((3, 4), 1), ((3, 4), -1), ((2, 3, 4), 1), ((), 0), ((5,), 0), ((0, 3), 0), ((3, 0), 1)]


@pytest.mark.parametrize("op", ["cumsum", "cumprod", "logcumsumexp"])
@pytest.mark.parametrize("shape, dim", SCAN_SHAPES)
def test_float_scans(op, shape, dim):
    check(lambda lib, x: getattr(lib, op)(x, dim), rand(*shape), rtol=1e-5, atol=1e-5)
    check(lambda lib, x: getattr(x, op)(dim), rand(*shape, dtype=F64))


@pytest.mark.parametrize("op", ["cummax", "cummin"])
@pytest.mark.parametrize("shape, dim", SCAN_SHAPES)
def test_cummax_cummin(op, shape, dim):
    check(lambda lib, x: tuple(getattr(lib, op)(x, dim)), rand(*shape))
    check(lambda lib, x: getattr(x, op)(dim).values, rand(*shape))


def test_cummax_cummin_ties_nans_and_types():
    for op in ("cummax", "cummin"):
        check(lambda lib: tuple(getattr(lib, op)(lib.tensor([1., float("nan"), float("nan"), 3., 3., 0., 0.]), 0)))
        check(lambda lib: tuple(getattr(lib, op)(lib.tensor([[2, 2, 1], [0, 5, 5]]), 1)))
        check(lambda lib: tuple(getattr(lib, op)(lib.tensor([True, False, True]), 0)))
        check(lambda lib, x: tuple(getattr(lib, op)(x, 1)), np.array([[1., 1., 0.], [2., 2., 2.]]))
        check_error(lambda lib, x: getattr(lib, op)(x, 2), rand(2, 3))
        r = getattr(numgrad, op)(numgrad.tensor([1., 2.]), 0)
        assert type(r).__name__ == op and repr(r).startswith(f"torch.return_types.{op}(")


def test_scan_dtypes():
    for op in ("cumsum", "cumprod"):
        check(lambda lib: getattr(lib, op)(lib.tensor([True, False, True]), 0))
        check(lambda lib: getattr(lib, op)(lib.tensor([[1, 2], [3, 4]]), 1))
        check(lambda lib, x: getattr(lib, op)(x, 0, dtype=lib.float64), rand(3, 2))
        check(lambda lib: getattr(lib, op)(lib.tensor([1, 2]), 0, dtype=lib.float32))
        check_error(lambda lib, x: getattr(lib, op)(x, dim=0, dtype=lib.int64), rand(3))
        check_error(lambda lib, x: getattr(lib, op)(x, 2), rand(3))
        check_error(lambda lib, x: getattr(lib, op)(x, None), rand(3))
    for dtype in ("int64", "bool"):
        check_error(lambda lib: lib.logcumsumexp(lib.tensor([1, 0]).to(getattr(lib, dtype)), 0))
    check(lambda lib, x: lib.cumsum(x, 0), np.random.RandomState(0).randn(10000).astype(np.float32), rtol=1e-6)


def test_cumprod_gradient_with_zeros():
    x = np.array([[2., 0., 3., 0., 5.], [0., 1., 2., 3., 4.], [1., 2., 3., 4., 0.], [1., 2., 3., 4., 5.]])
    for dim in (0, 1):
        check(lambda lib, t: lib.cumprod(t, dim), x, rtol=1e-10)
        _gradcheck(lambda lib, t: lib.cumprod(t, dim), x)
    check(lambda lib, t: lib.cumprod(t, 0), np.array([0.]))


def test_scan_gradchecks_and_infinities():
    for op in ("cumsum", "cumprod", "logcumsumexp", "cummax", "cummin"):
        _gradcheck(lambda lib, t: getattr(lib, op)(t, 1)[0] if op.startswith("cumm") else getattr(lib, op)(t, 1),
                   rand(2, 4, dtype=F64, seed=3))
    check(lambda lib, x: lib.logcumsumexp(x, 0), np.array([-np.inf, -np.inf, 1., np.inf, 2.]))
    check(lambda lib, x: lib.logcumsumexp(x, 0), np.array([1000., 1001., -1000.]))


# ---- diff ----------------------------------------------------------------------------------------------

@pytest.mark.parametrize("kw", [{}, {"n": 2}, {"n": 5}, {"n": 0}, {"dim": 0}, {"n": 2, "dim": 0}])
def test_diff(kw):
    check(lambda lib, x: lib.diff(x, **kw), rand(3, 4))
    check(lambda lib, x: x.diff(**kw), rand(3, 4))


def test_diff_prepend_append_and_types():
    check(lambda lib, x, p, a: lib.diff(x, prepend=p, append=a), rand(3, 4), rand(3, 2, seed=1), rand(3, 1, seed=2))
    check(lambda lib, x, p: lib.diff(x, dim=0, prepend=p), rand(3, 4), rand(1, 4, seed=1))
    check(lambda lib: lib.diff(lib.tensor([True, False, False])))
    check(lambda lib: lib.diff(lib.tensor([1, 3, 7]), n=2))
    check_error(lambda lib, x: lib.diff(x), rand())
    check_error(lambda lib, x: lib.diff(x, n=-1), rand(3))
    check_error(lambda lib, x, p: lib.diff(x, prepend=p), rand(3, 4), rand(3))
    check_error(lambda lib, x, p: lib.diff(x, prepend=p), rand(3, 4), rand(2, 4))
    _gradcheck(lambda lib, x: lib.diff(x, n=2), rand(2, 5, dtype=F64))


def test_cummax_cummin_ties_signed_zeros_nans_randomized():
    """The running extreme takes each later element at least as large (small), a NaN and each later NaN: indices,
    values and the sign of zeros as torch's loop gives them."""
    rng = np.random.default_rng(0)
    for trial in range(150):
        shape = tuple(rng.integers(1, 5, size=rng.integers(1, 4)))
        x = rng.choice([0., -0., 1., 2., np.nan, -1.], size=shape)
        if trial % 3 == 0:
            x = np.nan_to_num(x).astype(np.int64)
        d = int(rng.integers(0, len(shape)))
        for op in ("cummax", "cummin"):
            a, b = getattr(torch, op)(torch.tensor(x), d), getattr(numgrad, op)(numgrad.tensor(x), d)
            np.testing.assert_array_equal(b.indices.numpy(), a.indices.numpy())
            np.testing.assert_array_equal(b.values.numpy(), a.values.numpy())
            np.testing.assert_array_equal(np.signbit(b.values.numpy()), np.signbit(a.values.numpy()))

"""Every reduction against torch over whole/int/negative/tuple dims and keepdim: values, grads, gradcheck, 2nd order."""
import dataclasses
import math
import re
import warnings

import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import numgrad
from helpers.op_compare import hyp, param_grid
from numgrad import testing as ngt

# numgrad accumulates float32 sums in double; torch sums pairwise in float32: both are within a few ulps
TOL = {"float32": dict(rtol=1e-5, atol=1e-6), "float64": dict(rtol=1e-12, atol=1e-12)}
TOL2 = {"float32": dict(rtol=1e-4, atol=1e-5), "float64": dict(rtol=1e-10, atol=1e-10)}
INF = float("inf")





# ---- the reductions, each a call for both libraries, with the dim forms it accepts -----------------

@dataclasses.dataclass(frozen=True)
class Spec:
    call: object  # (L, x, dim, keepdim) -> result; dim is None for the whole-tensor form
    dims: tuple = ("none", "int", "tuple")  # which dim forms torch accepts
    values: str = "real"  # "real", "distinct" (no ties), "prod" (moderate, nonzero)
    float_only: bool = False


def _whole_or_dim(method, **kw):
    def call(L, x, dim, keepdim):
        if dim is None:
            return getattr(x, method)(**kw)
        return getattr(x, method)(dim, keepdim=keepdim, **kw)
    return call


SPECS = {
    "sum": Spec(_whole_or_dim("sum")),
    "torch.sum": Spec(lambda L, x, d, k: L.sum(x) if d is None else L.sum(x, dim=d, keepdim=k)),
    "mean": Spec(_whole_or_dim("mean")),
    "prod": Spec(_whole_or_dim("prod"), dims=("none", "int"), values="prod"),
    "amax": Spec(lambda L, x, d, k: L.amax(x) if d is None else L.amax(x, d, keepdim=k), values="distinct"),
    "amin": Spec(lambda L, x, d, k: L.amin(x) if d is None else x.amin(dim=d, keepdim=k), values="distinct"),
    "max": Spec(_whole_or_dim("max"), dims=("none", "int"), values="distinct"),
    "min": Spec(lambda L, x, d, k: L.min(x) if d is None else L.min(x, d, k), dims=("none", "int"),
                values="distinct"),
    "argmax": Spec(lambda L, x, d, k: L.argmax(x) if d is None else L.argmax(x, dim=d, keepdim=k),
                   dims=("none", "int"), values="distinct"),
    "argmin": Spec(_whole_or_dim("argmin"), dims=("none", "int"), values="distinct"),
    # the default p='fro' takes a tuple dim only as a 2-tuple (a matrix norm): see SPECIAL and ERRORS
    "norm": Spec(lambda L, x, d, k: x.norm() if d is None else x.norm(dim=d, keepdim=k), dims=("none", "int")),
    "norm(p=2)": Spec(lambda L, x, d, k: L.norm(x, 2) if d is None else L.norm(x, 2, d, k)),
    "norm(p=1)": Spec(lambda L, x, d, k: x.norm(1) if d is None else x.norm(1, d, keepdim=k)),
    "norm(p=3)": Spec(lambda L, x, d, k: x.norm(p=3) if d is None else x.norm(p=3, dim=d, keepdim=k)),
    "norm(p=inf)": Spec(lambda L, x, d, k: x.norm(INF) if d is None else x.norm(INF, d, keepdim=k),
                        values="distinct"),
    "var": Spec(_whole_or_dim("var"), float_only=True),
    "var(unbiased=False)": Spec(_whole_or_dim("var", unbiased=False), float_only=True),
    "var(correction=0)": Spec(lambda L, x, d, k: x.var(correction=0) if d is None else
                              L.var(x, d, keepdim=k, correction=0), float_only=True),
    "std": Spec(_whole_or_dim("std"), float_only=True),
    "std(unbiased=False)": Spec(lambda L, x, d, k: x.std(unbiased=False) if d is None else
                                L.std(x, d, unbiased=False, keepdim=k), float_only=True),
    "std(correction=0)": Spec(_whole_or_dim("std", correction=0), float_only=True),
    "logsumexp": Spec(lambda L, x, d, k: L.logsumexp(x, d, keepdim=k), dims=("int", "tuple")),
    "softmax": Spec(lambda L, x, d, k: L.softmax(x, d), dims=("int",)),
    "log_softmax": Spec(lambda L, x, d, k: x.log_softmax(d), dims=("int",)),
}
NAMES = list(SPECS)
DIFFERENTIABLE = [n for n in NAMES if not n.startswith("arg")]


@dataclasses.dataclass
class Case:
    shape: tuple
    dim: object
    keepdim: bool
    seed: int


@st.composite
def cases(draw, spec, max_side=4, max_dims=3):
    """A shape (0-d only for the whole-tensor form: 0-d with a dim is test_zero_dim_with_dim), a dim in one of
    the forms the reduction accepts (int, negative int, tuple with some entries negative, None), keepdim."""
    form = draw(st.sampled_from(list(spec.dims)))
    shape = draw(hnp.array_shapes(min_dims=0 if form == "none" else 1, max_dims=max_dims, min_side=1,
                                  max_side=max_side))
    nd = len(shape)
    if form == "none":
        dim = None
    elif form == "int":
        dim = draw(st.integers(-nd, nd - 1))
    else:
        axes = draw(st.lists(st.integers(0, nd - 1), min_size=1, max_size=nd, unique=True))
        dim = tuple(a - nd if draw(st.booleans()) else a for a in axes)
    return Case(shape, dim, draw(st.booleans()), draw(st.integers(0, 2 ** 32 - 1)))


def draw_values(kind, shape, rng, dtype):
    n = math.prod(shape)
    if dtype == "int64":
        return np.asarray(rng.integers(-3, 4, shape), np.int64)
    if dtype == "bool":
        return np.asarray(rng.random(shape) < 0.5)
    if kind == "distinct":  # a shuffled grid, no two elements (or absolute values) equal
        v = (rng.permutation(n) + 1) * 0.25 * rng.choice([-1.0, 1.0], n)
    elif kind == "prod":
        v = rng.uniform(0.5, 1.5, n) * rng.choice([-1.0, 1.0], n)
    else:  # away from 0: norm(p=1)'s kink
        v = rng.uniform(0.1, 2, n) * rng.choice([-1.0, 1.0], n)
    return np.asarray(v.reshape(shape), dtype)


def _floats(out):
    return [o for o in (out if isinstance(out, tuple) else (out,)) if o.dtype.is_floating_point]


def _call(spec, case):
    return lambda L, x: spec.call(L, x, case.dim, case.keepdim)


@pytest.mark.parametrize("name,dtype", param_grid(NAMES, "float32", "float64"))
def test_reduction_against_torch(name, dtype):
    """Values, dtype, shape (keepdim), indices, grad_fn name, gradients by backward() and by
    autograd.grad(create_graph=True), and second order."""
    spec = SPECS[name]

    @hyp(20)
    @given(case=cases(spec))
    def check(case):
        x = draw_values(spec.values, case.shape, np.random.default_rng(case.seed), dtype)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # var/std with one element per row: dof <= 0
            # where the forward is NaN (dof <= 0), or a std or norm is 0, second derivatives are 0/0 in
            # formula-dependent places (torch gives NaN where numgrad, which avoids 0/0, gives 0)
            outs = _floats(_call(spec, case)(torch, torch.tensor(x)))
            root = name.startswith(("std", "norm"))
            singular = any(torch.isnan(o).any() or (root and (o == 0).any()) for o in outs)
            ngt.compare_with_torch(_call(spec, case), x, **TOL[dtype], second_order=not singular,
                                   second_order_rtol=TOL2[dtype]["rtol"], second_order_atol=TOL2[dtype]["atol"],
                                   check_grad_fn=True, seed=case.seed)
    check()


@pytest.mark.parametrize("dim", [0, -1, (0,)])
@pytest.mark.parametrize("name", param_grid(NAMES))
def test_zero_dim_with_dim(name, dim):
    """torch reduces a 0-d tensor over dim 0 or -1 (and (0,) where tuples are accepted), keepdim or not."""
    spec = SPECS[name]
    if isinstance(dim, tuple) and "tuple" not in spec.dims:
        pytest.skip("torch takes no tuple dim here")
    x = np.array(0.7)
    for keepdim in (False, True):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # var/std of one element: dof <= 0
            _same(lambda L, x, k=keepdim: spec.call(L, x, dim, k), x,
                  second_order="var" not in name and "std" not in name)


# (checker, examples, shape bounds): second order runs on smaller shapes, it costs a graph per element
FINITE_DIFFERENCES = {"gradcheck": (ngt.gradcheck, 10, dict(max_side=3)),
                      "gradgradcheck": (ngt.gradgradcheck, 4, dict(max_side=2, max_dims=2))}


@pytest.mark.parametrize("order", list(FINITE_DIFFERENCES))
@pytest.mark.parametrize("name", param_grid(DIFFERENTIABLE))
def test_reduction_finite_differences_float64(name, order):
    """numgrad's first and second derivatives against central finite differences in float64
    (numgrad.testing)."""
    spec = SPECS[name]
    checker, examples, bounds = FINITE_DIFFERENCES[order]

    @hyp(examples)
    @given(case=cases(spec, **bounds))
    def check(case):
        # var/std over one element is NaN: nothing to check there
        x = draw_values(spec.values, case.shape, np.random.default_rng(case.seed), "float64")
        t = numgrad.tensor(x, requires_grad=True)
        f = lambda t: spec.call(numgrad, t, case.dim, case.keepdim)
        out = f(t)
        outs = [o for o in (out if isinstance(out, tuple) else (out,)) if o.dtype.is_floating_point]
        if any(np.isnan(o.detach().numpy()).any() for o in outs):
            return
        assert checker(f, (t,))
    check()


@pytest.mark.parametrize("name,dtype", param_grid(NAMES, "int64", "bool"))
def test_reduction_of_int_and_bool(name, dtype):
    """sum/prod of int and bool give int64; mean, var, std, norm, softmax raise torch's error type;
    max/amax/argmax keep or index as torch does."""
    spec = SPECS[name]

    @hyp(8)
    @given(case=cases(spec))
    def check(case):
        x = draw_values(spec.values, case.shape, np.random.default_rng(case.seed), dtype)
        ngt.compare_with_torch(_call(spec, case), x, requires_grad=False, check_message=True)
    check()


# ---- specific behaviours ---------------------------------------------------------------------------

def _same(fn, *arrays, dtype="float64", **kw):
    opts = dict(TOL[dtype], second_order=True, second_order_rtol=TOL2[dtype]["rtol"],
                second_order_atol=TOL2[dtype]["atol"], check_grad_fn=True)
    opts.update(kw)
    ngt.compare_with_torch(fn, *arrays, **opts)


TIES = np.array([[1.0, 3.0, 3.0, 2.0], [5.0, 5.0, 5.0, 0.0], [-1.0, -1.0, -2.0, -2.0]])


@pytest.mark.parametrize("call", [
    pytest.param(lambda L, x: L.max(x), id="max() splits evenly"),
    pytest.param(lambda L, x: L.min(x), id="min() splits evenly"),
    pytest.param(lambda L, x: L.amax(x, 1), id="amax(dim) splits evenly"),
    pytest.param(lambda L, x: L.amin(x, (0, 1)), id="amin(dims) splits evenly"),
    pytest.param(lambda L, x: L.max(x, 1), id="max(dim) first index"),
    pytest.param(lambda L, x: L.min(x, 1, keepdim=True), id="min(dim) first index"),
    pytest.param(lambda L, x: L.max(x, 0), id="max(dim=0) first index"),
    pytest.param(lambda L, x: (L.argmax(x), L.argmax(x, 1), L.argmin(x, 1), L.argmin(x, 0, True)), id="argmax/argmin"),
    pytest.param(lambda L, x: x.norm(INF, 1), id="norm(inf) ties"),
    pytest.param(lambda L, x: x.norm(-INF), id="norm(-inf)"),
])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_ties(call, dtype):
    _same(call, TIES.astype(dtype), dtype=dtype)


def test_max_with_dim_returns_a_values_indices_namedtuple():
    x = np.array([[1.0, 7.0, 3.0], [9.0, 2.0, 9.0]])
    for name in ("max", "min"):
        ours = getattr(numgrad.tensor(x), name)(1)
        theirs = getattr(torch.tensor(x), name)(1)
        values, indices = ours
        assert len(ours) == 2 and ours[0] is ours.values and ours[1] is ours.indices
        ngt.assert_close(values, theirs.values, rtol=0, atol=0)
        ngt.assert_close(indices, theirs.indices, rtol=0, atol=0)
        assert indices.dtype is numgrad.int64 and values.dtype is numgrad.float64
        assert type(ours).__name__ == type(theirs).__name__ == name


def _nans(L, x):
    return L.where(x > 1.5, x, x * float("nan"))


SPECIAL = {
    "sum over ()": lambda L, x: x.sum(()),
    "sum of 0-d over dim 0": lambda L, x: x[0, 0].sum(0),
    "max of 0-d with dim": lambda L, x: L.max(x[0, 0], 0),
    "argmax of 0-d": lambda L, x: (L.argmax(x[0, 0]), L.argmax(x[0, 0], 0, keepdim=True)),
    "argmax keepdim no dim": lambda L, x: L.argmax(x, keepdim=True),
    "mean(dtype=float64)": lambda L, x: x.mean(dtype=L.float64),
    "sum(dtype=float64)": lambda L, x: x.sum(1, dtype=L.float64),
    "prod with a zero": lambda L, x: (x * (x > 0.5)).prod(1),
    "prod with two zeros": lambda L, x: (x * (x > 1.0)).prod(),
    "prod of zeros, dim": lambda L, x: (x * 0).prod(0),
    "var one element (dof<=0)": lambda L, x: x[:, :1].var(1),
    "std of constant (0 gradient nan)": lambda L, x: (x * 0 + 1).std(1),
    "var correction=2": lambda L, x: x.var(1, correction=2),
    "norm of zeros": lambda L, x: (x * 0).norm(dim=1),
    "norm(p=0)": lambda L, x: x.norm(0),
    "norm fro over 2 dims": lambda L, x: x.norm(dim=(0, 1)),
    "norm fro over 2 dims (negative), keepdim": lambda L, x: x.norm(dim=(-1, 0), keepdim=True),
    "logsumexp -inf rows": lambda L, x: L.logsumexp(x - INF, 1),
    "logsumexp large": lambda L, x: L.logsumexp(x * 1000, 1),
    "softmax large": lambda L, x: L.softmax(x * 1000, 0),
    "log_softmax dim=-1 keeps shape": lambda L, x: L.log_softmax(x, -1),
    "softmax 0-d": lambda L, x: L.softmax(x[0, 0], 0),
    "mean keepdim tuple": lambda L, x: x.mean((0, -1), keepdim=True),
    "nan in max": lambda L, x: (L.max(_nans(L, x)), L.max(_nans(L, x), 1), L.amax(_nans(L, x), 0)),
    "nan in sum": lambda L, x: _nans(L, x).sum(1),
}
SPECIAL_FIRST_ORDER = {"prod with two zeros", "prod of zeros, dim", "std of constant (0 gradient nan)",
                       "norm of zeros", "var one element (dof<=0)", "nan in max", "nan in sum",
                       "logsumexp -inf rows"}
@pytest.mark.parametrize("case,dtype", param_grid(list(SPECIAL), "float32", "float64"))
def test_special_reductions(case, dtype):
    x = np.array([[0.3, 1.7, 0.9, 2.0], [1.2, 0.4, 0.8, 1.9], [0.6, 1.1, 0.2, 1.4]], dtype)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _same(SPECIAL[case], x, dtype=dtype, second_order=case not in SPECIAL_FIRST_ORDER)


def test_dof_warning_matches_torch():
    x = np.array([[1.0], [2.0]])
    for name in ("var", "std"):
        with warnings.catch_warnings(record=True) as theirs:
            warnings.simplefilter("always")
            getattr(torch.tensor(x), name)(1)
        with warnings.catch_warnings(record=True) as ours:
            warnings.simplefilter("always")
            getattr(numgrad.tensor(x), name)(1)
        strip = lambda m: re.sub(r"\s*\(Triggered internally at [^)]*\)\s*$", "", str(m.message))
        assert [strip(w) for w in ours] == [strip(w) for w in theirs]
        assert [w.category for w in ours] == [w.category for w in theirs]


# ---- dtypes of reductions on int and bool ------------------------------------------------------------

@pytest.mark.parametrize("call", [
    pytest.param(lambda L, x: x.sum(), id="sum"), pytest.param(lambda L, x: x.sum(0), id="sum(0)"),
    pytest.param(lambda L, x: (x > 0).sum(), id="sum(bool)"),
    pytest.param(lambda L, x: (x > 0).sum(1, keepdim=True), id="sum(bool, dim)"),
    pytest.param(lambda L, x: x.prod(), id="prod"), pytest.param(lambda L, x: (x > 0).prod(1), id="prod(bool)"),
    pytest.param(lambda L, x: x.mean(), id="mean(int) raises"),
    pytest.param(lambda L, x: x.mean(0), id="mean(int, dim) raises"),
    pytest.param(lambda L, x: (x > 0).mean(), id="mean(bool) raises"),
    pytest.param(lambda L, x: x.mean(dtype=L.float64), id="mean(int, dtype=float64)"),
    pytest.param(lambda L, x: x.sum(dtype=L.float32), id="sum(int, dtype=float32)"),
    pytest.param(lambda L, x: x.max(), id="max(int)"), pytest.param(lambda L, x: x.max(1), id="max(int, dim)"),
    pytest.param(lambda L, x: (x > 0).amax(0), id="amax(bool)"),
    pytest.param(lambda L, x: x.argmax(), id="argmax(int)"),
    pytest.param(lambda L, x: x.var(), id="var(int) raises"),
    pytest.param(lambda L, x: x.std(0), id="std(int) raises"),
    pytest.param(lambda L, x: x.norm(), id="norm(int) raises"),
    pytest.param(lambda L, x: L.softmax(x, 0), id="softmax(int) raises"),
    pytest.param(lambda L, x: L.logsumexp(x, 0), id="logsumexp(int)"),
])
def test_int_and_bool_reduction_dtypes(call):
    x = np.array([[1, -2, 3], [4, 0, -6]], np.int64)
    ngt.compare_with_torch(call, x, requires_grad=False, check_message=True)


def test_mean_of_int_raises_torchs_error():
    with pytest.raises(RuntimeError) as theirs:
        torch.tensor([1, 2]).mean()
    with pytest.raises(RuntimeError) as ours:
        numgrad.tensor([1, 2]).mean()
    assert str(ours.value) == str(theirs.value)


# ---- errors: same type and message as torch --------------------------------------------------------

ERRORS = {
    "max() of empty": lambda L: L.max(L.zeros(0)),
    "min() of empty": lambda L: L.zeros(0, 3).min(),
    "argmax() of empty": lambda L: L.argmax(L.zeros(0)),
    "amax() of empty": lambda L: L.amax(L.zeros(0)),
    "max(dim) over empty dim": lambda L: L.max(L.zeros(0, 3), 0),
    "argmin(dim) over empty dim": lambda L: L.zeros(2, 0).argmin(1),
    "sum dim out of range": lambda L: L.zeros(2, 3).sum(2),
    "sum dim out of range (negative)": lambda L: L.zeros(2, 3).sum(-3),
    "mean tuple dim out of range": lambda L: L.zeros(2, 3).mean((0, 5)),
    "max dim out of range": lambda L: L.zeros(2, 3).max(2),
    "argmax dim out of range": lambda L: L.zeros(2, 3).argmax(-4),
    "0-d dim out of range": lambda L: L.zeros(()).sum(1),
    "softmax dim out of range": lambda L: L.softmax(L.zeros(2, 3), 2),
    "repeated dim": lambda L: L.zeros(2, 3).sum((0, 0)),
    "repeated dim (negative)": lambda L: L.zeros(2, 3).sum((1, -1)),
    "mean of int": lambda L: L.zeros(2, dtype=L.int64).mean(),
    "var of int": lambda L: L.zeros(2, dtype=L.int64).var(),
    "norm fro over 3 dims": lambda L: L.zeros(2, 3, 4).norm(dim=(0, 1, 2)),
}
ERRORS_OK = {  # torch does not raise: results must agree
    "sum of empty": lambda L: (L.zeros(0).sum(), L.zeros(0, 3).sum(0)),
    "mean of empty": lambda L: L.zeros(0).mean(),
    "prod of empty": lambda L: L.zeros(0, 2).prod(0),
    "max(dim) with empty other dim": lambda L: L.max(L.zeros(3, 0), 0),
}


@pytest.mark.parametrize("case", param_grid(list(ERRORS)))
def test_errors_match_torch(case):
    fn = ERRORS[case]
    with pytest.raises(Exception) as theirs:
        fn(torch)
    with pytest.raises(type(theirs.value)) as ours:
        fn(numgrad)
    assert str(ours.value) == str(theirs.value)


def test_dim_out_of_range_message():
    with pytest.raises(IndexError, match=re.escape("Dimension out of range (expected to be in range of [-2, 1], "
                                                   "but got 2)")):
        numgrad.zeros(2, 3).sum(2)


@pytest.mark.parametrize("case", param_grid(list(ERRORS_OK)))
def test_empty_reductions_that_torch_allows(case):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ngt.compare_with_torch(lambda L: ERRORS_OK[case](L))


# ---- large reductions: the parallel kernels ----------------------------------------------------------

LARGE = {
    "sum": lambda L, x: x.sum(),
    "sum(dim=0) few columns": lambda L, x: x.reshape(300, 1000).sum(0),
    "sum(dim=1)": lambda L, x: x.reshape(300, 1000).sum(1),
    "sum(dim=0) many columns": lambda L, x: x.reshape(30, 10000).sum(0),
    "sum(dims) middle": lambda L, x: x.reshape(10, 3000, 10).sum(1),
    "mean": lambda L, x: x.mean(),
    "mean(dim=-1, keepdim)": lambda L, x: x.reshape(3, 100000).mean(-1, keepdim=True),
    "max": lambda L, x: L.max(x),
    "max(dim)": lambda L, x: L.max(x.reshape(300, 1000), 0),
    "amax(dim=1)": lambda L, x: L.amax(x.reshape(3, 100000), 1),
    "argmax": lambda L, x: L.argmax(x),
    "argmin(dim=0)": lambda L, x: L.argmin(x.reshape(600, 500), 0),
    "min": lambda L, x: L.min(x),
    "norm": lambda L, x: x.norm(),
    "var": lambda L, x: x.var(),
    "std(dim)": lambda L, x: x.reshape(300, 1000).std(1),
    "logsumexp": lambda L, x: L.logsumexp(x, 0),
    "softmax": lambda L, x: L.softmax(x.reshape(1000, 300), 0),
    "prod(dim)": lambda L, x: (x.reshape(1000, 300) * 0.01 + 1).prod(0),
}
@pytest.mark.parametrize("case,dtype", param_grid(list(LARGE), "float32", "float64"))
def test_large_reductions(case, dtype):
    """300k elements take the parallel kernels; float32 sums agree with torch's within float32 rounding of
    the result (numgrad accumulates in double, torch pairwise in float)."""
    x = np.asarray(np.random.default_rng(7).standard_normal(300_000), dtype)
    tol = dict(rtol=1e-5, atol=1e-4) if dtype == "float32" else dict(rtol=1e-10, atol=1e-10)
    ngt.compare_with_torch(LARGE[case], x, **tol, check_grad_fn=True)

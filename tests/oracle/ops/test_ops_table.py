"""Every ELEMENTWISE op-table entry against torch: forward, dtype, grad_fn, gradients, finite differences, 2nd order."""
import dataclasses
import subprocess
import sys

import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import numgrad
from helpers.op_compare import hyp, param_grid
from numgrad import testing as ngt
from numgrad.spec.table import AWAY_FROM_TIES, ELEMENTWISE, NONZERO, NOT_IMPLEMENTED, POSITIVE, PROBABILITY, REAL, UNIT


# forward values and first-order gradients (float32 transcendentals may differ from torch's by a few ulps)
TOL = {"float32": dict(rtol=1e-5, atol=1e-6), "float64": dict(rtol=1e-12, atol=1e-12),
       # half: each op rounds once from float, as torch's; gradients composed of several ops round more often
       "float16": dict(rtol=1e-3, atol=1e-3, grad_rtol=1e-2, grad_atol=1e-2)}
# second order: the derivative expressions are composed from several rounded ops
TOL2 = {"float32": dict(rtol=1e-4, atol=1e-5), "float64": dict(rtol=1e-10, atol=1e-10)}


def _gelu(L):
    if L is torch:
        return torch.nn.functional.gelu
    nn_gelu = getattr(getattr(getattr(L, "nn", None), "functional", None), "gelu", None)
    return nn_gelu or L.functional.gelu


def _unary(name):
    return lambda L, a: getattr(L, name)(a)


# entry name -> the call that exercises it, written once for both libraries (`L` is torch or numgrad)
CALLS = {
    "add": lambda L, a, b: a + b,
    "sub": lambda L, a, b: a - b,
    "rsub": lambda L, a, b: b - a,
    "rsub_tensor": lambda L, a, b: L.rsub(a, b),
    "mul": lambda L, a, b: a * b,
    "div": lambda L, a, b: a / b,
    "pow": lambda L, a, b: a ** b,
    "pow_tensor": lambda L, a, b: a ** b,
    "pow_bool": lambda L, a, b: a ** b,
    "rpow": lambda L, a, b: b ** a,
    "neg": lambda L, a: -a,
    "clamp": lambda L, a, lo, hi: L.clamp(a, min=lo, max=hi),
    "clamp_min": lambda L, a, lo: L.clamp(a, min=lo),
    "clamp_max": lambda L, a, hi: L.clamp(a, max=hi),
    "clamp_min_fn": lambda L, a, lo: L.clamp_min(a, lo),
    "clamp_max_fn": lambda L, a, hi: L.clamp_max(a, hi),
    "clamp_tensor": lambda L, a, lo, hi: L.clamp(a, lo, hi),
    "clamp_min_tensor": lambda L, a, lo: L.clamp_min(a, lo),
    "clamp_max_tensor": lambda L, a, hi: L.clamp_max(a, hi),
    "maximum": lambda L, a, b: L.maximum(a, b),
    "minimum": lambda L, a, b: L.minimum(a, b),
    "where": lambda L, c, a, b: L.where(c, a, b),
    "masked_fill": lambda L, a, c, v: a.masked_fill(c, v),
    "floor_divide": lambda L, a, b: a // b,
    "remainder": lambda L, a, b: a % b,
    "remainder_scalar": lambda L, a, b: a % b,
    "rremainder": lambda L, a, b: b % a,
    "fmod": lambda L, a, b: L.fmod(a, b),
    "fmod_scalar": lambda L, a, b: L.fmod(a, b),
    "gelu": lambda L, a: _gelu(L)(a),
    "gelu_tanh": lambda L, a: _gelu(L)(a, approximate="tanh"),
    "eq": lambda L, a, b: a == b,
    "ne": lambda L, a, b: a != b,
    "lt": lambda L, a, b: a < b,
    "le": lambda L, a, b: a <= b,
    "gt": lambda L, a, b: a > b,
    "ge": lambda L, a, b: a >= b,
    "logical_and": lambda L, a, b: L.logical_and(a, b),
    "logical_or": lambda L, a, b: L.logical_or(a, b),
    "logical_xor": lambda L, a, b: L.logical_xor(a, b),
    # activations (nn.functional) and the pointwise functions with options
    **{name: (lambda name: lambda L, a: getattr(L.nn.functional, name)(a))(name)
       for name in ("silu", "mish", "hardsigmoid", "hardswish", "selu", "logsigmoid")},
    "selu_result": lambda L, a: L.nn.functional.selu(a * 1, inplace=True),
    "hardtanh": lambda L, a, lo, hi: L.nn.functional.hardtanh(a, lo, hi),
    "elu": lambda L, a, alpha: L.nn.functional.elu(a, alpha),
    "elu_result": lambda L, a, alpha: L.nn.functional.elu(a * 1, alpha, inplace=True),
    "celu": lambda L, a, alpha: L.nn.functional.celu(a, alpha),
    "leaky_relu": lambda L, a, slope: L.nn.functional.leaky_relu(a, slope),
    "leaky_relu_result": lambda L, a, slope: L.nn.functional.leaky_relu(a * 1, slope, inplace=True),
    "celu_result": lambda L, a, alpha: L.nn.functional.celu(a * 1, alpha, inplace=True),
    "softplus": lambda L, a, beta, threshold: L.nn.functional.softplus(a, beta, threshold),
    "softshrink": lambda L, a, lambd: L.nn.functional.softshrink(a, lambd),
    "hardshrink": lambda L, a, lambd: L.hardshrink(a, lambd),
    "threshold": lambda L, a, th, v: L.nn.functional.threshold(a, th, v),
    "threshold_in_place": lambda L, a, th, v: L.nn.functional.threshold(a * 1, th, v, inplace=True),
    "copysign": lambda L, a, b: L.copysign(a, b),
    "copysign_scalar": lambda L, a, b: a.copysign(b),
    "logaddexp": lambda L, a, b: L.logaddexp(a, b),
    "logaddexp2": lambda L, a, b: a.logaddexp2(b),
    "hypot": lambda L, a, b: L.hypot(a, b),
    "xlogy": lambda L, a, b: L.xlogy(a, b),
    "xlogy_scalar_other": lambda L, a, b: L.xlogy(a, b),
    "xlogy_scalar_self": lambda L, a, b: L.xlogy(b, a),
    "lerp": lambda L, a, b, w: L.lerp(a, b, w),
    "lerp_tensor": lambda L, a, b, w: a.lerp(b, w),
    "logit": lambda L, a: L.logit(a),
    "logit_eps": lambda L, a, eps: a.logit(eps),
    "nan_to_num": lambda L, a, v, p, m: L.nan_to_num(a, v, p, m),
    "heaviside": lambda L, a, b: L.heaviside(a, b.to(a.dtype)),
    "addcmul": lambda L, a, b, c, v: L.addcmul(a, b, c, value=v),
    "addcdiv": lambda L, a, b, c, v: a.addcdiv(b, c, value=v),
    # at::mul(Tensor, Scalar) / at::div(Tensor, Scalar) are reached through trapezoid: its [a, a] samples integrate
    # to exactly a * dx, and with x = [0, b] to (b * (a + a)) / 2
    "mul_scalar": lambda L, a, b: L.trapezoid(L.stack([a, a], -1), dx=b),
    "div_scalar": lambda L, a, b: L.trapezoid(L.stack([a, a], -1), L.tensor([0.0, b], dtype=a.dtype, device=a.device)),
}
for _entry in ELEMENTWISE.values():  # a published entry is numgrad.<name>, as torch.<name> is
    if _entry.published and len(_entry.inputs) == 1:
        CALLS.setdefault(_entry.name, _unary(_entry.name))

# values drawn for scalar-only inputs (exponents, bases, clamp bounds); ints exercise promotion
SCALARS = {
    ("rsub", "b"): [2.5, -1.0, 3],
    ("pow", "b"): [2.5, 2, 3, -1.5, 0.5, 0, 1, -2, 0.0],
    ("rpow", "b"): [2.5, 0.5, 2, 1.5],
    ("pow_bool", "b"): [True, False],
    ("clamp", "lo"): [-1.0, -0.5, 0],
    ("clamp", "hi"): [0.5, 1.0, 2],
    ("clamp_min", "lo"): [-0.5, 0.0, 0.5, 1],
    ("clamp_max", "hi"): [-0.5, 0.0, 0.5, 1],
    ("remainder_scalar", "b"): [2.5, -1.5, 3, -2],
    ("rremainder", "b"): [2.5, -3, 7],
    ("fmod_scalar", "b"): [2.5, -1.5, 3, -2],
    ("masked_fill", "v"): [-1e4, 2.5, -1, 0, True],  # (-inf: see test_indexing; finite differences need finite)
    ("clamp_min_fn", "lo"): [-0.5, 0.0, 0.5, 1],
    ("clamp_max_fn", "hi"): [-0.5, 0.0, 0.5, 1],
    ("hardtanh", "lo"): [-1.0, -0.5, 0],
    ("hardtanh", "hi"): [1.0, 0.5, 2],
    ("elu", "alpha"): [1.0, 0.5, 2],
    ("elu_result", "alpha"): [1.0, 0.5, 2],
    ("celu", "alpha"): [1.0, 0.5, 2],
    ("celu_result", "alpha"): [1.0, 0.5, 2],
    ("leaky_relu", "slope"): [0.01, 0.2, -0.5, 2, 0],
    ("leaky_relu_result", "slope"): [0.01, 0.2, 2, 0.0],
    ("softplus", "beta"): [1.0, 2, 0.5],
    ("softplus", "threshold"): [20.0, 1.0, 2],
    ("softshrink", "lambd"): [0.5, 0.25, 1],
    ("hardshrink", "lambd"): [0.5, 0.25, 1],
    ("threshold", "th"): [0.1, -0.5, 1],
    ("threshold", "v"): [20.0, -1.5, 0],
    ("threshold_in_place", "th"): [0.1, -0.5, 1],
    ("threshold_in_place", "v"): [20.0, -1.5, 0],
    ("copysign_scalar", "b"): [-1.0, 2.5, 0.0, -0.0, 3, -2],
    ("xlogy_scalar_other", "b"): [2.5, 0.5, 3],
    ("xlogy_scalar_self", "b"): [2.5, 0.0, -1.5, 3],
    ("lerp", "w"): [0.5, 0.25, 0.75, 1.0, 0, 2, -0.5],
    ("logit_eps", "eps"): [0.1, 0.25, 1e-6],
    ("nan_to_num", "v"): [0.0, 1.5],
    ("nan_to_num", "p"): [1e4, 3.0],
    ("nan_to_num", "m"): [-1e4, -2.0],
    ("addcmul", "v"): [1, 2, 0.5, -1.5, 0],
    ("addcdiv", "v"): [1, 2, 0.5, -1.5],
    ("mul_scalar", "b"): [2.5, 0.5, -1.0, 3],
    ("div_scalar", "b"): [2.0, 0.5, -1.5],
}

NAMES = sorted(ELEMENTWISE)
# entries with derivatives (floor_divide records a node, but torch defines no derivative for it)
DIFFERENTIABLE = [n for n in NAMES if ELEMENTWISE[n].grads and NOT_IMPLEMENTED not in ELEMENTWISE[n].grads.values()]


def test_every_entry_is_covered():
    assert set(CALLS) == set(ELEMENTWISE), "map new op-table entries to a call in CALLS"
    for entry in ELEMENTWISE.values():
        for nm in entry.scalar_only:
            assert (entry.name, nm) in SCALARS, f"give scalar values for {entry.name}.{nm}"
        for nm, dom in entry.domain.items():
            assert dom in (REAL, POSITIVE, NONZERO, UNIT, AWAY_FROM_TIES, PROBABILITY), (entry.name, nm, dom)
        if entry.kind == "compare":
            assert not entry.grads and not entry.node
        else:
            assert (entry.node.endswith(tuple("0123456789")) and "Backward" in entry.node) or \
                entry.node == "torch::autograd::NotImplemented"


# ---- drawing cases from an entry ------------------------------------------------------------------

@dataclasses.dataclass
class Case:
    shapes: dict  # tensor input -> shape
    scalars: dict  # scalar-only input -> Python number
    seed: int


# torch's own ClampBackward0 cannot send a gradient to an `a` smaller than the broadcast result
FULL_FIRST = {"clamp_tensor"}


@st.composite
def cases(draw, entry, max_side=4, max_dims=3):
    tensor_inputs = [nm for nm in entry.inputs if nm not in entry.scalar_only]
    drawn = draw(hnp.mutually_broadcastable_shapes(num_shapes=len(tensor_inputs), min_dims=0, max_dims=max_dims,
                                                   min_side=1, max_side=max_side))
    shapes = list(drawn.input_shapes)
    if entry.name in FULL_FIRST:
        shapes[0] = drawn.result_shape
    scalars = {nm: draw(st.sampled_from(SCALARS[(entry.name, nm)])) for nm in entry.scalar_only}
    return Case(dict(zip(tensor_inputs, shapes)), scalars, draw(st.integers(0, 2 ** 32 - 1)))


def _signs(rng, shape):
    return rng.choice(np.array([-1.0, 1.0]), size=shape)


def draw_values(entry, nm, shape, rng, dtype):
    """Values for tensor input `nm` in its declared domain. Float draws stay away from kinks (|x| >= 0.1) and,
    for 'distinct', on a grid offset from the other operands' grid so that ties never happen."""
    if nm in entry.bool_inputs:
        return np.asarray(rng.random(shape) < 0.5)
    dom = entry.domain.get(nm, REAL)
    if dtype in ("int64", "int32", "uint8", "bool"):
        if dom == POSITIVE:
            v = rng.integers(1, 5, shape)
        elif dom == NONZERO:
            v = rng.choice(np.array([-3, -2, -1, 1, 2, 3]), size=shape)
        else:
            v = rng.integers(-3, 4, shape)
        return np.asarray(v != 0 if dtype == "bool" else v, dtype=dtype)
    if entry.name == "isnan":
        v = _signs(rng, shape) * rng.uniform(0.1, 2, shape)
        r = rng.random(shape)
        v = np.where(r < 0.3, np.nan, np.where(r > 0.85, np.inf, v))
    elif entry.kind == "compare":  # a coarse grid: ties and zeros happen
        v = rng.integers(-2, 3, shape) * 0.5
    elif entry.name == "clamp_tensor" and nm in ("lo", "hi"):
        v = -rng.integers(1, 9, shape) * 0.25 if nm == "lo" else rng.integers(0, 9, shape) * 0.25
    elif dom == AWAY_FROM_TIES:
        v = (rng.integers(-8, 8, shape) + 0.5) * 0.25
    elif AWAY_FROM_TIES in entry.domain.values():
        v = rng.integers(-8, 9, shape) * 0.25
    elif dom == POSITIVE:
        v = rng.uniform(0.25, 2, shape)
    elif dom == NONZERO:
        v = _signs(rng, shape) * rng.uniform(0.25, 2, shape)
    elif dom == UNIT:
        v = rng.uniform(-0.9, 0.9, shape)
    elif dom == PROBABILITY:
        v = rng.uniform(0.05, 0.95, shape)
    else:
        v = _signs(rng, shape) * rng.uniform(0.1, 2, shape)
    return np.asarray(v, dtype=dtype)


def make_args(entry, case, dtype):
    """The call's arguments in the entry's input order: numpy arrays and Python scalars."""
    rng = np.random.default_rng(case.seed)
    return [case.scalars[nm] if nm in entry.scalar_only else draw_values(entry, nm, case.shapes[nm], rng, dtype)
            for nm in entry.inputs]


def numgrad_args(args):
    """numgrad tensors for the arrays (floating ones require grad); scalars pass unchanged."""
    return [numgrad.tensor(a, requires_grad=a.dtype.kind == "f") if isinstance(a, np.ndarray) else a for a in args]


def check_against_torch(fn, args, dtype, seed=0, second_order=True, tol=None):
    """fn on torch and numgrad (numgrad.testing.compare_with_torch): forward values, dtype, requires_grad,
    grad_fn name; input gradients by backward() (the generated kernels) and by autograd.grad(create_graph=True)
    (the derivative run as tensor ops); then second order, w.r.t. the inputs and the grad_output."""
    ngt.compare_with_torch(fn, *args, **(tol or TOL[dtype]), second_order=second_order, second_order_rtol=TOL2[dtype]["rtol"],
                           second_order_atol=TOL2[dtype]["atol"], check_grad_fn=True, seed=seed)





# ---- the generated tests --------------------------------------------------------------------------

@pytest.mark.parametrize("name,dtype", param_grid(NAMES, "float32", "float64"))
def test_forward_and_gradients(name, dtype):
    entry, fn = ELEMENTWISE[name], CALLS[name]

    @hyp(15)
    @given(case=cases(entry))
    def check(case):
        # where torch defines no second derivative, test_second_order_refused checks that both refuse it
        check_against_torch(fn, make_args(entry, case, dtype), dtype, seed=case.seed,
                            second_order=not entry.backward_aten)
    check()


@pytest.mark.parametrize("name", [n for n in NAMES if ELEMENTWISE[n].backward_aten])
def test_second_order_refused(name):
    """torch defines no derivative of some backward ops (hardsigmoid_backward): differentiating the gradient raises
    its error, as torch's does."""
    entry, fn = ELEMENTWISE[name], CALLS[name]
    args = make_args(entry, Case({nm: (3,) for nm in entry.inputs if nm not in entry.scalar_only},
                                 {nm: SCALARS[(name, nm)][0] for nm in entry.scalar_only}, 0), "float64")
    messages = []
    for L in (torch, numgrad):
        xs = [L.tensor(a, requires_grad=True) if isinstance(a, np.ndarray) else a for a in args]
        (g,) = L.autograd.grad(fn(L, *xs).sum(), xs[0], create_graph=True)
        assert g.requires_grad and type(g.grad_fn).__name__ == "NotImplemented"
        with pytest.raises(RuntimeError) as info:
            g.sum().backward()
        messages.append(str(info.value))
    assert messages[0] == messages[1] == f"derivative for aten::{entry.backward_aten} is not implemented"


# (checker, examples, shape bounds): second order runs on smaller shapes, it costs a graph per element
FINITE_DIFFERENCES = {"gradcheck": (ngt.gradcheck, 10, dict(max_side=3)),
                      "gradgradcheck": (ngt.gradgradcheck, 4, dict(max_side=2, max_dims=2))}


# (no gradgradcheck where torch defines no second derivative: see test_second_order_refused)
@pytest.mark.parametrize("name,order", [(n, order) for order in FINITE_DIFFERENCES for n in DIFFERENTIABLE
                                        if order == "gradcheck" or not ELEMENTWISE[n].backward_aten])
def test_finite_differences_float64(name, order):
    """Analytical first (gradcheck) and second (gradgradcheck) derivatives against central finite
    differences, in float64, through numgrad.testing."""
    entry, fn = ELEMENTWISE[name], CALLS[name]
    checker, examples, bounds = FINITE_DIFFERENCES[order]

    @hyp(examples)
    @given(case=cases(entry, **bounds))
    def check(case):
        args = numgrad_args(make_args(entry, case, "float64"))
        diff = [i for i, a in enumerate(args) if isinstance(a, numgrad.Tensor) and a.requires_grad]

        def f(*xs):
            full = list(args)
            for i, x in zip(diff, xs):
                full[i] = x
            return fn(numgrad, *full)
        assert checker(f, [args[i] for i in diff])
    check()


@pytest.mark.parametrize("name", param_grid(NAMES))
def test_half_inputs(name):
    """float16 tensors (computed in float, rounded on store): values, dtype, grad_fn and first-order gradients."""
    entry, fn = ELEMENTWISE[name], CALLS[name]

    @hyp(4)
    @given(case=cases(entry))
    def check(case):
        ngt.compare_with_torch(fn, *make_args(entry, case, "float16"), **TOL["float16"], check_grad_fn=True,
                               seed=case.seed)
    check()


def check_same_result_or_error(fn, args):
    """Non-float inputs: torch's result (values and dtype), or an error of torch's exception type."""
    ngt.compare_with_torch(fn, *args, requires_grad=False, check_message=True)


@pytest.mark.parametrize("name,dtype", param_grid(NAMES, "int64", "int32", "uint8", "bool"))
def test_integer_and_bool_inputs(name, dtype):
    """Integer and bool tensors: result dtype and values as torch (int/int -> float32, int * 2.5 -> float32,
    exp(int) -> float32, int32 + 1 -> int32, uint8 wrapping, ...), or torch's exception where torch refuses."""
    entry, fn = ELEMENTWISE[name], CALLS[name]

    @hyp(6)
    @given(case=cases(entry))
    def check(case):
        check_same_result_or_error(fn, make_args(entry, case, dtype))
    check()


@pytest.mark.parametrize("name,dtype", param_grid(NAMES, "float32", "float64"))
def test_empty_tensors(name, dtype):
    entry, fn = ELEMENTWISE[name], CALLS[name]
    shapes = iter([(0, 3), (3,), (1, 3)])
    case = Case({nm: next(shapes) for nm in entry.inputs if nm not in entry.scalar_only},
                {nm: SCALARS[(name, nm)][0] for nm in entry.scalar_only}, 0)
    check_against_torch(fn, make_args(entry, case, dtype), dtype, second_order=not entry.backward_aten)


# ---- Python scalars as operands (torch's wrapped numbers) --------------------------------------------

SCALAR_OPERAND_CALLS = {
    "t+2.5": lambda L, a: a + 2.5, "2.5+t": lambda L, a: 2.5 + a, "t+2": lambda L, a: a + 2,
    "t-2.5": lambda L, a: a - 2.5, "2.5-t": lambda L, a: 2.5 - a, "2-t": lambda L, a: 2 - a,
    "t*3": lambda L, a: a * 3, "3*t": lambda L, a: 3 * a, "t*-0.5": lambda L, a: a * -0.5,
    "t/2": lambda L, a: a / 2, "2/t": lambda L, a: 2 / a, "t**2": lambda L, a: a ** 2, "2**t": lambda L, a: 2 ** a,
    "t**0.5": lambda L, a: a ** 0.5, "t**-1": lambda L, a: a ** -1, "square": lambda L, a: L.square(a),
    "add(alpha=2)": lambda L, a: L.add(a, a * 2, alpha=2), "sub(alpha=3)": lambda L, a: L.sub(a, a * a, alpha=3),
    "t==1.5": lambda L, a: a == 1.5, "t>0": lambda L, a: a > 0, "maximum(t,0-d)": lambda L, a: L.maximum(a, a[0]),
}


@pytest.mark.parametrize("call,dtype", param_grid(list(SCALAR_OPERAND_CALLS),
                                               "float32", "float64", "int64"))
def test_scalar_operands(call, dtype):
    fn = SCALAR_OPERAND_CALLS[call]
    x = np.array([0.5, 1.5, 2.0, 3.0], dtype=dtype) if dtype != "int64" else np.array([1, 2, 3, 4])
    if dtype == "int64":
        check_same_result_or_error(fn, [x])
    else:
        check_against_torch(fn, [x], dtype)


# ---- special values --------------------------------------------------------------------------------

NAN, INF = float("nan"), float("inf")

SPECIAL = {
    # subgradient choices: torch's, at the kink
    "relu'(0)=0": (lambda L, a: L.relu(a), [[-1.0, 0.0, 2.0]]),
    "abs'(0)=0": (lambda L, a: L.abs(a), [[-1.0, 0.0, 2.0]]),
    "sign'(0)=0": (lambda L, a: L.sign(a), [[-1.0, 0.0, 2.0]]),
    "sqrt'(0)=inf": (lambda L, a: L.sqrt(a), [[0.0, 1.0, 4.0]]),
    "rsqrt(0)=inf": (lambda L, a: L.rsqrt(a), [[0.0, 1.0, 4.0]]),
    "log(0)=-inf": (lambda L, a: L.log(a), [[0.0, 1.0, 4.0]]),
    "reciprocal(0)": (lambda L, a: L.reciprocal(a), [[0.0, -0.0, 2.0]]),
    "x/0": (lambda L, a, b: a / b, [[1.0, -1.0, 0.0], [0.0, 0.0, 0.0]]),
    "clamp at bounds passes": (lambda L, a: L.clamp(a, 0.0, 1.0), [[-1.0, 0.0, 0.5, 1.0, 2.0]]),
    "clamp_min at bound": (lambda L, a: L.clamp(a, min=0.5), [[0.0, 0.5, 1.0]]),
    "clamp_max at bound": (lambda L, a: L.clamp(a, max=0.5), [[0.0, 0.5, 1.0]]),
    "clamp min==max": (lambda L, a: L.clamp(a, 0.5, 0.5), [[0.0, 0.5, 1.0]]),
    "clamp tensor bounds ties": (lambda L, a, lo, hi: L.clamp(a, lo, hi),
                                 [[0.0, 1.0, -1.0, 0.5], [0.0, 0.0, -1.0, 0.5], [1.0, 1.0, 0.0, 0.5]]),
    "clamp tensor min only": (lambda L, a, lo: L.clamp(a, min=lo), [[0.0, 1.0, -1.0], [0.0, 0.5, 0.0]]),
    "clamp tensor max only": (lambda L, a, hi: L.clamp(a, max=hi), [[0.0, 1.0, -1.0], [0.0, 0.5, 0.0]]),
    "maximum ties split": (lambda L, a, b: L.maximum(a, b), [[1.0, 2.0, 3.0], [1.0, 0.0, 3.0]]),
    "minimum ties split": (lambda L, a, b: L.minimum(a, b), [[1.0, 2.0, 3.0], [1.0, 0.0, 3.0]]),
    "0**2.5": (lambda L, a: a ** 2.5, [[0.0, 1.0, 2.0]]),
    "0**0": (lambda L, a: a ** 0, [[0.0, 1.0, 2.0]]),
    "0**0.5": (lambda L, a: a ** 0.5, [[0.0, 1.0, 2.0]]),
    "(-1)**2": (lambda L, a: a ** 2, [[-1.0, -2.0, 0.0]]),
    "(-1)**0.5 is nan": (lambda L, a: a ** 0.5, [[-1.0, 4.0]]),
    "tensor**tensor at 0": (lambda L, a, b: a ** b, [[0.0, 0.0, 0.0, 2.0], [0.0, 2.5, 1.0, 0.0]]),
    "0**tensor": (lambda L, a: 0.0 ** a, [[0.0, 1.0, 2.5]]),
    "tanh saturates": (lambda L, a: L.tanh(a), [[-30.0, 0.0, 30.0]]),
    "sigmoid saturates": (lambda L, a: L.sigmoid(a), [[-100.0, 0.0, 100.0]]),
    "exp overflow": (lambda L, a: L.exp(a), [[100.0, -1000.0, 0.0]]),
    "where picks sides": (lambda L, c, a, b: L.where(c, a, b), [[True, False, True], [1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]),
}
NAN_FORWARD = {
    "maximum(nan, x)": (lambda L, a, b: L.maximum(a, b), [[NAN, 1.0, 2.0], [1.0, NAN, 0.0]]),
    "minimum(nan, x)": (lambda L, a, b: L.minimum(a, b), [[NAN, 1.0, 2.0], [1.0, NAN, 0.0]]),
    "clamp(nan)": (lambda L, a: L.clamp(a, 0.0, 1.0), [[NAN, 0.5, 2.0]]),
    "clamp_min(nan)": (lambda L, a: L.clamp(a, min=0.0), [[NAN, 0.5, -2.0]]),
    "clamp_max(nan)": (lambda L, a: L.clamp(a, max=0.0), [[NAN, 0.5, -2.0]]),
    "relu(nan)": (lambda L, a: L.relu(a), [[NAN, -1.0, 2.0]]),
    "abs(nan)": (lambda L, a: L.abs(a), [[NAN, -1.0]]),
    "sign(nan)": (lambda L, a: L.sign(a), [[NAN, -1.0]]),
    "sigmoid(nan)": (lambda L, a: L.sigmoid(a), [[NAN, -1.0]]),
    "where(nan)": (lambda L, c, a, b: L.where(c, a, b), [[True, False], [NAN, 1.0], [2.0, NAN]]),
    "nan comparisons": (lambda L, a, b: (a < b) | (a == b) | (a != b), [[NAN, 1.0], [NAN, NAN]]),
    "inf-inf": (lambda L, a, b: a - b, [[INF, -INF], [INF, -INF]]),
}
FIRST_ORDER_ONLY = {"tensor**tensor at 0", "0**tensor", "x/0"}


def _arrays(values, dtype):
    return [np.array(v, dtype=bool if isinstance(v[0], bool) else dtype) for v in values]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("case", param_grid(list(SPECIAL)))
def test_special_values(case, dtype):
    fn, values = SPECIAL[case]
    # at the singular points second derivatives are 0 * inf: NaN in torch in formula-dependent places
    check_against_torch(fn, _arrays(values, dtype), dtype, second_order=case not in FIRST_ORDER_ONLY)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("case", param_grid(list(NAN_FORWARD)))
def test_nan_propagates_in_forward(case, dtype):
    fn, values = NAN_FORWARD[case]
    ngt.compare_with_torch(fn, *_arrays(values, dtype), requires_grad=False, rtol=0, atol=0)


@pytest.mark.parametrize("case", param_grid(["maximum(nan, x)", "minimum(nan, x)", "clamp(nan)", "clamp_min(nan)",
                                          "clamp_max(nan)", "relu(nan)", "abs(nan)", "where(nan)"]))
def test_nan_gradients(case):
    """First-order gradients at NaN inputs follow torch (g passes through where torch passes it); second
    derivatives at a NaN input are NaN or 0 depending on how each library writes its formula."""
    fn, values = NAN_FORWARD[case]
    check_against_torch(fn, _arrays(values, "float64"), "float64", second_order=False)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_clamp_tensor_min_above_max(dtype):
    """min > max: torch returns max everywhere, and the whole gradient goes to max."""
    lo = np.array([1.0, 1.0, 1.0], dtype)
    hi = np.array([0.0, 0.0, 0.0], dtype)
    a = np.array([-1.0, 0.5, 2.0], dtype)
    check_against_torch(lambda L, a, lo, hi: L.clamp(a, lo, hi), [a, lo, hi], dtype)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_large_inputs_take_the_parallel_kernel(dtype):
    """Above the parallel threshold the generated prange loop runs, forward and backward."""
    rng = np.random.default_rng(0)
    a = np.asarray(rng.uniform(0.25, 2, (300, 400)), dtype)
    b = np.asarray(rng.uniform(0.25, 2, (400,)), dtype)
    # b's gradient sums 300 rows: float32 sums in torch's order and in ours differ by a few ulps of the sum
    check_against_torch(lambda L, a, b: (a * b).sin() + a / b + L.maximum(a, b) ** 1.5, [a, b], dtype,
                        second_order=False, tol=dict(rtol=1e-4, atol=1e-5) if dtype == "float32" else None)


# ---- the helpers these tests rely on (numgrad.testing) --------------------------------------------

ASSERT_CLOSE_CASES = [
    ([1.0, 2.0, 3.0], [1.0, 2.5, 3.0], {}),
    (2.0, 2.5, {}),
    ([[2.0]], [[2.5]], {}),
    ([1, 2, 3], [1, 2, 4], {}),
    ([True, False], [True, True], {}),
    ([1.0, 2.0], [1.0, 2.0, 3.0], {}),
    ([0.0, 1.0], [1e-9, 1.0], {}),
    ([NAN, 1.0], [NAN, 2.0], {"equal_nan": True}),
    ([NAN], [NAN], {}),
    ([INF], [-INF], {}),
    ([INF], [INF], {}),
    ([1.0, 5.0], [0.0, 1.0], {}),
    ([1.0], [1.1], {"rtol": 0.2, "atol": 0.0}),
    ([1.0], [2.0], {"msg": "custom"}),
]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("actual,expected,kw", ASSERT_CLOSE_CASES)
def test_assert_close_matches_torch_testing(actual, expected, kw, dtype):
    def run(f, make):
        try:
            f(make(actual), make(expected), **kw)
            return "ok"
        except Exception as exc:  # noqa: BLE001
            return f"{type(exc).__name__}: {exc}"

    def dt(v):
        first = np.asarray(v).reshape(-1)[0]
        return None if isinstance(first, (np.bool_, np.integer)) else getattr(torch, dtype)
    expected_outcome = run(torch.testing.assert_close, lambda v: torch.tensor(v, dtype=dt(v)))
    assert run(ngt.assert_close, lambda v: numgrad.tensor(v, dtype=dt(v) and getattr(numgrad, dtype))) == \
        expected_outcome
    # torch tensors and numpy arrays are accepted on either side
    assert run(ngt.assert_close, lambda v: torch.tensor(v, dtype=dt(v))) == expected_outcome


def test_assert_close_mixed_kinds_and_dtype_check():
    ngt.assert_close(numgrad.tensor([1.0, 2.0]), torch.tensor([1.0, 2.0]))
    ngt.assert_close(numgrad.tensor([1.0, 2.0]), np.array([1.0, 2.0], np.float32))
    ngt.assert_close(numgrad.tensor(3.0), 3.0)
    ngt.assert_close([numgrad.tensor(1.0), (numgrad.tensor([2, 3]),)], [torch.tensor(1.0), (torch.tensor([2, 3]),)])
    with pytest.raises(AssertionError, match=r"attribute 'dtype' do not match: torch.float32 != torch.float64"):
        ngt.assert_close(numgrad.tensor([1.0]), np.array([1.0]))
    ngt.assert_close(numgrad.tensor([1.0]), np.array([1.0]), check_dtype=False)
    with pytest.raises(AssertionError, match=r"The failure occurred for item \[1\]\[0\]"):
        ngt.assert_close([1.0, [2.0]], [1.0, [3.0]])
    with pytest.raises(ValueError, match="Both 'rtol' and 'atol' must be either specified or omitted"):
        ngt.assert_close(numgrad.tensor([1.0]), numgrad.tensor([1.0]), rtol=1e-3)
    with pytest.raises(AssertionError, match="^XTensor-likes"):
        ngt.assert_close(numgrad.tensor([1.0, 2.0]), numgrad.tensor([1.0, 3.0]), msg=lambda m: "X" + m)
    assert ngt.default_tolerances(numgrad.float32) == (1.3e-6, 1e-5)
    assert ngt.default_tolerances(torch.float64, numgrad.int64) == (1e-7, 1e-7)


_FACTOR = [2]


class _Square(numgrad.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * x * _FACTOR[0]


def test_gradcheck_passes_good_and_catches_wrong_gradients():
    x = numgrad.tensor(np.array([0.3, -1.2, 2.0]), requires_grad=True)
    y = numgrad.tensor(np.array([[0.5], [1.5]]), requires_grad=True)
    assert ngt.gradcheck(lambda a, b: (a * b).sin() + a, (x, y))
    assert ngt.gradcheck(lambda a: (a * a, a.sum()), x.float().detach().requires_grad_())  # float32 is upcast
    _FACTOR[0] = 2
    assert ngt.gradcheck(_Square.apply, (x,))
    _FACTOR[0] = 1
    with pytest.raises(ngt.GradcheckError, match="Jacobian mismatch for output 0 with respect to input 0,\n"
                                                 "numerical:tensor"):
        ngt.gradcheck(_Square.apply, (x,))
    assert isinstance(ngt.GradcheckError("x"), RuntimeError)
    assert ngt.gradcheck(_Square.apply, (x,), raise_exception=False) is False
    with pytest.raises(ValueError, match="at least one input tensor to require gradient"):
        ngt.gradcheck(lambda a: a * 2, (x.detach(),))


def test_gradgradcheck_passes_and_catches_wrong_second_derivatives():
    x = numgrad.tensor(np.array([0.3, -1.2, 2.0]), requires_grad=True)
    y = numgrad.tensor(np.array([0.5, 1.5, -0.7]), requires_grad=True)
    assert ngt.gradgradcheck(lambda a, b: a * b * a + a.sin(), (x, y))

    class Flat(numgrad.autograd.Function):  # right first derivative, but computed off the graph
        @staticmethod
        def forward(ctx, a):
            ctx.save_for_backward(a)
            return a * a * a

        @staticmethod
        def backward(ctx, g):
            (a,) = ctx.saved_tensors
            return g * numgrad.tensor(3 * a.detach().numpy() ** 2)
    assert ngt.gradcheck(Flat.apply, (x,))
    with pytest.raises(ngt.GradcheckError, match="Jacobian mismatch"):
        ngt.gradgradcheck(Flat.apply, (x,))


def test_compare_with_torch_reports_where_it_differs():
    a, b = np.array([0.5, 1.5, 2.5], np.float32), np.array([[1.0], [2.0]], np.float32)
    report = ngt.compare_with_torch(lambda L, a, b: (a * b).sin(), a, b, check_grad_fn=True)
    assert report.ok and "grad of input 1" in report.max_abs_errors
    report = ngt.compare_with_torch(lambda L, a: a.exp() if L is numgrad else a.exp() * (1 + 1e-3), a,
                                    raise_exception=False)
    assert not report.ok and report.differences[0].where == "output 0"
    assert report.differences[0].max_abs_error > 0
    with pytest.raises(AssertionError, match="grad of input 0"):
        ngt.compare_with_torch(lambda L, a: a * a if L is numgrad else a * a.detach(), a)
    with pytest.raises(AssertionError, match="dtype"):
        ngt.compare_with_torch(lambda L, a: a.double() if L is numgrad else a, a)
    assert ngt.compare_with_torch(lambda L, a: L.max(a, 0), np.array([[1.0, 5.0], [3.0, 2.0]]))
    assert ngt.compare_with_torch(lambda L, a: a.sum().item(), a)


def test_numgrad_testing_never_imports_torch():
    code = "import sys, numgrad, numgrad.testing; assert 'torch' not in sys.modules, 'torch was imported'"
    subprocess.run([sys.executable, "-c", code], check=True)


def test_testing_is_reachable_from_the_package():
    code = "import numgrad as torch; torch.testing.assert_close(torch.ones(2), torch.ones(2))"
    subprocess.run([sys.executable, "-c", code], check=True, capture_output=True)

"""The activations and pointwise functions of issue 30 against torch, beyond the op table's generated tests: kinks
and special values, in-place forms, the composites (glu, prelu, rrelu, softsign, tanhshrink), their modules, the
bitwise ops and isclose, and torch's errors."""
import numpy as np
import pytest
import torch

import numgrad
from numgrad import testing as ngt

NAN, INF = float("nan"), float("inf")


def _F(L):
    return L.nn.functional


def _outcome(fn, L, *arrays):
    """fn's result (dtype and values) or its exception (type and message)."""
    try:
        out = fn(L, *[L.tensor(a) for a in arrays])
    except Exception as exc:  # noqa: BLE001  (the point is to compare them)
        return f"{type(exc).__name__}: {exc}"
    if isinstance(out, bool):
        return out
    return str(out.dtype).replace("numgrad", "torch"), tuple(out.shape), np.asarray(out.tolist(), float).tolist()


def same_outcome(fn, *arrays):
    mine, theirs = _outcome(fn, numgrad, *arrays), _outcome(fn, torch, *arrays)
    if isinstance(theirs, tuple) and isinstance(mine, tuple):
        assert mine[:2] == theirs[:2]
        np.testing.assert_allclose(mine[2], theirs[2], rtol=1e-6, atol=1e-7, equal_nan=True)
    else:
        assert mine == theirs


# ---- kinks and special values: torch's subgradients and edge values --------------------------------------

KINK = [-3.0, -1.0, -0.5, 0.0, 0.5, 1.0, 3.0, 6.0]
SPECIAL = {
    "hardtanh at its bounds": (lambda L, a: _F(L).hardtanh(a), [KINK]),
    "hardtanh(-0.5, 0.5)": (lambda L, a: _F(L).hardtanh(a, -0.5, 0.5), [KINK]),
    "relu6 at 0 and 6": (lambda L, a: _F(L).relu6(a), [KINK]),
    "hardsigmoid at +-3": (lambda L, a: _F(L).hardsigmoid(a), [KINK]),
    "hardswish at +-3": (lambda L, a: _F(L).hardswish(a), [KINK]),
    "softshrink at +-lambd": (lambda L, a: _F(L).softshrink(a), [KINK]),
    "hardshrink at +-lambd": (lambda L, a: _F(L).hardshrink(a, 1.0), [KINK]),
    "elu at 0": (lambda L, a: _F(L).elu(a, 0.5), [KINK]),
    "selu at 0": (lambda L, a: _F(L).selu(a), [KINK]),
    "celu at 0": (lambda L, a: _F(L).celu(a, 2.0), [KINK]),
    "softplus at the threshold": (lambda L, a: _F(L).softplus(a, 2.0, 2.0), [KINK]),
    "softplus large": (lambda L, a: _F(L).softplus(a), [[-100.0, 25.0, 100.0]]),
    "logsigmoid tails": (lambda L, a: _F(L).logsigmoid(a), [[-100.0, -30.0, 0.0, 30.0, 100.0]]),
    "silu, mish tails": (lambda L, a: _F(L).silu(a) + _F(L).mish(a), [[-100.0, -30.0, 0.0, 30.0, 100.0]]),
    "copysign at +-0": (lambda L, a, b: L.copysign(a, b), [[0.0, -0.0, 1.0, -2.0], [-1.0, 1.0, -0.0, 0.0]]),
    "copysign by -0.0": (lambda L, a: a.copysign(-0.0), [[0.0, 1.5, -2.0]]),
    "sinc at 0": (lambda L, a: L.sinc(a), [[0.0, 1.0, -2.0, 0.5]]),
    "logit at 0 and 1": (lambda L, a: L.logit(a), [[0.0, 1.0, 0.5, 0.25]]),
    "logit eps bounds": (lambda L, a: L.logit(a, 0.25), [[0.0, 0.25, 0.5, 0.75, 1.0]]),
    "logaddexp infinities": (lambda L, a, b: L.logaddexp(a, b) + L.logaddexp2(a, b),
                             [[INF, -INF, 1.0, -INF], [INF, -INF, -INF, 2.0]]),
    "xlogy zeros and nan": (lambda L, a, b: L.xlogy(a, b), [[0.0, 0.0, 1.0, 2.0], [0.0, NAN, 0.0, 3.0]]),
    "lerp weight 1": (lambda L, a, b: L.lerp(a, b, 1.0) + L.lerp(a, b, 0.0), [[1e8, -3.0], [1.0, 7.0]]),
    "erfinv at +-1": (lambda L, a: L.erfinv(a), [[1.0, -1.0, 0.0, 0.999, -0.5]]),
    "frac of integers": (lambda L, a: L.frac(a), [[-3.0, 2.0, -2.5, 2.75, 0.0]]),
    "nan_to_num": (lambda L, a: L.nan_to_num(a), [[NAN, INF, -INF, 1.5]]),
    "nan_to_num values": (lambda L, a: a.nan_to_num(1.0, 2.0, -3.0), [[NAN, INF, -INF, 1.5]]),
}
# where a gradient comes from 0 * inf (or infinities), first order is what torch's formula gives; no second order
NO_SECOND_ORDER = {"logit at 0 and 1", "logaddexp infinities", "xlogy zeros and nan", "erfinv at +-1", "nan_to_num",
                   "nan_to_num values", "hardsigmoid at +-3", "softplus at the threshold"}


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("case", list(SPECIAL))
def test_special_values(case, dtype):
    fn, values = SPECIAL[case]
    arrays = [np.array(v, dtype) for v in values]
    ngt.compare_with_torch(fn, *arrays, check_grad_fn=True, second_order=case not in NO_SECOND_ORDER)


# ---- in-place forms ----------------------------------------------------------------------------------------

IN_PLACE = {
    "silu": lambda L, a: _F(L).silu(a * 1, inplace=True),
    "mish": lambda L, a: _F(L).mish(a * 1, inplace=True),
    "hardsigmoid": lambda L, a: _F(L).hardsigmoid(a * 1, True),
    "hardswish": lambda L, a: _F(L).hardswish(a * 1, True),
    "hardtanh": lambda L, a: _F(L).hardtanh(a * 1, -0.5, 0.5, True),
    "hardtanh_": lambda L, a: _F(L).hardtanh_(a * 1),
    "relu6": lambda L, a: _F(L).relu6(a * 3, inplace=True),
    "elu": lambda L, a: _F(L).elu(a * 1, 0.5, inplace=True),
    "elu_": lambda L, a: _F(L).elu_(a * 1),
    "selu": lambda L, a: _F(L).selu(a * 1, inplace=True),
    "selu_": lambda L, a: L.selu_(a * 1),
    "celu": lambda L, a: _F(L).celu(a * 1, 2.0, inplace=True),
    "celu_": lambda L, a: L.celu_(a * 1),
    "rrelu eval": lambda L, a: _F(L).rrelu(a * 1, inplace=True),
    "rrelu_": lambda L, a: L.rrelu_(a * 1),
    "copysign_": lambda L, a: (a * 1).copysign_(-1.0),
    "hypot_": lambda L, a: (a * 1).hypot_(a * 2),
    "xlogy_": lambda L, a: (a * 1).xlogy_(3.0),
    "lerp_": lambda L, a: (a * 1).lerp_(a * 3, 0.25),
    "logit_": lambda L, a: (a.abs() / 3).logit_(),
    "nan_to_num_": lambda L, a: (a * 1).nan_to_num_(),
    "frac_": lambda L, a: (a * 1).frac_(),
    "sinc_": lambda L, a: (a * 1).sinc_(),
    "erfinv_": lambda L, a: (a / 3).erfinv_(),
}


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", list(IN_PLACE))
def test_in_place_forms(name, dtype):
    """Values, the grad_fn torch records (EluBackward1 and CeluBackward1 read the result), gradients, second
    order where torch defines it."""
    a = np.array([[-2.5, -0.75, 0.3], [1.2, 2.0, -1.4]], dtype)
    ngt.compare_with_torch(IN_PLACE[name], a, check_grad_fn=True, second_order=name != "hardsigmoid")


def test_in_place_activation_of_a_leaf_is_refused_as_torch():
    for name in ("silu", "elu", "hardtanh"):
        same_outcome(lambda L, a: getattr(_F(L), name)(a.requires_grad_(), inplace=True), np.array([1.0, -1.0]))


@pytest.mark.parametrize("call", ["hardtanh", "relu6", "hardtanh_int_bounds"])
def test_integer_inputs_of_in_place_activations(call):
    fns = {"hardtanh": lambda L, a: _F(L).hardtanh(a, inplace=True), "relu6": lambda L, a: _F(L).relu6(a, True),
           "hardtanh_int_bounds": lambda L, a: _F(L).hardtanh(a, -2, 2)}
    same_outcome(fns[call], np.array([-3, 0, 5, 9]))


# ---- composites --------------------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape,dim", [((4,), 0), ((2, 6), -1), ((4, 3), 0), ((2, 4, 2), 1), ((3, 2, 2), -1)])
def test_glu(shape, dim, dtype):
    a = np.random.default_rng(0).standard_normal(shape).astype(dtype)
    ngt.compare_with_torch(lambda L, a: _F(L).glu(a, dim), a, check_grad_fn=True, second_order=True)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape,channels", [((5,), 1), ((5,), 5), ((3, 4), 1), ((3, 4), 4), ((2, 3, 4), 3),
                                            ((2, 3, 2, 2), 3), ((2, 3, 2, 2), 1)])
def test_prelu(shape, channels, dtype):
    rng = np.random.default_rng(1)
    a = rng.standard_normal(shape).astype(dtype)
    w = rng.uniform(0.1, 0.5, (channels,)).astype(dtype)
    ngt.compare_with_torch(lambda L, a, w: _F(L).prelu(a, w), a, w, check_grad_fn=True, second_order=True)
    ngt.compare_with_torch(lambda L, a, w: L.prelu(a, w) + a.prelu(w), a, w)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_rrelu_in_eval_is_leaky_relu_with_the_mean_slope(dtype):
    a = np.array([[-2.0, -0.5, 0.0], [0.5, 1.5, -3.0]], dtype)
    ngt.compare_with_torch(lambda L, a: _F(L).rrelu(a), a, check_grad_fn=True, second_order=True)
    ngt.compare_with_torch(lambda L, a: _F(L).rrelu(a, 0.1, 0.3) + L.rrelu(a, 0.2, 0.4), a, check_grad_fn=True)


def test_rrelu_in_training_draws_one_slope_per_negative_element():
    x = numgrad.tensor(np.linspace(-3, 3, 400), requires_grad=True)
    y = numgrad.nn.functional.rrelu(x, 0.1, 0.3, training=True)
    assert type(y.grad_fn).__name__ == "RreluWithNoiseBackward0"
    y.sum().backward()
    slopes, positive = x.grad.numpy(), x.detach().numpy() > 0
    assert (slopes[positive] == 1).all()
    negative = slopes[~positive]
    assert ((negative >= 0.1) & (negative <= 0.3)).all() and len(np.unique(negative)) > 100
    np.testing.assert_allclose(y.detach().numpy()[~positive], x.detach().numpy()[~positive] * negative)


@pytest.mark.parametrize("name", ["softsign", "tanhshrink"])
@pytest.mark.parametrize("dtype", ["float32", "float64", "int64"])
def test_composite_activations(name, dtype):
    a = np.array([[-2.0, -0.5, 0.0], [0.5, 1.5, -3.0]]).astype(dtype)
    if dtype == "int64":
        same_outcome(lambda L, a: getattr(_F(L), name)(a), a)
    else:
        ngt.compare_with_torch(lambda L, a: getattr(_F(L), name)(a), a, check_grad_fn=True, second_order=True)


# ---- modules -----------------------------------------------------------------------------------------------

MODULES = [("SiLU", ()), ("SiLU", (True,)), ("Mish", ()), ("Softsign", ()), ("Hardsigmoid", ()), ("Hardswish", ()),
           ("Hardtanh", ()), ("Hardtanh", (-0.5, 2.0)), ("ReLU6", ()), ("ELU", ()), ("ELU", (0.5,)), ("SELU", ()),
           ("CELU", (2.0,)), ("LogSigmoid", ()), ("Softplus", ()), ("Softplus", (2.0, 1.0)), ("Tanhshrink", ()),
           ("Softshrink", ()), ("Softshrink", (1.0,)), ("Hardshrink", (0.25,)), ("GLU", ()), ("GLU", (0,)),
           ("PReLU", ()), ("PReLU", (3,)), ("RReLU", ())]


@pytest.mark.parametrize("name,args", MODULES, ids=str)
def test_modules(name, args):
    a = np.random.default_rng(2).standard_normal((2, 3, 4)).astype("float32")
    ours, theirs = getattr(numgrad.nn, name)(*args), getattr(torch.nn, name)(*args)
    assert repr(ours) == repr(theirs)
    assert [(n, tuple(p.shape)) for n, p in ours.named_parameters()] == \
        [(n, tuple(p.shape)) for n, p in theirs.named_parameters()]
    ours.eval(), theirs.eval()
    inplace = getattr(theirs, "inplace", False)
    ngt.compare_with_torch(lambda L, a: (ours if L is numgrad else theirs)(a * 1 if inplace else a), a,
                           check_grad_fn=True)
    if name == "PReLU":  # the weight's gradient
        x = numgrad.tensor(a)
        ours(x).sum().backward()
        theirs(torch.tensor(a)).sum().backward()
        np.testing.assert_allclose(ours.weight.grad.numpy(), theirs.weight.grad.numpy(), rtol=1e-5)


def test_hardtanh_module_refuses_max_not_above_min():
    for L in (numgrad, torch):
        with pytest.raises(AssertionError):
            L.nn.Hardtanh(1.0, 1.0)


# ---- errors ------------------------------------------------------------------------------------------------

ERRORS = {
    "softshrink negative lambd": (lambda L, a: _F(L).softshrink(a, -0.5), [[1.0]]),
    "softshrink negative lambd (double)": (lambda L, a: _F(L).softshrink(a.double(), -0.25), [[1.0]]),
    "celu alpha 0": (lambda L, a: _F(L).celu(a, 0.0), [[1.0]]),
    "hardtanh min above max": (lambda L, a: _F(L).hardtanh(a, 2.0, 1.0), [[1.0]]),
    "glu odd": (lambda L, a: _F(L).glu(a), [[1.0, 2.0, 3.0]]),
    "glu 0-d": (lambda L, a: _F(L).glu(a[0]), [[1.0, 2.0]]),
    "prelu weight count": (lambda L, a: _F(L).prelu(a.reshape(1, 3), L.ones(2)), [[1.0, 2.0, 3.0]]),
    "prelu 2-d weight": (lambda L, a: _F(L).prelu(a.reshape(1, 3), L.ones(1, 1)), [[1.0, 2.0, 3.0]]),
    "copysign number first": (lambda L, a: L.copysign(2.0, a), [[1.0]]),
    "logaddexp number": (lambda L, a: L.logaddexp(a, 2.0), [[1.0]]),
    "hypot number": (lambda L, a: L.hypot(a, 2), [[1.0]]),
    "lerp end dtype": (lambda L, a: L.lerp(a, a.double(), 0.5), [[1.0]]),
    "lerp weight dtype": (lambda L, a: L.lerp(a, a, a.double()), [[1.0]]),
    "lerp 0-d weight of another dtype": (lambda L, a: L.lerp(a, a * 2, a[0].double()), [[1.0, 2.0]]),
    "lerp end number": (lambda L, a: L.lerp(a, 2.0, 0.5), [[1.0]]),
    "lerp integers": (lambda L, a: L.lerp(a.long(), a.long(), 0.5), [[1.0]]),
    "lerp integer weight tensor": (lambda L, a: L.lerp(a, a, a.long()), [[1.0]]),
    "silu int": (lambda L, a: _F(L).silu(a.long()), [[1.0]]),
    "hardtanh bool": (lambda L, a: _F(L).hardtanh(a > 0), [[1.0]]),
    "isclose dtypes": (lambda L, a: L.isclose(a, a.double()), [[1.0]]),
    "isclose negative rtol": (lambda L, a: L.isclose(a, a, rtol=-1), [[1.0]]),
    "isclose negative atol": (lambda L, a: L.isclose(a, a, atol=-0.5), [[1.0]]),
    "allclose dtypes": (lambda L, a: L.allclose(a, a.long()), [[1.0]]),
    # found by the fuzz: glu's dtype refusal; isclose's shape error and its 0-d result
    "glu int": (lambda L, a: _F(L).glu(a.long()), [[1.0, 2.0]]),
    "glu bool": (lambda L, a: _F(L).glu(a > 1, 0), [[1.0, 2.0]]),
    "glu dim out of range": (lambda L, a: _F(L).glu(a, 1), [[1.0, 2.0]]),
    "isclose shapes": (lambda L, a: L.isclose(a.reshape(1, 3), L.zeros(1, 0)), [[1.0, 2.0, 3.0]]),
    "isclose 0-d": (lambda L, a: L.isclose(a[0], a[1]) | L.isclose(a[0], a[0]), [[1.0, 2.0]]),
}


@pytest.mark.parametrize("case", list(ERRORS))
def test_errors(case):
    fn, values = ERRORS[case]
    same_outcome(fn, *[np.array(v, "float32") for v in values])


# ---- bitwise ops, isclose ----------------------------------------------------------------------------------

INTS, BOOLS, FLOATS = [5, -3, 0, 12, -8], [True, False, True, True, False], [1.5, -2.0, 0.0, 3.0, 0.5]
BITWISE = ["bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_left_shift", "bitwise_right_shift"]


@pytest.mark.parametrize("name", BITWISE)
@pytest.mark.parametrize("left,right", [(INTS, INTS), (INTS, BOOLS), (BOOLS, BOOLS), (INTS, FLOATS), (BOOLS, FLOATS),
                                         (INTS, 3), (INTS, True), (BOOLS, 1), (BOOLS, True), (INTS, 2.5), (2, INTS),
                                         (INTS, [1, 2, 70, -1, 63])], ids=str)
def test_bitwise_ops(name, left, right):
    def fn(L):
        def value(v):
            return L.tensor(v) if isinstance(v, list) else v
        return getattr(L, name)(value(left), value(right))
    same_outcome(lambda L: fn(L))
    if isinstance(left, list):
        same_outcome(lambda L: getattr(L.tensor(left), name)(L.tensor(right) if isinstance(right, list) else right))


@pytest.mark.parametrize("op", ["<<", ">>", "<<=", ">>="])
@pytest.mark.parametrize("left,right", [(INTS, 2), (INTS, INTS), (FLOATS, 1), (BOOLS, 1), (3, INTS)], ids=str)
def test_shift_operators(op, left, right):
    def fn(L):
        a = L.tensor(left) if isinstance(left, list) else left
        b = L.tensor(right) if isinstance(right, list) else right
        if op.endswith("="):
            if not isinstance(a, (numgrad.Tensor, torch.Tensor)):
                return L.tensor(0)
            c = a.clone()
            exec(f"c {op} b", {}, {"c": c, "b": b})
            return c
        return eval(f"a {op} b", {}, {"a": a, "b": b})
    same_outcome(lambda L: fn(L))


@pytest.mark.parametrize("values", [INTS, BOOLS, FLOATS])
def test_bitwise_not(values):
    same_outcome(lambda L, a: L.bitwise_not(a), np.array(values))
    same_outcome(lambda L, a: (a.clone().bitwise_not_(), a.bitwise_not())[0], np.array(values))


def test_bitwise_and_of_two_numbers_is_refused():
    same_outcome(lambda L: L.bitwise_and(2, 3))


@pytest.mark.parametrize("kw", [{}, {"rtol": 0.1}, {"atol": 0.5}, {"equal_nan": True}, {"rtol": 0.0, "atol": 0.0}])
@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "bool"])
def test_isclose_and_allclose(kw, dtype):
    a = np.array([1.0, 2.0, NAN, INF, -INF, 0.0, 100.0])
    b = np.array([1.0, 2.05, NAN, INF, INF, 1e-9, 100.5])
    if dtype in ("int64", "bool"):
        a, b = np.array([1, 2, 0, 3, 5, 0, 7]), np.array([1, 2, 1, 3, 4, 0, 9])
    a, b = a.astype(dtype), b.astype(dtype)
    same_outcome(lambda L, x, y: L.isclose(x, y, **kw), a, b)
    same_outcome(lambda L, x, y: x.isclose(y, **kw), a, b)
    same_outcome(lambda L, x, y: L.allclose(x, y, **kw), a, b)
    same_outcome(lambda L, x, y: L.allclose(x, x, **kw), a, b)

"""threshold (and torch.threshold_), addcmul/addcdiv (value=, in-place), heaviside, gcd, lcm, signbit and float_power
against torch: values, dtypes (integer and bool inputs), grad_fn names, gradients, errors, float64 gradchecks."""
import numpy as np
import pytest

import numgrad

from helpers.op_compare import F64, I64, check, check_error, rand

NAN, INF = float("nan"), float("inf")


def _gradcheck(fn, *arrays):
    ins = [numgrad.tensor(a, requires_grad=True) for a in arrays]
    assert numgrad.testing.gradcheck(lambda *ts: fn(numgrad, *ts), ins)


# ---- threshold -----------------------------------------------------------------------------------------

@pytest.mark.parametrize("th,value", [(0.1, 2.0), (-0.5, 0), (0, -1.5)])
def test_threshold(th, value):
    x = np.array([[-1.0, 0.1, 0.5, NAN], [2.0, -0.5, 0.0, -0.0]], np.float32)
    check(lambda lib, x: lib.threshold(x, th, value), x)
    check(lambda lib, x: lib.threshold(x, th, value), x.astype(F64))
    _gradcheck(lambda lib, x: lib.threshold(x, th, value), rand(3, 4, dtype=F64))


def test_threshold_integer_and_bool_inputs():
    x = np.array([1, -1, 3, 0])
    for th, value in ((-1.5, 7.5), (1, 7), (0.5, -2)):  # the numbers take the input's dtype (-1.5 -> -1)
        check(lambda lib, x: lib.threshold(x, th, value), x)
    check(lambda lib: lib.threshold(lib.tensor([1, 2], dtype=lib.uint8), 1, 4))
    check_error(lambda lib: lib.threshold(lib.tensor([1, 2], dtype=lib.uint8), 1, 300))
    check_error(lambda lib: lib.threshold(lib.tensor([True, False]), 0, 1))
    check_error(lambda lib: lib.threshold([1.0], 0, 1))


def test_threshold_in_place():
    def fn(lib, x):
        y = x * 1
        out = lib.threshold_(y, 0.2, -3.0)
        assert out is y
        return y
    check(fn, rand(3, 4))
    check(lambda lib: lib.threshold_(lib.tensor([1, 5, -2]), 1, 0))
    check_error(lambda lib, x: lib.threshold_(x, 0.2, 1.0), rand(2))  # a leaf requiring grad


# ---- addcmul / addcdiv ----------------------------------------------------------------------------------

@pytest.mark.parametrize("op", ["addcmul", "addcdiv"])
@pytest.mark.parametrize("value", [1, 2, 0.5, -1.5, 0])
def test_addc_values_and_gradients(op, value):
    a, b, c = rand(2, 3), rand(3, seed=1), rand(2, 1, seed=2) + 3
    check(lambda lib, a, b, c: getattr(lib, op)(a, b, c, value=value), a, b, c)
    check(lambda lib, a, b, c: getattr(a, op)(b, c, value=value), a.astype(F64), b.astype(F64), c.astype(F64))
    _gradcheck(lambda lib, a, b, c: getattr(lib, op)(a, b, c, value=value), a.astype(F64), b.astype(F64),
               c.astype(F64))


def test_addc_saved_values_and_default():
    for lib_name in ("torch", "numgrad"):
        lib = pytest.importorskip(lib_name)
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        out = lib.addcmul(x, x, x, value=3)
        assert out.grad_fn._saved_value == 3
        assert lib.addcdiv(x, x, x).tolist() == [2.0, 3.0]


def test_addc_dtypes():
    i, f = np.array([1, 2, 3]), np.array([1.0, 2.0, 3.0], np.float32)
    check(lambda lib, i: lib.addcmul(i, i, i, value=2), i)
    check(lambda lib, i: lib.addcmul(i, lib.tensor(f), i, value=0.5), i)
    check(lambda lib, i: lib.addcmul(lib.tensor(f), i, i, value=0.5), i)
    check(lambda lib, i: lib.addcdiv(lib.tensor(f), lib.tensor(f), i, value=2), i)
    check(lambda lib, f: lib.addcmul(lib.tensor(i), f, lib.tensor(i), value=0.5), f)  # f's gradient in its dtype
    check(lambda lib, f: lib.addcdiv(f, f, f, value=True), f)
    check(lambda lib, i: lib.addcmul(i, i, i, value=0.5), i)  # the value takes the integer type: 0
    check_error(lambda lib, i, f: lib.addcdiv(f, i, i), i, f)
    check_error(lambda lib, i: lib.addcdiv(i, i, i), i)
    check_error(lambda lib: lib.addcmul(lib.tensor([True]), lib.tensor([True]), lib.tensor([True])))
    check_error(lambda lib, f: lib.addcmul(f, 2, f), f)
    check_error(lambda lib, f: lib.addcmul(f, lib.ones(2), f), f)


def test_addc_in_place():
    def fn(lib, a, b, c):
        y = a * 1
        y.addcmul_(b, c, value=2).addcdiv_(b, c + 3, value=-1)
        return y
    check(fn, rand(2, 3), rand(3, seed=1), rand(2, 3, seed=2))
    check_error(lambda lib: lib.tensor([1, 2]).addcmul_(lib.ones(2), lib.ones(2), value=2))
    check_error(lambda lib: lib.ones(2).addcmul_(lib.ones(2, 2), lib.ones(2)))


# ---- heaviside, gcd, lcm, signbit --------------------------------------------------------------------------

def test_heaviside():
    x = np.array([-1.0, 0.0, 2.0, NAN, -0.0, INF], np.float32)
    check(lambda lib: lib.heaviside(lib.tensor(x), lib.tensor([5.0])))
    check(lambda lib: lib.heaviside(lib.tensor([1, 0, -2]), lib.tensor([5])))
    check(lambda lib: lib.tensor([True, False]).heaviside(lib.tensor([True])))
    check(lambda lib: lib.heaviside(lib.tensor(x, dtype=lib.float64), lib.tensor(x[::-1].copy(), dtype=lib.float64)))
    check_error(lambda lib, x: lib.heaviside(x, lib.tensor([5.0], dtype=lib.float64)), x)
    check_error(lambda lib, x: lib.heaviside(x, 5.0), x)
    check_error(lambda lib, x: lib.heaviside(x, lib.tensor([5.0])).sum().backward(), x)


def test_heaviside_records_not_implemented_and_in_place():
    for lib_name in ("torch", "numgrad"):
        lib = pytest.importorskip(lib_name)
        out = lib.heaviside(lib.tensor([1.0, 0.0], requires_grad=True), lib.tensor([5.0]))
        assert type(out.grad_fn).__name__ == "NotImplemented" and out.tolist() == [1.0, 5.0]
    check(lambda lib: lib.tensor([-1.0, 0.0, 3.0]).heaviside_(lib.tensor(0.5)))


@pytest.mark.parametrize("op", ["gcd", "lcm"])
def test_gcd_lcm(op):
    a, b = np.array([12, -18, 0, 0, 7, -4]), np.array([8, 12, 5, 0, -21, -6])
    check(lambda lib, a, b: getattr(lib, op)(a, b), a, b)
    check(lambda lib, a, b: getattr(a, op)(b[:1]), a, b)
    for dtype in ("int32", "int16", "int8", "uint8"):
        check(lambda lib: getattr(lib, op)(lib.tensor([12, 9], dtype=getattr(lib, dtype)),
                                           lib.tensor([8, 6], dtype=getattr(lib, dtype))))
    check(lambda lib: getattr(lib, op)(lib.tensor([12], dtype=lib.int32), lib.tensor([8])))
    check(lambda lib: getattr(lib.tensor([12, 5]), op + "_")(lib.tensor([8, 10])))
    check_error(lambda lib: getattr(lib, op)(lib.tensor([12.0]), lib.tensor([8.0])))
    check_error(lambda lib: getattr(lib, op)(lib.tensor([12]), lib.tensor([8.0])))
    check_error(lambda lib: getattr(lib, op)(lib.tensor([True]), lib.tensor([True])))
    check_error(lambda lib: getattr(lib, op)(lib.tensor([12]), 8))
    check_error(lambda lib: getattr(lib, op)(lib.tensor([1, 2]), lib.tensor([1, 2, 3])))


def test_lcm_wraps_as_torch():
    check(lambda lib: lib.lcm(lib.tensor([2 ** 40]), lib.tensor([3 ** 20])))
    check(lambda lib: lib.lcm(lib.tensor([-128], dtype=lib.int8), lib.tensor([3], dtype=lib.int8)))


def test_signbit():
    x = np.array([-1.0, 0.0, -0.0, 2.0, NAN, -INF, INF], np.float32)
    check(lambda lib, x: lib.signbit(x), x)
    check(lambda lib, x: x.signbit(), x.astype(F64))
    check(lambda lib: lib.signbit(lib.tensor([1, -2, 0])))
    check(lambda lib: lib.signbit(lib.tensor([True, False])))
    check(lambda lib: lib.signbit(lib.tensor([-1, 2], dtype=lib.int8)))


# ---- float_power ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("exponent", [2, 0.5, -1, 3.0, 0])
def test_float_power_scalar_exponent(exponent):
    x = np.abs(rand(2, 3)) + 0.5
    check(lambda lib, x: lib.float_power(x, exponent), x)
    check(lambda lib, x: x.float_power(exponent), x)
    _gradcheck(lambda lib, x: lib.float_power(x, exponent), x.astype(F64))


def test_float_power_tensors_and_dtypes():
    x, y = np.abs(rand(2, 3)) + 0.5, rand(3, seed=1)
    check(lambda lib, x, y: lib.float_power(x, y), x, y)
    check(lambda lib, y: lib.float_power(2, y), y)
    check(lambda lib, y: lib.float_power(2.5, y), y.astype(F64))
    check(lambda lib: lib.float_power(lib.tensor([1, 2]), -1))
    check(lambda lib: lib.float_power(lib.tensor([1, 2]), lib.tensor([-1, 2])))
    check(lambda lib: lib.tensor([True]).float_power(2))
    check(lambda lib: lib.float_power(lib.tensor([-8.0]), 1 / 3))
    _gradcheck(lambda lib, x, y: lib.float_power(x, y), x.astype(F64), y.astype(F64))
    check_error(lambda lib: lib.float_power(2, 3))


def test_float_power_in_place():
    check(lambda lib, x: (x * 1).float_power_(2), rand(3, dtype=F64))
    check(lambda lib, x: (x * 1).float_power_(lib.tensor([1.0, 2.0, 0.5])), np.abs(rand(3, dtype=F64)))
    check_error(lambda lib: lib.ones(2).float_power_(2))
    check_error(lambda lib: lib.ones(2, dtype=lib.int64).float_power_(2))


def test_integer_inputs_of_the_float_ops_stay_exact():
    big = np.array([2 ** 40 + 1, -(2 ** 35) - 3], I64)
    check(lambda lib, b: lib.float_power(b, 1), big)


@pytest.mark.parametrize("divisor", ["int64", "int32", "uint8", "bool"])
@pytest.mark.parametrize("wants", [("input",), ("tensor1",), ("input", "tensor1")])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_addcdiv_by_an_integer_refuses_tensor1s_gradient_only(divisor, wants, dtype):
    """torch's formula for tensor1's gradient divides into an integer divisor's dtype, which raises; the input's
    gradient alone goes through."""
    import torch
    outcomes = []
    for lib in (torch, numgrad):
        a, b = (lib.tensor([1.0, -2.0, 3.0], dtype=getattr(lib, dtype), requires_grad=name in wants)
                for name in ("input", "tensor1"))
        c = lib.tensor([1, 2, 3]).to(getattr(lib, divisor))
        try:
            lib.addcdiv(a, b, c, value=2).sum().backward()
            outcomes.append(("ok", a.grad.tolist() if a.grad is not None else None))
        except RuntimeError as exc:
            outcomes.append(("raised", str(exc)))
    assert outcomes[0] == outcomes[1]

"""The vectorising float32 exp and erf (kernels/cpu/scalar_math.py) against the float64 libm values rounded to
float32, where the far tails meet their clamps: subnormal results of exp, exp of -inf (a masked softmax),
and erf saturating to +-1; GELU's erf (torch's formula) within its bound, and GELU against torch."""
import math

import numpy as np
import pytest
from numba import njit

import torch

import numgrad
from numgrad.kernels.cpu.scalar_math import erf_f32, exp_f32, gelu_erf_f32


def _loop(f):
    @njit(error_model="numpy")
    def run(x, out):
        for i in range(x.size):
            out[i] = f(x[i])
    return run


_EXP, _ERF, _GELU_ERF = _loop(exp_f32), _loop(erf_f32), _loop(gelu_erf_f32)


def _ulps(got, want):
    """Distance in float32 steps (the integer order of the bit patterns; both finite and of one sign)."""
    return np.abs(got.view(np.int32).astype(np.int64) - want.view(np.int32).astype(np.int64))


def _run(kernel, xs):
    out = np.empty_like(xs)
    kernel(xs, out)
    return out


def test_exp_underflows_gradually_and_gives_zero_below_its_range():
    # from normal results through the subnormals to zero, and past the clamp at -103.97
    xs = np.concatenate([np.linspace(-80, -87.3, 2001), np.linspace(-87.3, -103.97, 20001),
                         np.linspace(-103.97, -110, 2001), [-200, -1e30, -np.inf]]).astype(np.float32)
    got = _run(_EXP, xs)
    want = np.array([math.exp(float(x)) for x in xs], np.float64).astype(np.float32)
    assert (got >= 0).all()
    assert _ulps(got, want).max() <= 1
    assert (got[xs < -104] == 0).all() and got[-1] == 0
    assert (got[(xs < -87.4) & (xs > -103.9)] > 0).all()  # subnormal, not flushed to zero


def test_exp_edges():
    xs = np.array([np.inf, 88.7, 88.8, 0.0, -0.0, np.nan], np.float32)
    got = _run(_EXP, xs)
    assert got[0] == np.inf and got[2] == np.inf and got[3] == 1 and got[4] == 1 and np.isnan(got[5])
    assert _ulps(got[1:2], np.float32([math.exp(float(xs[1]))])).max() <= 1


@pytest.mark.parametrize("sign", [1, -1])
def test_erf_saturates_to_one_and_keeps_its_accuracy_before(sign):
    xs = sign * np.concatenate([np.linspace(0, 3.95, 40001), np.linspace(3.95, 12, 4001),
                                [13.5, 20, 100, 1e10, 3.4e38]]).astype(np.float32)
    got = _run(_ERF, xs)
    want = np.array([math.erf(float(x)) for x in xs], np.float64).astype(np.float32)
    assert _ulps(np.abs(got), np.abs(want)).max() <= 3  # the documented 2.6 ulp, in whole steps
    assert (got[np.abs(xs) >= 3.92] == sign).all()
    assert _run(_ERF, np.float32([sign * np.inf]))[0] == sign and np.isnan(_run(_ERF, np.float32([np.nan]))[0])


def test_gelus_erf_is_within_its_bound_and_exact_at_the_edges():
    xs = np.concatenate([np.linspace(-12, 12, 200001), [1e10, -3.4e38, 1e-30]]).astype(np.float32)
    got = _run(_GELU_ERF, xs)
    want = np.array([math.erf(float(x)) for x in xs])
    assert np.abs(got - want).max() <= 5e-7  # Abramowitz and Stegun's 1.5e-7, plus float32 rounding (4.5e-7)
    edges = np.float32([0.0, -0.0, np.inf, -np.inf, np.nan, 4.0, -4.0])
    got = _run(_GELU_ERF, edges)
    assert got[0] == 0 and got[1] == 0 and np.signbit(got[1]) and list(got[2:4]) == [1, -1] and np.isnan(got[4])
    assert list(got[5:]) == [1, -1]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_gelu_forward_and_backward_as_torch(dtype):
    x0 = (np.random.default_rng(0).standard_normal(4099) * 3).astype(dtype)
    x0[:4] = [0, -0.0, 9, -9]
    weights = np.linspace(-1, 1, x0.size).astype(dtype)
    got = []
    for lib in (numgrad, torch):
        x = lib.tensor(x0, requires_grad=True)
        y = lib.nn.functional.gelu(x)
        (y * lib.tensor(weights)).sum().backward()
        got.append((y.detach().numpy(), x.grad.numpy()))
    # float32: torch's erf is Sleef's vector code (which differs between CPUs), ours Abramowitz and Stegun's.
    # On a znver5 (AVX-512) machine torch's GELU is 9.4e-7 from the float64 truth (ours 4.4e-7), in the
    # negative tail where 1 + erf cancels and near |y| = 4 (5 float32 steps), so the two are compared within
    # both errors (1.5e-6), and ours is held to the truth below
    tol = dict(rtol=4e-7, atol=1.5e-6) if dtype == np.float32 else dict(rtol=1e-14, atol=1e-15)
    for a, b in zip(*got):
        np.testing.assert_allclose(a, b, **tol)
    if dtype == np.float32:
        x64 = x0.astype(np.float64)
        cdf = np.array([0.5 * (1 + math.erf(v / math.sqrt(2))) for v in x64])
        y_true = x64 * cdf
        grad_true = (cdf + x64 * np.exp(-x64 * x64 / 2) / math.sqrt(2 * math.pi)) * weights
        assert np.abs(got[0][0] - y_true).max() <= 5e-7  # measured 4.4e-7 (torch's own: 9.4e-7)
        assert np.abs(got[0][1] - grad_true).max() <= 3e-7  # measured 1.8e-7 (torch's own: 1.7e-7)

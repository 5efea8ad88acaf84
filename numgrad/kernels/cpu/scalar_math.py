"""Scalar helpers that generated kernels call; each is one Numba function inlined into the loop.

Most are compiled once per signature (and cached on disk with the package) and inlined by LLVM when a kernel
is linked: the same vector code as Numba's inline="always", which instead re-types the helper inside every
kernel and cost 0.07-0.1 s of each first compile (softmax's forward 0.27 -> 0.17 s). erf_f32, fmod and the
shared rules keep inline="always": LLVM leaves them calls (erf's GELU loop ran 12x slower, the int64
remainder 4x)."""
import math

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.extending import intrinsic

from .. import scalar_rules
from ..loader import guard_caches as _guard_caches


@njit(cache=True, error_model="numpy")
def where(c, x, y):
    return x if c else y


@njit(cache=True, error_model="numpy")
def sign(x):
    # sign(nan) is 0 in torch as well: both comparisons are false
    return (x > 0) - (x < 0)


@njit(cache=True, error_model="numpy")
def sigmoid(x):
    return 1 / (1 + math.exp(-x))


@njit(cache=True, error_model="numpy")
def isnan(x):
    return x != x


@njit(cache=True, error_model="numpy")
def maximum(x, y):
    # propagates NaN from either side, as torch.maximum does; a tie (0.0 and -0.0) gives x, as std::max
    # in torch's clamp and scalar maximum
    return y if (x < y or y != y) else x


@njit(cache=True, error_model="numpy")
def minimum(x, y):
    return y if (y < x or y != y) else x


# the rules both targets share (kernels/scalar_rules.py), compiled as this target's inlined functions
_inlined = njit(cache=True, inline="always", error_model="numpy")
power, scalar_power, power_int, remainder, fmod_int, trunc_div, erfinv, nan_of = (_inlined(f) for f in scalar_rules.SHARED)


@njit(cache=True, inline="always", error_model="numpy")
def fmod(x, y):
    return np.fmod(x, y)


# ---- float32 exp and tanh that vectorise --------------------------------------------------------
# Without SVML, math.exp/math.tanh stay scalar library calls and keep the loop around them from using
# SIMD. These use only arithmetic, min/max, selects and an integer-to-float bit cast, so LLVM vectorises
# them: exp is Cephes' expf (under 1 ulp), tanh Eigen's rational approximation (under 5 ulp, about 3e-7
# relative; torch's own vectorised float tanh is within 1 ulp, so both sit well inside float32 tolerances).
# Their polynomials may contract into fused multiply-adds (fastmath "contract", these functions only: a
# generated kernel's own arithmetic rounds each op as torch does): exp over 2^20 floats 512 -> 378 us, within
# 1 ulp as before.

@intrinsic
def _pow2(typingctx, n):
    """2.0 ** n as float32 for an int32 n in [-126, 127], built from its bits."""
    def codegen(context, builder, signature, args):
        biased = builder.add(args[0], ir.Constant(ir.IntType(32), 127))
        return builder.bitcast(builder.shl(biased, ir.Constant(ir.IntType(32), 23)), ir.FloatType())
    return types.float32(types.int32), codegen


@njit(cache=True, error_model="numpy", fastmath={"contract"})
def exp_f32(x):
    # below -103.97 the result is 0 (selected at the end): the polynomial then runs on 0, not on the clamped
    # bound, whose subnormal products cost a microcode assist each (a masked softmax's -inf, GELU's tails:
    # 2.3x slower kernels)
    xc = min(x, np.float32(88.72283))
    xc = xc if xc >= np.float32(-103.972084) else np.float32(0)
    fx = np.floor(xc * np.float32(1.44269504088896341) + np.float32(0.5))
    r = xc - fx * np.float32(0.693359375) + fx * np.float32(2.12194440e-4)
    y = ((((np.float32(1.9875691500e-4) * r + np.float32(1.3981999507e-3)) * r + np.float32(8.3334519073e-3)) * r
          + np.float32(4.1665795894e-2)) * r + np.float32(1.6666665459e-1)) * r + np.float32(5.0000001201e-1)
    y = y * (r * r) + r + np.float32(1)
    n = np.int32(fx)
    half = n >> 1  # two factors keep each power normal, so results below 2**-126 underflow gradually
    y = y * _pow2(half) * _pow2(n - half)
    y = np.float32(np.inf) if x > np.float32(88.72283) else y
    y = np.float32(0) if x < np.float32(-103.972084) else y
    return x if x != x else y


@njit(cache=True, error_model="numpy", fastmath={"contract"})
def tanh_f32(x):
    c = np.float32(7.99881172180175781)
    xc = min(max(x, -c), c)
    x2 = xc * xc
    p = x2 * np.float32(-2.76076847742355e-16) + np.float32(2.00018790482477e-13)
    p = x2 * p + np.float32(-8.60467152213735e-11)
    p = x2 * p + np.float32(5.12229709037114e-08)
    p = x2 * p + np.float32(1.48572235717979e-05)
    p = x2 * p + np.float32(6.37261928875436e-04)
    p = x2 * p + np.float32(4.89352455891786e-03)
    q = x2 * np.float32(1.19825839466702e-06) + np.float32(1.18534705686654e-04)
    q = x2 * q + np.float32(2.26843463243900e-03)
    q = x2 * q + np.float32(4.89352518554385e-03)
    t = xc * p / q
    t = x if abs(x) < np.float32(0.0004) else t  # tanh(x) rounds to x there (and keeps -0.0)
    t = math.copysign(np.float32(1), x) if abs(x) > np.float32(9.01) else t  # where float32 tanh is exactly 1
    return x if x != x else t


@njit(cache=True, error_model="numpy")
def sigmoid_f32(x):
    return np.float32(1) / (np.float32(1) + exp_f32(-x))


@njit(cache=True, error_model="numpy", fastmath={"contract"})
def _erf_taylor(x, z):
    """erf's odd Taylor series to x**19, for |x| below 0.8 (z = x * x)."""
    s = np.float32(-1.6365844691234924e-07)
    s = np.float32(1.6462114365889246e-06) + z * s
    s = np.float32(-1.492565035840625e-05) + z * s
    s = np.float32(0.00012055332981789664) + z * s
    s = np.float32(-0.0008548327023450852) + z * s
    s = np.float32(0.005223977625442188) + z * s
    s = np.float32(-0.026866170645131252) + z * s
    s = np.float32(0.11283791670955126) + z * s
    s = np.float32(-0.37612638903183754) + z * s
    s = np.float32(1.1283791670955126) + z * s
    return x * s


@njit(cache=True, error_model="numpy", fastmath={"contract"})
def _erfc_tail(a, z):
    """erfc(a) for a = |x| from 0.8 on (z = x * x): Numerical Recipes' Chebyshev fit."""
    t = np.float32(1) / (np.float32(1) + np.float32(0.5) * a)
    p = np.float32(-0.82215223) + t * np.float32(0.17087277)
    p = np.float32(1.48851587) + t * p
    p = np.float32(-1.13520398) + t * p
    p = np.float32(0.27886807) + t * p
    p = np.float32(-0.18628806) + t * p
    p = np.float32(0.09678418) + t * p
    p = np.float32(0.37409196) + t * p
    p = np.float32(1.00002368) + t * p
    # an erfc below 2**-25 leaves 1 - erfc == 1 in float32 (from |x| 3.92 on): its exponent is held at -80
    # (erfc then about 1e-35, still 1 - erfc == 1), so that the far tail computes no subnormals (each costs a
    # microcode assist: GELU on large activations ran 2.4x slower)
    return t * exp_f32(max(-z - np.float32(1.26551223) + t * p, np.float32(-80)))


@njit(cache=True, error_model="numpy", fastmath={"contract"})
def gelu_erf_f32(x):
    # erf as torch's float32 GELU computes it (Vectorized<float>::erf, Abramowitz and Stegun 7.1.26, in its
    # order of operations): within 4.5e-7 of erf (the formula's 1.5e-7 and float32's rounding), which beside 1
    # in GELU's 1 + erf is about erf_f32's error, and twice as fast (one division and one exp); GELU's values
    # then equal torch's for 3 elements in 4 (1 in 3 with erf_f32). torch.erf itself is accurate near 0, where
    # this is not: erf_f32 serves the erf op.
    a = abs(x)
    t = np.float32(1) / (np.float32(0.3275911) * a + np.float32(1))
    r = ((((np.float32(1.061405429) * t + np.float32(-1.453152027)) * t + np.float32(1.421413741)) * t
          + np.float32(-0.284496736)) * t + np.float32(0.254829592))
    return math.copysign((-exp_f32(-(x * x)) * t) * r + np.float32(1), x)


@njit(cache=True, inline="always", error_model="numpy")
def erf_f32(x):
    # Branch-free (both sides computed, one kept) so that LLVM vectorises the loop, where libm's erff is one
    # call per element: below 0.8 erf's odd Taylor series, elsewhere 1 - erfc. Within 2.6 ulp of math.erf over
    # float32 (torch's own float32 GELU is 3 ulp from the exact one); 8x faster than erff on 2^17 elements.
    # The two halves are functions of their own, small enough for LLVM to inline, so that their polynomials
    # may contract into fused multiply-adds (fastmath "contract"), which an inline="always" body, compiled
    # with the kernel's flags, may not: GELU's forward over 2^20 floats 1.72 -> 1.08 ms, the same accuracy.
    a = abs(x)
    z = x * x
    small = _erf_taylor(x, z)
    large = math.copysign(np.float32(1) - _erfc_tail(a, z), x)
    return small if a < np.float32(0.8) else large


_guard_caches(globals())  # numgrad checks what Numba loads from its cache (loader._RecoveringCache)

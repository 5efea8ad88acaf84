"""Scalar helpers that generated kernels call; each is one Numba function inlined into the loop."""
import math

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.extending import intrinsic


@njit(cache=True, inline="always", error_model="numpy")
def where(c, x, y):
    return x if c else y


@njit(cache=True, inline="always", error_model="numpy")
def sign(x):
    # sign(nan) is 0 in torch as well: both comparisons are false
    return (x > 0) - (x < 0)


@njit(cache=True, inline="always", error_model="numpy")
def sigmoid(x):
    return 1 / (1 + math.exp(-x))


@njit(cache=True, inline="always", error_model="numpy")
def isnan(x):
    return x != x


@njit(cache=True, inline="always", error_model="numpy")
def maximum(x, y):
    # propagates NaN from either side, as torch.maximum does
    return x if (x > y or x != x) else y


@njit(cache=True, inline="always", error_model="numpy")
def minimum(x, y):
    return x if (x < y or x != x) else y


# ---- float32 exp and tanh that vectorise --------------------------------------------------------
# Without SVML, math.exp/math.tanh stay scalar library calls and keep the loop around them from using
# SIMD. These are Cephes' expf and tanhf (within 2 ulp of the exact result, like torch's Sleef ones),
# written with selects and an integer-to-float bit cast only, so LLVM vectorises them.

@intrinsic
def _pow2(typingctx, n):
    """2.0 ** n as float32 for an int32 n in [-126, 127], built from its bits."""
    def codegen(context, builder, signature, args):
        biased = builder.add(args[0], ir.Constant(ir.IntType(32), 127))
        return builder.bitcast(builder.shl(biased, ir.Constant(ir.IntType(32), 23)), ir.FloatType())
    return types.float32(types.int32), codegen


@njit(cache=True, inline="always", error_model="numpy")
def exp_f32(x):
    big = x > np.float32(88.72283)
    small = x < np.float32(-103.972084)
    xc = np.float32(0) if (big or small or x != x) else x
    fx = math.floor(xc * np.float32(1.44269504088896341) + np.float32(0.5))
    r = xc - fx * np.float32(0.693359375) + fx * np.float32(2.12194440e-4)
    z = r * r
    y = ((((np.float32(1.9875691500e-4) * r + np.float32(1.3981999507e-3)) * r + np.float32(8.3334519073e-3)) * r
          + np.float32(4.1665795894e-2)) * r + np.float32(1.6666665459e-1)) * r + np.float32(5.0000001201e-1)
    y = y * z + r + np.float32(1)
    n = np.int32(fx)
    half = n >> 1  # two factors keep each power normal, so results below 2**-126 underflow gradually
    y = y * _pow2(half) * _pow2(n - half)
    if x != x:
        return x
    return np.float32(np.inf) if big else (np.float32(0) if small else y)


@njit(cache=True, inline="always", error_model="numpy")
def tanh_f32(x):
    ax = abs(x)
    z = x * x
    p = ((((np.float32(-5.70498872745e-3) * z + np.float32(2.06390887954e-2)) * z - np.float32(5.37397155531e-2)) * z
          + np.float32(1.33314422036e-1)) * z - np.float32(3.33332819422e-1)) * z * x + x
    e = exp_f32(np.float32(2) * ax)
    t = np.float32(1) - np.float32(2) / (e + np.float32(1))
    return p if ax < np.float32(0.625) or x != x else (t if x > 0 else -t)


@njit(cache=True, inline="always", error_model="numpy")
def sigmoid_f32(x):
    return np.float32(1) / (np.float32(1) + exp_f32(-x))

"""Scalar helpers that generated CUDA kernels call: the op table's vocabulary as inlined device functions."""
import math

import numpy as np
from numba import cuda

from .. import scalar_rules

from ..lower import HELPERS


@cuda.jit(device=True, inline="always")
def where(c, x, y):
    return x if c else y


@cuda.jit(device=True, inline="always")
def sign(x):
    # sign(nan) is 0, as in torch: both comparisons are false (ints, since the simulator refuses bool - bool)
    return (1 if x > 0 else 0) - (1 if x < 0 else 0)


@cuda.jit(device=True, inline="always")
def sigmoid(x):
    return 1 / (1 + math.exp(-x))


@cuda.jit(device=True, inline="always")
def isnan(x):
    return x != x


@cuda.jit(device=True, inline="always")
def maximum(x, y):
    # propagates NaN from either side, as torch.maximum does; a tie (0.0 and -0.0) gives x, as std::max
    # in torch's clamp and scalar maximum
    return y if (x < y or y != y) else x


@cuda.jit(device=True, inline="always")
def minimum(x, y):
    return y if (y < x or y != y) else x


# the rules both targets share (kernels/scalar_rules.py), compiled as this target's inlined functions
_device = cuda.jit(device=True, inline="always")
power, scalar_power, power_int, remainder, fmod_int, trunc_div, erfinv, nan_of = (_device(f) for f in scalar_rules.SHARED)


@cuda.jit(device=True, inline="always")
def fmod(x, y):
    return math.fmod(x, y)


# bfloat16 crosses kernels as its uint16 bits (cuda/array.py's copies): conversions to and from float32's bits,
# written out rather than left to the GPU's cvt, so that they give the CPU's bits (ml_dtypes' rounding)
@cuda.jit(device=True, inline="always")
def bfloat16_to_float32_bits(b):
    return np.uint32(b) << np.uint32(16)


@cuda.jit(device=True, inline="always")
def float32_bits_to_bfloat16(u):
    # round to nearest even; a NaN becomes the quiet NaN of its sign (ml_dtypes; the GPU's cvt.rn.bf16.f32 would
    # drop the sign)
    if (u & np.uint32(0x7FFFFFFF)) > np.uint32(0x7F800000):
        return np.uint16(((u >> np.uint32(16)) & np.uint32(0x8000)) | np.uint32(0x7FC0))
    return np.uint16((u + np.uint32(0x7FFF) + ((u >> np.uint32(16)) & np.uint32(1))) >> np.uint32(16))


# what generated kernels import with *
__all__ = ["math", "np", "cuda", *HELPERS, "bfloat16_to_float32_bits", "float32_bits_to_bfloat16"]

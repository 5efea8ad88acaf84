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


__all__ = ["math", "np", "cuda", *HELPERS]  # what generated kernels import with *

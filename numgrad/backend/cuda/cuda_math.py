"""Scalar helpers that generated CUDA kernels call: the op table's vocabulary as inlined device functions."""
import math

import numpy as np
from numba import cuda

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



@cuda.jit(device=True, inline="always")
def power(x, y):
    return x ** y


@cuda.jit(device=True, inline="always")
def scalar_power(x, y):
    # torch computes a scalar exponent of 0.5 or -0.5 as sqrt or its reciprocal, which keep -0.0's sign (pow
    # gives +0.0 and +inf); the float type stays the kernel's
    if y == 0.5 or y == -0.5:
        return math.sqrt(x) ** (y + y)
    return x ** y


@cuda.jit(device=True, inline="always")
def power_int(x, y):
    # torch's integer power: by squaring, wrapping on overflow; a negative exponent gives 1 for a base of 1,
    # +-1 for -1 and 0 otherwise (Python's would be a float, Numba's an overflow)
    if y < 0:
        if x == 1 or x == -1:
            return x if y % 2 else x * x
        return x * 0
    result, base = x * 0 + 1, x
    while y:
        if y & 1:
            result *= base
        base *= base
        y >>= 1
    return result


@cuda.jit(device=True, inline="always")
def remainder(x, y):
    # Python's remainder (the divisor's sign), as torch's; a zero keeps the dividend's sign (-0.0 % 1 is -0.0)
    r = x % y
    return r if r != 0 else x * 0


@cuda.jit(device=True, inline="always")
def fmod(x, y):
    return math.fmod(x, y)


@cuda.jit(device=True, inline="always")
def fmod_int(x, y):
    # from Python's remainder, exact for integers (math.fmod would go through float64)
    r = x % y
    return r - y if r != 0 and (r < 0) != (x < 0) else r

__all__ = ["math", "np", "cuda", *HELPERS]  # what generated kernels import with *

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
    # propagates NaN from either side, and gives x on a tie (0.0 and -0.0), as torch.maximum does
    return x if (x >= y or x != x) else y


@cuda.jit(device=True, inline="always")
def minimum(x, y):
    return x if (x <= y or x != x) else y


@cuda.jit(device=True, inline="always")
def ipow(x, y):
    # torch's integer power: by squaring, wrapping on overflow; a negative exponent gives 1 for a base of 1,
    # +-1 for -1 and 0 otherwise (Python's would be a float, Numba's an overflow)
    if y < 0:
        if x == 1:
            return x
        if x == -1:
            return x if y % 2 else -x
        return x * 0
    result, base = x * 0 + 1, x
    while y:
        if y & 1:
            result *= base
        base *= base
        y >>= 1
    return result


__all__ = ["math", "np", "cuda", *HELPERS]  # what generated kernels import with *

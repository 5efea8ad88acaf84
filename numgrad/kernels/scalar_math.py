"""Scalar helpers that generated kernels call; each is one Numba function inlined into the loop."""
import math

from numba import njit


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

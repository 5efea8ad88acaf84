"""Scalar rules that both targets compile from the same Python (torch's integer power, its remainder's signs,
fmod of integers, the +-0.5 exponents): cpu/scalar_math.py and cuda/cuda_math.py decorate these functions."""
import math


def power(x, y):
    return x ** y


def scalar_power(x, y):
    # torch computes a scalar exponent of 0.5 or -0.5 as sqrt or its reciprocal, which keep -0.0's sign (pow
    # gives +0.0 and +inf); the float type stays the kernel's
    if y == 0.5 or y == -0.5:
        return math.sqrt(x) ** (y + y)
    return x ** y


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


def remainder(x, y):
    # Python's remainder (the divisor's sign), as torch's; a zero keeps the dividend's sign, as torch's does
    # (it starts from fmod): -0.0 % 1 is -0.0 where Python gives 0.0
    r = x % y
    return r if r != 0 else x * 0


def fmod_int(x, y):
    # from Python's remainder, exact for integers (a float fmod would round; Numba's np.fmod gets negative
    # integers wrong)
    r = x % y
    return r - y if r != 0 and (r < 0) != (x < 0) else r


def trunc_div(x, y):
    # torch's div(rounding_mode="trunc") of floats: the quotient rounded toward zero, keeping +-inf and NaN
    # (math.trunc would make an integer and fail on them)
    q = x / y
    if q - q != 0:
        return q
    a = abs(q)
    return math.copysign(a - a % 1.0, q)  # Numba's CPU math has no fmod or float trunc


SHARED = (power, scalar_power, power_int, remainder, fmod_int, trunc_div)

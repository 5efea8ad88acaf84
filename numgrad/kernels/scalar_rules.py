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


def erfinv(y):
    # torch's calc_erfinv: a rational first guess (central range |y| <= 0.7, then the tails), refined by two
    # Newton steps on erf; the arithmetic stays in y's float type
    y_abs = abs(y)
    if y_abs > 1:
        return (y - y) / (y - y)
    if y_abs == 1:
        return math.copysign(y_abs / (y_abs - y_abs), y)
    if y_abs <= 0.7:
        z = y * y
        num = ((-0.140543331 * z + 0.914624893) * z + -1.645349621) * z + 0.886226899
        dem = (((0.012229801 * z + -0.329097515) * z + 1.442710462) * z + -2.118377725) * z + 1.0
        x = y * num / dem
    else:
        z = math.sqrt(-math.log((1.0 - y_abs) / 2.0))
        num = ((1.641345311 * z + 3.429567803) * z + -1.624906493) * z + -1.970840454
        dem = (1.637067800 * z + 3.543889200) * z + 1.0
        x = math.copysign(num, y) / dem
    x = x - (math.erf(x) - y) / (1.1283791670955126 * math.exp(-x * x))
    x = x - (math.erf(x) - y) / (1.1283791670955126 * math.exp(-x * x))
    return x


def nan_of(x):
    # NaN of x's type (0 / 0; the op table has no NaN literal)
    zero = x - x
    return zero / zero if zero == 0 else zero


SHARED = (power, scalar_power, power_int, remainder, fmod_int, trunc_div, erfinv, nan_of)

"""conv2d's weight gradient when its small result sums over many terms (a batch of large planes, as the
benchmark's convnet's first conv): BLAS takes it as a sum of slices of the terms; values and gradients against
torch in float32 and float64, with and without a bias."""
import numpy as np
import pytest

from helpers.functional_compare import compare_arrays
from helpers.nn_compare import rand

CASES = {
    # a (9, 8) result over 32 * 26 * 26 = 21632 terms: two slices
    "first_conv": (lambda F, x, w, b: F.conv2d(x, w, b), (32, 1, 28, 28), (8, 1, 3, 3), (8,)),
    # a (72, 16) result over 32 * 11 * 11 terms: five slices
    "second_conv": (lambda F, x, w: F.conv2d(x, w), (32, 8, 13, 13), (16, 8, 3, 3)),
    # 16 * 61 * 59 terms in seven slices that do not divide them evenly, with padding
    "uneven_slices": (lambda F, x, w, b: F.conv2d(x, w, b, padding=1), (16, 3, 61, 59), (4, 3, 3, 3), (4,)),
}


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["float32", "float64"])
@pytest.mark.parametrize("case", list(CASES))
def test_long_inner_weight_gradient_matches_torch(case, dtype):
    fn, *shapes = CASES[case]
    arrays = [rand(*s, dtype=dtype, seed=i) for i, s in enumerate(shapes)]
    # a weight gradient sums 10^4 products of size ~1: float32 sums in any order differ by ~1e-4 of that
    compare_arrays(fn, *arrays, rtol=1e-4, atol=1e-3 if dtype == np.float32 else 1e-9)

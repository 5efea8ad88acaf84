"""The CPU optimizer kernels update exactly elements [start, stop): split ranges (as threads run them) give
the bits of one whole range, for every optimizer's flag combinations."""
import itertools

import numpy as np
import pytest

from helpers.optim_kernels import check_split_ranges


CASES = {
    "sgd": [(-0.01, wd, mom, 1.0 - damp, nest, maxi, first)
            for wd, mom, damp, nest, maxi, first in itertools.product((0.0, 0.1), (0.0, 0.9), (0.0, 0.5),
                                                                      (False, True), (False, True), (False, True))
            if not (nest and (mom == 0 or damp != 0))],
    "adam": [(-1e-3, w1, 0.999, 0.001, 0.05, 1e-8, wd, decay, ams, maxi)
             for w1, wd, decay, ams, maxi in itertools.product((0.1, 0.7), (0.0, 0.01), (1.0, 0.99), (False, True),
                                                               (False, True))],
    "rmsprop": [(-0.01, 0.99, 0.01, 1e-8, wd, mom, centered, maxi)
                for wd, mom, centered, maxi in itertools.product((0.0, 0.1), (0.0, 0.9), (False, True),
                                                                 (False, True))],
}


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", sorted(CASES))
def test_split_ranges_match_one_range(name, dtype):
    check_split_ranges(name, dtype, CASES[name])

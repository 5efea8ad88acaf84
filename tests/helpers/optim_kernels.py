"""The CPU optimizer kernels' split-range check, shared by the tests of every optimizer's kernel."""
import numpy as np

from numgrad.kernels.cpu import optim as cpu_optim
from numgrad.kernels.dispatch import optim


def arrays(n, k, dtype):
    """The k arrays of a kernel call: the parameter, its gradient, and non-negative state (square averages)."""
    rng = np.random.default_rng(0)
    p, g, *state = (rng.standard_normal(n).astype(dtype) for _ in range(k))
    return [p, g] + [np.abs(s) for s in state]


def check_split_ranges(name, dtype, cases):
    """Optimizer `name`'s kernel over split ranges (as threads run it) gives the bits of one whole range, for each
    tuple of scalars in `cases`, and updates the parameter."""
    k = optim.N_ARRAYS[name]
    kernel = cpu_optim.kernel(optim.BODIES[name], name, np.dtype(dtype).name)
    n = 1037
    for scalars in cases:
        whole, split = arrays(n, k, dtype), arrays(n, k, dtype)
        kernel(0, n, *whole, *scalars)
        for start, stop in ((0, 1), (1, 400), (400, 401), (401, n)):
            kernel(start, stop, *split, *scalars)
        for a, b in zip(whole, split):
            np.testing.assert_array_equal(a, b)
        assert not np.array_equal(whole[0], arrays(n, k, dtype)[0])  # the parameter was updated

"""The update kernels of Adadelta, Adagrad, Adamax, NAdam and RAdam: split ranges (as threads run them) give the
bits of one whole range for every flag combination, and each body compiles to PTX for the GPU."""
import itertools
import os

import numpy as np
import pytest

from helpers.optim_kernels import check_split_ranges
from numgrad.kernels.dispatch import optim

CASES = {
    "adadelta": [(-1.0, 0.9, 0.1, 1e-6, wd, maxi) for wd, maxi in itertools.product((0.0, 0.1), (False, True))],
    "adagrad": [(-0.01, 1e-10, wd, maxi) for wd, maxi in itertools.product((0.0, 0.1), (False, True))],
    "adamax": [(-0.002, w1, 0.999, 1e-8, wd, maxi)
               for w1, wd, maxi in itertools.product((0.1, 0.7), (0.0, 0.1), (False, True))],
    "nadam": [(-0.001, -0.01, w1, 0.999, 0.001, 0.05, 1e-8, wd, decay, maxi)
              for w1, wd, decay, maxi in itertools.product((0.1, 0.7), (0.0, 0.01), (1.0, 0.99), (False, True))],
    "radam": [(-1.0, w1, 0.999, 0.001, 0.3, 0.001, 0.2, 0.8, 1e-8, wd, decay, rect, maxi)
              for w1, wd, decay, rect, maxi in itertools.product((0.1, 0.7), (0.0, 0.01), (1.0, 0.99), (False, True),
                                                                 (False, True))],
}


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", sorted(CASES))
def test_split_ranges_match_one_range(name, dtype):
    check_split_ranges(name, dtype, CASES[name])


def test_state_of_another_shape_raises_before_any_update():
    p, g, m = np.zeros((2, 3), np.float32), np.ones((2, 3), np.float32), np.zeros(5, np.float32)
    with pytest.raises(RuntimeError):
        optim.run("adagrad", p, g, m, -0.1, 1e-10, 0.0, False)
    assert not p.any()


BOOL_SCALARS = {"maximize", "rectified"}


@pytest.mark.skipif(os.environ.get("NUMBA_ENABLE_CUDASIM", "0") not in ("", "0"),
                    reason="compile_ptx needs the real CUDA target, not the simulator")
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_kernels_compile_to_ptx(name, dtype):
    from numba import cuda
    from numba.cuda import types
    from numgrad.kernels.cuda import kernels as cuda_kernels
    from numgrad.kernels.cuda import optim as cuda_optim
    params = [p.strip() for p in optim.BODIES[name][0].split(",")]
    kernel = cuda_kernels.source_kernel(f"ptx_optim_{name}_{dtype}",
                                        cuda_optim.kernel_source(optim.BODIES[name], dtype))
    first_scalar = optim.N_ARRAYS[name]
    sig = [getattr(types, dtype)[::1]] * first_scalar + \
        [types.boolean if p in BOOL_SCALARS else types.float64 for p in params[first_scalar:]]
    for cc in [(8, 0), (9, 0)]:
        ptx, _ = cuda.compile_ptx(kernel.py_func, (types.int64, *sig), cc=cc)
        assert ".entry" in ptx and f".target sm_{cc[0]}{cc[1]}" in ptx

"""The CUDA reduction and matmul kernels compile to PTX for sm_80 and sm_90 (no GPU needed: NVVM only)."""
import os

import pytest

SIMULATOR = os.environ.get("NUMBA_ENABLE_CUDASIM", "0") not in ("", "0")

pytestmark = pytest.mark.skipif(SIMULATOR, reason="compile_ptx needs the real CUDA target, not the simulator")

CCS = ((8, 0), (9, 0))


def samples():
    if SIMULATOR:
        return []
    from numgrad.kernels import cuda_matmul, cuda_reduce
    return cuda_reduce.ptx_samples() + cuda_matmul.ptx_samples()


def sample_id(sample):
    func, sig = sample  # module numgrad_k_cuda_reduce_sum_float64_<digest>: "cuda_reduce_sum_float64-bool"
    return f"{func.__module__.removeprefix('numgrad_k_').rsplit('_', 1)[0]}-{sig.args[0].dtype}"


@pytest.mark.parametrize("sample", samples(), ids=sample_id)
def test_compiles_to_ptx(sample):
    from numba import cuda
    func, sig = sample
    for cc in CCS:
        ptx, _ = cuda.compile_ptx(func, sig, cc=cc)
        assert ".entry" in ptx
        assert f".target sm_{cc[0]}{cc[1]}" in ptx

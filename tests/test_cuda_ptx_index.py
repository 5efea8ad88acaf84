"""The CUDA indexing kernels (kernels/cuda_index.py: strided gather, scatter, atomic scatter-add, index offsets,
bounds checks, nonzero) compile to PTX for sm_80 and sm_90 (no GPU needed: NVVM only)."""
import os

import pytest

SIMULATOR = os.environ.get("NUMBA_ENABLE_CUDASIM", "0") not in ("", "0")

pytestmark = pytest.mark.skipif(SIMULATOR, reason="compile_ptx needs the real CUDA target, not the simulator")

CCS = ((8, 0), (9, 0))


def samples():
    if SIMULATOR:
        return []
    from numgrad.kernels import cuda_index
    return cuda_index.ptx_samples()


@pytest.mark.parametrize("sample", samples(), ids=lambda sample: sample[2])
@pytest.mark.parametrize("cc", CCS, ids=lambda cc: f"sm_{cc[0]}{cc[1]}")
def test_index_kernel_compiles_to_ptx(sample, cc):
    from numba import cuda
    func, signature, _ = sample
    ptx, _ = cuda.compile_ptx(func, signature, cc=cc)
    assert ".entry" in ptx
    assert f".target sm_{cc[0]}{cc[1]}" in ptx


def test_scatter_add_uses_atomics():
    from numba import cuda
    for func, signature, label in samples():
        if label.startswith("scatter_add-"):
            ptx, _ = cuda.compile_ptx(func, signature, cc=(8, 0))
            assert "atom.global.add" in ptx or "red.global.add" in ptx, label

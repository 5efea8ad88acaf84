"""numgrad.cuda's memory functions without a GPU answer as torch's CPU build: empty_cache does nothing
and returns None, memory_allocated and memory_reserved are 0 and memory_stats is empty, for any device
argument, also after CPU work and with numba-cuda missing altogether. numgrad has no caching allocator on
the GPU; numgrad.empty_cache and numgrad.memory_* are the host buffer pool's (tests/unit/kernels/test_pool.py)."""
import subprocess
import sys

import pytest
import torch

import numgrad

DEVICES = [None, 0, "cuda", "cuda:0"]


@pytest.mark.parametrize("device", DEVICES)
def test_memory_functions_without_a_gpu_match_torch(device):
    for lib in (torch, numgrad):  # CPU work first: it must not count
        x = lib.ones(1 << 20, requires_grad=True)
        (x * 2).sum().backward()
    assert numgrad.cuda.memory_allocated(device) == torch.cuda.memory_allocated(device) == 0
    assert numgrad.cuda.memory_reserved(device) == torch.cuda.memory_reserved(device) == 0
    assert numgrad.cuda.memory_stats(device) == dict(torch.cuda.memory_stats(device)) == {}
    assert numgrad.cuda.memory_allocated() == torch.cuda.memory_allocated() == 0


def test_empty_cache_without_a_gpu_does_nothing_as_torch():
    assert torch.cuda.empty_cache() is None
    assert numgrad.cuda.empty_cache() is None
    assert numgrad.cuda.is_available() is torch.cuda.is_available() is False
    # after a failed attempt at a CUDA tensor, too
    for lib in (torch, numgrad):
        with pytest.raises(AssertionError):
            lib.ones(2, device="cuda")
        assert lib.cuda.empty_cache() is None and lib.cuda.memory_allocated() == 0


_WITHOUT_NUMBA_CUDA = """
import sys
sys.modules["numba.cuda"] = None  # as if numba-cuda were not installed
import numgrad
assert numgrad.cuda.empty_cache() is None
assert numgrad.cuda.memory_allocated() == numgrad.cuda.memory_reserved() == 0
assert numgrad.cuda.memory_stats() == {}
assert not any(name.startswith("numba.cuda") and sys.modules[name] is not None for name in sys.modules)
print("ok")
"""


def test_without_numba_cuda_they_load_no_cuda_code():
    out = subprocess.run([sys.executable, "-c", _WITHOUT_NUMBA_CUDA], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"

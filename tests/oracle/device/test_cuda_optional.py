"""numgrad without a GPU: importing it loads no CUDA code, and asking for a CUDA tensor raises the error
of torch's CPU build, with numba-cuda installed (no GPU here) and with it missing altogether."""
import subprocess
import sys

import pytest
import torch

import numgrad

# the error each library gives for a CUDA tensor on a machine without one
CASES = [lambda L: L.ones(2, device="cuda"), lambda L: L.ones(2).cuda(), lambda L: L.ones(2).to("cuda:0"),
         lambda L: L.nn.Linear(2, 2).cuda(), lambda L: L.tensor([1.0], device="cuda")]


@pytest.mark.parametrize("make", CASES)
def test_cuda_tensor_without_a_gpu_raises_torchs_error(make):
    with pytest.raises(AssertionError) as theirs:
        make(torch)
    with pytest.raises(AssertionError) as ours:
        make(numgrad)
    assert str(ours.value) == str(theirs.value) == "Torch not compiled with CUDA enabled"
    assert numgrad.cuda.is_available() is torch.cuda.is_available() is False
    assert numgrad.cuda.device_count() == torch.cuda.device_count() == 0


_WITHOUT_NUMBA_CUDA = """
import sys
sys.modules["numba.cuda"] = None  # as if numba-cuda were not installed: importing it fails
import numgrad
assert not any(name.startswith("numba.cuda") and sys.modules[name] is not None for name in sys.modules)
x = numgrad.ones(3, requires_grad=True)
(x * 2).sum().backward()
assert x.grad.tolist() == [2.0, 2.0, 2.0] and x.device == numgrad.device("cpu")
assert numgrad.cuda.is_available() is False
try:
    numgrad.ones(2, device="cuda")
except AssertionError as e:
    assert str(e) == "Torch not compiled with CUDA enabled"
else:
    raise SystemExit("no error")
print("ok")
"""


def test_import_without_numba_cuda_loads_no_cuda_code():
    out = subprocess.run([sys.executable, "-c", _WITHOUT_NUMBA_CUDA], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"

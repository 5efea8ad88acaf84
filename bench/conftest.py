"""Shared inputs for the pytest-benchmark suites: the same float32 data for torch and numgrad."""
import numpy as np
import pytest


@pytest.fixture(params=["torch", "numgrad"])
def lib(request):
    if request.param == "torch":
        import torch
        torch.set_num_threads(2)
        return torch
    import numgrad
    return numgrad


def make_input(lib, shape, seed=0):
    data = np.random.default_rng(seed).standard_normal(shape).astype(np.float32)
    return lib.tensor(data, requires_grad=True)

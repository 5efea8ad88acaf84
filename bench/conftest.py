"""Shared by the pytest-benchmark suites: the library under test (torch eager, numgrad fused, unfused)."""
import pytest


@pytest.fixture(params=["torch", "numgrad", "numgrad-unfused"])
def variant(request):
    if request.param == "torch":
        import torch
        torch.set_num_threads(2)
        yield torch
        return
    import numgrad
    with numgrad.fusion(request.param == "numgrad"):
        yield numgrad


@pytest.fixture
def lib(variant):
    return variant

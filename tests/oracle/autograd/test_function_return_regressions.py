"""Regressions found by the hardening probe, against torch: what a custom autograd.Function's backward
returns is checked as torch checks it (a number where a gradient belongs, or a gradient for an input that
was not a tensor, raises torch's RuntimeError instead of an AttributeError or being dropped)."""
import pytest
import torch

import numgrad


def _function(lib, returns):
    class Twice(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x, k):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return returns(lib, g)
    return Twice


RETURNS = {
    "a number for a tensor input": lambda lib, g: (3, None),
    "a number for a non-tensor input": lambda lib, g: (g, 3),
    "a tensor for a non-tensor input": lambda lib, g: (g, g),
    "None for the non-tensor input": lambda lib, g: (g * 5, None),
    "too many gradients": lambda lib, g: (g, None, g),
    "a list instead of a tensor": lambda lib, g: ([1.0, 1.0], None),
}


def outcome(lib, returns):
    x = lib.ones(2, requires_grad=True)
    try:
        _function(lib, returns).apply(x, 2).sum().backward()
    except Exception as e:  # noqa: BLE001 - the type and message are what is compared
        return type(e).__name__, str(e).replace("Twice", "F")
    return x.grad.tolist()


@pytest.mark.parametrize("case", sorted(RETURNS))
def test_backward_returns_are_checked_as_torch(case):
    assert outcome(numgrad, RETURNS[case]) == outcome(torch, RETURNS[case])

"""Regressions found by the hardening probe, each against torch: rounding a 0-d tensor gives a tensor; the
gradient through floor/ceil/round/trunc/sign is zero even where the incoming gradient is inf or NaN;
index_select of a 0-d tensor is a copy, never an alias."""
import pytest
import torch

import numgrad

ROUNDING = ["floor", "ceil", "round", "trunc", "sign"]


@pytest.mark.parametrize("name", ROUNDING)
@pytest.mark.parametrize("shape", [(), (3,)])
def test_rounding_returns_a_tensor_and_a_zero_gradient_for_any_incoming(name, shape):
    def run(lib):
        x = lib.full(shape, 2.7, requires_grad=True)
        r = getattr(lib, name)(x)
        seen = [str(r), tuple(r.shape), (r + 1).tolist(), r.grad_fn.name()]
        for special in (float("inf"), float("-inf"), float("nan")):
            x.grad = None
            r = getattr(lib, name)(x)
            r.backward(lib.full(shape, special))
            seen.append(x.grad.tolist())
        return seen

    assert run(numgrad) == run(torch)


@pytest.mark.parametrize("fusion", [True, False])
def test_index_select_of_a_0d_tensor_copies(fusion):
    def run(lib):
        x = lib.tensor(5.0)
        r = lib.index_select(x, 0, lib.tensor([0]))
        r.add_(1)
        y = lib.tensor(5.0, requires_grad=True)
        s = lib.index_select(y, 0, lib.tensor([0]))
        (s * 3).backward()
        return [x.item(), r.tolist(), tuple(r.shape), y.grad.tolist(), s.grad_fn.name()]

    with numgrad.fusion(fusion):
        assert run(numgrad) == run(torch)

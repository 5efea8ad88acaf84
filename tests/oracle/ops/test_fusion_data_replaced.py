"""A pending (fused) result keeps the values its inputs held when it was recorded: replacing an input's
storage through `.data` afterwards changes nothing already computed, as in torch's eager execution."""
import pytest
import torch

import numgrad


def _replaced_input(lib):
    x = lib.ones(3)
    y = x * 2
    x.data = lib.zeros(3)
    return [y.tolist(), x.tolist()]


def _replaced_pending_input(lib):
    a = lib.ones(3)
    x = a + 1  # itself pending
    y = x * 2
    x.data = lib.zeros(3)
    return [y.tolist(), x.tolist()]


def _replaced_parameter_between_forward_and_backward(lib):
    w = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
    h = w * 3
    y = (h * h).sum()
    h.data = lib.zeros(3)  # after the forward pass, before backward reads what it saved
    y.backward()
    return [y.item(), w.grad.tolist()]


def _replaced_with_another_shape(lib):
    x = lib.ones(2, 2)
    y = (x + 1).sum(1)
    x.data = lib.zeros(5)
    return [y.tolist(), list(x.shape)]


@pytest.mark.parametrize("fusion", [True, False])
@pytest.mark.parametrize("case", [_replaced_input, _replaced_pending_input, _replaced_with_another_shape])
def test_values_recorded_before_data_is_replaced(case, fusion):
    with numgrad.fusion(fusion):
        assert case(numgrad) == case(torch)


@pytest.mark.parametrize("fusion", [True, False])
def test_backward_after_data_is_replaced_matches_torch(fusion):
    with numgrad.fusion(fusion):
        assert _replaced_parameter_between_forward_and_backward(numgrad) == \
            _replaced_parameter_between_forward_and_backward(torch)

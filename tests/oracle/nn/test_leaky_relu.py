"""F.leaky_relu, F.leaky_relu_ and nn.LeakyReLU against torch: values at the kink and special values, gradients
and nodes (out of place and in place), dtypes, the module's repr and torch's errors."""
import numpy as np
import pytest
import torch

import numgrad
from numgrad import testing as ngt
from helpers.autograd_compare import bug, leaf, raises, same

SPECIAL = [-3.0, -1.0, -0.0, 0.0, 0.5, 2.0, float("nan"), float("inf"), float("-inf")]


@pytest.mark.parametrize("slope", [0.01, 0.2, -0.5, 2, 0.0])
def test_values_gradients_and_node(slope):
    def fn(L):
        x = leaf(L, SPECIAL)
        y = L.nn.functional.leaky_relu(x, slope)
        y.backward(L.tensor(np.linspace(-1, 2, len(SPECIAL), dtype=np.float32)))
        return y, x.grad, y.grad_fn._saved_negative_slope
    same(fn)


@pytest.mark.parametrize("slope", [0.01, 0.3, 2])
def test_in_place_records_the_result_node(slope):
    def fn(L):
        x = leaf(L, SPECIAL)
        z = x * 1
        y = L.nn.functional.leaky_relu_(z, slope)
        assert y is z
        y.sum().backward()
        return y, x.grad, z._version
    same(fn)


def test_inplace_flag_and_module():
    def fn(L):
        x = leaf(L, [[-1.0, 2.0], [0.0, -4.0]])
        z = x * 1
        m = L.nn.LeakyReLU(0.1, inplace=True)
        y = m(z)
        (y * y).sum().backward()
        return y, y is z, x.grad, repr(m), repr(L.nn.LeakyReLU()), L.nn.LeakyReLU(negative_slope=0.5)(x)
    same(fn)


def test_in_place_negative_slope_refuses_backward_only():
    def fn(L):
        x = leaf(L, [-1.0, 2.0])
        y = L.nn.functional.leaky_relu(x * 1, -0.3, inplace=True)
        return y, raises(y.sum().backward)
    same(fn)
    same(lambda L: L.nn.functional.leaky_relu_(L.tensor([-1.0, 2.0]), -0.3))


@pytest.mark.parametrize("dtype", ["float64", "float16", "bfloat16", "int64", "int32", "bool", "uint8"])
def test_dtypes_and_refusals(dtype):
    def fn(L):
        x = L.tensor([-2, 0, 3]).to(getattr(L, dtype))
        try:
            y = L.nn.functional.leaky_relu(x, 0.25)
            return str(y.dtype).rsplit(".")[-1], y.double()
        except Exception as exc:  # noqa: BLE001  (torch's type and message are compared)
            return type(exc).__name__, str(exc)
    same(fn)


def test_no_tensor_method_as_torch():
    assert hasattr(numgrad.Tensor, "leaky_relu") == hasattr(torch.Tensor, "leaky_relu")
    assert hasattr(numgrad, "leaky_relu") == hasattr(torch, "leaky_relu")


def test_gradcheck_float64():
    x = numgrad.tensor(np.array([-1.5, -0.2, 0.3, 2.0]), requires_grad=True)
    assert ngt.gradcheck(lambda t: numgrad.nn.functional.leaky_relu(t, 0.2), (x,))
    assert ngt.gradgradcheck(lambda t: numgrad.nn.functional.leaky_relu(t, 0.2), (x,))


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_half_types_multiply_by_the_float_slope(dtype):
    x = np.random.default_rng(0).standard_normal(500).astype(np.float32) * 10

    def fn(L):
        return L.nn.functional.leaky_relu(L.tensor(x).to(getattr(L, dtype)), 0.3).float()
    same(fn, rtol=0, atol=0)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("fn, kwargs", [("elu", {"alpha": 0.3}), ("celu", {"alpha": 0.7}), ("elu", {}),
                                        ("leaky_relu", {"negative_slope": 0.37})])
def test_half_activations_read_their_parameter_in_float(dtype, fn, kwargs):
    """torch's half kernels multiply by elu's and celu's alpha (and leaky_relu's slope) in float: every bit equal."""
    x = np.random.default_rng(1).standard_normal(500).astype(np.float32) * 3
    ours = getattr(numgrad.nn.functional, fn)(numgrad.tensor(x).to(getattr(numgrad, dtype)), **kwargs)
    theirs = getattr(torch.nn.functional, fn)(torch.tensor(x).to(getattr(torch, dtype)), **kwargs)
    np.testing.assert_array_equal(ours.float().numpy(), theirs.float().numpy())

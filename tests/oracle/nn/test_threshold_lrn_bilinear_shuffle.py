"""threshold (and threshold_, nn.Threshold), local_response_norm, bilinear and channel_shuffle (functional, module and
top-level forms) against torch: values, dtypes, grad_fn names, gradients, float64 gradchecks and errors."""
import numpy as np
import pytest
import torch

import numgrad
from helpers.compare_core import rand
from helpers.functional_compare import check_gradients_of, compare_arrays, same_error


def _lib(F):
    return numgrad if F.__name__.startswith("numgrad") else torch


X = rand(3, 4, 5, seed=1)


# ---- threshold -------------------------------------------------------------------------------------------------

def test_threshold_forms():
    x = np.array([-1.0, 0.1, 0.5, np.nan, 2.0, 0.1000001], np.float32)
    compare_arrays(lambda F, a: F.threshold(a, 0.1, 20.0), x)
    compare_arrays(lambda F, a: _lib(F).threshold(a, 0.1, -3), x)
    compare_arrays(lambda F, a: F.threshold(a * 1, 0.1, 20.0, inplace=True), x)  # ThresholdBackward1
    compare_arrays(lambda F, a: F.threshold_(a * 1, 0.1, 20.0), x)
    compare_arrays(lambda F, a: _lib(F).threshold_(a * 1, -0.5, 2), x)
    compare_arrays(lambda F, a: _lib(F).nn.Threshold(0.2, 5.0)(a), X)
    compare_arrays(lambda F, a: _lib(F).nn.Threshold(0.2, 5.0, inplace=True)(a * 1), X)
    check_gradients_of(lambda F, a: F.threshold(a, 0.05, 7.0), X)
    assert repr(numgrad.nn.Threshold(0.1, 20)) == repr(torch.nn.Threshold(0.1, 20))
    assert repr(numgrad.nn.Threshold(0.1, 20, True)) == repr(torch.nn.Threshold(0.1, 20, True))


def test_threshold_in_place_into_an_expanded_tensor():
    outs = []
    for lib in (numgrad, torch):  # threshold_ is idempotent: torch does not check its memory overlap
        base = lib.tensor([[[-0.5], [0.7]]])
        out = lib.nn.functional.threshold(base.expand(3, 2, 1), 0.0, -2.0, inplace=True)
        outs.append((out.numpy().copy(), base.numpy().copy()))
    for a, b in zip(*outs):
        np.testing.assert_array_equal(a, b)


def test_threshold_in_place_saves_the_input_before_the_write():
    grads = []
    for lib in (numgrad, torch):
        x = lib.tensor([-1.0, 0.1, 0.5, 2.0], requires_grad=True)
        y = x * 1
        lib.nn.functional.threshold_(y, 0.1, 20.0)
        assert type(y.grad_fn).__name__ == "ThresholdBackward1"
        y.sum().backward()
        grads.append(x.grad.numpy())
    np.testing.assert_array_equal(*grads)


@pytest.mark.parametrize("dtype", [np.int64, np.int32, np.uint8, np.int16, np.float16])
def test_threshold_dtypes(dtype):
    x = np.array([0, 1, 2, 3, 7], dtype)
    for th, value in ((1.5, 7.9), (1, -1), (-1, 5), (2.7, 0)):
        compare_arrays(lambda F, a: F.threshold(a, th, value), x, grads=[], rtol=0, atol=0)


def test_threshold_bf16_and_errors():
    compare_arrays(lambda F, a: F.threshold(a.to(_lib(F).bfloat16), 0.3, 7.9).float(), X, grads=[], rtol=0, atol=0)
    same_error(lambda F, a: F.threshold(a, 0.5, 1.0), np.array([True, False]))
    same_error(lambda F, a: F.threshold(a, 1, 300), np.array([1, 2], np.uint8))
    same_error(lambda F, a: F.threshold(a, 1, 200), np.array([1, 2], np.int8))
    same_error(lambda F, a: F.threshold(a, "a", 1), X)
    same_error(lambda F, a: F.threshold(a, 0.5, [1]), X)


# ---- local_response_norm -----------------------------------------------------------------------------------------

@pytest.mark.parametrize("shape", [(2, 5, 7), (2, 6, 3, 4), (1, 4, 2, 3, 2)])
@pytest.mark.parametrize("size", [1, 2, 3, 5])
def test_local_response_norm(shape, size):
    x = rand(*shape, seed=2) * 3
    compare_arrays(lambda F, a: F.local_response_norm(a, size), x)
    compare_arrays(lambda F, a: F.local_response_norm(a, size, alpha=0.1, beta=0.5, k=2.0), x.astype(np.float64),
                   rtol=1e-9, atol=1e-10)
    compare_arrays(lambda F, a: _lib(F).nn.LocalResponseNorm(size, 1e-2, 0.75, 1.5)(a), x)


def test_local_response_norm_edges():
    check_gradients_of(lambda F, a: F.local_response_norm(a, 3, alpha=0.5, beta=0.6, k=1.2), rand(2, 4, 3, seed=3))
    compare_arrays(lambda F, a: F.local_response_norm(a, 2), rand(0, 3, 4))  # an empty input is returned
    same_error(lambda F, a: F.local_response_norm(a, 2), rand(3, 4))
    assert repr(numgrad.nn.LocalResponseNorm(3, 1e-3, 0.5, 2.0)) == repr(torch.nn.LocalResponseNorm(3, 1e-3, 0.5, 2.0))


# ---- bilinear ----------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("batch", [(7,), (2, 3), ()])
@pytest.mark.parametrize("bias", [True, False])
def test_bilinear(batch, bias):
    arrays = [rand(*batch, 5, seed=4), rand(*batch, 4, seed=5), rand(6, 5, 4, seed=6)] + [rand(6, seed=7)] * bias
    compare_arrays(lambda F, *a: F.bilinear(*a), *arrays)
    compare_arrays(lambda F, *a: _lib(F).bilinear(*a), *arrays)
    check_gradients_of(lambda F, *a: F.bilinear(*a), *arrays)


def test_bilinear_module_dtypes_and_errors():
    built = []
    for lib in (numgrad, torch):
        lib.manual_seed(0)
        built.append(lib.nn.Bilinear(5, 4, 6))
    ours, theirs = built
    assert repr(ours) == repr(theirs) and [n for n, _ in ours.named_parameters()] == ["weight", "bias"]
    assert tuple(ours.weight.shape) == (6, 5, 4) and float(ours.weight.abs().max()) <= 1 / np.sqrt(5)
    ours.load_state_dict({k: v.detach().numpy() for k, v in theirs.state_dict().items()})
    a, b = rand(3, 5, seed=8), rand(3, 4, seed=9)
    out_ours = ours(numgrad.tensor(a), numgrad.tensor(b))
    out_theirs = theirs(torch.tensor(a), torch.tensor(b))
    np.testing.assert_allclose(out_ours.detach().numpy(), out_theirs.detach().numpy(), rtol=1e-5, atol=1e-6)
    assert type(out_ours.grad_fn).__name__ == type(out_theirs.grad_fn).__name__ == "AddBackward0"
    assert repr(numgrad.nn.Bilinear(2, 3, 4, bias=False)) == repr(torch.nn.Bilinear(2, 3, 4, bias=False))
    ints = [np.arange(10).reshape(2, 5) % 3, np.arange(8).reshape(2, 4) % 2, np.ones((6, 5, 4), np.int64)]
    compare_arrays(lambda F, *t: F.bilinear(*t), *ints, grads=[])
    W, bias = rand(6, 5, 4), rand(6)
    same_error(lambda F, x, y, w, c: F.bilinear(x, y, w, c), a.astype(np.float64), b, W, bias)
    same_error(lambda F, x, y, w: F.bilinear(x, y, w), a.astype(np.float64), b, W)
    same_error(lambda F, x, y, w, c: F.bilinear(x, y, w, c), rand(2, 3, 5), b, W, bias)
    same_error(lambda F, x, y, w, c: F.bilinear(x, y, w, c), rand(6, 5), b, W, bias)
    same_error(lambda F, x, y, w, c: F.bilinear(x, y, w, c), rand(3, 3), b, W, bias)
    same_error(lambda F, x, y, w, c: F.bilinear(x, y, w, c), a, rand(3, 3), W, bias)
    same_error(lambda F, x, y, w, c: F.bilinear(x, y, w, c), a, b, W, rand(3))
    same_error(lambda F, x, y, w, c: F.bilinear(x, y, w, c), a, b, rand(6, 5), bias)


# ---- channel_shuffle ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("shape,groups", [((1, 6, 2, 2), 2), ((2, 6, 3), 3), ((2, 6, 2, 1, 2), 6), ((2, 4, 3), 1)])
def test_channel_shuffle(shape, groups):
    x = rand(*shape, seed=10)
    compare_arrays(lambda F, a: F.channel_shuffle(a, groups), x, rtol=0, atol=0)
    compare_arrays(lambda F, a: _lib(F).channel_shuffle(a, groups), x, rtol=0, atol=0)
    compare_arrays(lambda F, a: _lib(F).nn.ChannelShuffle(groups)(a), x, rtol=0, atol=0)
    compare_arrays(lambda F, a: F.native_channel_shuffle(a, groups), x, grads=[], rtol=0, atol=0)
    check_gradients_of(lambda F, a: F.channel_shuffle(a, groups), x)


def test_channel_shuffle_edges_and_errors():
    compare_arrays(lambda F, a: F.channel_shuffle(a, 3), rand(0, 6, 2))
    compare_arrays(lambda F, a: F.channel_shuffle(a, 3), np.arange(24).reshape(2, 6, 2), grads=[], rtol=0, atol=0)
    compare_arrays(lambda F, a: F.channel_shuffle(a, 2), np.arange(24).reshape(2, 6, 2) % 2 == 0, grads=[])
    assert repr(numgrad.nn.ChannelShuffle(2)) == repr(torch.nn.ChannelShuffle(2))
    # one group: still a fresh tensor, which an in-place op may write (it was a view made under no_grad)
    compare_arrays(lambda F, a: F.threshold(F.channel_shuffle(a * 1, 1), -1.0, -2.0, inplace=True), rand(2, 3, 4))
    for lib in (numgrad, torch):  # torch's own kernel has no derivative
        y = lib.nn.functional.native_channel_shuffle(lib.tensor(rand(1, 4, 2), requires_grad=True), 2)
        assert y.grad_fn.name() == "torch::autograd::NotImplemented"
        with pytest.raises(RuntimeError, match="derivative for aten::native_channel_shuffle is not implemented"):
            y.sum().backward()
    same_error(lambda F, a: F.channel_shuffle(a, 3), rand(2, 6))
    same_error(lambda F, a: F.channel_shuffle(a, 0), rand(2, 6, 2))
    same_error(lambda F, a: F.channel_shuffle(a, -1), rand(2, 6, 2))
    same_error(lambda F, a: F.channel_shuffle(a, 4), rand(2, 6, 2))
    same_error(lambda F, a: F.native_channel_shuffle(a, 0), rand(2, 6, 2))

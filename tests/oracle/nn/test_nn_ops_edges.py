"""What the fuzz's nn family found, one test per root cause, each against torch: integer and bool inputs,
negative padding that narrows to nothing, non-finite fill values, empty and too-small transposed convolutions,
pixel_unshuffle's empty shortcut, NaN kept to its own positions in the resampling gradients; and the
top-level torch names of the nn ops."""
import numpy as np
import pytest
import torch

import numgrad
from helpers.functional_compare import same_error
from helpers.nn_compare import rand

INTS = np.array([[[-3, 1, 2, -5, 7, 4]]], np.int64)


@pytest.mark.parametrize("fn", [lambda F, x: F.avg_pool1d(x, 2), lambda F, x: F.avg_pool1d(x, 3, 1, 1),
                                lambda F, x: F.avg_pool1d(x, 3, 1, 1, count_include_pad=False),
                                lambda F, x: F.avg_pool2d(x, (1, 4), 1, (0, 2), ceil_mode=True),
                                lambda F, x: F.avg_pool2d(x, (1, 3), divisor_override=2),
                                lambda F, x: F.avg_pool3d(x[None], (1, 1, 2))])
def test_integer_average_pooling_divides_as_torch(fn):
    ours = fn(numgrad.nn.functional, numgrad.tensor(INTS))
    theirs = fn(torch.nn.functional, torch.tensor(INTS))
    assert ours.dtype == numgrad.int64
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


@pytest.mark.parametrize("fn", [lambda F, x: F.avg_pool1d(x, 2), lambda F, x: F.max_pool1d(x, 2),
                                lambda F, x: F.adaptive_avg_pool1d(x, 2), lambda F, x: F.adaptive_avg_pool2d(x, 2)])
@pytest.mark.parametrize("dtype", [np.int64, np.bool_], ids=["int64", "bool"])
def test_dtype_refusals_match_torch(fn, dtype):
    data = INTS.astype(dtype)
    try:
        expected = fn(torch.nn.functional, torch.tensor(data))
    except NotImplementedError:
        same_error(fn, data)
        return
    np.testing.assert_array_equal(fn(numgrad.nn.functional, numgrad.tensor(data)).numpy(), expected.numpy())


def test_adaptive_average_of_an_empty_bool_input_is_empty():
    data = np.zeros((0, 0, 2), bool)
    ours = numgrad.nn.functional.adaptive_avg_pool1d(numgrad.tensor(data), 3)
    theirs = torch.nn.functional.adaptive_avg_pool1d(torch.tensor(data), 3)
    assert tuple(ours.shape) == tuple(theirs.shape) and ours.dtype == numgrad.bool


@pytest.mark.parametrize("pad", [(-2, 3), (-1, 2), (2, -1), (-1, -1)])
def test_constant_pad_nd_narrows_first(pad):
    data = np.array([[4.0]])
    try:
        expected = torch.constant_pad_nd(torch.tensor(data), pad, 1.5)
    except RuntimeError:
        same_error(lambda F, x: F.pad(x, pad, value=1.5), data)
        return
    np.testing.assert_array_equal(numgrad.constant_pad_nd(numgrad.tensor(data), pad, 1.5).numpy(), expected.numpy())


@pytest.mark.parametrize("value", [float("nan"), float("inf"), 2.7, -2.7, True])
@pytest.mark.parametrize("pad", [(), (0, 0), (-1, 0), (1, 0), (-1, 1)])
def test_constant_pad_nd_fill_of_integers(pad, value):
    for dtype in (np.int64, np.bool_):
        data = np.ones(2, dtype)
        try:
            expected = torch.constant_pad_nd(torch.tensor(data), pad, value)
        except RuntimeError as error:
            with pytest.raises(RuntimeError, match=str(error)):
                numgrad.constant_pad_nd(numgrad.tensor(data), pad, value)
            continue
        ours = numgrad.constant_pad_nd(numgrad.tensor(data), pad, value)
        np.testing.assert_array_equal(ours.numpy(), expected.numpy())


@pytest.mark.parametrize("x_shape, w_shape, args", [((3, 2), (3, 1, 1), (None, 1, 1, 0)),
                                                    ((2, 3, 1), (3, 2, 1), (None, 2, 1, 1)),
                                                    ((2, 3, 0), (3, 2, 1), (None, 1, 0, 0)),
                                                    ((0, 3, 2), (3, 2, 1), (None, 1, 0, 0))])
def test_conv_transpose_small_and_empty_outputs(x_shape, w_shape, args):
    x, w = rand(*x_shape), rand(*w_shape, seed=1)
    try:
        expected = torch.conv_transpose1d(torch.tensor(x), torch.tensor(w), *args)
    except RuntimeError:
        same_error(lambda F, a, b: F.conv_transpose1d(a, b, *args), x, w)
        return
    ours = numgrad.conv_transpose1d(numgrad.tensor(x), numgrad.tensor(w), *args)
    assert tuple(ours.shape) == tuple(expected.shape)


def test_pixel_unshuffle_keeps_an_empty_shape_and_shuffle_backward_fails_as_torch():
    messages = []
    for lib in (numgrad, torch):
        x = lib.zeros(0, 4, 4, requires_grad=True)
        out = lib.pixel_shuffle(lib.pixel_shuffle(x, 2), 3)
        assert tuple(out.shape) == (0, 24, 24)
        with pytest.raises(RuntimeError) as error:
            out.sum().backward()
        messages.append(str(error.value))
        y = lib.zeros(0, 1, 4, 4, requires_grad=True)
        out = lib.pixel_unshuffle(y, 2)
        assert tuple(out.shape) == (0, 1, 4, 4) and out.grad_fn.name() == "PixelUnshuffleBackward0"
        with pytest.raises(RuntimeError) as error:
            out.sum().backward()
        messages.append(str(error.value))
    assert messages[:2] == messages[2:]


@pytest.mark.parametrize("fn", [lambda F, x: F.adaptive_avg_pool1d(x, 4).rsqrt(),
                                lambda F, x: F.interpolate(x, scale_factor=2, mode="linear").rsqrt(),
                                lambda F, x: F.pad(x, (2, 2), mode="reflect").rsqrt()])
def test_a_nan_gradient_stays_at_its_positions(fn):
    data = np.array([[[np.inf, 0.85, -0.62, 1.12]]])
    grads = []
    for lib in (numgrad, torch):
        x = lib.tensor(data, requires_grad=True)
        fn(lib.nn.functional, x).sum().backward()
        grads.append(x.grad.numpy())
    np.testing.assert_array_equal(np.isnan(grads[0]), np.isnan(grads[1]))
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-12)


NAMES = ["conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d", "avg_pool1d",
         "max_pool1d", "max_pool2d", "max_pool3d", "adaptive_avg_pool1d", "pixel_shuffle", "pixel_unshuffle",
         "constant_pad_nd"]


@pytest.mark.parametrize("name", NAMES)
def test_top_level_names(name):
    assert hasattr(torch, name) and callable(getattr(numgrad, name))

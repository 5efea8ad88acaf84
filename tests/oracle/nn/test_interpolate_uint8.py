"""interpolate of uint8 images in bilinear and bicubic modes (antialiased or not) against torch, bit for bit: its
int16 weights and their precision, rounding, clamping, its AVX2 kernel (up to four channels) and its generic one
(more channels), and the errors it raises."""
import itertools

import numpy as np
import pytest
import torch

import numgrad


def _both(x, **kwargs):
    """Each library's result, or its exception's type and words (which must then agree)."""
    outs = []
    for lib in (numgrad, torch):
        try:
            out = lib.nn.functional.interpolate(lib.tensor(x), **kwargs)
        except RuntimeError as error:
            outs.append(str(error))
            continue
        assert str(out.dtype) == "torch.uint8" and out.grad_fn is None
        outs.append(out.numpy())
    return outs


def _image(shape, seed, kind):
    rng = np.random.default_rng(seed)
    if kind == "edges":  # saturated steps: the cubic's overshoot is clamped
        return (rng.integers(0, 2, shape) * 255).astype(np.uint8)
    return rng.integers(0, 256, shape).astype(np.uint8)


SIZES = [(1, 1), (2, 3), (4, 9), (9, 4), (16, 14), (3, 1)]


@pytest.mark.parametrize("mode", ["bilinear", "bicubic"])
@pytest.mark.parametrize("channels", [1, 3, 4, 6])
@pytest.mark.parametrize("antialias", [False, True])
def test_sizes_match_torch_bit_for_bit(mode, channels, antialias):
    for (h, w), size, align_corners, kind in itertools.product([(1, 7), (5, 3), (8, 8), (13, 6)], SIZES,
                                                                [False, True], ["random", "edges"]):
        x = _image((2, channels, h, w), h * w + channels, kind)
        ours, theirs = _both(x, size=size, mode=mode, align_corners=align_corners, antialias=antialias)
        if isinstance(theirs, str):
            assert ours == theirs and (channels, size) == (3, (1, 1))
        else:
            np.testing.assert_array_equal(ours, theirs, err_msg=str(((h, w), size, align_corners, kind)))


@pytest.mark.parametrize("mode", ["bilinear", "bicubic"])
@pytest.mark.parametrize("scale", [0.5, 0.3, 1.7, 2.0, (0.75, 3.0)])
def test_scale_factors(mode, scale):
    for antialias, recompute in itertools.product([False, True], [None, True]):
        x = _image((1, 3, 17, 11), 3, "random")
        ours, theirs = _both(x, scale_factor=scale, mode=mode, antialias=antialias, recompute_scale_factor=recompute)
        np.testing.assert_array_equal(ours, theirs)


def test_large_downscale_and_layouts():
    x = _image((1, 5, 64, 48), 4, "random")
    for mode, antialias in itertools.product(["bilinear", "bicubic"], [False, True]):
        np.testing.assert_array_equal(*_both(x, size=(7, 5), mode=mode, antialias=antialias))
    wide = _image((2, 3, 6, 10), 5, "random")[..., ::2]  # a strided input
    for mode in ("bilinear", "bicubic"):
        np.testing.assert_array_equal(*_both(wide, size=(4, 8), mode=mode))
        np.testing.assert_array_equal(*_both(wide, size=(6, 5), mode=mode))  # no pass at all: a copy


def test_torch_refusals():
    x = _image((1, 3, 8, 7), 6, "random")
    messages = []
    for lib in (numgrad, torch):  # torch's AVX2 kernel fails its own assertion for a 1x1 image of three channels
        with pytest.raises(RuntimeError) as info:
            lib.nn.functional.interpolate(lib.tensor(x), size=(1, 1), mode="bilinear")
        messages.append(str(info.value))
    assert messages[0] == messages[1]
    for shape, mode in (((1, 2, 5), "linear"), ((1, 2, 3, 4, 5), "trilinear")):
        messages = []
        for lib in (numgrad, torch):
            with pytest.raises(NotImplementedError) as info:
                lib.nn.functional.interpolate(lib.tensor(_image(shape, 7, "random")), scale_factor=2, mode=mode)
            messages.append(str(info.value))
        assert messages[0] == messages[1]

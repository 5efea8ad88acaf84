"""conv1d, conv3d and conv_transpose1d/2d/3d, their layers and Conv's padding modes against torch: values,
grad_fn names, input, weight and bias gradients (float32 and float64, finite differences), errors."""
import numpy as np
import pytest
import torch

import numgrad
from helpers.functional_compare import check_gradients, compare, same_error
from helpers.nn_compare import rand, run_module, twin

CASES = {
    "conv1d": (lambda F, x, w: F.conv1d(x, w), (2, 3, 9), (4, 3, 3)),
    "conv1d_stride_pad_dilation_groups": (lambda F, x, w: F.conv1d(x, w, None, 2, 1, 2, 2), (2, 4, 11), (6, 2, 3)),
    "conv1d_same_even_kernel": (lambda F, x, w: F.conv1d(x, w, None, 1, "same", 1, 2), (2, 4, 11), (6, 2, 4)),
    "conv1d_valid_unbatched": (lambda F, x, w: F.conv1d(x, w, padding="valid"), (4, 11), (6, 4, 4)),
    "conv1d_bias": (lambda F, x, w, b: F.conv1d(x, w, b, stride=3, padding=2), (2, 3, 9), (4, 3, 3), (4,)),
    "conv2d_tuple_args": (lambda F, x, w: F.conv2d(x, w, None, (2, 1), (1, 0), (2, 1), 2), (2, 4, 9, 8),
                          (6, 2, 3, 2)),
    "conv3d": (lambda F, x, w: F.conv3d(x, w), (2, 3, 5, 6, 4), (4, 3, 2, 3, 2)),
    "conv3d_all_args": (lambda F, x, w, b: F.conv3d(x, w, b, (1, 2, 1), (1, 0, 2), (2, 1, 1), 2), (2, 4, 5, 6, 4),
                        (6, 2, 2, 3, 2), (6,)),
    "conv3d_same_unbatched": (lambda F, x, w: F.conv3d(x, w, padding="same"), (3, 5, 6, 4), (4, 3, 2, 3, 3)),
    "convt1d": (lambda F, x, w: F.conv_transpose1d(x, w), (2, 3, 9), (3, 4, 3)),
    "convt1d_all_args": (lambda F, x, w, b: F.conv_transpose1d(x, w, b, 2, 1, 1, 2, 1), (2, 4, 7), (4, 3, 3), (6,)),
    "convt1d_dilation_output_padding": (lambda F, x, w: F.conv_transpose1d(x, w, None, 1, 0, 1, 1, 2), (4, 7),
                                        (4, 3, 3)),
    "convt2d": (lambda F, x, w: F.conv_transpose2d(x, w), (2, 3, 5, 4), (3, 4, 3, 3)),
    "convt2d_stride_output_padding": (lambda F, x, w, b: F.conv_transpose2d(x, w, b, 2, 1, 1), (2, 3, 5, 4),
                                      (3, 4, 3, 2), (4,)),
    "convt2d_all_args": (lambda F, x, w, b: F.conv_transpose2d(x, w, b, (2, 3), (1, 0), (1, 2), 2, (1, 2)),
                         (2, 4, 5, 4), (4, 3, 3, 2), (6,)),
    "convt2d_unbatched": (lambda F, x, w: F.conv_transpose2d(x, w, stride=2), (3, 5, 4), (3, 4, 3, 3)),
    "convt3d": (lambda F, x, w: F.conv_transpose3d(x, w), (2, 3, 3, 4, 3), (3, 4, 2, 3, 2)),
    "convt3d_all_args": (lambda F, x, w, b: F.conv_transpose3d(x, w, b, 2, 1, 1, 2), (2, 4, 3, 4, 3),
                         (4, 2, 3, 3, 2), (4,)),
}


@pytest.mark.filterwarnings("ignore:Using padding='same'")
@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["float32", "float64"])
@pytest.mark.parametrize("case", list(CASES))
def test_conv_matches_torch(case, dtype):
    fn, *shapes = CASES[case]
    compare(fn, *shapes, dtype=dtype)


@pytest.mark.filterwarnings("ignore:Using padding='same'")
@pytest.mark.parametrize("case", list(CASES))
def test_conv_gradcheck(case):
    fn, *shapes = CASES[case]
    check_gradients(fn, *shapes)


def test_double_backward_through_conv_transpose():
    results = []
    for lib in (numgrad, torch):
        x = lib.tensor(rand(2, 3, 5, 4, dtype=np.float64), requires_grad=True)
        w = lib.tensor(rand(3, 2, 3, 3, dtype=np.float64, seed=1), requires_grad=True)
        out = lib.nn.functional.conv_transpose2d(x, w, stride=2)
        gx, gw = lib.autograd.grad((out ** 2).sum(), (x, w), create_graph=True)
        results.append([t.detach().numpy() for t in lib.autograd.grad((gx ** 2).sum() + gw.sum(), (x, w))])
    for a, b in zip(*results):
        np.testing.assert_allclose(a, b, rtol=1e-9)


ERRORS = [
    (((2, 4, 5, 5), (4, 3, 3, 3)), lambda F, x, w: F.conv_transpose2d(x, w, output_padding=1)),
    (((2, 4, 5, 5), (4, 3, 3, 3)), lambda F, x, w: F.conv_transpose2d(x, w, stride=2, output_padding=2)),
    (((2, 4, 5, 5), (3, 3, 3, 3)), lambda F, x, w: F.conv_transpose2d(x, w)),
    (((2, 4, 5, 5), (4, 3, 3, 3)), lambda F, x, w: F.conv_transpose2d(x, w, groups=3)),
    (((2, 4, 5, 5), (4, 3, 3, 3)), lambda F, x, w: F.conv_transpose2d(x, w, w[0, 0])),
    (((5, 5), (4, 3, 3, 3)), lambda F, x, w: F.conv_transpose2d(x, w)),
    (((2, 4, 5, 5), (4, 3, 3, 3)), lambda F, x, w: F.conv_transpose2d(x, w, padding="same")),
    (((2, 4, 5, 5), (4, 3, 3, 3)), lambda F, x, w: F.conv_transpose2d(x, w, padding=-1)),
    (((2, 4, 5, 5), (4, 3, 3, 3)), lambda F, x, w: F.conv_transpose2d(x, w, stride=0)),
    (((2, 4, 5), (4, 3, 3)), lambda F, x, w: F.conv_transpose1d(x.reshape(2, 4, 5, 1), w)),
    (((2, 4, 5), (4, 3, 3)), lambda F, x, w: F.conv_transpose2d(x, w.reshape(4, 3, 3, 1))),
    (((2, 4, 5), (4, 3, 3)), lambda F, x, w: F.conv1d(x, w)),
    (((2, 4, 5), (4, 4, 3)), lambda F, x, w: F.conv1d(x.reshape(2, 4, 5, 1), w)),
    (((2, 4, 5, 5, 5), (4, 4, 3, 3, 3)), lambda F, x, w: F.conv3d(x, w, stride=(1, 2))),
    (((2, 4, 5, 5, 5), (4, 2, 3, 3, 3)), lambda F, x, w: F.conv3d(x, w)),
    (((2, 4, 5, 5, 5), (4, 4, 3, 3, 3)), lambda F, x, w: F.conv3d(x, w, padding="same", stride=2)),
    (((2, 4, 5, 5, 5), (4, 4, 3, 3, 3)), lambda F, x, w: F.conv3d(x, w, padding=-1)),
    (((2, 4, 5, 5, 5), (4, 4, 6, 3, 3)), lambda F, x, w: F.conv3d(x, w)),
]


@pytest.mark.parametrize("shapes, fn", ERRORS)
def test_conv_errors_match_torch(shapes, fn):
    same_error(fn, *[rand(*s) for s in shapes])


def test_conv_transpose_dtype_mismatch():
    same_error(lambda F, x, w: F.conv_transpose2d(x, w), rand(2, 4, 5, 5, dtype=np.float64), rand(4, 3, 3, 3))


LAYERS = {
    "conv1d": (lambda nn: nn.Conv1d(3, 4, 3), (2, 3, 9)),
    "conv1d_all": (lambda nn: nn.Conv1d(4, 6, 3, stride=2, padding=1, dilation=2, groups=2, bias=False), (2, 4, 11)),
    "conv1d_same": (lambda nn: nn.Conv1d(3, 4, 3, padding="same"), (3, 9)),
    "conv3d": (lambda nn: nn.Conv3d(2, 3, (2, 3, 2), padding=1), (2, 2, 4, 5, 4)),
    "conv2d_reflect": (lambda nn: nn.Conv2d(2, 3, 3, padding=1, padding_mode="reflect"), (2, 2, 5, 6)),
    "conv2d_replicate": (lambda nn: nn.Conv2d(2, 3, 3, padding=(2, 1), padding_mode="replicate"), (2, 2, 5, 6)),
    "conv2d_circular": (lambda nn: nn.Conv2d(2, 3, 3, padding=1, padding_mode="circular"), (2, 2, 5, 6)),
    "conv2d_same_reflect": (lambda nn: nn.Conv2d(2, 3, 4, padding="same", padding_mode="reflect"), (2, 2, 6, 6)),
    "conv1d_circular": (lambda nn: nn.Conv1d(2, 3, 3, padding=2, padding_mode="circular"), (2, 2, 7)),
    "conv3d_replicate": (lambda nn: nn.Conv3d(2, 3, 3, padding=1, padding_mode="replicate"), (1, 2, 4, 4, 4)),
    "convt1d": (lambda nn: nn.ConvTranspose1d(3, 4, 3, stride=2), (2, 3, 9)),
    "convt2d": (lambda nn: nn.ConvTranspose2d(4, 6, 3, stride=2, padding=1, output_padding=1, groups=2), (2, 4, 5, 5)),
    "convt2d_no_bias": (lambda nn: nn.ConvTranspose2d(3, 2, (2, 3), bias=False, dilation=2), (3, 5, 5)),
    "convt3d": (lambda nn: nn.ConvTranspose3d(2, 3, 2, stride=2), (1, 2, 3, 3, 3)),
}


@pytest.mark.filterwarnings("ignore:Using padding='same'")
@pytest.mark.parametrize("name", list(LAYERS))
def test_conv_layers_match_torch(name):
    make, shape = LAYERS[name]
    ours, theirs = twin(lambda lib: make(lib.nn))
    assert repr(ours) == repr(theirs)
    run_module(ours, theirs, rand(*shape), rtol=1e-4, atol=1e-5)


def test_conv_transpose_output_size():
    ours, theirs = twin(lambda lib: lib.nn.ConvTranspose2d(3, 2, 3, stride=2, padding=1))
    x = rand(1, 3, 4, 4)
    out = ours(numgrad.tensor(x), output_size=[8, 8])
    expected = theirs(torch.tensor(x), output_size=[8, 8])
    np.testing.assert_allclose(out.detach().numpy(), expected.detach().numpy(), rtol=1e-5, atol=1e-6)
    for size in ([10, 10], [8, 8, 8]):
        with pytest.raises(ValueError) as their_error:
            theirs(torch.tensor(x), output_size=size)
        with pytest.raises(ValueError) as our_error:
            ours(numgrad.tensor(x), output_size=size)
        assert str(our_error.value) == str(their_error.value)


def test_conv_transpose_refuses_padding_modes():
    for lib in (numgrad, torch):
        with pytest.raises(ValueError, match='Only "zeros" padding mode is supported for ConvTranspose2d'):
            lib.nn.ConvTranspose2d(2, 2, 3, padding_mode="reflect")

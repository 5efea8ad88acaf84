"""F.unfold / F.fold and pixel_shuffle / pixel_unshuffle and their layers against torch: values, grad_fn
names, gradients (float32, float64, finite differences, double backward) and torch's errors."""
import numpy as np
import pytest
import torch

import numgrad
from helpers.functional_compare import check_gradients, compare, same_error
from helpers.nn_compare import rand, run_module, twin

CASES = {
    "unfold": (lambda F, x: F.unfold(x, 2), (2, 3, 4, 5)),
    "unfold_all_args": (lambda F, x: F.unfold(x, (2, 3), dilation=(1, 2), padding=1, stride=(2, 1)), (2, 3, 5, 6)),
    "unfold_unbatched": (lambda F, x: F.unfold(x, 3, padding=1), (2, 4, 4)),
    "fold": (lambda F, x: F.fold(x, (4, 4), 2), (2, 12, 9)),
    "fold_all_args": (lambda F, x: F.fold(x, (5, 6), (2, 3), dilation=(1, 2), padding=1, stride=(2, 1)),
                      (2, 18, 12)),
    "fold_unbatched": (lambda F, x: F.fold(x, (4, 5), 3, padding=1), (18, 20)),
    "fold_of_unfold": (lambda F, x: F.fold(F.unfold(x, 3, stride=2, padding=1), (5, 6), 3, stride=2, padding=1),
                       (1, 2, 5, 6)),
    "pixel_shuffle": (lambda F, x: F.pixel_shuffle(x, 2), (2, 8, 3, 4)),
    "pixel_shuffle_3d": (lambda F, x: F.pixel_shuffle(x, 3), (9, 2, 3)),
    "pixel_shuffle_5d": (lambda F, x: F.pixel_shuffle(x, 2), (2, 2, 4, 2, 3)),
    "pixel_unshuffle": (lambda F, x: F.pixel_unshuffle(x, 2), (2, 3, 4, 6)),
    "pixel_unshuffle_3d": (lambda F, x: F.pixel_unshuffle(x, 3), (2, 3, 6)),
}


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["float32", "float64"])
@pytest.mark.parametrize("case", list(CASES))
def test_fold_and_shuffle_match_torch(case, dtype):
    fn, shape = CASES[case]
    compare(fn, shape, dtype=dtype)


@pytest.mark.parametrize("case", list(CASES))
def test_fold_and_shuffle_gradcheck(case):
    fn, shape = CASES[case]
    check_gradients(fn, shape)


@pytest.mark.parametrize("case", ["unfold_all_args", "fold", "pixel_shuffle"])
def test_double_backward(case):
    fn, shape = CASES[case]
    results = []
    for lib in (numgrad, torch):
        x = lib.tensor(rand(*shape, dtype=np.float64), requires_grad=True)
        (g,) = lib.autograd.grad((fn(lib.nn.functional, x) ** 2).sum(), x, create_graph=True)
        results.append(lib.autograd.grad((g ** 2).sum(), x)[0].numpy())
    np.testing.assert_allclose(results[0], results[1], rtol=1e-9)


def test_pixel_shuffle_keeps_integers():
    data = np.arange(2 * 8 * 2 * 3).reshape(2, 8, 2, 3)
    ours = numgrad.nn.functional.pixel_shuffle(numgrad.tensor(data), 2)
    theirs = torch.nn.functional.pixel_shuffle(torch.tensor(data), 2)
    assert ours.dtype == numgrad.int64
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


ERRORS = [
    ((1, 2, 4, 5), lambda F, x: F.unfold(x, 6)),
    ((1, 1, 2, 4, 5), lambda F, x: F.unfold(x, 2)),
    ((4, 5), lambda F, x: F.unfold(x, 2)),
    ((1, 2, 4, 5), lambda F, x: F.unfold(x, 0)),
    ((1, 2, 4, 5), lambda F, x: F.unfold(x, 2, padding=-1)),
    ((1, 2, 4, 5), lambda F, x: F.unfold(x, 2, stride=0)),
    ((1, 2, 4, 5), lambda F, x: F.unfold(x, 2, dilation=0)),
    ((1, 8, 5), lambda F, x: F.fold(x, (4, 4), 2)),
    ((1, 7, 9), lambda F, x: F.fold(x, (4, 4), 2)),
    ((1, 1, 8, 9), lambda F, x: F.fold(x, (4, 4), 2)),
    ((8,), lambda F, x: F.fold(x, (4, 4), 2)),
    ((1, 8, 1), lambda F, x: F.fold(x, (1, 1), 2)),
    ((2, 6, 3, 3), lambda F, x: F.pixel_shuffle(x, 2)),
    ((6, 3), lambda F, x: F.pixel_shuffle(x, 2)),
    ((2, 8, 3, 3), lambda F, x: F.pixel_shuffle(x, 0)),
    ((2, 8, 3, 4), lambda F, x: F.pixel_unshuffle(x, 2)),
    ((2, 8, 4, 3), lambda F, x: F.pixel_unshuffle(x, 2)),
    ((2, 8), lambda F, x: F.pixel_unshuffle(x, 2)),
    ((2, 8, 4, 4), lambda F, x: F.pixel_unshuffle(x, -1)),
]


@pytest.mark.parametrize("shape, fn", ERRORS)
def test_fold_and_shuffle_errors_match_torch(shape, fn):
    same_error(fn, rand(*shape))


LAYERS = {
    "unfold": (lambda nn: nn.Unfold(2, padding=1), (2, 3, 4, 4)),
    "fold": (lambda nn: nn.Fold((4, 5), 2, padding=1), (2, 12, 30)),
    "pixel_shuffle": (lambda nn: nn.PixelShuffle(2), (2, 8, 3, 3)),
    "pixel_unshuffle": (lambda nn: nn.PixelUnshuffle(3), (2, 1, 6, 3)),
}


@pytest.mark.parametrize("name", list(LAYERS))
def test_fold_and_shuffle_layers_match_torch(name):
    make, shape = LAYERS[name]
    ours, theirs = twin(lambda lib: make(lib.nn))
    assert repr(ours) == repr(theirs)
    run_module(ours, theirs, rand(*shape))

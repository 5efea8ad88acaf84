"""alpha_dropout, feature_alpha_dropout, dropout1d/2d/3d (functional, module and torch's namespace forms): the
deterministic cases (eval, p=0, p=1, empty) against torch exactly, the random ones by their statistics, the exact
values each kept or dropped element takes, and gradients that follow the same mask."""
import math
import warnings

import numpy as np
import pytest
import torch

import numgrad
from helpers.compare_core import rand
from helpers.functional_compare import compare_arrays, same_error

ALPHA = 1.7580993408473766
X = rand(4, 6, 5, 3, seed=1)


def _lib(F):
    return numgrad if F.__name__.startswith("numgrad") else torch


FUNCTIONAL = ["alpha_dropout", "feature_alpha_dropout", "dropout1d", "dropout2d", "dropout3d"]
SHAPES = {"dropout1d": (4, 6, 5), "dropout2d": (4, 6, 5, 3), "dropout3d": (4, 6, 5, 3, 2)}


def _input(name):
    return rand(*SHAPES.get(name, X.shape), seed=2)


@pytest.mark.parametrize("name", FUNCTIONAL)
def test_deterministic_cases_match_torch(name):
    x = _input(name)
    for lib in (numgrad, torch):
        t = lib.tensor(x, requires_grad=True)
        fn = getattr(lib.nn.functional, name)
        if name != "dropout1d":  # (dropout1d views its input even when it does nothing)
            assert fn(t, 0.5, training=False) is t
            assert fn(t, 0.0, training=True) is t
        empty = lib.zeros(0, *x.shape[1:])
        assert fn(empty, 0.5, training=True) is empty or name == "dropout1d"
    compare_arrays(lambda F, a: getattr(F, name)(a, 1.0, True), x)  # p == 1: a product with a 0-d zero
    compare_arrays(lambda F, a: getattr(F, name)(a, 0.5, False), x)
    compare_arrays(lambda F, a: getattr(F, name)(a * 1, 1.0, True, inplace=True), x)


def test_training_defaults_and_modules():
    x = numgrad.tensor(X)
    assert numgrad.nn.functional.alpha_dropout(x) is x  # training=False by default, as torch's
    assert numgrad.nn.functional.feature_alpha_dropout(x) is x
    for name in ("AlphaDropout", "FeatureAlphaDropout", "Dropout1d", "Dropout2d", "Dropout3d"):
        ours, theirs = getattr(numgrad.nn, name)(0.3, inplace=True), getattr(torch.nn, name)(0.3, inplace=True)
        assert repr(ours) == repr(theirs)
        assert repr(getattr(numgrad.nn, name)()) == repr(getattr(torch.nn, name)())
        module = getattr(numgrad.nn, name)(0.3).eval()
        t = numgrad.tensor(_input(name.lower()))
        assert module(t) is t or name == "Dropout1d"
        for lib in (numgrad, torch):
            with pytest.raises(ValueError, match="dropout probability has to be between 0 and 1, but got 1.5"):
                getattr(lib.nn, name)(1.5)


def _alpha_parts(p):
    a = 1.0 / math.sqrt((ALPHA * ALPHA * p + 1) * (1 - p))
    return a, ALPHA * a * p, ALPHA * a * (p - 1)


@pytest.mark.parametrize("feature", [False, True])
@pytest.mark.parametrize("p", [0.2, 0.5, 0.8])
def test_alpha_dropout_values_statistics_and_gradient(feature, p):
    numgrad.manual_seed(0)
    x = numgrad.tensor(rand(40, 50, 6, 2, seed=3), requires_grad=True)
    fn = numgrad.nn.functional.feature_alpha_dropout if feature else numgrad.nn.functional.alpha_dropout
    out = fn(x, p, True)
    assert type(out.grad_fn).__name__ == "AddBackward0"
    a, kept_shift, dropped = _alpha_parts(p)
    values, xs = out.detach().numpy(), x.detach().numpy()
    kept = np.isclose(values, a * xs + kept_shift, rtol=1e-5, atol=1e-6)
    assert np.all(kept | np.isclose(values, dropped, rtol=1e-6))  # every element is one or the other
    if feature:  # one draw per (sample, channel)
        assert np.all(kept == kept[:, :, :1, :1])
    units = kept[:, :, 0, 0] if feature else kept
    assert abs(units.mean() - (1 - p)) < 4 * math.sqrt(p * (1 - p) / units.size)
    out.backward(numgrad.ones_like(out))
    np.testing.assert_allclose(x.grad.numpy(), np.where(kept, a, 0.0), rtol=1e-6)  # the same mask
    # alpha dropout keeps a standard normal input's mean and variance
    big = numgrad.tensor(np.random.default_rng(0).standard_normal((200000,)).astype(np.float32))
    y = numgrad.nn.functional.alpha_dropout(big, p, True).numpy()
    assert abs(y.mean()) < 0.02 and abs(y.std() - 1) < 0.02


@pytest.mark.parametrize("name", ["dropout1d", "dropout2d", "dropout3d"])
@pytest.mark.parametrize("p", [0.3, 0.7])
def test_channel_dropout_masks_and_gradient(name, p):
    numgrad.manual_seed(1)
    shape = (30, 40) + SHAPES[name][2:]
    x = numgrad.tensor(np.abs(rand(*shape, seed=4)) + 0.5, requires_grad=True)
    out = getattr(numgrad.nn.functional, name)(x, p, True)
    assert type(out.grad_fn).__name__ == "MulBackward0"
    values, xs = out.detach().numpy(), x.detach().numpy()
    kept = values != 0
    np.testing.assert_allclose(values[kept], (xs / (1 - p))[kept], rtol=1e-6)
    channels = kept.reshape(30, 40, -1)
    assert np.all(channels == channels[:, :, :1])  # whole channels
    assert abs(channels[:, :, 0].mean() - (1 - p)) < 4 * math.sqrt(p * (1 - p) / 1200)
    out.backward(numgrad.ones_like(out))
    np.testing.assert_allclose(x.grad.numpy(), np.where(kept, 1 / (1 - p), 0.0), rtol=1e-6)


def test_unbatched_and_in_place_forms():
    for lib in (numgrad, torch):
        x = lib.tensor(rand(6, 5, seed=5), requires_grad=True)
        out = lib.nn.functional.dropout1d(x, 0.5, True)
        assert tuple(out.shape) == (6, 5) and type(out.grad_fn).__name__ == "SqueezeBackward1"
        y = x * 1
        out = lib.nn.functional.dropout1d(y, 0.5, True, inplace=True)
        assert out is y and tuple(out.shape) == (6, 5)
        z = lib.tensor(rand(4, 5, seed=6)) * 1
        assert lib.nn.functional.alpha_dropout(z, 0.4, True, inplace=True) is z
        w = lib.tensor(rand(3, 4, 5, 2, seed=7))
        assert tuple(lib.nn.functional.dropout3d(w, 0.5, True).shape) == (3, 4, 5, 2)


def test_namespace_forms():
    x = rand(4, 6, 5, seed=8)
    for name in ("dropout", "feature_dropout", "alpha_dropout", "feature_alpha_dropout"):
        compare_arrays(lambda F, a: getattr(_lib(F), name)(a, 1.0, True), x)
        compare_arrays(lambda F, a: getattr(_lib(F), name)(a, 0.3, False), x)
        compare_arrays(lambda F, a: getattr(_lib(F), name + "_")(a * 1, 1.0, True), x)
        same_error(lambda F, a: getattr(_lib(F), name)(a, 1.5, True), x)
    numgrad.manual_seed(2)
    out = numgrad.feature_alpha_dropout(numgrad.tensor(x, requires_grad=True), 0.5, True)
    assert type(out.grad_fn).__name__ == "AddBackward0"


def test_errors_and_warnings():
    x1 = rand(5)
    same_error(lambda F, a: F.feature_alpha_dropout(a, 0.5, True), x1)
    same_error(lambda F, a: _lib(F).feature_dropout(a, 0.5, True), x1)
    compare_arrays(lambda F, a: F.feature_alpha_dropout(a, 1.0, True), x1)  # p == 1 comes before the check
    same_error(lambda F, a: F.dropout1d(a, 0.5, True), x1)
    same_error(lambda F, a: F.dropout1d(a, 0.5, True), rand(1, 2, 3, 4))
    for name in FUNCTIONAL:
        same_error(lambda F, a: getattr(F, name)(a, 1.5, True), _input(name))
        same_error(lambda F, a: getattr(F, name)(a, -0.1, True), _input(name))
    same_error(lambda F, a: F.alpha_dropout(a, 0.5, True), np.array([1, 2, 3]))
    for name, shape in (("dropout2d", (3, 4)), ("dropout2d", (3, 4, 5)), ("dropout3d", (3, 4, 5))):
        caught = []
        for lib in (numgrad, torch):
            with warnings.catch_warnings(record=True) as w:
                warnings.simplefilter("always")
                getattr(lib.nn.functional, name)(lib.tensor(rand(*shape)), 0.5, False)
            caught.append([(x.category, str(x.message)) for x in w])
        assert caught[0] == caught[1] and caught[0]

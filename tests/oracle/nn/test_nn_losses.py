"""Losses (functional and module forms) against torch: values, grad_fn names, gradients of input and
target, every reduction, class weights, ignore_index, label smoothing, probabilities; torch's errors."""
import numpy as np
import pytest
import torch

import numgrad
from numgrad.testing import gradcheck, gradgradcheck
from helpers.nn_compare import rand

RNG = np.random.default_rng(0)
LOGITS = rand(6, 5)
LOGITS_ND = rand(3, 4, 2, 2, seed=3)
CLASSES = np.array([0, 4, 2, 2, 1, 3])
CLASSES_IGNORED = np.array([0, -100, 2, 2, -100, 3])
CLASSES_ND = RNG.integers(0, 4, (3, 2, 2))
PROBS = np.exp(rand(6, 5, seed=2)) / np.exp(rand(6, 5, seed=2)).sum(1, keepdims=True)
WEIGHTS = np.array([0.5, 1.0, 2.0, 1.5, 0.2], np.float32)
UNIT = np.random.default_rng(1).uniform(0.05, 0.95, (4, 3)).astype(np.float32)
BINARY = (np.random.default_rng(2).uniform(size=(4, 3)) > 0.5).astype(np.float32)


def both(fn, *arrays, grads=(0,)):
    """fn(lib, *tensors) in both libraries; arrays at positions `grads` require grad."""
    results = []
    for lib in (numgrad, torch):
        ts = [lib.tensor(a, requires_grad=i in grads) for i, a in enumerate(arrays)]
        out = fn(lib, *ts)
        w = lib.tensor(rand(*out.shape, seed=5)) if out.dim() else 1.0
        (out * w).sum().backward()
        results.append((out, [t.grad for i, t in enumerate(ts) if i in grads]))
    (ours, our_grads), (theirs, their_grads) = results
    return ours, theirs, our_grads, their_grads


def check(fn, *arrays, grads=(0,), rtol=1e-5, atol=1e-6, name=True):
    ours, theirs, our_grads, their_grads = both(fn, *arrays, grads=grads)
    assert tuple(ours.shape) == tuple(theirs.shape) and str(ours.dtype) == str(theirs.dtype)
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=rtol, atol=atol)
    if name:
        assert type(ours.grad_fn).__name__ == type(theirs.grad_fn).__name__
    for a, b in zip(our_grads, their_grads):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=rtol, atol=atol)


REDUCTIONS = ["mean", "sum", "none"]


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_mse_and_l1(reduction):
    x, y = rand(4, 3), rand(4, 3, seed=1)
    check(lambda lib, a, b: lib.nn.functional.mse_loss(a, b, reduction=reduction), x, y, grads=(0, 1))
    check(lambda lib, a, b: lib.nn.functional.l1_loss(a, b, reduction=reduction), x, y, grads=(0, 1))
    check(lambda lib, a, b: lib.nn.MSELoss(reduction=reduction)(a, b), x, y)
    check(lambda lib, a, b: lib.nn.L1Loss(reduction=reduction)(a, b), x, y)


def test_mse_broadcast_warns_as_torch():
    for lib in (numgrad, torch):
        with pytest.warns(UserWarning, match=r"Using a target size \(torch.Size\(\[3\]\)\) that is different to the "
                                             r"input size \(torch.Size\(\[2, 3\]\)\)"):
            lib.nn.functional.mse_loss(lib.ones(2, 3), lib.zeros(3))
    with pytest.warns(UserWarning):
        check(lambda lib, a, b: lib.nn.functional.mse_loss(a, b), rand(2, 3), rand(3, seed=1), grads=(0, 1))


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("weighted", [False, True])
def test_cross_entropy_class_indices(reduction, weighted):
    def fn(lib, x, t, w):
        return lib.nn.functional.cross_entropy(x, t, w if weighted else None, reduction=reduction)
    check(fn, LOGITS, CLASSES, WEIGHTS)
    check(fn, LOGITS, CLASSES_IGNORED, WEIGHTS)
    check(lambda lib, x, t: lib.nn.CrossEntropyLoss(reduction=reduction)(x, t), LOGITS_ND, CLASSES_ND)


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_cross_entropy_label_smoothing(reduction):
    for weighted in (False, True):
        check(lambda lib, x, t, w: lib.nn.functional.cross_entropy(x, t, w if weighted else None, reduction=reduction,
                                                                    label_smoothing=0.2),
              LOGITS, CLASSES_IGNORED, WEIGHTS, name=False)
    check(lambda lib, x, t: lib.nn.functional.cross_entropy(x, t, reduction=reduction, label_smoothing=0.1),
          LOGITS_ND, CLASSES_ND, name=False)


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_cross_entropy_probabilities(reduction):
    check(lambda lib, x, p: lib.nn.functional.cross_entropy(x, p, reduction=reduction), LOGITS, PROBS, grads=(0, 1))
    check(lambda lib, x, p, w: lib.nn.functional.cross_entropy(x, p, w, reduction=reduction, label_smoothing=0.3),
          LOGITS, PROBS, WEIGHTS, grads=(0, 1), name=False)


def test_cross_entropy_graph_names_match_torch():
    for lib in (numgrad, torch):
        loss = lib.nn.functional.cross_entropy(lib.tensor(LOGITS, requires_grad=True), lib.tensor(CLASSES))
        assert type(loss.grad_fn).__name__ == "NllLossBackward0"
        assert type(loss.grad_fn.next_functions[0][0]).__name__ == "LogSoftmaxBackward0"


def test_cross_entropy_unbatched_and_all_ignored():
    check(lambda lib, x, t: lib.nn.functional.cross_entropy(x, t), LOGITS[0], np.array(3))
    ours, theirs, _, _ = both(lambda lib, x, t: lib.nn.functional.cross_entropy(x, t), LOGITS,
                              np.full(6, -100))
    assert np.isnan(ours.item()) and np.isnan(theirs.item())


@pytest.mark.parametrize("target", [7, -3])
def test_cross_entropy_target_out_of_range(target):
    for lib in (numgrad, torch):
        with pytest.raises(IndexError, match=f"^Target {target} is out of bounds.$"):
            lib.nn.functional.cross_entropy(lib.tensor(LOGITS[:2]), lib.tensor([1, target]))


def test_loss_argument_errors_match_torch():
    cases = [
        lambda lib: lib.nn.functional.cross_entropy(lib.ones(3, 5), lib.tensor([1, 2])),
        lambda lib: lib.nn.functional.cross_entropy(lib.ones(3, 5), lib.tensor([1, 2, 3]), reduction="avg"),
        lambda lib: lib.nn.functional.nll_loss(lib.ones(3, 5), lib.ones(3)),
        lambda lib: lib.nn.functional.binary_cross_entropy(lib.ones(3) * 2, lib.ones(3)),
        lambda lib: lib.nn.functional.binary_cross_entropy(lib.ones(3, 1) / 2, lib.ones(3)),
        lambda lib: lib.nn.functional.binary_cross_entropy_with_logits(lib.ones(3, 1), lib.ones(3)),
        lambda lib: lib.nn.functional.mse_loss(lib.ones(3), lib.ones(3), reduction="bad"),
    ]
    for case in cases:
        errors = []
        for lib in (numgrad, torch):
            with pytest.raises(Exception) as info:
                case(lib)
            errors.append((info.type, str(info.value)))
        assert errors[0] == errors[1]


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_nll_loss(reduction):
    logp = np.log(PROBS).astype(np.float32)
    check(lambda lib, x, t, w: lib.nn.functional.nll_loss(x, t, w, reduction=reduction, ignore_index=2),
          logp, CLASSES, WEIGHTS)
    check(lambda lib, x, t: lib.nn.NLLLoss(reduction=reduction)(x, t), LOGITS_ND, CLASSES_ND)


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_binary_cross_entropy(reduction):
    w = np.array([1.0, 2.0, 0.5], np.float32)
    check(lambda lib, x, y: lib.nn.functional.binary_cross_entropy(x, y, reduction=reduction), UNIT, BINARY,
          grads=(0, 1))
    check(lambda lib, x, y, w: lib.nn.BCELoss(w, reduction=reduction)(x, y), UNIT, UNIT[::-1].copy(), w,
          grads=(0, 1))


def test_binary_cross_entropy_saturates_like_torch():
    x = np.array([0.0, 1.0, 0.5], np.float32)
    y = np.array([1.0, 0.0, 1.0], np.float32)
    check(lambda lib, x, y: lib.nn.functional.binary_cross_entropy(x, y, reduction="none"), x, y)


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_binary_cross_entropy_with_logits(reduction):
    x = rand(4, 3) * 10
    pw = np.array([1.0, 3.0, 0.5], np.float32)
    w = np.array([2.0, 1.0, 0.1], np.float32)
    check(lambda lib, a, b: lib.nn.functional.binary_cross_entropy_with_logits(a, b, reduction=reduction), x, UNIT,
          grads=(0, 1))
    check(lambda lib, a, b, w, pw: lib.nn.BCEWithLogitsLoss(w, reduction=reduction, pos_weight=pw)(a, b),
          x, UNIT, w, pw, grads=(0, 1), rtol=1e-5, atol=1e-5)


def _f64(*shape, seed=0):
    return numgrad.tensor(rand(*shape, seed=seed, dtype=np.float64), requires_grad=True)


F = numgrad.nn.functional


@pytest.mark.parametrize("case", [
    lambda: (lambda x, y: F.mse_loss(x, y), (_f64(3, 4), _f64(3, 4, seed=1))),
    lambda: (lambda x: F.cross_entropy(x, numgrad.tensor([1, 0, 3]), label_smoothing=0.1), (_f64(3, 4),)),
    lambda: (lambda x, p: F.cross_entropy(x, p.softmax(1)), (_f64(3, 4), _f64(3, 4, seed=1))),
    lambda: (lambda x: F.nll_loss(x, numgrad.tensor([1, 0, 3]), reduction="none"), (_f64(3, 4),)),
    lambda: (lambda x, y: F.binary_cross_entropy(x.sigmoid(), y.sigmoid()), (_f64(3, 4), _f64(3, 4, seed=1))),
    lambda: (lambda x, y: F.binary_cross_entropy_with_logits(x, y.sigmoid(), pos_weight=numgrad.tensor(
        [1.0, 2.0, 3.0, 0.5], dtype=numgrad.float64)), (_f64(3, 4), _f64(3, 4, seed=1))),
], ids=["mse", "cross_entropy_smoothing", "cross_entropy_probs", "nll_none", "bce", "bce_logits"])
def test_loss_gradcheck(case):
    fn, inputs = case()
    assert gradcheck(fn, inputs)
    assert gradgradcheck(fn, inputs)

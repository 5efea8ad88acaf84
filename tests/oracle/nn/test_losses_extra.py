"""The further losses (smooth L1, Huber, KL, Poisson and Gaussian NLL, cosine embedding, margin ranking, triplet,
multi-margin, CTC) against torch: values, grad_fn names, gradients of every differentiable input, each reduction,
the module forms, float64 gradchecks, and torch's errors and warnings."""
import warnings

import numpy as np
import pytest
import torch

import numgrad
from numgrad.testing import gradcheck

REDUCTIONS = ["none", "mean", "sum"]


def arr(*shape, seed=0, low=-2.0, high=2.0, dtype=np.float32):
    return np.random.default_rng(seed).uniform(low, high, shape).astype(dtype)


def run(lib, fn, arrays, grads):
    ts = [lib.tensor(a, requires_grad=i in grads) for i, a in enumerate(arrays)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = fn(lib, *ts)
    weight = lib.tensor(arr(*out.shape, seed=9)) if out.dim() else 1.0
    (out * weight).sum().backward()
    return out, [ts[i].grad for i in grads]


def check(fn, *arrays, grads=(0,), rtol=1e-5, atol=1e-6):
    """fn(lib, *tensors) in both libraries: value, dtype, shape, grad_fn name and the gradients."""
    ours, our_grads = run(numgrad, fn, arrays, grads)
    theirs, their_grads = run(torch, fn, arrays, grads)
    assert tuple(ours.shape) == tuple(theirs.shape) and str(ours.dtype) == str(theirs.dtype)
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=rtol, atol=atol)
    assert type(ours.grad_fn).__name__ == type(theirs.grad_fn).__name__
    for a, b in zip(our_grads, their_grads):
        assert (a is None) == (b is None)
        if a is not None:
            np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=rtol, atol=atol)


def same_error(fn, *arrays, exc=RuntimeError):
    messages = []
    for lib in (numgrad, torch):
        with pytest.raises(exc) as info:
            fn(lib, *[lib.tensor(a) for a in arrays])
        messages.append(str(info.value))
    assert messages[0] == messages[1]


def gradcheck64(fn, *arrays, grads=(0,)):
    ts = [numgrad.tensor(a.astype(np.float64) if a.dtype.kind == "f" else a, requires_grad=i in grads)
          for i, a in enumerate(arrays)]
    assert gradcheck(lambda *xs: fn(numgrad, *xs), tuple(ts))


X, Y = arr(4, 5), arr(4, 5, seed=1)


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("beta", [1.0, 0.5, 0.0])
def test_smooth_l1(reduction, beta):
    check(lambda lib, a, b: lib.nn.functional.smooth_l1_loss(a, b, reduction=reduction, beta=beta), X, Y,
          grads=(0, 1))
    check(lambda lib, a, b: lib.nn.SmoothL1Loss(reduction=reduction, beta=beta)(a, b), X, Y)


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("delta", [1.0, 0.3, 2.5])
def test_huber(reduction, delta):
    check(lambda lib, a, b: lib.nn.functional.huber_loss(a, b, reduction=reduction, delta=delta), X, Y,
          grads=(0, 1))
    check(lambda lib, a, b: lib.nn.HuberLoss(reduction=reduction, delta=delta)(a, b), X, Y)
    check(lambda lib, a, b, w: lib.nn.functional.huber_loss(a, b, reduction=reduction, delta=delta, weight=w),
          X, Y, arr(4, 5, seed=3, low=0, high=1), grads=(0, 1, 2))


def test_smooth_l1_and_huber_gradcheck_and_errors():
    gradcheck64(lambda lib, a, b: lib.nn.functional.smooth_l1_loss(a, b, beta=0.7), X, Y, grads=(0, 1))
    gradcheck64(lambda lib, a, b: lib.nn.functional.huber_loss(a, b, delta=0.7), X, Y, grads=(0, 1))
    same_error(lambda lib, a, b: lib.nn.functional.smooth_l1_loss(a, b, beta=-1.0), X, Y)
    same_error(lambda lib, a, b: lib.nn.functional.huber_loss(a, b, delta=0.0), X, Y)
    ints = np.arange(3)
    same_error(lambda lib, a, b: lib.nn.functional.smooth_l1_loss(a, b), ints, ints, exc=NotImplementedError)
    same_error(lambda lib, a, b: lib.nn.functional.huber_loss(a, b), ints, ints, exc=NotImplementedError)
    same_error(lambda lib, a, b: lib.nn.functional.huber_loss(a, b, weight=lib.ones(3)), X, Y, exc=ValueError)
    same_error(lambda lib, a, b: lib.nn.functional.smooth_l1_loss(a, b, reduction="avg"), X, Y, exc=ValueError)
    with pytest.raises(TypeError, match="delta must be a float or int"):
        numgrad.nn.HuberLoss(delta="1")


def test_size_mismatch_warns_and_broadcasts():
    for name in ("smooth_l1_loss", "huber_loss"):
        messages = []
        for lib in (numgrad, torch):
            with pytest.warns(UserWarning) as record:
                getattr(lib.nn.functional, name)(lib.tensor(X), lib.tensor(Y[:1]))
            messages.append(str(record[0].message))
        assert messages[0] == messages[1]
        check(lambda lib, a, b: getattr(lib.nn.functional, name)(a, b), X, Y[:1], grads=(0, 1))


@pytest.mark.parametrize("reduction", REDUCTIONS + ["batchmean"])
@pytest.mark.parametrize("log_target", [False, True])
def test_kl_div(reduction, log_target):
    logp = np.log(np.exp(X) / np.exp(X).sum(1, keepdims=True)).astype(np.float32)
    q = np.exp(Y) / np.exp(Y).sum(1, keepdims=True)
    q[0, 0] = 0  # xlogy(0, 0) is 0
    target = np.log(q + 1e-3).astype(np.float32) if log_target else q.astype(np.float32)
    check(lambda lib, a, b: lib.nn.functional.kl_div(a, b, reduction=reduction, log_target=log_target), logp,
          target, grads=(0,))
    check(lambda lib, a, b: lib.nn.KLDivLoss(reduction=reduction, log_target=log_target)(a, b), logp, target)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the 'mean' deprecation, checked below
        gradcheck64(lambda lib, a, b: lib.nn.functional.kl_div(a, b, reduction=reduction, log_target=log_target),
                    logp, np.abs(target) + 0.1, grads=(0, 1))


def test_kl_div_mean_warns_and_rejects_integers():
    messages = []
    for lib in (numgrad, torch):
        with pytest.warns(UserWarning) as record:
            lib.nn.functional.kl_div(lib.tensor(X), lib.tensor(Y))
        messages.append(str(record[0].message))
    assert messages[0] == messages[1]
    same_error(lambda lib, a, b: lib.nn.functional.kl_div(a, b, reduction="sum"), np.arange(3), np.ones(3, np.float32))


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("log_input,full", [(True, False), (False, False), (True, True), (False, True)])
def test_poisson_nll(reduction, log_input, full):
    x = arr(4, 5, low=0.1, high=3.0) if not log_input else X
    counts = np.random.default_rng(4).integers(0, 6, (4, 5)).astype(np.float32)
    check(lambda lib, a, b: lib.nn.functional.poisson_nll_loss(a, b, log_input=log_input, full=full,
                                                               reduction=reduction), x, counts)
    check(lambda lib, a, b: lib.nn.PoissonNLLLoss(log_input=log_input, full=full, reduction=reduction)(a, b), x,
          counts)
    gradcheck64(lambda lib, a, b: lib.nn.functional.poisson_nll_loss(a, b, log_input=log_input, full=full), x,
                counts)


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("full", [False, True])
def test_gaussian_nll(reduction, full):
    var = arr(4, 5, seed=5, low=0.0, high=2.0)
    var[0, 0] = 1e-9  # clamped to eps outside the graph
    check(lambda lib, a, b, v: lib.nn.functional.gaussian_nll_loss(a, b, v, full=full, reduction=reduction), X, Y,
          var, grads=(0, 1, 2))
    check(lambda lib, a, b, v: lib.nn.GaussianNLLLoss(full=full, reduction=reduction)(a, b, v), X, Y, var[:, :1],
          grads=(0, 2))
    check(lambda lib, a, b, v: lib.nn.functional.gaussian_nll_loss(a, b, v, reduction=reduction), X, Y, var[:, 0],
          grads=(0, 2))
    check(lambda lib, a, b: lib.nn.functional.gaussian_nll_loss(a, b, 0.7, reduction=reduction), X, Y)
    gradcheck64(lambda lib, a, b, v: lib.nn.functional.gaussian_nll_loss(a, b, v, full=full), X, Y, var + 0.5,
                grads=(0, 1, 2))


def test_gaussian_nll_errors():
    same_error(lambda lib, a, b: lib.nn.functional.gaussian_nll_loss(a, b, -1.0), X, Y, exc=ValueError)
    same_error(lambda lib, a, b, v: lib.nn.functional.gaussian_nll_loss(a, b, v), X, Y, -np.abs(Y), exc=ValueError)
    same_error(lambda lib, a, b, v: lib.nn.functional.gaussian_nll_loss(a, b, v), X, Y, np.ones((4, 2), np.float32),
               exc=ValueError)
    same_error(lambda lib, a, b: lib.nn.functional.gaussian_nll_loss(a, b, 1.0, reduction="x"), X, Y, exc=ValueError)


SIGNS = np.array([1, -1, 1, -1], np.float32)


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("margin", [0.0, 0.4])
def test_margin_ranking(reduction, margin):
    check(lambda lib, a, b, t: lib.nn.functional.margin_ranking_loss(a, b, t, margin=margin, reduction=reduction),
          X[:, 0], Y[:, 0], SIGNS, grads=(0, 1))
    check(lambda lib, a, b, t: lib.nn.MarginRankingLoss(margin=margin, reduction=reduction)(a, b, t), X[:, 0],
          Y[:, 0], SIGNS, grads=(0, 1))
    same_error(lambda lib, a, b, t: lib.nn.functional.margin_ranking_loss(a, b, t), X, Y[:, 0], SIGNS)


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("margin", [0.0, 0.2])
def test_cosine_embedding(reduction, margin):
    target = SIGNS.astype(np.int64)
    check(lambda lib, a, b, t: lib.nn.functional.cosine_embedding_loss(a, b, t, margin=margin, reduction=reduction),
          X, Y, target, grads=(0, 1))
    check(lambda lib, a, b, t: lib.nn.CosineEmbeddingLoss(margin=margin, reduction=reduction)(a, b, t), X[0], Y[0],
          np.array(-1), grads=(0, 1))
    gradcheck64(lambda lib, a, b, t: lib.nn.functional.cosine_embedding_loss(a, b, t, margin=margin), X, Y, target,
                grads=(0, 1))


def test_cosine_embedding_errors():
    same_error(lambda lib, a, b, t: lib.nn.functional.cosine_embedding_loss(a, b, t), X, Y, np.ones((4, 5)))
    same_error(lambda lib, a, b, t: lib.nn.functional.cosine_embedding_loss(a, b, t), X[0], Y[0], SIGNS)
    same_error(lambda lib, a, b, t: lib.nn.functional.cosine_embedding_loss(a, b, t), X, Y, np.array(1.0))


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("p,swap", [(2, False), (1, True), (3.0, False)])
def test_triplet_margin(reduction, p, swap):
    negative = arr(4, 5, seed=2)
    check(lambda lib, a, b, c: lib.nn.functional.triplet_margin_loss(a, b, c, p=p, swap=swap, reduction=reduction),
          X, Y, negative, grads=(0, 1, 2), rtol=1e-4, atol=1e-5)
    check(lambda lib, a, b, c: lib.nn.TripletMarginLoss(margin=2.0, p=p, swap=swap, reduction=reduction)(a, b, c),
          X, Y, negative, grads=(0, 1, 2), rtol=1e-4, atol=1e-5)
    gradcheck64(lambda lib, a, b, c: lib.nn.functional.triplet_margin_loss(a, b, c, margin=3.0, p=p, swap=swap),
                X, Y, negative, grads=(0, 1, 2))


def test_triplet_margin_errors():
    same_error(lambda lib, a, b, c: lib.nn.functional.triplet_margin_loss(a, b, c, margin=0.0), X, Y, Y,
               exc=ValueError)
    same_error(lambda lib, a, b, c: lib.nn.functional.triplet_margin_loss(a, b, c), X, Y, Y[0])
    for lib in (numgrad, torch):
        with pytest.raises(ValueError, match="expected margin to be greater than 0, got -1"):
            lib.nn.TripletMarginLoss(margin=-1)


CLASSES = np.array([1, 4, 0, 2])


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("p,margin,weighted", [(1, 1.0, False), (2, 0.5, False), (1, 2.0, True), (2, 1.0, True)])
def test_multi_margin(reduction, p, margin, weighted):
    weight = arr(5, seed=7, low=0.2, high=2.0)
    if weighted:
        fn = lambda lib, a, t, w: lib.nn.functional.multi_margin_loss(a, t, p, margin, w, reduction=reduction)  # noqa
        check(fn, X, CLASSES, weight)
        check(lambda lib, a, t, w: lib.nn.MultiMarginLoss(p, margin, w, reduction=reduction)(a, t), X, CLASSES, weight)
    else:
        fn = lambda lib, a, t: lib.nn.functional.multi_margin_loss(a, t, p, margin, reduction=reduction)  # noqa
        check(fn, X, CLASSES)
        check(fn, X[0], CLASSES[:1])
        check(fn, X[0], np.array(3))
        gradcheck64(fn, X, CLASSES)


def test_multi_margin_errors():
    f = numgrad.nn.functional.multi_margin_loss
    same_error(lambda lib, a, t: lib.nn.functional.multi_margin_loss(a, t, p=3), X, CLASSES, exc=ValueError)
    same_error(lambda lib, a, t: lib.nn.functional.multi_margin_loss(a, t), X, np.array([1, 2, 7, 0]))
    same_error(lambda lib, a, t: lib.nn.functional.multi_margin_loss(a, t), X, CLASSES[:3])
    same_error(lambda lib, a, t: lib.nn.functional.multi_margin_loss(a, t), X[0], CLASSES[:2])
    same_error(lambda lib, a, t: lib.nn.functional.multi_margin_loss(a, t, weight=lib.ones(4)), X, CLASSES)
    same_error(lambda lib, a, t: lib.nn.functional.multi_margin_loss(a, t), np.zeros((2, 3, 4), np.float32),
               CLASSES[:2])
    with pytest.raises(ValueError, match="weight must be one-dimensional"):
        f(numgrad.tensor(X), numgrad.tensor(CLASSES), weight=numgrad.ones(1, 5))


def ctc_inputs(steps=12, batch=3, classes=5, seed=0):
    rng = np.random.default_rng(seed)
    logits = rng.normal(size=(steps, batch, classes)).astype(np.float32)
    targets = rng.integers(1, classes, (batch, 4))
    targets[1, 1] = targets[1, 0]  # a repeated label needs a blank between
    return logits, targets, np.array([12, 10, 7]), np.array([4, 3, 0])


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("concatenated", [False, True])
def test_ctc(reduction, concatenated):
    logits, targets, input_lengths, target_lengths = ctc_inputs()
    if concatenated:
        targets = np.concatenate([targets[b, :n] for b, n in enumerate(target_lengths)])

    def fn(lib, x, t, il, tl):
        return lib.nn.functional.ctc_loss(x.log_softmax(2), t, il, tl, reduction=reduction)
    check(fn, logits, targets, input_lengths, target_lengths, rtol=1e-4, atol=1e-5)
    check(lambda lib, x, t, il, tl: lib.nn.CTCLoss(reduction=reduction)(x.log_softmax(2), t, il, tl), logits,
          targets, input_lengths, target_lengths, rtol=1e-4, atol=1e-5)
    check(lambda lib, x, t, il, tl: lib.nn.functional.ctc_loss(x, t, il, tl, reduction=reduction), logits, targets,
          input_lengths, target_lengths, rtol=1e-4, atol=1e-5)


def test_ctc_blank_lists_unbatched_and_zero_infinity():
    logits, targets, input_lengths, target_lengths = ctc_inputs(seed=1)
    targets[targets == 2] = 0  # class 2 is the blank below
    targets[targets == 0] = 3
    check(lambda lib, x, t: lib.nn.functional.ctc_loss(x.log_softmax(2), t, [12, 11, 9], (4, 2, 3), blank=2), logits,
          targets, rtol=1e-4, atol=1e-5)
    check(lambda lib, x, t, il, tl: lib.nn.functional.ctc_loss(x.log_softmax(1), t, il, tl, reduction="none"),
          logits[:, 0], targets[0], np.array(12), np.array(4), rtol=1e-4, atol=1e-5)
    # a target too long for its input: an infinite loss, zeroed (value and gradient) with zero_infinity
    impossible = (np.array([12, 3, 7]), np.array([4, 4, 2]))
    for zero_infinity in (False, True):
        for reduction in REDUCTIONS:
            check(lambda lib, x, t, il, tl: lib.nn.functional.ctc_loss(
                x.log_softmax(2), t, il, tl, reduction=reduction, zero_infinity=zero_infinity), logits, targets,
                *impossible, rtol=1e-4, atol=1e-5)


def test_ctc_gradcheck_through_log_softmax_and_errors():
    logits, targets, input_lengths, target_lengths = ctc_inputs(steps=6, batch=2, classes=4)
    assert gradcheck(lambda x: numgrad.nn.functional.ctc_loss(x.log_softmax(2), numgrad.tensor(targets[:2]),
                                                              [6, 5], [3, 2]),
                     (numgrad.tensor(logits[:, :2].astype(np.float64), requires_grad=True),))
    same_error(lambda lib, x, t: lib.nn.functional.ctc_loss(x, t, [6, 6], [3, 2], blank=4), logits[:, :2],
               targets[:2])
    same_error(lambda lib, x, t: lib.nn.functional.ctc_loss(x, t, [6, 6, 6], [3, 2], blank=0), logits[:, :2],
               targets[:2])
    same_error(lambda lib, x, t: lib.nn.functional.ctc_loss(x, t, [6, 9], [3, 2], blank=0), logits[:6, :2],
               targets[:2])
    same_error(lambda lib, x, t: lib.nn.functional.ctc_loss(x, t, [6, 6], [5, 2], blank=0), logits[:6, :2],
               targets[:2])
    same_error(lambda lib, x, t: lib.nn.functional.ctc_loss(x, t, [6, 6], [3, 2], blank=0), logits[:6, :2],
               np.concatenate([targets, targets])[:3])
    same_error(lambda lib, x, t: lib.nn.functional.ctc_loss(x, t, [6, 6], [3, 2], blank=0), logits[:6, :2],
               targets[0])


def test_existing_logits_and_cross_entropy_options():
    """pos_weight with weight, ignore_index with label smoothing, class-probability targets with smoothing."""
    target = arr(4, 5, seed=3, low=0, high=1)
    check(lambda lib, a, t, w, pw: lib.nn.functional.binary_cross_entropy_with_logits(a, t, w, pos_weight=pw), X,
          target, arr(4, 5, seed=4, low=0, high=1), arr(5, seed=5, low=0.5, high=3), grads=(0, 1))
    classes = np.array([1, -100, 0, 4])
    for reduction in REDUCTIONS:
        check(lambda lib, a, t: lib.nn.functional.cross_entropy(a, t, ignore_index=-100, label_smoothing=0.2,
                                                                reduction=reduction), X, classes)
        check(lambda lib, a, t: lib.nn.CrossEntropyLoss(label_smoothing=0.3, reduction=reduction)(a, t), X,
              target / target.sum(1, keepdims=True), grads=(0, 1))


def test_promoted_dtypes_and_edge_shapes():
    check(lambda lib, a, b: lib.nn.functional.smooth_l1_loss(a, b), X, Y.astype(np.float64), grads=(0, 1))
    # huber_loss keeps the input's dtype (smooth_l1_loss promotes), and its backward refuses mixed dtypes
    outs = [lib.nn.functional.huber_loss(lib.tensor(X), lib.tensor(Y.astype(np.float64)), reduction="none")
            for lib in (numgrad, torch)]
    assert str(outs[0].dtype) == str(outs[1].dtype) == "torch.float32"
    np.testing.assert_allclose(outs[0].numpy(), outs[1].numpy(), rtol=1e-6)
    for grads in ((0,), (1,), (0, 1)):
        for dtypes in ((np.float32, np.float64), (np.float64, np.float32)):
            messages = []
            for lib in (numgrad, torch):
                a = lib.tensor(X.astype(dtypes[0]), requires_grad=0 in grads)
                b = lib.tensor(Y.astype(dtypes[1]), requires_grad=1 in grads)
                with pytest.raises(RuntimeError) as info:
                    lib.nn.functional.huber_loss(a, b).backward()
                messages.append(str(info.value))
            assert messages[0] == messages[1]
    check(lambda lib, a, b: lib.nn.functional.smooth_l1_loss(a, b), np.array(0.3, np.float32),
          np.array(0.0, np.float32))
    check(lambda lib, a, b: lib.nn.functional.kl_div(a, b, reduction="sum"), X, np.abs(Y).astype(np.float64))
    check(lambda lib, a, t: lib.nn.functional.multi_margin_loss(a, t), X.astype(np.float64), CLASSES)
    # (multi_margin_loss of an empty batch is not compared: torch's mean reads uninitialised memory)
    same_error(lambda lib, a, t: lib.nn.functional.multi_margin_loss(a, t), np.ones((2, 3), np.int64), CLASSES[2:],
               exc=NotImplementedError)
    same_error(lambda lib, a, t, w: lib.nn.functional.multi_margin_loss(a, t, weight=w), X, CLASSES,
               np.ones(5, np.float64))


@pytest.mark.parametrize("name,kwargs", [("smooth_l1_loss", dict(beta=0.8)), ("huber_loss", dict(delta=0.6)),
                                         ("kl_div", dict(reduction="batchmean")),
                                         ("poisson_nll_loss", dict(log_input=False)), ("poisson_nll_loss", dict())])
def test_second_derivatives_match_torch(name, kwargs):
    """create_graph through the loss, then the gradient of a weighted sum of its gradient, as torch's."""
    results = []
    for lib in (numgrad, torch):
        a = lib.tensor(X.astype(np.float64), requires_grad=True)
        b = lib.tensor(Y.astype(np.float64) * 0.5, requires_grad=True)
        if name == "poisson_nll_loss" and not kwargs:
            a = a.abs()  # (a rate, not its log)
        loss = getattr(lib.nn.functional, name)(a, b.abs() if name != "kl_div" else b.exp(), **kwargs)
        (ga,) = lib.autograd.grad(loss, a, create_graph=True)
        ((ga * lib.tensor(arr(4, 5, seed=11).astype(np.float64))).sum() + (ga ** 2).sum()).backward()
        results.append([ga.detach().numpy()] + [None if t.grad is None else t.grad.numpy() for t in (a, b)])
    for ours, theirs in zip(*results):
        assert (ours is None) == (theirs is None)
        if ours is not None:
            np.testing.assert_allclose(ours, theirs, rtol=1e-10, atol=1e-12)


def test_kl_div_at_zero_and_nan_targets_as_torch_xlogy():
    """xlogy(t, t)'s gradient is NaN at t = 0 (its t / t term) and its value NaN where t is: the fuzz's find."""
    values = np.array([[-np.inf, -1.0, np.inf], [0.0, -1.76, 0.268], [-1.0, np.nan, -0.0]], np.float32)
    results = []
    for lib in (numgrad, torch):
        a = lib.tensor(values, requires_grad=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = lib.nn.functional.kl_div(a, a, reduction="mean")
        out.backward()
        results.append((out.item(), a.grad.numpy(), [type(n[0]).__name__ for n in out.grad_fn.next_functions]))
    assert np.isnan(results[0][0]) and np.isnan(results[1][0]) and results[0][2] == results[1][2]
    np.testing.assert_allclose(results[0][1], results[1][1], rtol=1e-6)

"""multilabel_soft_margin_loss, triplet_margin_with_distance_loss (and their modules), nn.NLLLoss2d and
gumbel_softmax against torch: values, gradients, nodes, reductions, errors, warnings; gumbel_softmax's noise is
numgrad's own stream, so its samples are tested for their properties and its gradient against torch's softmax at
the same sample."""
import numpy as np
import pytest
import torch

import numgrad
from numgrad import testing as ngt
from helpers.autograd_compare import leaf, raises, same, tree
from helpers.compare_core import rand


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("with_weight", [False, True])
def test_multilabel_soft_margin_loss(reduction, with_weight):
    def fn(L):
        x = leaf(L, rand(3, 4))
        target = L.tensor(np.array([[1, 0, 1, 0], [0, 0, 1, 1], [1, 1, 1, 0]], np.float32))
        w = L.tensor(rand(4, seed=3)) if with_weight else None
        loss = L.nn.functional.multilabel_soft_margin_loss(x, target, w, reduction=reduction)
        loss.backward(L.ones_like(loss))
        m = L.nn.MultiLabelSoftMarginLoss(weight=w, reduction=reduction)
        return loss, x.grad, tree(loss.grad_fn), m(x, target), list(m.state_dict()), repr(m)
    same(fn, rtol=1e-5, atol=1e-6)


def test_multilabel_soft_margin_loss_legacy_args_errors_1d():
    def fn(L):
        F = L.nn.functional
        x, t = L.tensor(rand(2, 3)), L.tensor(np.array([[1, 0, 1], [0, 1, 1]], np.float32))
        return (F.multilabel_soft_margin_loss(x, t, size_average=False),
                F.multilabel_soft_margin_loss(x, t, reduce=False),
                F.multilabel_soft_margin_loss(x[0], t[0]), raises(F.multilabel_soft_margin_loss, x, t, reduction="avg"))
    same(fn, rtol=1e-5, atol=1e-6)


def test_multilabel_soft_margin_loss_gradcheck_float64():
    x = numgrad.tensor(rand(3, 4, dtype=np.float64), requires_grad=True)
    t = numgrad.tensor(np.array([[1, 0, 1, 0], [0, 0, 1, 1], [1, 1, 1, 0]], np.float64))
    assert ngt.gradcheck(lambda a: numgrad.nn.functional.multilabel_soft_margin_loss(a, t), (x,))


def _cosine_distance(L):
    return lambda a, b: 1.0 - L.nn.functional.cosine_similarity(a, b)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("swap", [False, True])
@pytest.mark.parametrize("distance", [None, "cosine", "l1"])
def test_triplet_margin_with_distance_loss(reduction, swap, distance):
    def fn(L):
        fns = {None: None, "cosine": _cosine_distance(L), "l1": L.nn.PairwiseDistance(p=1)}
        a, p, n = leaf(L, rand(4, 5)), leaf(L, rand(4, 5, seed=1)), leaf(L, rand(4, 5, seed=2))
        loss = L.nn.functional.triplet_margin_with_distance_loss(a, p, n, distance_function=fns[distance],
                                                                 margin=0.7, swap=swap, reduction=reduction)
        loss.backward(L.ones_like(loss))
        m = L.nn.TripletMarginWithDistanceLoss(distance_function=fns[distance], margin=0.7, swap=swap,
                                               reduction=reduction)
        return loss, a.grad, p.grad, n.grad, tree(loss.grad_fn), m(a, p, n)
    same(fn, rtol=1e-5, atol=1e-6)


def test_triplet_margin_with_distance_loss_errors_and_repr():
    def fn(L):
        F, x = L.nn.functional, L.tensor(rand(2, 3))
        f = F.triplet_margin_with_distance_loss
        return (raises(f, x, x, x, reduction="avg"), raises(f, x, x, x, margin=0), raises(f, x, x[0], x),
                raises(L.nn.TripletMarginWithDistanceLoss, margin=-1.0), raises(f, x, x, x, 1.0),
                repr(L.nn.TripletMarginWithDistanceLoss()), list(L.nn.TripletMarginWithDistanceLoss().state_dict()))
    same(fn)


def test_triplet_margin_with_distance_loss_gradcheck_float64():
    a, p, n = (numgrad.tensor(rand(3, 4, seed=s, dtype=np.float64), requires_grad=True) for s in range(3))
    assert ngt.gradcheck(lambda *t: numgrad.nn.functional.triplet_margin_with_distance_loss(*t, swap=True), (a, p, n))


def test_nll_loss2d_is_nll_loss_with_a_future_warning():
    def fn(L):
        m = L.nn.NLLLoss2d(weight=L.tensor([1.0, 2.0, 0.5]), ignore_index=1)
        x = leaf(L, rand(2, 3, 2, 2))
        target = L.tensor(np.array([[[0, 1], [2, 0]], [[2, 2], [1, 0]]]))
        loss = m(L.log_softmax(x, 1), target)
        loss.backward()
        return loss, x.grad, repr(m), isinstance(m, L.nn.NLLLoss), list(m.state_dict())
    same(fn, rtol=1e-5, atol=1e-6)


# ---- gumbel_softmax: properties of numgrad's samples, and torch's gradient at the same sample ------------------

@pytest.mark.parametrize("tau,dim", [(1, -1), (0.5, 0), (2.0, 1)])
def test_gumbel_softmax_soft_samples_and_gradient(tau, dim):
    numgrad.manual_seed(3)
    logits_np = rand(4, 5, dtype=np.float64)
    logits = numgrad.tensor(logits_np, requires_grad=True)
    y = numgrad.nn.functional.gumbel_softmax(logits, tau=tau, dim=dim)
    assert type(y.grad_fn).__name__ == "SoftmaxBackward0" and y.shape == logits.shape and y.dtype == logits.dtype
    np.testing.assert_allclose(y.detach().numpy().sum(dim), 1.0, rtol=1e-12)
    g = rand(4, 5, seed=7, dtype=np.float64)
    y.backward(numgrad.tensor(g))
    # torch's softmax at the same sample: (logits + noise) / tau with the noise read back from y
    noise = tau * np.log(y.detach().numpy()) - logits_np
    ref_logits = torch.tensor(logits_np, requires_grad=True)
    ref = ((ref_logits + torch.tensor(noise)) / tau).softmax(dim)
    ref.backward(torch.tensor(g))
    np.testing.assert_allclose(ref.detach().numpy(), y.detach().numpy(), rtol=1e-10)
    np.testing.assert_allclose(logits.grad.numpy(), ref_logits.grad.numpy(), rtol=1e-9, atol=1e-12)


def test_gumbel_softmax_hard_is_one_hot_with_the_soft_gradient():
    logits_np = rand(6, 4)
    numgrad.manual_seed(11)
    soft_logits = numgrad.tensor(logits_np, requires_grad=True)
    soft = numgrad.nn.functional.gumbel_softmax(soft_logits, tau=0.5)
    numgrad.manual_seed(11)
    hard_logits = numgrad.tensor(logits_np, requires_grad=True)
    hard = numgrad.nn.functional.gumbel_softmax(hard_logits, tau=0.5, hard=True)
    assert type(hard.grad_fn).__name__ == "AddBackward0"
    values = hard.detach().numpy()
    assert set(np.unique(values)) <= {0.0, 1.0} and (values.sum(-1) == 1).all()
    np.testing.assert_array_equal(values.argmax(-1), soft.detach().numpy().argmax(-1))
    g = numgrad.tensor(rand(6, 4, seed=2))
    soft.backward(g)
    hard.backward(g)
    np.testing.assert_allclose(hard_logits.grad.numpy(), soft_logits.grad.numpy(), rtol=1e-6, atol=1e-7)


def test_gumbel_softmax_noise_is_gumbel_distributed():
    numgrad.manual_seed(0)
    # with one huge-tau-free trick: softmax over [0, noise] pairs -> P(second wins) = 1/2 for equal logits
    wins = numgrad.nn.functional.gumbel_softmax(numgrad.zeros(20000, 2), hard=True)[:, 1].sum().item()
    assert abs(wins / 20000 - 0.5) < 0.02
    # and P(class k) = softmax(logits)_k
    logits = numgrad.tensor([[0.0, 1.0, 2.0]]).expand(30000, 3)
    freq = numgrad.nn.functional.gumbel_softmax(logits, hard=True).sum(0).numpy() / 30000
    np.testing.assert_allclose(freq, torch.tensor([0.0, 1.0, 2.0]).softmax(0).numpy(), atol=0.015)


def test_gumbel_softmax_eps_warning_and_dtypes():
    def fn(L):
        y = L.nn.functional.gumbel_softmax(L.zeros(2, 3, dtype=L.float64), eps=1e-3, hard=True)
        return y.dtype, y.shape, y.sum(-1)
    same(fn)

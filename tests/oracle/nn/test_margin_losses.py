"""soft_margin_loss, hinge_embedding_loss and multilabel_margin_loss against torch: values, dtypes, grad_fn names,
gradients for each reduction, the module forms, float64 gradchecks, and torch's errors in its order."""
import numpy as np
import pytest
import torch

import numgrad
from helpers.compare_core import rand
from helpers.functional_compare import check_gradients_of, compare_arrays, same_error

REDUCTIONS = ["none", "mean", "sum"]
X = rand(4, 5, seed=1) * 3
SIGNS = np.where(rand(4, 5, seed=2) > 0, 1.0, -1.0).astype(np.float32)
LABELS = np.array([[3, 0, -1, 1, 2], [1, 2, 3, -1, 0], [0, 0, 0, 0, 0], [4, 4, -1, 7, 9]], np.int64)


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_soft_margin_loss(reduction, dtype):
    compare_arrays(lambda F, x, t: F.soft_margin_loss(x, t, reduction=reduction), X.astype(dtype),
                   SIGNS.astype(dtype), grads=[0])
    compare_arrays(lambda F, x, t: F.soft_margin_loss(x, t, reduction=reduction), X.astype(dtype),
                   rand(4, 5, seed=3).astype(dtype), grads=[0])  # any real target


def test_soft_margin_loss_forms_and_dtypes():
    compare_arrays(lambda F, x, t: F.soft_margin_loss(x, t), X, SIGNS[0], grads=[0])  # the target broadcasts
    compare_arrays(lambda F, x, t: F.soft_margin_loss(x, t), X, SIGNS.astype(np.float64), grads=[0])
    compare_arrays(lambda F, x, t: F.soft_margin_loss(x, t), X, SIGNS.astype(np.int64), grads=[0])
    compare_arrays(lambda F, x, t: F.soft_margin_loss(x, t, size_average=False), X, SIGNS, grads=[0])
    for lib in (numgrad, torch):  # half types keep their dtype
        out = lib.nn.functional.soft_margin_loss(lib.tensor(X).half(), lib.tensor(SIGNS).half())
        assert str(out.dtype) == "torch.float16"
    compare_arrays(lambda F, x, t: (numgrad if F.__name__.startswith("numgrad") else torch).nn.SoftMarginLoss(
        reduction="sum")(x, t), X, SIGNS, grads=[0])
    compare_arrays(lambda F, x, t: F.soft_margin_loss(x, t, reduction="none"),
                   np.array([-100.0, 100.0, 0.0], np.float32), np.array([1.0, 1.0, -1.0], np.float32), grads=[0])
    check_gradients_of(lambda F, x, t: F.soft_margin_loss(x, t), X, SIGNS, grads=[0])
    compare_arrays(lambda F, x, t: F.soft_margin_loss(x, t), np.zeros((0, 3), np.float32),
                   np.zeros((0, 3), np.float32), grads=[0])  # an empty mean's backward (its norm is 1 / 0)


def test_soft_margin_loss_errors():
    same_error(lambda F, x, t: F.soft_margin_loss(x, t), np.array([1, 2]), np.array([1, -1]))
    same_error(lambda F, x, t: F.soft_margin_loss(x, t), np.array([1, 2]), np.array([1.0, -1.0]))
    same_error(lambda F, x, t: F.soft_margin_loss(x, t), np.array([True, False]), np.array([1.0, -1.0]))
    same_error(lambda F, x, t: F.soft_margin_loss(x, t), X[0], X)  # only the target broadcasts
    same_error(lambda F, x, t: F.soft_margin_loss(x, t, reduction="foo"), X, SIGNS)
    for lib in (numgrad, torch):
        with pytest.raises(RuntimeError, match="The function 'soft_margin_loss' is not differentiable with respect "
                                               "to argument 'target'. This input cannot have requires_grad True."):
            lib.nn.functional.soft_margin_loss(lib.tensor(X), lib.tensor(SIGNS, requires_grad=True))
        with lib.no_grad():  # the check is grad mode's
            lib.nn.functional.soft_margin_loss(lib.tensor(X), lib.tensor(SIGNS, requires_grad=True))


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("margin", [1.0, 0.3, 2])
def test_hinge_embedding_loss(reduction, margin):
    compare_arrays(lambda F, x, t: F.hinge_embedding_loss(x, t, margin=margin, reduction=reduction), X, SIGNS,
                   grads=[0])
    compare_arrays(lambda F, x, t: F.hinge_embedding_loss(x, t, margin, reduction=reduction),
                   X.astype(np.float64), rand(4, 5, seed=4).astype(np.float64), grads=[0, 1])


def test_hinge_embedding_loss_forms_and_dtypes():
    compare_arrays(lambda F, x, t: F.hinge_embedding_loss(x, t, reduction="none"), X, SIGNS[1], grads=[0])
    compare_arrays(lambda F, x, t: F.hinge_embedding_loss(x, t, reduction="none"), X[1], SIGNS, grads=[0])
    compare_arrays(lambda F, x, t: F.hinge_embedding_loss(x, t), X, SIGNS > 0, grads=[0])
    compare_arrays(lambda F, x, t: F.hinge_embedding_loss(x, t), X, SIGNS.astype(np.float64), grads=[0])
    compare_arrays(lambda F, x, t: F.hinge_embedding_loss(x, t, 1.5, reduction="sum"),
                   np.array([0, 1, 2, 3]), np.array([1, -1, -1, 1]), grads=[])  # integers: the margin truncated
    compare_arrays(lambda F, x, t: (numgrad if F.__name__.startswith("numgrad") else torch).nn.HingeEmbeddingLoss(
        margin=0.5)(x, t), X, SIGNS, grads=[0])
    check_gradients_of(lambda F, x, t: F.hinge_embedding_loss(x, t, 0.7), X, SIGNS, grads=[0, 1])


def test_hinge_embedding_loss_errors():
    same_error(lambda F, x, t: F.hinge_embedding_loss(x, t), np.array([1, 2]), np.array([1, -1]))
    same_error(lambda F, x, t: F.hinge_embedding_loss(x, t), np.array([True, False]), np.array([1.0, -1.0]))
    same_error(lambda F, x, t: F.hinge_embedding_loss(x, t, reduction="foo"), X, SIGNS)
    same_error(lambda F, x, t: F.hinge_embedding_loss(x, t), X, SIGNS[:3, :2])


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_multilabel_margin_loss(reduction, dtype):
    x = rand(4, 10, seed=5).astype(dtype)
    compare_arrays(lambda F, x, t: F.multilabel_margin_loss(x, t, reduction=reduction), x,
                   np.concatenate([LABELS, -np.ones((4, 5), np.int64)], 1), grads=[0])
    compare_arrays(lambda F, x, t: F.multilabel_margin_loss(x, t, reduction=reduction), x[0],
                   np.concatenate([LABELS[0], LABELS[3]]), grads=[0])  # 1-d: a 0-d loss, even unreduced
    compare_arrays(lambda F, x, t: F.multilabel_margin_loss(x, t, reduction=reduction), np.asarray(x[0, 0]),
                   np.asarray(0), grads=[0])


def test_multilabel_margin_loss_forms():
    x = rand(4, 10, seed=6)
    t = np.concatenate([LABELS, LABELS[::-1]], 1)  # targets after a -1 are ignored, duplicates count twice
    compare_arrays(lambda F, x, t: F.multilabel_margin_loss(x, t, reduction="none"), x, t, grads=[0])
    compare_arrays(lambda F, x, t: F.multilabel_margin_loss(x, t, size_average=False), x, t, grads=[0])
    compare_arrays(lambda F, x, t: (numgrad if F.__name__.startswith("numgrad") else torch).nn.MultiLabelMarginLoss(
        reduction="sum")(x, t), x, t, grads=[0])
    check_gradients_of(lambda F, x, t: F.multilabel_margin_loss(x, t, reduction="none"), x, t, grads=[0])
    compare_arrays(lambda F, x, t: F.multilabel_margin_loss(x, t, reduction="none"), np.zeros((0, 4), np.float32),
                   np.zeros((0, 4), np.int64), grads=[0])  # an empty batch
    for lib, reduction in zip((numgrad, torch, numgrad, torch), ("mean", "mean", "sum", "sum")):
        # torch's reduced loss of an empty batch is memory it never wrote: only its shape and dtype
        out = lib.nn.functional.multilabel_margin_loss(lib.zeros(0, 4), lib.zeros(0, 4, dtype=lib.int64),
                                                       reduction=reduction)
        assert tuple(out.shape) == () and str(out.dtype) == "torch.float32"


def test_multilabel_margin_loss_errors():
    x = rand(3, 5, seed=7)
    t = LABELS[:3]
    same_error(lambda F, x, t: F.multilabel_margin_loss(x, t), rand(3, 0), np.zeros((3, 0), np.int64))
    same_error(lambda F, x, t: F.multilabel_margin_loss(x, t), rand(2, 3, 4), np.zeros((2, 3, 4), np.int64))
    same_error(lambda F, x, t: F.multilabel_margin_loss(x, t), x, t[:, :4].astype(np.int32))  # the shape first
    same_error(lambda F, x, t: F.multilabel_margin_loss(x, t), x[0], t[:2])
    same_error(lambda F, x, t: F.multilabel_margin_loss(x, t), x[0], t[:1])
    same_error(lambda F, x, t: F.multilabel_margin_loss(x, t), x, t + 5)
    same_error(lambda F, x, t: F.multilabel_margin_loss(x, t), x, t - 3)
    same_error(lambda F, x, t: F.multilabel_margin_loss(x, t), x.astype(np.float16), t + 7)  # the range first
    same_error(lambda F, x, t: F.multilabel_margin_loss(x, t), x.astype(np.float16), t.astype(np.int32))
    same_error(lambda F, x, t: F.multilabel_margin_loss(x, t), x.astype(np.int64), t)
    same_error(lambda F, x, t: F.multilabel_margin_loss(x, t), x, t.astype(np.int32))
    same_error(lambda F, x, t: F.multilabel_margin_loss(x, t), x, t.astype(np.float32))
    same_error(lambda F, x, t: F.multilabel_margin_loss(x, t, reduction="foo"), x, t)

"""soft_margin_loss (SoftMarginLossBackward0), hinge_embedding_loss (torch's composite) and multilabel_margin_loss
(MultilabelMarginLossBackward0, torch's CPU kernel), with torch's checks in torch's order."""
import math

import numpy as np

from .._core.grad_mode import no_grad
from .._core.state import STATE
from ..kernels import dispatch
from ..node import record
from ..ops import creation
from ..ops.functional import where
from ._common import check_reduction, constant, new_tensor
from ._loss import _reduce
from ._loss_extra import _reduction_of


def _not_differentiable(fn, name, tensor):
    """torch's check_no_requires_grad: an argument its derivatives do not cover may not require grad."""
    if STATE.grad_enabled and tensor.requires_grad:
        raise RuntimeError(f"The function '{fn}' is not differentiable with respect to argument '{name}'. This input "
                           "cannot have requires_grad True.")


def _soft_margin_backward(node, g):
    x, t = node.saved("input"), node.saved("target")
    norm = (1.0 / x.numel() if x.numel() else math.inf) if node.saved("reduction") == "mean" else 1.0
    z = (-t * x).exp()  # torch's soft_margin_loss_backward: -norm * target * z / (1 + z) * grad
    grad = (t * z) * -norm / (z + 1) * g
    return (grad if grad.dtype is x.dtype else grad.to(x.dtype),)


def soft_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    reduction = _reduction_of(reduction, size_average, reduce)
    check_reduction(reduction)
    _not_differentiable("soft_margin_loss", "target", target)
    with no_grad():  # torch's in-place chain into a tensor of the input's dtype: its casts and refusals too
        loss = input.neg()
        loss.mul_(target)
        loss.exp_().log1p_()
        loss = _reduce(loss, reduction)
    out = new_tensor(loss._data, input._dtype)
    record("SoftMarginLossBackward0", _soft_margin_backward, [input], [out],
           {"input": input, "target": target, "reduction": reduction})
    return out


def hinge_embedding_loss(input, target, margin=1.0, size_average=None, reduce=None, reduction="mean"):
    reduction = _reduction_of(reduction, size_average, reduce)
    check_reduction(reduction)
    zeros = creation.zeros_like(input)
    # `margin - self` in torch's C++ fills a tensor of the input's type with the margin (an integer input
    # truncates it) and subtracts in place, then clamps in place
    margin_clamp = creation.full_like(input, margin)
    margin_clamp.sub_(input).clamp_min_(0)
    output = where(target != 1, margin_clamp, zeros) + where(target != -1, input, zeros)
    return _reduce(output, reduction)


# ---- multilabel_margin_loss: torch's CPU kernel, one node ---------------------------------------------------------

def _check_multilabel(input, target):
    ndim = input.dim()
    if not ((ndim == 2 and input.shape[1] != 0) or (ndim == 1 and input.shape[0] != 0) or ndim == 0):
        raise RuntimeError(f"Expected non-empty vector or matrix with optional 0-dim batch size, but got: "
                           f"{list(input.shape)}")
    frames, classes = (1, 1 if ndim == 0 else input.shape[0]) if ndim <= 1 else input.shape
    wanted = target.dim() <= 1 and target.numel() == classes if ndim <= 1 else \
        target.dim() == 2 and tuple(target.shape) == (frames, classes)
    if not wanted:
        raise RuntimeError(f"inconsistent target size: {list(target.shape)} for input of size: {list(input.shape)}")
    return frames, classes


def _multilabel_terms(x, t):
    """Per frame: the hinge terms 1 - x[target] + x[other] (in x's type) of each listed target (those before the
    first -1) against each class that is no target, where positive; and the mask of those terms."""
    frames, classes = x.shape
    listed = np.cumprod(t >= 0, axis=1).astype(bool)
    is_target = np.zeros((frames, classes), bool)
    rows = np.broadcast_to(np.arange(frames)[:, None], t.shape)
    is_target[rows[listed], t[listed]] = True
    picked = np.take_along_axis(x, np.where(listed, t, 0), axis=1)
    z = (x.dtype.type(1) - picked)[:, :, None] + x[:, None, :]
    active = listed[:, :, None] & ~is_target[:, None, :] & (z > 0)
    return z, active, is_target


def _multilabel_forward(x, t, reduction, per_frame):
    """The losses as torch's kernel sums them: each frame's terms in double, rounded to the input's type; a
    reduction sums the rounded frames in double, then divides."""
    z, active, _ = _multilabel_terms(x, t)
    classes = x.shape[1]
    frame_sums = np.where(active, z, 0).astype(np.float64).sum((1, 2)).astype(x.dtype)
    if per_frame:
        return (frame_sums / x.dtype.type(classes)).astype(x.dtype)
    total = frame_sums.astype(np.float64).sum() / classes
    if reduction == "mean":
        total /= x.shape[0]
    return np.asarray(total, x.dtype)


def _multilabel_coefficients(x, t, reduction):
    """d(loss)/d(input) before the incoming gradient: +scale per active term at its class, -scale at its target."""
    z, active, _ = _multilabel_terms(x, t)
    frames, classes = x.shape
    scale = x.dtype.type(1.0 / (frames * classes) if reduction == "mean" else 1.0 / classes)
    counts = active.sum(1).astype(x.dtype)
    coef = counts * scale
    rows = np.broadcast_to(np.arange(frames)[:, None], t.shape)
    np.add.at(coef, (rows, np.where(t >= 0, t, 0)), -active.sum(2).astype(x.dtype) * scale)
    return coef


def _multilabel_backward(node, g):
    coef = node.saved("coef")
    if g.dim():
        g = g.reshape(-1, 1)
    return ((coef * g).reshape(node.saved("shape")),)


def multilabel_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    reduction = _reduction_of(reduction, size_average, reduce)
    check_reduction(reduction)
    frames, classes = _check_multilabel(input, target)
    per_frame = reduction == "none" and target.dim() > 1  # a 1-d target gives a 0-d loss even unreduced
    dispatch.require_host("multilabel_margin_loss", input._data, target._data)
    x = input.detach()._data.reshape(frames, classes)
    if input.numel() == 0:  # torch's kernel returns before writing: an empty batch's mean is no number it computes
        losses, coef = np.zeros(frames if per_frame else (), x.dtype), np.zeros_like(x)
    else:
        t = target._data.reshape(frames, classes)
        if t.min() < -1 or t.max() >= classes:
            raise RuntimeError("argument #2 'target' is out of range")
        if not input._dtype.is_floating_point or input._dtype.is_narrow:
            raise NotImplementedError(f'"multilabel_margin_loss_forward_out_frame" not implemented for '
                                      f"'{input._dtype.word}'")
        if target._dtype.name != "int64":
            raise RuntimeError(f"expected scalar type Long but found {target._dtype.word}")
        losses = _multilabel_forward(x, t, reduction, per_frame)
        coef = _multilabel_coefficients(x, t, reduction) if STATE.grad_enabled and input.requires_grad else None
    out = new_tensor(losses, input._dtype)
    if coef is not None:
        record("MultilabelMarginLossBackward0", _multilabel_backward, [input], [out],
               {"coef": constant(coef), "shape": input.shape, "reduction": reduction})
    return out

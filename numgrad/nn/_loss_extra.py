"""More losses: smooth_l1, huber, kl_div, poisson and gaussian nll, margin and embedding losses, multi_margin and
ctc, composed from tensor ops as torch composes them (or one node where torch has a kernel of its own)."""
import math
import warnings

from .._core import dtypes
from .._core.grad_mode import no_grad
from .._core.shapes import broadcast_shapes
from ..node import record
from ..ops import creation
from ..ops.functional import where
from ._common import check_reduction, new_tensor, wants
from ._ctc import ctc_loss  # noqa: F401 (nn.functional's name)
from ._distance import pairwise_distance
from ._loss import _pointwise_loss, _reduce, _warn_size, kernel_difference, l1_loss


def _expanded(input, target):
    """torch.broadcast_tensors(input, target)."""
    shape = broadcast_shapes(input.shape, target.shape)
    return (input if input.shape == shape else input.expand(*shape),
            target if target.shape == shape else target.expand(*shape))


def _check_floating(kernel, input, target):
    """The loss's dtype (the promoted one), which torch's kernel needs floating."""
    computed = dtypes.promote_types(input._dtype, target._dtype)
    if not computed.is_floating_point:
        raise NotImplementedError(f'"{kernel}" not implemented for \'{computed.word}\'')
    return computed


# ---- smooth L1 and Huber: torch's kernels, one node each --------------------------------------------------------

def _smooth_l1_derivatives(node, want):
    dx = (kernel_difference(node.saved("input"), node.saved("target")) / node.saved("beta")).clamp(-1, 1)
    return (dx if want[0] else None, -dx if want[1] else None)


def smooth_l1_loss(input, target, size_average=None, reduce=None, reduction="mean", beta=1.0):
    _warn_size(input, target)
    input, target = _expanded(input, target)
    if beta == 0.0:
        return l1_loss(input, target, reduction=reduction)
    check_reduction(reduction)
    if beta < 0:
        raise RuntimeError("smooth_l1_loss does not support negative values for beta.")
    dtype = _check_floating("smooth_l1_cpu", input, target)
    with no_grad():
        z = kernel_difference(input, target).abs()
        loss = where(z < beta, z * z * 0.5 / beta, z - 0.5 * beta)
    return _pointwise_loss("SmoothL1LossBackward0", [input, target], loss._data, reduction, _smooth_l1_derivatives,
                           {"input": input, "target": target, "beta": beta}, dtype)


def _huber_derivatives(node, want):
    x, t = node.saved("input"), node.saved("target")
    if x._dtype is not t._dtype:  # torch's backward kernel refuses mixed dtypes (its forward keeps the input's)
        found, expected = (t, x) if want[0] else (x, t)
        raise RuntimeError(f"Found dtype {found._dtype.word} but expected {expected._dtype.word}")
    delta = node.saved("delta")
    dx = (node.saved("input") - node.saved("target")).clamp(-delta, delta)
    return (dx if want[0] else None, -dx if want[1] else None)


def huber_loss(input, target, reduction="mean", delta=1.0, weight=None):
    _warn_size(input, target)
    input, target = _expanded(input, target)
    if weight is not None:
        if weight.shape != input.shape:
            raise ValueError("Weights and input must have the same size.")
        loss = huber_loss(input, target, "none", delta) * weight
        if reduction not in ("none", "mean", "sum"):
            raise ValueError(f"Invalid reduction mode: {reduction}. Expected one of 'none', 'mean', 'sum'.")
        return _reduce(loss, reduction)
    check_reduction(reduction)
    if delta <= 0:
        raise RuntimeError("huber_loss does not support non-positive values for delta.")
    computed = _check_floating("huber_cpu", input, target)  # (the loss keeps the input's dtype, as torch's kernel)
    if not dtypes.can_cast(computed, input._dtype):
        raise RuntimeError(f"result type {computed.word} can't be cast to the desired output type {input._dtype.word}")
    with no_grad():
        z = kernel_difference(input, target).abs()
        loss = where(z < delta, z * z * 0.5, (z - 0.5 * delta) * delta)
    return _pointwise_loss("HuberLossBackward0", [input, target], loss._data, reduction, _huber_derivatives,
                           {"input": input, "target": target, "delta": delta})


# ---- composites of torch's Loss.cpp and functional.py -----------------------------------------------------------

def _xlogy_values(x, y):
    """x * log(y), 0 where x is 0, NaN where y is (torch.xlogy's values)."""
    return where(y.isnan(), y, where(x == 0, 0.0, x * y.log()))


def _xlogy_backward(node, g):
    x, y = node.saved("self"), node.saved("other")
    # torch's derivatives: xlogy(grad, other) (0 where x = 0 and y <= 0) and grad * x / y
    dx = _xlogy_values(g, y).masked_fill((x == 0) & (y <= 0), 0.0) if wants(node, 0) else None
    return dx, g * x / y if wants(node, 1) else None


def _xlogy(x, y):
    """torch.xlogy for kl_div's floating tensors, one XlogyBackward0 node."""
    with no_grad():
        out = _xlogy_values(x, y)
    out = new_tensor(out._data, out._dtype)
    record("XlogyBackward0", _xlogy_backward, [x, y], [out], {"self": x, "other": y})
    return out


def _reduction_of(reduction, size_average, reduce):
    """torch's _Reduction.legacy_get_string for the deprecated arguments."""
    if size_average is None and reduce is None:
        return reduction
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    reduction = "none" if not reduce else "mean" if size_average else "sum"
    warnings.warn(f"size_average and reduce args will be deprecated, please use reduction='{reduction}' instead.",
                  stacklevel=3)
    return reduction


def kl_div(input, target, size_average=None, reduce=None, reduction="mean", log_target=False):
    if size_average is not None or reduce is not None:
        reduction = _reduction_of(reduction, size_average, reduce)
    elif reduction == "mean":
        warnings.warn("reduction: 'mean' divides the total loss by both the batch size and the support size."
                      "'batchmean' divides only by the batch size, and aligns with the KL div math definition."
                      "'mean' will be changed to behave the same as 'batchmean' in the next major release.",
                      UserWarning, stacklevel=2)
    check_reduction("sum" if reduction == "batchmean" else reduction)
    if not input._dtype.is_floating_point or not target._dtype.is_floating_point:
        raise RuntimeError("kl_div: Integral inputs not supported.")
    loss = target.exp() * (target - input) if log_target else _xlogy(target, target) - target * input
    if reduction == "batchmean":
        total = loss.sum()
        return total / input.shape[0] if input.dim() != 0 else total
    return _reduce(loss, reduction)


def poisson_nll_loss(input, target, log_input=True, full=False, size_average=None, eps=1e-8, reduce=None,
                     reduction="mean"):
    reduction = _reduction_of(reduction, size_average, reduce)
    check_reduction(reduction)
    loss = input.exp() - target * input if log_input else input - target * (input + eps).log()
    if full:
        stirling = target * target.log() - target + (target * (2 * math.pi)).log() * 0.5
        loss = loss + stirling.masked_fill(target <= 1, 0)
    return _reduce(loss, reduction)


def gaussian_nll_loss(input, target, var, full=False, eps=1e-6, reduction="mean"):
    if isinstance(var, float):
        if var < 0:
            raise ValueError("var has negative entry/entries")
        var = var * creation.ones_like(input)
    elif (var < 0).any().item():
        raise ValueError("var has negative entry/entries")
    if var.shape != input.shape:
        if input.shape[:-1] == var.shape:
            var = var.unsqueeze(-1)
        elif not (input.dim() == var.dim() and sum(y for x, y in zip(input.shape, var.shape) if x != y) == 1):
            raise ValueError("var is of incorrect size")
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(reduction + " is not valid")
    var = var.clone()
    with no_grad():  # torch clamps outside the graph: the gradient passes as if unclamped
        var.clamp_(min=eps)
    loss = (var.log() + (input - target) ** 2 / var) * 0.5
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return _reduce(loss, reduction)


def margin_ranking_loss(input1, input2, target, margin=0, size_average=None, reduce=None, reduction="mean"):
    reduction = _reduction_of(reduction, size_average, reduce)
    check_reduction(reduction)
    if input1.dim() != input2.dim() or input1.dim() != target.dim():
        raise RuntimeError(f"margin_ranking_loss : All input tensors should have same dimension but got sizes: "
                           f"input1: {input1.shape}, input2: {input2.shape}, target: {target.shape} ")
    difference = input1 - input2  # first, as torch's C++ does: two bool inputs fail on the subtraction
    # the margin is a double in torch's signature: integer inputs give a floating loss
    # clamped in place, as torch does: the loss's version counter is then 1
    return _reduce((-target * difference + float(margin)).clamp_min_(0), reduction)


_COSINE_EPSILON = 1e-12


def cosine_embedding_loss(input1, input2, target, margin=0, size_average=None, reduce=None, reduction="mean"):
    reduction = _reduction_of(reduction, size_average, reduce)
    check_reduction(reduction)
    dim = target.dim()
    if dim not in (0, 1):
        raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    if input1.dim() != dim + 1 or input2.dim() != dim + 1:
        raise RuntimeError(f"{dim}D target tensor expects {dim + 1}D input tensors, but found inputs with sizes "
                           f"{list(input1.shape)} and {list(input2.shape)}.")
    prod_sum = (input1 * input2).sum(dim)
    mag_square1 = (input1 * input1).sum(dim) + _COSINE_EPSILON
    mag_square2 = (input2 * input2).sum(dim) + _COSINE_EPSILON
    cos = prod_sum / (mag_square1 * mag_square2).sqrt()
    zeros = creation.zeros_like(cos)
    output = where(target == 1, 1 - cos, zeros) + where(target == -1, (cos - margin).clamp_min(0), zeros)
    return _reduce(output, reduction)


def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2, eps=1e-6, swap=False, size_average=None,
                        reduce=None, reduction="mean"):
    reduction = _reduction_of(reduction, size_average, reduce)
    check_reduction(reduction)
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    dims = anchor.dim(), positive.dim(), negative.dim()
    if not dims[0] == dims[1] == dims[2]:
        raise RuntimeError(f"The anchor, positive, and negative tensors are expected to have the same number of "
                           f"dimensions, but got: anchor {dims[0]}D, positive {dims[1]}D, and negative {dims[2]}D "
                           "inputs")
    dist_pos = pairwise_distance(anchor, positive, p, eps)
    dist_neg = pairwise_distance(anchor, negative, p, eps)
    if swap:
        dist_neg = dist_neg.minimum(pairwise_distance(positive, negative, p, eps))
    return _reduce((margin + dist_pos - dist_neg).clamp_min(0), reduction)


# ---- multi_margin_loss: torch's kernel, one node -----------------------------------------------------------------

def _check_multi_margin(input, target, weight):
    ndim = input.dim()
    if not ((ndim == 2 and input.shape[1] != 0) or (ndim == 1 and input.shape[0] != 0) or ndim == 0):
        raise RuntimeError(f"Expected non-empty vector or matrix with optional 0-dim batch size, but got: "
                           f"{list(input.shape)}")
    frames = 1 if ndim <= 1 else input.shape[0]
    classes = 1 if ndim == 0 else input.shape[-1]
    if target.dim() > 1 or target.numel() != frames:
        raise RuntimeError(f"multi_margin_loss: target tensor should be 1-D with size equal to the number of input "
                           f"samples (batch size). Expected target size [{frames}], but got {list(target.shape)}. "
                           f"Input has shape {list(input.shape)}.")
    if weight is not None and (weight.dim() > 1 or weight.numel() != classes):
        raise RuntimeError(f"inconsistent weight size, expected {classes} but got {list(weight.shape)}")
    # torch's CPU kernel is for float and double; an empty batch of halves reaches no kernel
    if not input._dtype.is_floating_point or (input._dtype.is_narrow and frames):
        raise NotImplementedError(f'"multi_margin_loss_cpu_kernel" not implemented for \'{input._dtype.word}\'')
    if weight is not None and weight._dtype is not input._dtype:
        raise RuntimeError(f"expected scalar type {input._dtype.word} but found {weight._dtype.word}")
    if target.numel() and not ((target >= 0) & (target < classes)).all().item():
        raise RuntimeError("target out of range")
    return frames, classes


def _multi_margin_backward(node, g):
    coef = node.saved("coef")
    if node.saved("reduction") == "none":
        g = g.reshape(-1, 1)
    return ((coef * g).reshape(node.saved("shape")),)


def multi_margin_loss(input, target, p=1, margin=1.0, weight=None, size_average=None, reduce=None,
                      reduction="mean"):
    reduction = _reduction_of(reduction, size_average, reduce)
    check_reduction(reduction)
    if p not in (1, 2):
        raise ValueError("only p == 1 and p == 2 supported")
    if weight is not None and weight.dim() != 1:
        raise ValueError("weight must be one-dimensional")
    frames, classes = _check_multi_margin(input, target, weight)
    with no_grad():
        x = input.detach().reshape(frames, classes)
        t = target.reshape(frames, 1)
        z = margin - x.gather(1, t) + x
        active = (z > 0) & (creation.arange(classes, device=input.device).reshape(1, classes) != t)
        target_weight = None if weight is None else weight.reshape(-1)[t.reshape(-1)].reshape(frames, 1)
        terms = (z if p == 1 else z * z).masked_fill(~active, 0)
        losses = (terms if weight is None else terms * target_weight).sum(1) / classes
        scale = 1.0 / classes if weight is None else target_weight / classes
        # (an empty batch's mean: 0 here; torch's reads uninitialised memory)
        out = losses.mean() if reduction == "mean" and frames else losses.sum() if reduction != "none" else \
            losses.reshape(target.shape)
        coef = None
        if input.requires_grad:
            coef = ((creation.ones_like(z) if p == 1 else 2 * z) * scale).masked_fill(~active, 0)
            if reduction == "mean":
                coef = coef / frames
            coef = coef.scatter_add(1, t, -coef.sum(1, keepdim=True))
    out = new_tensor(out._data, input._dtype)
    if coef is not None:
        record("MultiMarginLossBackward0", _multi_margin_backward, [input], [out],
               {"coef": coef, "reduction": reduction, "shape": input.shape})
    return out

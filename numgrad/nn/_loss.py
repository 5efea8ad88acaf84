"""Loss functions: mse, l1, nll, cross_entropy (indices or probabilities, ignore_index, label_smoothing),
binary_cross_entropy and its logits form, each with torch's node names."""
import warnings

import numpy as np

from .. import lazy
from .._core import dtypes
from .._core.shapes import broadcast_shapes
from .._core.state import STATE
from ..kernels import dispatch, tape
from .._core.grad_mode import no_grad
from ..node import record
from ..ops import autocast
from ..ops.reduction import log_softmax
from ._common import check_reduction, constant, new_tensor, wants
from ..kernels.dispatch import indexing as device_index, loss as loss_kernels
from ..tensor import Tensor
from ..tensor_base import check_same_device


def _reduce(loss, reduction):
    check_reduction(reduction)
    return loss.mean() if reduction == "mean" else loss.sum() if reduction == "sum" else loss


def _reduce_data(data, reduction):
    return data.mean() if reduction == "mean" else data.sum() if reduction == "sum" else data


def _pointwise_backward(node, g):
    """Gradients of an elementwise loss reduced by `reduction`: each input's elementwise derivative times g
    (divided by the element count for a mean). The derivatives are tensor expressions, so that
    create_graph differentiates through them."""
    if node.saved("reduction") == "mean":
        g = g / node.saved("numel")
    derivatives = node.saved("derivatives")(node, [wants(node, i) for i in range(len(node.next_functions))])
    return tuple(None if d is None else _as_input_dtype(node, i, d * g) for i, d in enumerate(derivatives))


def _as_input_dtype(node, i, grad):
    """A gradient in its input's dtype (a float32 input of a float64 loss gets a float32 gradient, as torch's
    engine casts it)."""
    dtype = node.input_meta[i][1]
    return grad if grad.dtype is dtype else grad.to(dtype)


def _pointwise_loss(name, inputs, elementwise, reduction, derivatives, saved, dtype=None):
    """Records one node for an elementwise loss and its reduction, as torch's fused loss kernels do; the result
    has the first input's dtype unless `dtype` says otherwise."""
    out = new_tensor(dispatch.numpy_op(_reduce_data, elementwise, reduction), dtype or inputs[0]._dtype)
    record(name, _pointwise_backward, inputs, [out],
           {**saved, "reduction": reduction, "numel": elementwise.size, "derivatives": derivatives})
    return out


def _warn_size(input, target):
    if target.shape != input.shape:
        warnings.warn(f"Using a target size ({target.shape}) that is different to the input size ({input.shape}). "
                      "This will likely lead to incorrect results due to broadcasting. Please ensure they have the "
                      "same size.", UserWarning, stacklevel=3)


def kernel_difference(input, target):
    """input - target as torch's loss kernels compute it: inside the kernel a bool operand is a number (the `-`
    operator would refuse a bool tensor)."""
    if input._dtype is dtypes.bool_ or target._dtype is dtypes.bool_:
        computed = dtypes.promote_types(input._dtype, target._dtype)
        input, target = input.to(computed), target.to(computed)
    return input - target


def _mse_derivatives(node, want):
    diff = kernel_difference(node.saved("input"), node.saved("target"))
    return (diff * 2 if want[0] else None, diff * -2 if want[1] else None)


@autocast.float32
@np.errstate(all="ignore")  # IEEE results (inf, NaN) without NumPy's warnings: torch is silent
def mse_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    _warn_size(input, target)
    # torch broadcasts the two (its RuntimeError for a mismatch) before it reads the reduction
    shape = broadcast_shapes(input.shape, target.shape)
    check_reduction(reduction)
    computed = dtypes.promote_types(input._dtype, target._dtype)
    if not computed.is_floating_point:
        raise NotImplementedError(f'"mse_cpu" not implemented for \'{computed.word}\'')
    if input.shape != target.shape:
        input, target = input.expand(*shape), target.expand(*shape)
    diff = dispatch.numpy_op(np.subtract, input._data, target._data)
    loss = dispatch.numpy_op(np.multiply, diff, diff)
    if weight is not None:
        return _reduce(weight * (input - target) ** 2, reduction)
    return _pointwise_loss("MseLossBackward0", [input, target], loss, reduction, _mse_derivatives,
                           {"input": input, "target": target}, computed)


@autocast.float32
def l1_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    check_reduction(reduction)
    _warn_size(input, target)
    shape = broadcast_shapes(input.shape, target.shape)  # torch broadcasts both first: a 0-d target promotes then
    if input.shape != target.shape:
        input, target = input.expand(*shape), target.expand(*shape)
    loss = (input - target).abs()
    return _reduce(loss * weight if weight is not None else loss, reduction)


# ---- binary cross entropy -------------------------------------------------------------------------

def _bce_derivatives(node, want):
    x, t, w = node.saved("input"), node.saved("target"), node.saved("weight")
    dx = dt = None
    if want[0]:  # torch divides by max(x(1-x), 1e-12) so that saturated inputs give a finite gradient
        dx = (x - t) / (x * (1 - x)).clamp_min(1e-12)
        dx = dx * w if w is not None else dx
    if want[1]:  # torch's -logit(x), unclamped: a saturated input gives an infinite target gradient
        dt = (1 - x).log() - x.log()
        dt = dt * w if w is not None else dt
    return dx, dt


def _check_bce(input, target):
    """torch's kernel: one dtype for both (TensorIterator's check), a floating one (its dispatch), then each
    element in order, its input's range before its target's (NaN fails both)."""
    if target._dtype is not input._dtype:
        raise RuntimeError(f"Found dtype {target._dtype.word} but expected {input._dtype.word}")
    if not input._dtype.is_floating_point:
        raise NotImplementedError(f'"binary_cross_entropy" not implemented for \'{input._dtype.word}\'')
    with no_grad():  # tensor ops: the check runs where the data lives, one flag comes back to the host
        bad_x, bad_t = ~((input >= 0) & (input <= 1)), ~((target >= 0) & (target <= 1))
        if not (bad_x | bad_t).any().item():
            return
        x, t = dispatch.to_host(bad_x._data).reshape(-1), dispatch.to_host(bad_t._data).reshape(-1)
    first = np.flatnonzero(x | t)[0]
    raise RuntimeError(f"all elements of {'input' if x[first] else 'target'} should be between 0 and 1")


@autocast.float32
def binary_cross_entropy(input, target, weight=None, size_average=None, reduce=None, reduction="mean"):
    check_reduction(reduction)
    if target.shape != input.shape:
        raise ValueError(f"Using a target size ({target.shape}) that is different to the input size "
                         f"({input.shape}) is deprecated. Please ensure they have the same size.")
    _check_bce(input, target)
    x, t = input._data, target._data
    with np.errstate(divide="ignore"):  # log(0) is clamped to -100, as torch does
        loss = (t - 1) * np.maximum(np.log1p(-x), -100) - t * np.maximum(np.log(x), -100)
    if weight is not None:
        weight = weight.expand(*input.shape)
        loss = loss * weight._data
    return _pointwise_loss("BinaryCrossEntropyBackward0", [input, target], loss.astype(x.dtype), reduction,
                           _bce_derivatives, {"input": input, "target": target, "weight": weight})


def _bce_logits_derivatives(node, want):
    x, t, w, pw = node.saved("input"), node.saved("target"), node.saved("weight"), node.saved("pos_weight")
    dx = dt = None
    if want[0]:
        dx = x.sigmoid() - t if pw is None else ((pw - 1) * t + 1) * x.sigmoid() - pw * t
        dx = dx * w if w is not None else dx
    if want[1]:
        dt = -x if pw is None else (1 - pw) * _log_sigmoid(x) - x
        dt = dt * w if w is not None else dt
    return dx, dt


def _log_sigmoid(x):
    return -((-x.abs()).exp().log1p() + (-x).clamp_min(0))


_BOOL_SUB = ("Subtraction, the `-` operator, with two bool tensors is not supported. Use the `^` or `logical_xor()` "
             "operator instead.")


def _check_bce_logits(input, target, pos_weight):
    """The dtype checks of torch's composite, op by op: log_sigmoid(input) (a floating input),
    (pos_weight - 1), then (1 - target).mul_(input), whose in-place result keeps the target's dtype (the
    loss's dtype, returned)."""
    if not input._dtype.is_floating_point:
        raise NotImplementedError(f'"log_sigmoid_cpu" not implemented for \'{input._dtype.word}\'')
    if pos_weight is not None and pos_weight._dtype is dtypes.bool_:
        raise RuntimeError(_BOOL_SUB)
    if target._dtype is dtypes.bool_:
        raise RuntimeError(_BOOL_SUB)
    if not target._dtype.is_floating_point:
        raise RuntimeError(f"result type {dtypes.promote_types(target._dtype, input._dtype).word} can't be cast to the "
                           f"desired output type {target._dtype.word}")
    return target._dtype


@autocast.float32
@np.errstate(all="ignore")  # IEEE results (inf, NaN) without NumPy's warnings: torch is silent
def binary_cross_entropy_with_logits(input, target, weight=None, size_average=None, reduce=None, reduction="mean",
                                     pos_weight=None):
    check_reduction(reduction)
    if target.shape != input.shape:
        raise ValueError(f"Target size ({target.shape}) must be the same as input size ({input.shape})")
    out_dtype = _check_bce_logits(input, target, pos_weight)
    x, t = input._data, target._data
    # log(sigmoid(x)) = -(log1p(exp(-|x|)) + max(-x, 0)): no overflow for large |x|
    log_sig = -(np.log1p(np.exp(-np.abs(x))) + np.maximum(-x, 0))
    if pos_weight is not None:
        log_sig = log_sig * ((pos_weight._data - 1) * t + 1)
    loss = (1 - t) * x - log_sig
    if weight is not None:
        weight = weight.expand(*input.shape)
        loss = loss * weight._data
    return _pointwise_loss("BinaryCrossEntropyWithLogitsBackward0", [input, target], loss.astype(out_dtype.np),
                           reduction, _bce_logits_derivatives,
                           {"input": input, "target": target, "weight": weight, "pos_weight": pos_weight}, out_dtype)


# ---- negative log likelihood and cross entropy -----------------------------------------------------

def _nll_backward(node, g):
    coef = node.saved("coef")  # d loss / d input for a unit incoming gradient (zero off the target classes)
    if node.saved("reduction") == "none":
        g = g.reshape(node.saved("target_shape")).unsqueeze(node.saved("class_dim"))
        return (coef * g,)
    return (_times_scalar(coef, g),)


_HOST_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))


def _times_scalar(coef, g):
    """coef * g for a reduced loss's 0-d gradient `g`. In a first-order backward of small host floats of one dtype
    (no graph to record, no forward AD to serve, no fusion or trace the product would join), NumPy's product: the
    op's values (one rounding of each product), without the elementwise machinery."""
    if STATE.grad_enabled or STATE.forward_ad is not None or coef._dtype is not g._dtype:
        return coef * g
    c, s = coef._data, g._data
    if c.__class__ is not np.ndarray or s.__class__ is not np.ndarray or c.dtype not in _HOST_FLOATS or \
            not lazy.computes_at_once(c.size):
        return coef * g
    return Tensor._make(dispatch.numpy_op(np.multiply, c, s), coef._dtype)


def _size0(shape):
    """A tensor's size(0) from its `shape`, raising as torch does for a 0-d tensor."""
    if not shape:
        raise IndexError("Dimension specified as 0 but tensor has no dimensions")
    return shape[0]


def _check_nll_nd(shape, target_shape):
    """nll_loss_nd's checks of the input's and target's shapes, before it picks nll_loss (ranks 1, 2) or
    nll_loss2d (other ranks, viewed as 4-d). A 0-d target's batch size reads as 0 there, as in torch."""
    rank = len(shape)
    if rank < 1:
        raise ValueError(f"Expected 1 or more dimensions (got {rank})")
    target_batch = target_shape[0] if target_shape else 0
    if rank != 1 and shape[0] != target_batch:
        raise ValueError(f"Expected input batch_size ({shape[0]}) to match target batch_size ({target_batch}).")
    if rank == 3 or rank > 4:
        expected = [shape[0]] + list(shape[2:])
        if list(target_shape[1:]) != expected[1:]:
            raise RuntimeError(f"Expected target size {expected}, got {list(target_shape)}")


def _check_nll(shape, target, target_shape, weight):
    """nll_loss's meta function (ranks 1 and 2), in its order: `shape` is the input's."""
    if len(target_shape) > 1:
        raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    _check_target_dtype(target)
    if len(shape) == 1 and len(target_shape) == 1 and target_shape[0] != 1:
        raise ValueError(f"For 1D input, 1D target must have size 1, but got target size: {target_shape[0]}")
    if len(shape) != 1 and shape[0] != _size0(target_shape):
        raise RuntimeError(f"size mismatch (got input: {list(shape)}, target: {list(target_shape)})")
    n_classes = shape[-1]
    if weight is not None and (weight.dim() != 1 or weight.numel() != n_classes):
        raise RuntimeError(f"weight tensor should be defined either for all {n_classes} classes or no classes but got "
                           f"weight tensor of shape: {list(weight.shape)}")


def _check_nll2d(input, target, weight):
    """nll_loss2d's checks (check_inputs_nll_loss2d) for a 4-d input; other ranks reach it viewed as 4-d,
    with targets that fit by then."""
    if input.dim() == 4 and target.dim() != 3:
        raise RuntimeError(f"only batches of spatial targets supported (3D tensors) but got targets of dimension: "
                           f"{target.dim()}")
    _check_target_dtype(target)
    if weight is not None and weight.numel() != input.shape[1]:
        raise RuntimeError("weight tensor should be defined either for all or no classes")
    if input.dim() == 4 and (input.shape[0], *input.shape[2:]) != tuple(target.shape):
        raise RuntimeError(f"size mismatch (got input: {list(input.shape)} , target: {list(target.shape)}")


def _check_target_dtype(target):
    if target._dtype is not dtypes.int64:
        raise RuntimeError(f"expected target dtype to be Long or Byte, but got {target._dtype.word}")


def _check_nll_kernel(input, weight, rank):
    """The CPU kernel's dispatch on the input's dtype (`rank`: its rank), then its read of the weight as the
    input's type."""
    spatial = rank not in (1, 2)
    if not input._dtype.is_floating_point:
        name = "nll_loss2d_forward_out_frame" if spatial else "nll_loss_out_frame"
        raise NotImplementedError(f'"{name}" not implemented for \'{input._dtype.word}\'')
    if weight is not None and weight._dtype is not input._dtype:
        raise RuntimeError(f"expected scalar type {input._dtype.word} but found {weight._dtype.word}")


@autocast.float32
def nll_loss(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None, reduction="mean"):
    check_reduction(reduction)
    input.dim(), target.dim()  # (what is no tensor fails here, as before; the checks then read the shapes)
    shape, target_shape = input._shape, target._shape
    rank = len(shape)
    # (a batch of rows with a class index each and no weights passes every check below: not called)
    if rank != 2 or len(target_shape) != 1 or shape[0] != target_shape[0] or target._dtype is not dtypes.int64 or \
            weight is not None or not input._dtype.is_floating_point:
        _check_nll_nd(shape, target_shape)
        if rank in (1, 2):
            _check_nll(shape, target, target_shape, weight)
        else:
            _check_nll2d(input, target, weight)
        _check_nll_kernel(input, weight, rank)
    class_dim = 1 if rank >= 2 else 0
    n_classes = shape[class_dim]
    x, t = input._data, target._data
    nll = _nll_loss_numpy if x.__class__ is np.ndarray and t.__class__ is np.ndarray else \
        dispatch.by_device([x, t], _nll_loss_numpy, _nll_loss_tensor_ops)  # (host arrays: the answer, without a call)
    return nll(input, target, weight, ignore_index, reduction, class_dim, n_classes)


def _none_shape(input, target):
    """The unreduced loss's shape: the target's, or a scalar for a 1-d input (one sample), as torch's."""
    return () if input.dim() == 1 else target._data.shape


def _nll_loss_numpy(input, target, weight, ignore_index, reduction, class_dim, n_classes):
    """nll_loss on host arrays, with NumPy (one recorded function: a compiled step replays it on new
    targets, bounds check included)."""
    x, t, w = input._data, target._data, None if weight is None else weight._data
    want_coef = _needs_coefficients(input)
    # torch runs inputs of other ranks than 1, 2 and 4 as 4-d (nll_loss2d) and views the result back
    name = "NllLoss2DBackward0" if x.ndim >= 3 else "NllLossBackward0"
    view_back = reduction == "none" and x.ndim not in (1, 2, 4)
    none_shape = () if x.ndim == 1 else t.shape  # (_none_shape's answer)
    shape = t.shape[:1] + (-1,) if view_back else none_shape
    rows = x if x.ndim == 2 else x.reshape(1, -1)  # (a 1-d input is one row)
    flat_target = t if t.ndim == 1 else t.reshape(-1)
    if x.ndim <= 2 and loss_kernels.nll_loop_applies(rows, flat_target, w):
        # torch's nll_loss (nll_loss2d sums otherwise) in one loop; a 1-d input's unreduced loss is torch's sum of
        # its one row (+0.0, not -0.0, for a log-probability of 0)
        mode = "sum" if reduction == "none" and x.ndim == 1 else reduction
        data, coef = tape.call_into("out", loss_kernels.nll_forward, rows, flat_target, w, ignore_index, mode,
                                    want_coef)
        data = data.reshape(shape) if reduction == "none" else data
        coef = coef if coef is None or x.ndim == 2 else coef.reshape(x.shape)
        out = Tensor._make(data, input._dtype)  # (the loop's arrays are of x's dtype)
    else:
        data, coef = tape.call(_nll_arrays, x, t, w, ignore_index, reduction, class_dim, n_classes, shape,
                               want_coef)
        out = new_tensor(data, input._dtype)
    if want_coef:
        record(name, _nll_backward, [input], [out], {"coef": Tensor._make(coef, input._dtype),
                                                     "reduction": reduction, "class_dim": class_dim,
                                                     "target_shape": none_shape})
    return out.reshape(target.shape) if view_back else out


def _needs_coefficients(input):
    """Whether nll_loss's gradient coefficients are wanted: for backward, or for a forward-AD tangent."""
    return input._requires_grad or input._fw_grad is not None


def _nll_arrays(input, target, weight, ignore_index, reduction, class_dim, n_classes, shape, want_coef):
    """The losses (shaped `shape` unreduced, else 0-d) and, with `want_coef`, the gradient's coefficients."""
    last = class_dim == input.ndim - 1  # classes already last (a (rows, classes) input): no moveaxis
    moved = input if last else np.moveaxis(input, class_dim, -1)
    x = moved.reshape(-1, n_classes)
    t = target.reshape(-1)
    bad = device_index.first_out_of_bounds(t, 0, n_classes - 1, skip=ignore_index)
    if bad is not None:
        raise IndexError(f"Target {bad} is out of bounds.")
    w = np.ones(n_classes, x.dtype) if weight is None else weight.astype(x.dtype)
    rows = loss_kernels.nll_rows(x, t, w, ignore_index)
    if rows is not None:
        losses, wt = rows
    else:
        ignored = t == ignore_index
        safe_t = np.where(ignored, 0, t)
        wt = np.where(ignored, 0, w[safe_t]).astype(x.dtype)
        losses = np.where(ignored, 0, -x[np.arange(t.size), safe_t] * wt).astype(x.dtype)  # an ignored target's loss is +0.0
    if reduction == "none":
        data, scale = losses.reshape(shape), 1
    elif reduction == "sum":
        data, scale = np.asarray(losses.sum()), 1
    else:  # the weighted mean: an all-ignored batch gives 0/0 = nan, as in torch
        total = wt.sum()
        with np.errstate(invalid="ignore", divide="ignore"):
            data, scale = np.asarray(losses.sum() / total), 1 / total
    if not want_coef:
        return data, None
    coef = np.zeros(x.shape, x.dtype)
    with np.errstate(invalid="ignore", divide="ignore"):  # an all-ignored mean: the scale is 1/0
        # an ignored target gets a zero gradient (not 0 * inf = nan, nor -0.0), as in torch
        if rows is not None:  # the loops apply to coef wherever they did to x: C-order zeros of its shape
            loss_kernels.nll_coefficients(t, ignore_index, wt, x.dtype.type(scale), coef)
        else:  # `ignored` and `safe_t` from NumPy's picks above
            coef[np.arange(t.size), safe_t] = np.where(ignored, 0, -wt * np.asarray(scale, x.dtype))
    coef = coef.reshape(moved.shape)
    return data, coef if last else np.ascontiguousarray(np.moveaxis(coef, -1, class_dim))


def _nll_loss_tensor_ops(input, target, weight, ignore_index, reduction, class_dim, n_classes):
    """nll_loss for GPU arrays: the NumPy formulas as tensor ops (gather, masked_fill, scatter) outside autograd."""
    check_same_device(input, target, weight)
    ndim = input._data.ndim
    axes = [k for k in range(ndim) if k != class_dim] + [class_dim]  # np.moveaxis(class_dim, -1)
    moved = input._data.transpose(axes)
    t = target._data.reshape(-1)
    bad = device_index.first_out_of_bounds(t, 0, n_classes - 1, skip=ignore_index)
    if bad is not None:
        raise IndexError(f"Target {bad} is out of bounds.")
    with no_grad():
        x = Tensor._make(moved.reshape(-1, n_classes), input._dtype)
        tt = Tensor._make(t, dtypes.int64)
        ignored = tt == ignore_index
        safe_t = tt.masked_fill(ignored, 0).unsqueeze(1)
        w = dispatch.full((n_classes,), 1, x._dtype.np, t) if weight is None else\
            weight._data.astype(x._dtype.np, copy=False)
        # the targets are checked: the kernels directly, without the ops' bounds checks
        wt = Tensor._make(device_index.take(w, (safe_t._data.reshape(-1),)), x._dtype).masked_fill(ignored, 0)
        picked = Tensor._make(device_index.take_along_axis(x._data, safe_t._data, 1), x._dtype)
        losses = (-picked.squeeze(1) * wt).masked_fill(ignored, 0)  # an ignored target's loss is +0.0
        view_back = reduction == "none" and ndim not in (1, 2, 4)
        if reduction == "none":
            data, scale = losses.reshape(target._data.shape[:1] + (-1,) if view_back else
                                         _none_shape(input, target)), None
        elif reduction == "sum":
            data, scale = losses.sum(), None
        else:  # the weighted mean: an all-ignored batch gives 0/0 = nan, as in torch
            data = losses.sum() / wt.sum()
            scale = 1 / wt.sum()
        out = new_tensor(data._data, input._dtype)
        if _needs_coefficients(input):
            coef = dispatch.zeros(x._data.shape, x._data.dtype, t)
            # an ignored target gets a zero gradient (not 0 * inf = nan, nor -0.0), as in torch
            values = (-wt if scale is None else -wt * scale).masked_fill(ignored, 0).unsqueeze(1)._data
            device_index.scatter_along_axis(coef, safe_t._data, 1, values, False)
            inverse = [axes.index(k) for k in range(ndim)]
            coef = coef.reshape(moved.shape).transpose(inverse).contiguous()
    name = "NllLoss2DBackward0" if ndim >= 3 else "NllLossBackward0"
    if _needs_coefficients(input):
        record(name, _nll_backward, [input], [out], {"coef": Tensor._make(coef, input._dtype), "reduction": reduction,
                                                     "class_dim": class_dim, "target_shape": _none_shape(input, target)})
    return out.reshape(target.shape) if view_back else out


@autocast.float32
def cross_entropy(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None, reduction="mean",
                  label_smoothing=0.0):
    """torch's cross_entropy_loss: a target of the input's shape holds class probabilities; otherwise class
    indices through nll_loss, mixed with a smoothing term when label_smoothing is positive (a negative one is
    ignored, as in torch)."""
    check_reduction(reduction)
    class_dim = 0 if input.dim() == 1 else 1  # torch's choice: a 0-d input fails log_softmax's dim check
    if target.shape == input.shape:
        if not target._dtype.is_floating_point:
            raise RuntimeError(f"Expected floating point type for target with class probabilities, got "
                               f"{target._dtype.word}")
        if ignore_index >= 0:
            raise RuntimeError("ignore_index is not supported for floating point target")
        _check_label_smoothing(label_smoothing)
        return _cross_entropy_probabilities(log_softmax(input, class_dim), target, weight, reduction,
                                            label_smoothing, class_dim)
    _check_label_smoothing(label_smoothing)
    logp = log_softmax(input, class_dim)
    loss = nll_loss(logp, target, weight, ignore_index=ignore_index, reduction=reduction)
    if label_smoothing <= 0.0:
        return loss
    return _smoothed(loss, logp, target, weight, ignore_index, reduction, label_smoothing, class_dim)


def _check_label_smoothing(label_smoothing):
    if label_smoothing > 1.0:
        raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing}")


def _class_view(weight, ndim, class_dim):
    """The class weights shaped to broadcast along the class dimension."""
    return weight.reshape(*[-1 if d == class_dim else 1 for d in range(ndim)])


def _smoothed(nll, logp, target, weight, ignore_index, reduction, label_smoothing, class_dim):
    """torch's label smoothing for class indices: a mix of the nll loss and the (weighted) mean of -logp."""
    n_classes = logp.shape[class_dim]
    weighted = logp * _class_view(weight, logp.dim(), class_dim) if weight is not None else logp
    ignore = target == ignore_index
    smooth = (-weighted.sum(class_dim)).masked_fill(ignore, 0.0)
    if reduction == "mean":
        smooth = dispatch.by_device([target._data], _mean_smooth_numpy, _mean_smooth_tensor_ops)(smooth, target,
                                                                                                 weight, ignore)
    elif reduction == "sum":
        smooth = smooth.sum()
    return (1 - label_smoothing) * nll + smooth * (label_smoothing / n_classes)


def _mean_smooth_numpy(smooth, target, weight, ignore):
    """The smoothing term's mean over the kept targets (weighted), counted on the host."""
    if weight is not None:
        kept = target._data[~ignore._data]
        return smooth.sum() / constant(weight._data[kept].sum().astype(weight._data.dtype))
    return smooth.sum() / int((~ignore._data).sum())


def _mean_smooth_tensor_ops(smooth, target, weight, ignore):
    """The same with tensor ops, staying on the GPU (no count read back)."""
    with no_grad():
        if weight is not None:  # the kept targets' weights: the targets were checked by nll_loss
            safe = target.masked_fill(ignore, 0)._data.reshape(-1)
            picked = new_tensor(device_index.take(weight._data, (safe,)), weight._dtype)
            count = picked.masked_fill(ignore.reshape(-1), 0).sum()
        else:
            count = (~ignore).sum()
    return smooth.sum() / count


def _cross_entropy_probabilities(logp, target, weight, reduction, label_smoothing, class_dim):
    n_classes = logp.shape[class_dim]
    if label_smoothing > 0:
        target = target * (1 - label_smoothing) + label_smoothing / n_classes
    terms = logp * target
    if weight is not None:
        terms = terms * _class_view(weight, logp.dim(), class_dim)
    if reduction == "none":
        return -terms.sum(class_dim)
    total = -terms.sum()
    return _divide_by_count(total, logp.numel() // n_classes) if reduction == "mean" else total


def _divide_by_count_backward(node, g):
    return (g / node.saved("count"),)


def _divide_by_count(t, count):
    """t / count, recorded as torch's C++ code records a division by a Scalar (DivBackward1)."""
    out = new_tensor(t._data / np.asarray(count, t._data.dtype), t._dtype)
    record("DivBackward1", _divide_by_count_backward, [t], [out], {"count": count})
    return out

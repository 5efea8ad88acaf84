"""batch_norm (NativeBatchNormBackward0) and layer_norm (NativeLayerNormBackward0), with backward written as
tensor expressions so that create_graph differentiates through them."""
import numpy as np

from .._core.state import STATE
from ..node import record
from ._common import constant, new_tensor, wants


def _normalize_backward(node, g):
    """Shared by both norms: `axes` are the normalised axes, `param_axes` the ones the affine parameters
    are broadcast over; with batch statistics the mean and variance depend on x, so its gradient has the
    two extra projection terms."""
    x, w = node.saved("input"), node.saved("weight")
    axes, param_axes, batch_stats = node.saved("axes"), node.saved("param_axes"), node.saved("batch_stats")
    if batch_stats and STATE.grad_enabled:  # create_graph: the statistics as functions of x
        mean = x.mean(axes, keepdim=True)
        invstd = ((x - mean) ** 2).mean(axes, keepdim=True).add(node.saved("eps")).rsqrt()
    else:
        mean, invstd = node.saved("mean"), node.saved("invstd")
    xhat = (x - mean) * invstd
    input_grad = weight_grad = bias_grad = None
    if wants(node, 0):
        gxhat = g * node.saved("weight_view") if w is not None else g
        if batch_stats:
            input_grad = invstd * (gxhat - gxhat.mean(axes, keepdim=True)
                                   - xhat * (gxhat * xhat).mean(axes, keepdim=True))
        else:
            input_grad = gxhat * invstd
    if len(node.next_functions) > 1 and wants(node, 1):
        weight_grad = _sum_over(g * xhat, param_axes).reshape(node.input_shape(1))
    if len(node.next_functions) > 2 and wants(node, 2):
        bias_grad = _sum_over(g, param_axes).reshape(node.input_shape(2))
    return input_grad, weight_grad, bias_grad


def _sum_over(t, axes):
    return t.sum(axes) if axes else t  # sum(()) would mean every axis


def _affine(input, weight, bias, xhat, view_shape, mean, invstd, axes, param_axes, batch_stats, eps, name):
    out_data = xhat
    if weight is not None:
        out_data = out_data * weight._data.reshape(view_shape)
    if bias is not None:
        out_data = out_data + bias._data.reshape(view_shape)
    out = new_tensor(out_data, input._dtype)
    record(name, _normalize_backward, [input, weight, bias], [out],
           {"input": input, "weight": weight, "weight_view": weight.reshape(view_shape) if weight is not None else None,
            "mean": constant(mean), "invstd": constant(invstd), "axes": axes, "param_axes": param_axes,
            "batch_stats": batch_stats, "eps": eps})
    return out


@np.errstate(all="ignore")  # IEEE results (inf, NaN) without NumPy's warnings: torch is silent
def batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False, momentum=0.1, eps=1e-5):
    x = input._data
    if x.ndim < 2:
        raise ValueError(f"expected 2D or 3D input (got {x.ndim}D input)")
    channels = x.shape[1]
    axes = (0,) + tuple(range(2, x.ndim))
    view_shape = (1, channels) + (1,) * (x.ndim - 2)
    if training:
        count = x.size // channels if channels else 0
        if count <= 1:
            raise ValueError(f"Expected more than 1 value per channel when training, got input size {input.shape}")
    for name, t in (("running_mean", running_mean), ("running_var", running_var), ("weight", weight), ("bias", bias)):
        if t is None:
            if not training and name.startswith("running"):
                raise RuntimeError(f"{name} must be defined in evaluation mode")
        elif t.numel() != channels:  # torch's check_dims_match_num_input_features
            raise RuntimeError(f"{name} should contain {channels} elements not {t.numel()}")
    if training:
        mean = x.mean(axes, keepdims=True)
        var = ((x - mean) ** 2).mean(axes, keepdims=True)
        if running_mean is not None:
            running_mean._data[...] = (1 - momentum) * running_mean._data + momentum * mean.reshape(-1)
            running_mean._vc[0] += 1
        if running_var is not None:  # the running variance is the unbiased one
            unbiased = var.reshape(-1) * (count / (count - 1))
            running_var._data[...] = (1 - momentum) * running_var._data + momentum * unbiased
            running_var._vc[0] += 1
    else:
        mean, var = running_mean._data.reshape(view_shape), running_var._data.reshape(view_shape)
    dt = x.dtype
    invstd = (1 / np.sqrt(var + np.asarray(eps, dt))).astype(dt)
    mean = mean.astype(dt)
    xhat = (x - mean) * invstd
    return _affine(input, weight, bias, xhat, view_shape, mean, invstd, axes, axes, training, eps,
                   "NativeBatchNormBackward0")


@np.errstate(all="ignore")  # IEEE results (inf, NaN) without NumPy's warnings: torch is silent
def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):
    normalized_shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
    x = input._data
    k = len(normalized_shape)
    if x.shape[x.ndim - k:] != normalized_shape or x.ndim < k:
        raise RuntimeError(f"Given normalized_shape={list(normalized_shape)}, expected input with shape "
                           f"[*, {', '.join(str(s) for s in normalized_shape)}], but got input of size"
                           f"{list(input.shape)}")
    for name, p in (("weight", weight), ("bias", bias)):
        if p is not None and tuple(p.shape) != normalized_shape:
            raise RuntimeError(f"Expected {name} to be of same shape as normalized_shape, but got {name} of shape "
                               f"{list(p.shape)} and normalized_shape = {list(normalized_shape)}")
    axes = tuple(range(x.ndim - k, x.ndim))
    mean = x.mean(axes, keepdims=True)
    var = ((x - mean) ** 2).mean(axes, keepdims=True)
    invstd = (1 / np.sqrt(var + np.asarray(eps, x.dtype))).astype(x.dtype)
    xhat = (x - mean) * invstd
    return _affine(input, weight, bias, xhat, normalized_shape, mean, invstd, axes, tuple(range(x.ndim - k)), True,
                   eps, "NativeLayerNormBackward0")


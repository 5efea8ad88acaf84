"""group_norm and instance_norm, both run as batch_norm over a reshaped input, as torch's instance_norm is."""
import math

from .._core.grad_mode import no_grad
from ..node import record
from ..tensor import Tensor
from ._common import wants
from ._norm import _batch_norm, _verify_batch_size, batch_norm


def _repeat(t, times):
    """t.repeat(times) for a 1-d tensor (None stays None): the gradient sums the copies back."""
    return None if t is None else t.unsqueeze(0).expand(times, t.shape[0]).reshape(-1)


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-5):
    """Each sample's channels split into `num_groups` groups, each normalised by its own mean and biased variance,
    then the per-channel affine."""
    if input.dim() < 2:
        raise RuntimeError(f"Expected at least 2 dimensions for input tensor but received {input.dim()}")
    shape = tuple(input.shape)
    _verify_batch_size([shape[0] * shape[1] // num_groups, num_groups] + list(shape[2:]))
    channels = shape[1]
    if channels % num_groups:
        raise RuntimeError(f"Expected number of channels in input to be divisible by num_groups, but got input of "
                           f"shape {list(shape)} and num_groups={num_groups}")
    weight_shape = [0] if weight is None else list(weight.shape)
    for name, p in (("weight", weight), ("bias", bias)):
        if p is not None and (p.dim() != 1 or p.numel() != channels):
            # torch's bias message prints the weight's shape ([0] without a weight)
            raise RuntimeError(f"Expected {name} to be a vector of size equal to the number of channels in input, "
                               f"but got {name} of shape {weight_shape} and input of shape {list(shape)}")
    view = (1, channels) + (1,) * (len(shape) - 2)
    with no_grad():  # the values by batch_norm's kernels; the gradients by the one node below
        out = _batch_norm(input.reshape(1, shape[0] * num_groups, -1), None, None, None, None, True, 0.0, eps)
        out = out.reshape(shape)
        if weight is not None:
            out = out * weight.reshape(view)
        if bias is not None:
            out = out + bias.reshape(view)
    out = Tensor._make(out._data, out._dtype)
    record("NativeGroupNormBackward0", _group_norm_backward, [input, weight, bias], [out],
           {"input": input, "weight": weight, "groups": num_groups, "eps": eps, "view": view})
    return out


def _group_norm_backward(node, g):
    """Tensor-op formulas (the statistics recomputed from x, so create_graph differentiates through them)."""
    x, w, view = node.saved("input"), node.saved("weight"), node.saved("view")
    grouped = x.reshape(x.shape[0], node.saved("groups"), -1)
    centred = grouped - grouped.mean(-1, keepdim=True)
    rstd = (centred * centred).mean(-1, keepdim=True).add(node.saved("eps")).rsqrt()
    xhat = centred * rstd
    channel_axes = (0,) + tuple(range(2, x.dim()))
    grads = [None, None, None]
    if wants(node, 0):
        gxhat = (g if w is None else g * w.reshape(view)).reshape(grouped.shape)
        grads[0] = (rstd * (gxhat - gxhat.mean(-1, keepdim=True) - xhat * (gxhat * xhat).mean(-1, keepdim=True))
                    ).reshape(x.shape)
    if len(node.next_functions) > 1 and wants(node, 1):
        grads[1] = (g * xhat.reshape(x.shape)).sum(channel_axes)
    if len(node.next_functions) > 2 and wants(node, 2):
        grads[2] = g.sum(channel_axes)
    return tuple(grads)


def instance_norm(input, running_mean=None, running_var=None, weight=None, bias=None, use_input_stats=True,
                  momentum=0.1, eps=1e-5):
    """torch's composite: batch_norm of the input viewed as one sample of batch * channels channels; the running
    statistics are the mean over the batch of the per-sample ones."""
    shape = tuple(input.shape)
    if use_input_stats and math.prod(shape[2:]) == 1:
        raise ValueError(f"Expected more than 1 spatial element when training, got input size {input.shape}")
    if not use_input_stats and (running_mean is None or running_var is None):
        raise RuntimeError("Expected running_mean and running_var to be defined when use_input_stats is false")
    batch, channels = shape[0], shape[1]
    running = [_repeat(t, batch) for t in (running_mean, running_var)]
    if running[0] is not None:
        running[0] = running[0].detach().clone()
    if running[1] is not None:
        running[1] = running[1].detach().clone()
    out = batch_norm(input.contiguous().reshape(1, batch * channels, *shape[2:]), running[0], running[1],
                     _repeat(weight, batch), _repeat(bias, batch), use_input_stats, momentum, eps)
    for target, repeated in zip((running_mean, running_var), running):
        if target is not None:
            target.detach().copy_(repeated.reshape(batch, channels).mean(0))
    return out.reshape(shape)

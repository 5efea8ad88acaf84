"""torch.nn.utils.clip_grad: scaling gradients to a largest total norm, or clamping them to a range, in place."""
import functools
import math
import types
import warnings

import numpy as np

from ..._core.grad_mode import no_grad
from ...kernels import tape
from ...kernels.dispatch import optim as optim_kernels
from ...ops.creation import tensor
from ...ops.functional import clamp
from ...ops.join import stack
from ...ops.reduction import norm
from ...tensor_base import TensorBase

__all__ = ["clip_grad_norm", "clip_grad_norm_", "clip_grad_value_", "clip_grads_with_norm_", "get_total_norm"]


def _no_grad(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        with no_grad():
            return fn(*args, **kwargs)
    return wrapper


def _as_list(tensors):
    return [tensors] if isinstance(tensors, TensorBase) else list(tensors)


@_no_grad
def get_total_norm(tensors, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """The norm of the tensors' norms: the norm of all their elements as one vector. `foreach` is accepted for
    torch's signature (numgrad has one implementation)."""
    tensors = _as_list(tensors)
    norm_type = float(norm_type)
    if len(tensors) == 0:
        return tensor(0.0)
    total_norm = _fused_total_norm(tensors) if norm_type == 2.0 else None
    if total_norm is None:
        first_device = tensors[0].device
        total_norm = norm(stack([norm(g, norm_type).to(first_device) for g in tensors]), norm_type)
    if error_if_nonfinite and not math.isfinite(total_norm.item()):
        raise RuntimeError(f"The total norm of order {norm_type} for gradients from `parameters` is non-finite, so it "
                           "cannot be clipped. To disable this error and scale the gradients by the non-finite norm "
                           "anyway, set `error_if_nonfinite=False`")
    return total_norm


@_no_grad
def clip_grads_with_norm_(parameters, max_norm, total_norm, foreach=None):
    """Scales the gradients by max_norm / (total_norm + 1e-6) where that is below 1."""
    grads = [p.grad for p in _as_list(parameters) if p.grad is not None]
    max_norm = float(max_norm)
    if len(grads) == 0:
        return
    coef = _host_coefficient(max_norm, total_norm)
    if coef is not None:
        for g in grads:
            data = g._data
            if data.__class__ is not np.ndarray:
                g.mul_(tensor(coef).to(g.device))
                continue
            if coef != 1:  # (a factor of one changes no value: the array is left untouched)
                np.multiply(data, data.dtype.type(coef), out=data)  # g.mul_(coef): the factor in g's dtype first
            g._vc[0] += 1
        return
    clip_coef_clamped = clamp(max_norm / (total_norm + 1e-6), max=1.0)
    for g in grads:
        g.mul_(clip_coef_clamped.to(g.device))


def _host_coefficient(max_norm, total_norm):
    """clamp(max_norm / (total_norm + 1e-6), max=1.0) for a 0-d host float total, as torch's ops compute it in
    the total's dtype (the sum, then reciprocal times max_norm, as Tensor.__rtruediv__), in NumPy scalars; None
    while a trace is recorded (the ops are recorded then) or for another total."""
    if tape.recorder() is not None or not isinstance(total_norm, TensorBase) or total_norm.shape != ():
        return None
    value = total_norm._data
    if value.__class__ is not np.ndarray or value.dtype not in (np.float32, np.float64):
        return None
    kind = value.dtype.type
    coef = (kind(1) / (value[()] + kind(1e-6))) * kind(max_norm)
    return coef if not coef > 1 else kind(1)  # (a NaN stays NaN, as in clamp)


def _fused_total_norm(grads):
    """The 2-norm of all `grads` as one vector: each gradient's norm, then the norm of the norms, in the gradients'
    dtype (torch's _foreach_norm and vector_norm of their stack) without a numgrad op per gradient; None where
    the op-by-op path decides: a trace being recorded, GPU arrays, mixed or half dtypes, or a norm that is not
    finite (its special cases)."""
    if tape.recorder() is not None:
        return None
    arrays = [g._data for g in grads]
    dtype = arrays[0].dtype
    if dtype not in (np.float32, np.float64) or any(a.__class__ is not np.ndarray or a.dtype != dtype for a in arrays):
        return None
    norms = optim_kernels.norms([np.ravel(a) for a in arrays])
    total = optim_kernels.norms([norms])[0]
    if not math.isfinite(total):
        return None
    return tensor(total, dtype=grads[0].dtype)


@_no_grad
def clip_grad_norm_(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """Scales the parameters' gradients in place so that their total norm is at most max_norm; returns the
    total norm before scaling."""
    if isinstance(parameters, TensorBase):
        parameters = [parameters]
    else:
        is_generator = isinstance(parameters, types.GeneratorType)
        parameters = list(parameters)
        if is_generator and len(parameters) == 0:
            warnings.warn("`parameters` is an empty generator, no gradient clipping will occur.", stacklevel=3)
    grads = [p.grad for p in parameters if p.grad is not None]
    total_norm = get_total_norm(grads, norm_type, error_if_nonfinite, foreach)
    clip_grads_with_norm_(parameters, max_norm, total_norm, foreach)
    return total_norm


def clip_grad_norm(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """Deprecated in torch for clip_grad_norm_."""
    warnings.warn("`torch.nn.utils.clip_grad_norm` is now deprecated in favor of `torch.nn.utils.clip_grad_norm_`.",
                  FutureWarning, stacklevel=2)
    return clip_grad_norm_(parameters, max_norm, norm_type, error_if_nonfinite, foreach)


@_no_grad
def clip_grad_value_(parameters, clip_value, foreach=None):
    """Clamps every gradient to [-clip_value, clip_value] in place."""
    clip_value = float(clip_value)
    for grad in [p.grad for p in _as_list(parameters) if p.grad is not None]:
        grad.clamp_(min=-clip_value, max=clip_value)

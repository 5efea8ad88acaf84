"""dropout and its variants (feature-wise, alpha, 1d/2d/3d): masks drawn by numgrad's generator, applied as torch's
_dropout_impl applies them (one multiplication, and an addition for alpha dropout), so the graphs are torch's."""
import math
import warnings

import numpy as np

from .._core.grad_mode import no_grad
from ..kernels import dispatch
from ..ops import creation
from ..ops.random import generator as _generator
from ..tensor import Tensor

_SELU_ALPHA = 1.7580993408473766  # SELU's negative saturation, alpha * scale


def _check_p(p):
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


def _kept(shape, p, input):
    """1 where an element is kept (probability 1 - p), else 0, in the input's dtype and on its device."""
    keep = (_generator().random(shape) >= p).astype(input._data.dtype)
    return Tensor._make(dispatch.place(keep, input.device), input._dtype)  # drawn on the host: one copy to a GPU


def dropout(input, p=0.5, training=True, inplace=False):
    """Zeroes each element with probability p and scales the rest by 1/(1-p) (torch's MulBackward0 graph);
    the identity outside training."""
    _check_p(p)
    if not training or p == 0.0:
        return input
    keep = _generator().random(input.shape) >= p
    scale = np.asarray(0.0 if p == 1.0 else 1.0 / (1.0 - p), input._data.dtype)
    noise = (keep * scale).astype(input._data.dtype)
    noise = dispatch.place(noise, input.device)  # drawn by numgrad's host generator: one copy to a GPU
    noise = Tensor._make(noise, input._dtype)
    return input.mul_(noise) if inplace else input * noise


def _dropout_impl(input, p, train, inplace, feature, alpha):
    """torch's _dropout_impl: the identity for p == 0, outside training or for an empty input; a product with
    a 0-d zero for p == 1; else the input times the noise (plus alpha dropout's shift b)."""
    if not 0 <= p <= 1:
        raise RuntimeError(f"dropout probability has to be between 0 and 1, but got {p}")
    if p == 0 or not train or input.numel() == 0:
        return input
    if p == 1:
        zero = creation.zeros((), dtype=input._dtype, device=input.device)
        return input.mul_(zero) if inplace else input * zero
    if feature and input.dim() < 2:
        raise RuntimeError("Feature dropout requires at least 2 dimensions in the input")
    shape = tuple(input.shape[:2]) + (1,) * (input.dim() - 2) if feature else tuple(input.shape)
    with no_grad():  # in place, as torch: an integer input's noise refuses the float scales
        noise = _kept(shape, p, input)
        if alpha:
            a = 1.0 / math.sqrt((_SELU_ALPHA * _SELU_ALPHA * p + 1) * (1 - p))
            b = (noise - 1).mul_(_SELU_ALPHA * a).add_(_SELU_ALPHA * a * p)
            noise.mul_(a)
        else:
            noise.div_(1 - p)
    if not alpha:
        return input.mul_(noise) if inplace else input * noise
    return (input.mul_(noise) if inplace else input * noise).add_(b)


def alpha_dropout(input, p=0.5, training=False, inplace=False):
    _check_p(p)
    return _dropout_impl(input, p, training, inplace, feature=False, alpha=True)


def feature_alpha_dropout(input, p=0.5, training=False, inplace=False):
    _check_p(p)
    return _dropout_impl(input, p, training, inplace, feature=True, alpha=True)


def _feature_dropout_batched(input, p, training, inplace, batched):
    """torch's channel dropouts: an unbatched input gets a batch dim of one for the noise's shape (in place:
    written through a view with that dim, where torch unsqueezes the input itself and squeezes it back)."""
    if batched:
        return _dropout_impl(input, p, training, inplace, feature=True, alpha=False)
    result = _dropout_impl(input.unsqueeze(0), p, training, inplace, feature=True, alpha=False)
    return input if inplace else result.squeeze(0)


def dropout1d(input, p=0.5, training=True, inplace=False):
    _check_p(p)
    if input.dim() not in (2, 3):
        raise RuntimeError(f"dropout1d: Expected 2D or 3D input, but received a {input.dim()}D input. Note that "
                           "dropout1d exists to provide channel-wise dropout on inputs with 1 spatial dimension, a "
                           "channel dimension, and an optional batch dimension (i.e. 2D or 3D inputs).")
    return _feature_dropout_batched(input, p, training, inplace, input.dim() == 3)


def dropout2d(input, p=0.5, training=True, inplace=False):
    _check_p(p)
    dim = input.dim()
    if dim not in (3, 4):
        warnings.warn(f"dropout2d: Received a {dim}-D input to dropout2d, which is deprecated and will result in an "
                      "error in a future release. To retain the behavior and silence this warning, please use dropout "
                      "instead. Note that dropout2d exists to provide channel-wise dropout on inputs with 2 spatial "
                      "dimensions, a channel dimension, and an optional batch dimension (i.e. 3D or 4D inputs).",
                      stacklevel=2)
    if dim == 3:
        warnings.warn("dropout2d: Received a 3D input to dropout2d and assuming that channel-wise 1D dropout behavior "
                      "is desired - input is interpreted as shape (N, C, L), where C is the channel dim. This behavior "
                      "will change in a future release to interpret the input as one without a batch dimension, i.e. "
                      "shape (C, H, W). To maintain the 1D channel-wise dropout behavior, please switch to using "
                      "dropout1d instead.", stacklevel=2)
    return _dropout_impl(input, p, training, inplace, feature=True, alpha=False)


def dropout3d(input, p=0.5, training=True, inplace=False):
    _check_p(p)
    dim = input.dim()
    if dim not in (4, 5):
        warnings.warn(f"dropout3d: Received a {dim}-D input to dropout3d, which is deprecated and will result in an "
                      "error in a future release. To retain the behavior and silence this warning, please use dropout "
                      "instead. Note that dropout3d exists to provide channel-wise dropout on inputs with 3 spatial "
                      "dimensions, a channel dimension, and an optional batch dimension (i.e. 4D or 5D inputs).",
                      stacklevel=2)
    return _feature_dropout_batched(input, p, training, inplace, dim == 5)


# ---- torch's namespace forms (torch.alpha_dropout(input, p, train), ...): no Python-side check of p -------------

def _namespace_form(name, feature, alpha, inplace):
    def op(input, p, train):
        return _dropout_impl(input, p, train, inplace, feature=feature, alpha=alpha)
    op.__name__ = op.__qualname__ = name
    return op


NAMESPACE_FORMS = {name + "_" * inplace: _namespace_form(name + "_" * inplace, feature, alpha, inplace)
                   for name, feature, alpha in (("dropout", False, False), ("feature_dropout", True, False),
                                                ("alpha_dropout", False, True), ("feature_alpha_dropout", True, True))
                   for inplace in (False, True)}

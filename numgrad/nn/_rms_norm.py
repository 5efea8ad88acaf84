"""rms_norm as torch's composite: the input (upcast from float16/bfloat16) times the rsqrt of its mean square plus
eps over the normalized dims, times the weight, cast back to the input's dtype."""
import warnings

import numpy as np

from .._core import dtypes
from ._common import add_scalar

_UPCAST = {dtypes.float16, dtypes.bfloat16}
_MISMATCH_WARNED = []  # torch's warning is a C++ warn-once: once per process


def rms_norm(input, normalized_shape, weight=None, eps=None):
    if isinstance(normalized_shape, int):
        raise TypeError("rms_norm(): argument 'normalized_shape' (position 2) must be tuple of ints, not int")
    shape = tuple(normalized_shape)
    _check_shapes(input, shape, weight)
    if not input.dtype.is_floating_point:
        raise NotImplementedError(f'"rms_norm" not implemented for \'{input.dtype.word}\'')
    if weight is not None and weight.dtype != input.dtype and not _MISMATCH_WARNED:
        _MISMATCH_WARNED.append(True)
        warnings.warn(f"Mismatch dtype between input and weight: input dtype = {input.dtype.c_name}, weight dtype = "
                      f"{weight.dtype.c_name}, Cannot dispatch to fused implementation.", stacklevel=2)
    opmath = dtypes.float32 if input.dtype in _UPCAST else input.dtype
    if eps is None:  # the epsilon of the type computed in
        eps = float(np.finfo(opmath.np).eps)
    x = input.to(opmath)
    dims = [input.dim() - i - 1 for i in range(len(shape))]
    result = x * add_scalar(x.pow(2).mean(dims, keepdim=True), eps).rsqrt()
    if weight is not None:
        result = result * weight
    return result.type_as(input)


def _check_shapes(input, shape, weight):
    k = len(shape)
    if not k:
        raise RuntimeError("Expected normalized_shape to be at least 1-dimensional, i.e., containing at least one "
                           "element, but got normalized_shape = []")
    if input.dim() < k:
        raise ValueError(f"Input tensor must have at least {k} dimensions, but got {input.dim()}")
    if tuple(input.shape[input.dim() - k:]) != shape:
        raise RuntimeError(f"Given normalized_shape={list(shape)}, expected input with shape "
                           f"[*{', '.join(str(s) for s in shape)}], but got input of size{list(input.shape)}")
    if weight is not None and tuple(weight.shape) != shape:
        raise RuntimeError(f"Expected weight to be of same shape as normalized_shape, but got weight of shape "
                           f"{list(weight.shape)} and normalized_shape = {list(shape)}")


"""CPU autocast's casts (torch's autocast_mode.cpp lists): products and convolutions run in the lower-precision
dtype, losses in float32; what each op does when autocast is on, as decorators of the ops."""
import functools

from .._core import dtypes
from .._core.state import STATE
from ..tensor_base import TensorBase
from .shape import to_dtype


def _cast(value, target):
    """torch's cached_cast: a floating tensor other than a double one becomes `target` (a recorded copy)."""
    if isinstance(value, TensorBase) and value._dtype.is_floating_point and value._dtype is not dtypes.float64 \
            and value._dtype is not target:
        return to_dtype(value, target)
    return value


def _casting(fn, target_of):
    @functools.wraps(fn)
    def run(*args, **kwargs):
        if STATE.autocast is None:
            return fn(*args, **kwargs)
        target = target_of()
        return fn(*[_cast(a, target) for a in args], **{k: _cast(v, target) for k, v in kwargs.items()})
    return run


def lower_precision(fn):
    """An op of torch's CPU lower_precision_fp list (matmul, linear, conv, ...)."""
    return _casting(fn, lambda: STATE.autocast)


def float32(fn):
    """An op of torch's CPU fp32 list (the losses): computed in float32 under autocast."""
    return _casting(fn, lambda: dtypes.float32)

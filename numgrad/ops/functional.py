"""The elementwise and reduction functions of the public API (numgrad.exp, numgrad.where, ...)."""
import builtins
import numbers
import types

import numpy as np

from .._core import dtypes
from .._core.dtypes import bool_, int64
from ..backend import dispatch
from ..node import record
from ..spec.table import ELEMENTWISE
from ..tensor_base import TensorBase
from . import creation, reduction
from .elementwise import apply
from .reduction import _axes, _fold, _kept_shape


builtins_abs, builtins_max, builtins_min = builtins.abs, builtins.max, builtins.min


def _from_table(entry):
    """numgrad.<name> for an op-table entry: its one or two tensor (or number) arguments go to apply()."""
    name = entry.name
    if len(entry.inputs) == 1:
        def fn(input):
            return apply(name, input)
    else:
        def fn(input, other):
            return apply(name, input, other)
    fn.__name__ = fn.__qualname__ = name
    return fn


# Every published entry of the op table is a function here; the hand-written definitions below replace
# those whose torch signature says more (add's alpha, div's rounding_mode, where's condition, ...).
for _entry in ELEMENTWISE.values():
    if _entry.published:
        globals()[_entry.name] = _from_table(_entry)
negative, absolute = neg, abs  # noqa: F821  (made from the table just above)


def _scalar(x):
    return isinstance(x, (numbers.Number,)) and not isinstance(x, TensorBase)


def _is_bool(x):
    return x._dtype is bool_ if isinstance(x, TensorBase) else isinstance(x, (bool, np.bool_))


def _check_alpha(input, other, alpha):
    """torch's alpha_check against the result dtype of input and other."""
    if type(alpha) is int and alpha == 1:
        return
    ts = [t for t in (input, other) if isinstance(t, TensorBase)]
    result = dtypes.result_type([(t._dtype, len(t._shape)) for t in ts],
                                [x for x in (input, other) if not isinstance(x, TensorBase)])
    if isinstance(alpha, (bool, np.bool_)) and result is not dtypes.bool_:
        raise RuntimeError("Boolean alpha only supported for Boolean results.")
    if not result.is_floating_point and isinstance(alpha, (float, np.floating)):
        raise RuntimeError("For integral input tensors, argument alpha must not be a floating point number.")


def add(input, other, alpha=1):
    _check_alpha(input, other, alpha)
    if alpha != 1:
        other = other * alpha if _scalar(other) else mul(other, alpha)  # two numbers: no tensor to apply to
    if _scalar(input):
        input, other = other, input
    return apply("add", input, other)


def sub(input, other, alpha=1):
    _check_alpha(input, other, alpha)
    if alpha != 1 and not (_is_bool(input) or _is_bool(other)):  # with a bool operand, apply() gives torch's error
        other = other * alpha if _scalar(other) else mul(other, alpha)  # two numbers: no tensor to apply to
    if _scalar(input):
        return apply("rsub", other, input)
    return apply("sub", input, other)


subtract = sub


def rsub(input, other, alpha=1):
    return sub(other, input, alpha)


def mul(input, other):
    if _scalar(input):
        input, other = other, input
    return apply("mul", input, other)


multiply = mul


def div(input, other, rounding_mode=None):
    if rounding_mode == "floor":
        return floor_divide(input, other)
    if _scalar(input):  # torch computes scalar / t as reciprocal(t) * scalar
        return mul(reciprocal(other), input)
    out = apply("div", input, other)
    return trunc(out) if rounding_mode == "trunc" else out


def floor_divide(input, other):
    return apply("floor_divide", input, other)


true_divide = divide = div


def pow(input, exponent):
    if _scalar(input):
        return apply("rpow", exponent, input)
    if _scalar(exponent):
        if not input.dtype.is_floating_point and isinstance(exponent, int) and exponent < 0:
            raise RuntimeError("Integers to negative integer powers are not allowed.")
        return apply("pow", input, exponent)
    return apply("pow_tensor", input, exponent)


def square(input):
    return pow(input, 2)


def clamp(input, min=None, max=None):
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    if isinstance(min, TensorBase) or isinstance(max, TensorBase):
        lo = min if min is not None else creation.full_like(input, float("-inf"))
        hi = max if max is not None else creation.full_like(input, float("inf"))
        return apply("clamp_tensor", input, lo, hi)
    if min is None:
        return apply("clamp_max", input, max)
    if max is None:
        return apply("clamp_min", input, min)
    return apply("clamp", input, min, max)


clip = clamp


def clamp_min(input, min):
    return clamp(input, min=min)


def clamp_max(input, max):
    return clamp(input, max=max)


def tensors_only(name, input, other, method=False):
    """torch's argument parser for ops whose signature takes two Tensors (no Number): a Python scalar is a
    TypeError; as a method, self is not counted, so `other` is position 1."""
    for arg, value, position in (("input", input, 1), ("other", other, 2 - method)):
        if not isinstance(value, TensorBase):
            raise TypeError(f"{name}(): argument '{arg}' (position {position}) must be Tensor, "
                            f"not {type(value).__name__}")


def maximum(input, other):
    tensors_only("maximum", input, other)
    return apply("maximum", input, other)


def minimum(input, other):
    tensors_only("minimum", input, other)
    return apply("minimum", input, other)


def where(condition, input=None, other=None):
    if input is None and other is None:
        return nonzero(condition, as_tuple=True)
    if not isinstance(condition, TensorBase):  # a Python bool picks a side whole (used by derivatives)
        return input if condition else other
    if condition.dtype.name != "bool":
        raise RuntimeError(f"where expected condition to be a boolean tensor, but got a tensor with dtype "
                           f"{condition.dtype.word}")
    return apply("where", condition, input, other)


def nonzero(input, as_tuple=False):
    idx = np.nonzero(input._data)
    if as_tuple:
        return tuple(TensorBase._make(i.astype(np.int64), int64) for i in idx)
    return TensorBase._make(np.stack(idx, axis=1).astype(np.int64) if idx else np.zeros((0, 0), np.int64), int64)


def gelu(input, approximate="none"):
    if approximate not in ("none", "tanh"):
        raise RuntimeError(f"approximate argument must be either none or tanh.")
    return apply("gelu_tanh" if approximate == "tanh" else "gelu", input)


def _compare(name):
    def fn(input, other):
        if name.startswith("logical"):  # eq..ge take a Number too; the logical ops only Tensors
            tensors_only(name, input, other)
        return apply(name, input, other)
    fn.__name__ = name
    return fn


for _name in ("eq", "ne", "lt", "le", "gt", "ge", "logical_and", "logical_or", "logical_xor"):
    globals()[_name] = _compare(_name)
greater, greater_equal, less, less_equal, not_equal = gt, ge, lt, le, ne


def floor(input):
    return _nondiff(input, "floor")


def ceil(input):
    return _nondiff(input, "ceil")


def round(input):
    return _nondiff(input, "round")


def trunc(input):
    return _nondiff(input, "trunc")


def _nondiff(input, np_name):
    """Piecewise-constant rounding: zero gradient almost everywhere (torch returns zeros too)."""
    # NumPy's rounding of a 0-d array is a NumPy scalar: asarray keeps an array (on the input's device)
    out = TensorBase._make(dispatch.asarray(getattr(np, np_name)(input._data), input._data.dtype), input.dtype)
    record(np_name.capitalize() + "Backward0", _zero_backward, [input], [out])
    return out


def _zero_backward(node, g):
    return (creation.zeros_like(g),)  # torch's zeros_like(grad): an inf or NaN gradient gives 0, not NaN


def equal(input, other):
    return input.shape == other.shape and bool((input._data == other._data).all())


def allclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    return bool(np.allclose(input._data, other._data, rtol=rtol, atol=atol, equal_nan=equal_nan))


def isclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    return TensorBase._make(np.isclose(input._data, other._data, rtol=rtol, atol=atol, equal_nan=equal_nan), bool_)


def all(input, dim=None, keepdim=False):
    return _bool_reduce(input, dim, keepdim, "all")


def any(input, dim=None, keepdim=False):
    return _bool_reduce(input, dim, keepdim, "any")


def _bool_reduce(input, dim, keepdim, kind):
    return dispatch.by_device([input._data], _bool_reduce_numpy, _bool_reduce_folded)(input, dim, keepdim, kind)


def _bool_reduce_folded(input, dim, keepdim, kind):
    """min (all) or max (any) of the truth values, by the table's reduction (the GPU's block reduction)."""
    axes = _axes(input, dim)
    shape = _kept_shape(input._shape, axes, keepdim and dim is not None)
    truth = (input != 0)._data
    if 0 in [input._shape[a] for a in axes]:  # nothing to look at: all() is True, any() False
        return TensorBase._make(dispatch.full(shape, kind == "all", np.bool_, truth), bool_)
    values, _ = _fold("min" if kind == "all" else "max", truth, axes, np.bool_)
    return TensorBase._make(values.reshape(shape), bool_)


def _bool_reduce_numpy(input, dim, keepdim, kind):
    axes = _axes(input, dim)  # torch's dim checks (a 0-d tensor takes dim 0 and -1, and reduces nothing)
    data = getattr(np, kind)(input._data != 0, axis=axes, keepdims=keepdim and dim is not None)
    return TensorBase._make(np.asarray(data), bool_)


sum, mean, prod = reduction.sum, reduction.mean, reduction.prod
max, min, amax, amin = reduction.max, reduction.min, reduction.amax, reduction.amin
argmax, argmin, norm, var, std = reduction.argmax, reduction.argmin, reduction.norm, reduction.var, reduction.std
logsumexp, softmax, log_softmax = reduction.logsumexp, reduction.softmax, reduction.log_softmax
zeros_like, ones_like, full_like = creation.zeros_like, creation.ones_like, creation.full_like


# what `from numgrad.ops.functional import *` publishes: the functions, not this module's own imports
__all__ = [name for name, value in globals().items() if not name.startswith("_") and
           not isinstance(value, types.ModuleType) and
           name not in ("apply", "record", "TensorBase", "ELEMENTWISE", "bool_", "int64", "builtins_abs",
                        "builtins_max", "builtins_min")]

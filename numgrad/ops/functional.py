"""The elementwise and reduction functions of the public API (numgrad.exp, numgrad.where, ...)."""
import builtins
import math
import functools
import inspect
import numbers
import types

import numpy as np

from .._core import dtypes
from .._core.dtypes import bool_, int64
from .._core.grad_mode import no_grad
from .._core.shapes import broadcast_shapes
from ..kernels import dispatch, tape
from ..node import record, zero_gradients
from ..spec.table import ELEMENTWISE
from ..tensor_base import TensorBase
from . import creation, dim_binding, keyword_aliases, reduction
from .shape import to_dtype
from .elementwise import apply, compute_dtype
from .join import unbind
from .reduction import _axes, _fold, _kept_shape


builtins_abs, builtins_max, builtins_min = builtins.abs, builtins.max, builtins.min


def _type_name(value):
    """A Python type as torch's binding names it: `int`, `list`, `numpy.float32`."""
    t = type(value)
    return t.__name__ if t.__module__ == "builtins" else f"{t.__module__}.{t.__name__}"


def _tensor_arg(fn, value, position, name="other"):
    """torch's Python binding refusing a non-tensor argument (maximum(t, 2), a NumPy scalar input, ...)."""
    if not isinstance(value, TensorBase):
        raise TypeError(f"{fn}(): argument '{name}' (position {position}) must be Tensor, not {_type_name(value)}")


def _takes_tensor(fn, name, method=False):
    """fn (whose first argument is the input tensor) refusing anything else as torch's binding does; the
    one-dim reductions refuse a list of dims in the words of torch's function or method form."""
    one_dim = name in ("prod", "max", "min", "argmax", "argmin")
    names = tuple(inspect.signature(fn).parameters)

    @functools.wraps(fn)  # keeps fn's signature and docstring for help()
    def checked(input, *args, **kwargs):
        if not args and not kwargs and isinstance(input, TensorBase):  # `z.sum()`: nothing to check or rename
            return fn(input)
        _tensor_arg(name, input, 1, "input")
        renamed = keyword_aliases.resolve(name, args, kwargs, method, names)
        if one_dim:
            dim_binding.check(name, args, kwargs, method)  # (its messages name the keywords as given)
        return fn(input, *args, **renamed)
    return checked


def method_form(name):
    """Tensor.<name> for a reduction: its binding counts positions after self, and words its errors so."""
    return _takes_tensor(_REDUCTIONS[name], name, method=True)


def _from_table(entry):
    """numgrad.<name> for an op-table entry: its one or two tensor (or number) arguments go to apply()."""
    name = entry.name
    if len(entry.inputs) == 1:
        def fn(input):
            _tensor_arg(name, input, 1, "input")
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


def _numbers(input, other):
    """torch.add(2, 3) and the like: with no tensor among two numbers, the first becomes a 0-d tensor."""
    if not isinstance(input, TensorBase) and not isinstance(other, TensorBase):
        if not (_scalar(input) and _scalar(other)):
            raise TypeError(f"expected Tensor as element 0 in argument 0, but got {_type_name(input)}")
        return creation.tensor(input)
    return input


def _check_converted(name, args, numbers):
    """torch converts these numbers to the op's dtype with c10's overflow check (clamp's bounds, pow's exponent,
    add's alpha, where's values), though a number operand of add or mul is cast unchecked (300 wraps in uint8)."""
    d = compute_dtype(name, *args)
    for v in numbers:
        if _scalar(v):
            dtypes.check_scalar_fits(v, d)


def _times_alpha(name, input, other, alpha):
    """`other` scaled by add's or sub's alpha as torch applies it: alpha takes the result's type (a bool
    result sees bool(alpha)); a float alpha for an integer result and a bool alpha for a non-bool one are
    refused, with torch's messages."""
    if alpha == 1 and not isinstance(alpha, bool):
        return other
    compute = compute_dtype(name, input, other)  # raises torch's refusals (a bool operand of sub, ...)
    if isinstance(alpha, bool):
        if compute is not bool_:
            raise RuntimeError("Boolean alpha only supported for Boolean results.")
    elif isinstance(alpha, float) and not compute.is_floating_point:
        raise RuntimeError("For integral input tensors, argument alpha must not be a floating point number.")
    else:
        dtypes.check_scalar_fits(alpha, compute)
    if compute is bool_:  # alpha is True or False: other itself, or nothing added
        return other if alpha else (False if _scalar(other) else mul(other, False))
    return other * alpha  # a number times a number stays a number; a tensor goes through mul


def add(input, other, alpha=1):
    input = _numbers(input, other)
    other = _times_alpha("add", input, other, alpha)
    if _scalar(input):
        input, other = other, input
    return apply("add", input, other)


def sub(input, other, alpha=1):
    input = _numbers(input, other)
    other = _times_alpha("sub", input, other, alpha)
    return apply("sub", input, other)  # a number first too: torch.sub(2, t) is SubBackward0 (2 - t is rsub)


subtract = sub


def rsub(input, other, alpha=1):
    if alpha != 1:
        input = mul(input, alpha)
    return apply("rsub", input, other) if _scalar(other) else apply("rsub_tensor", input, other)


def _rdiv(self, other):
    """`other / self` for a number `other`: torch computes it as reciprocal(self) * other (MulBackward0)."""
    return mul(reciprocal(self), other)


def mul(input, other):
    input = _numbers(input, other)
    if _scalar(input):  # torch.mul(number, t): the number is torch's first operand, cast to a half type as it is
        input, other = other, dtypes.wrap_scalar(input, compute_dtype("mul", other, input))
    return apply("mul", input, other)


multiply = mul


def div(input, other, rounding_mode=None):
    input = _numbers(input, other)
    if rounding_mode is None:
        return apply("div", input, other)  # torch.div(2, t) is DivBackward0; 2 / t is Tensor.__rtruediv__
    if rounding_mode not in ("trunc", "floor"):
        raise RuntimeError(f"div expected rounding_mode to be one of None, 'trunc', or 'floor' but found "
                           f"'{rounding_mode}'")
    if builtins.all((t.dtype is bool_) if isinstance(t, TensorBase) else isinstance(t, (bool, np.bool_))
           for t in (input, other)):  # a bool result: torch's kernels have none (before any division by zero)
        broadcast_shapes(*(t._shape for t in (input, other) if isinstance(t, TensorBase)))
        raise NotImplementedError(f"\"div_{rounding_mode}_cpu\" not implemented for 'Bool'")
    with no_grad():  # the rounded quotient: integers stay integers, as torch's div_trunc / div_floor
        if rounding_mode == "trunc":  # bool divides as int64 (the correction below subtracts)
            input, other = (t.to(int64) if isinstance(t, TensorBase) and t.dtype is bool_ else t
                            for t in (input, other))
        out = floor_divide(input, other)
        if rounding_mode == "trunc":
            if out.dtype.is_floating_point:
                out = trunc(apply("div", input, other))
            else:  # floor rounds toward -inf: step back toward zero where the division was inexact
                inexact = ne(sub(input, mul(out, other)), 0)
                out = add(out, logical_and(inexact, lt(out, 0)))
    tensors = [t if isinstance(t, TensorBase) else None for t in (input, other)]
    record("DivBackward2", zero_gradients, tensors, [out])  # torch's derivative of a rounded division
    return out


def _refuse_integer_division_by_zero(name, input, other):
    """torch's integer division and remainder raise for a zero divisor (floats give inf or NaN), judged in the
    dtype they compute in: 256, as a number or a 0-d int64 tensor, divides a uint8 tensor as 0."""
    shapes = [t._shape for t in (input, other) if isinstance(t, TensorBase)]
    numel = math.prod(broadcast_shapes(*shapes))  # torch's shape error first, then the dtype's refusal
    compute = compute_dtype(name, input, other)
    if compute.is_floating_point or not numel:  # torch divides no element of an empty result
        return
    if isinstance(other, TensorBase):
        tape.graph_break("an integer division's backward reads the divisor for a zero")
    if isinstance(other, TensorBase):
        divisor = dispatch.to_host(other._data)
        zero = bool(((divisor if other._dtype is compute else dtypes.cast(divisor, compute)) == 0).any())
    else:
        zero = dtypes.wrap_scalar(other, compute) == 0
    if zero:
        raise RuntimeError("ZeroDivisionError")


def floor_divide(input, other):
    input = _numbers(input, other)
    _refuse_integer_division_by_zero("floor_divide", input, other)
    return apply("floor_divide", input, other)


def remainder(input, other):
    _refuse_integer_division_by_zero("remainder", input, other)
    if _scalar(input):
        return apply("rremainder", other, input)
    return apply("remainder_scalar" if _scalar(other) else "remainder", input, other)


def fmod(input, other):
    if not isinstance(input, TensorBase):
        raise TypeError(f"fmod() received an invalid combination of arguments - got ({type(input).__name__}, "
                        f"{type(other).__name__}), but expected one of:\n * (Tensor input, Tensor other, *, Tensor "
                        "out = None)\n * (Tensor input, Number other, *, Tensor out = None)\n")
    _refuse_integer_division_by_zero("fmod", input, other)
    return apply("fmod_scalar" if _scalar(other) else "fmod", input, other)


true_divide = divide = div


def pow(input, exponent):
    if not isinstance(input, TensorBase) and not isinstance(exponent, TensorBase):
        raise TypeError(f"pow() received an invalid combination of arguments - got ({_type_name(input)}, "
                        f"{_type_name(exponent)}), but expected one of:\n"
                        " * (Tensor input, Tensor exponent, *, Tensor out = None)\n"
                        " * (Number self, Tensor exponent, *, Tensor out = None)\n"
                        " * (Tensor input, Number exponent, *, Tensor out = None)\n")
    if _scalar(input):
        return apply("rpow", exponent, input)
    if _scalar(exponent):
        if not input.dtype.is_floating_point and isinstance(exponent, int) and exponent < 0:
            raise RuntimeError("Integers to negative integer powers are not allowed.")
        if isinstance(exponent, (bool, np.bool_)):
            return apply("pow_bool", input, exponent)
        _check_converted("pow", (input, exponent), (exponent,))
        return apply("pow", input, exponent)
    return apply("pow_tensor", input, exponent)


def square(input):
    _tensor_arg("square", input, 1, "input")
    return pow(input, 2)


def clamp_bounds(name, min, max, method=False):
    """torch's binding: clamp's bounds are both Tensors or both Numbers (either may be None); a mix matches none
    of its signatures, unless its tensor is 0-d and does not require grad, which the binding reads as a Number.
    Returns the bounds as the signature matched. A method's message lists its arguments without self."""
    if min is not None and max is not None and isinstance(min, TensorBase) != isinstance(max, TensorBase):
        t = min if isinstance(min, TensorBase) else max
        if not t._shape and not t.requires_grad:
            number = t.item()
            return (number, max) if t is min else (min, number)
        got = ", ".join(("Tensor" if isinstance(v, TensorBase) else _type_name(v))
                        for v in ((min, max) if method else (TensorBase, min, max)) if v is not TensorBase)
        got = got if method else "Tensor, " + got
        raise TypeError(f"{name}() received an invalid combination of arguments - got ({got}), but expected one "
                        "of:\n * (Tensor min = None, Tensor max = None)\n * (Number min = None, Number max = None)\n")
    if isinstance(min, complex) or isinstance(max, complex):  # (torch reads a Number bound as a double)
        raise RuntimeError("value cannot be converted to type double without overflow")
    return min, max


def clamp(input, min=None, max=None):
    min, max = clamp_bounds("clamp", min, max)
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    if isinstance(min, TensorBase) or isinstance(max, TensorBase):
        if input.dtype is bool_ and (min is None or max is None):  # torch's clamp_min/max(Tensor): maximum's kernel
            return apply("maximum", input, min) if max is None else apply("minimum", input, max)
        # the missing bound is the limit of the type clamp computes in (an int8 input with a uint8 bound of 200
        # computes in int16, where 200 is not capped at 127)
        d = compute_dtype("clamp_tensor", input, *(b for b in (min, max) if b is not None))
        low, high = (-np.inf, np.inf) if d.is_floating_point else (
            (False, True) if d is bool_ else (int(np.iinfo(d.np).min), int(np.iinfo(d.np).max)))
        lo = min if min is not None else creation.full_like(input, low, dtype=d)
        hi = max if max is not None else creation.full_like(input, high, dtype=d)
        return apply("clamp_tensor", input, lo, hi)
    if min is None:
        _check_converted("clamp_max", (input, max), (max,))
        return apply("clamp_max", input, max)
    if max is None:
        _check_converted("clamp_min", (input, min), (min,))
        return apply("clamp_min", input, min)
    _check_converted("clamp", (input, min, max), (min, max))
    return apply("clamp", input, min, max)


def clip(input, min=None, max=None):
    return clamp(input, *clamp_bounds("clip", min, max))


def _one_bound_args(fn, bound, input, value):
    """torch's binding of clamp_min / clamp_max: (Tensor input, Tensor or Number bound); anything else is an
    invalid combination, named by the types it got (a NumPy scalar input, a None, str or array bound)."""
    if isinstance(input, TensorBase) and (isinstance(value, TensorBase) or _scalar(value)):
        if isinstance(value, complex):
            raise NotImplementedError("clamp is not supported for complex types")
        return
    got = ", ".join("Tensor" if isinstance(v, TensorBase) else _type_name(v) for v in (input, value))
    raise TypeError(f"{fn}() received an invalid combination of arguments - got ({got}), but expected one of:\n"
                    f" * (Tensor input, Tensor {bound}, *, Tensor out = None)\n"
                    f" * (Tensor input, Number {bound}, *, Tensor out = None)\n")


def clamp_min(input, min):
    _one_bound_args("clamp_min", "min", input, min)
    if isinstance(min, TensorBase):
        if input.dtype is bool_:  # clamp's route for bool (maximum's kernel)
            return clamp(input, min=min)
        return apply("clamp_min_tensor", input, min)  # ClampMinBackward1, as torch's clamp_min.Tensor
    _check_converted("clamp_min_fn", (input, min), (min,))
    return apply("clamp_min_fn", input, min)  # ClampMinBackward0, as torch.clamp_min (clamp(min=) is ClampBackward1)


def clamp_max(input, max):
    _one_bound_args("clamp_max", "max", input, max)
    if isinstance(max, TensorBase):
        if input.dtype is bool_:
            return clamp(input, max=max)
        return apply("clamp_max_tensor", input, max)  # ClampMaxBackward1, as torch's clamp_max.Tensor
    _check_converted("clamp_max_fn", (input, max), (max,))
    return apply("clamp_max_fn", input, max)


def tensors_only(name, input, other, method=False):
    """torch's argument parser for ops whose signature takes two Tensors (no Number): a Python scalar is a
    TypeError; as a method, self is not counted, so `other` is position 1."""
    _tensor_arg(name, input, 1, "input")
    _tensor_arg(name, other, 2 - method)


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
    result = compute_dtype("where", condition, input, other)
    if not (result.is_narrow and result.is_floating_point):  # torch leaves a number for a half result unchecked
        _check_converted("where", (condition, input, other), (input, other))
    return apply("where", condition, input, other)


def nonzero(input, as_tuple=False):
    if as_tuple:  # torch unbinds the (n, ndim) result into column views; a 0-d input as one of shape (1,)
        return unbind(nonzero(input.reshape(1) if input._data.ndim == 0 else input), 1)
    # torch's result is the transpose of an (ndim, n) array: strides (1, n), so a view across its rows fails
    if input._data.ndim == 0:  # torch reads a 0-d tensor as one element with no index columns
        return TensorBase._make(np.zeros((0, int(bool(input.item() != 0))), np.int64).T, int64)
    idx = np.nonzero(input._data)
    return TensorBase._make(np.stack(idx, axis=0).astype(np.int64).T, int64)


def gelu(input, approximate="none"):
    if approximate not in ("none", "tanh"):
        raise RuntimeError(f"approximate argument must be either none or tanh.")
    return apply("gelu_tanh" if approximate == "tanh" else "gelu", input)


def _compare(name, alias=None):
    """numgrad.<name> (or its torch alias, which torch's messages name) for a comparison or logical entry."""
    called = alias or name

    def fn(input, other):
        if name.startswith("logical_"):  # torch's logical functions take two tensors (eq, lt, ... a number too)
            tensors_only(called, input, other)
        elif not isinstance(input, TensorBase):  # a number first: torch's binding has no such signature
            got = "Tensor" if isinstance(other, TensorBase) else _type_name(other)
            raise TypeError(f"{called}() received an invalid combination of arguments - got "
                            f"({_type_name(input)}, {got}), but expected one of:\n"
                            f" * (Tensor input, Tensor other, *, Tensor out = None)\n"
                            f" * (Tensor input, Number other, *, Tensor out = None)\n")
        return apply(name, input, other)
    fn.__name__ = called
    return fn


for _name in ("eq", "ne", "lt", "le", "gt", "ge", "logical_and", "logical_or", "logical_xor"):
    globals()[_name] = _compare(_name)
for _alias, _name in (("greater", "gt"), ("greater_equal", "ge"), ("less", "lt"), ("less_equal", "le"),
                      ("not_equal", "ne")):
    globals()[_alias] = _compare(_name, _alias)


def compared_in_place(name):
    """What an in-place comparison (x.eq_(y), x.gt_(0)) writes: the comparison in self's dtype. Its history
    gives zero gradients, as torch's EqBackward1 (a tensor `other`) and EqBackward0 (a number)."""
    compare = globals()[name]

    def fn(input, other):
        out = compare(input, other)
        result = to_dtype(out, input._dtype)  # out requires no grad: no node of its own
        tensor_other = isinstance(other, TensorBase)
        record(f"{name.capitalize()}Backward{int(tensor_other)}", zero_gradients, [input, other] if tensor_other
               else [input], [result])
        return result
    fn.__name__ = name
    return fn


def floor(input):
    return _nondiff(input, "floor")


def ceil(input):
    return _nondiff(input, "ceil")


def round(input, decimals=None):
    if decimals is None:  # round() of an integer tensor is itself; round(decimals=0) runs the float kernel
        return _nondiff(input, "round")
    if decimals == 0:
        if not input.dtype.is_floating_point:
            raise NotImplementedError(f'"round_vml_cpu" not implemented for \'{input.dtype.word}\'')
        return _nondiff(input, "round")
    _tensor_arg("round", input, 1, "input")
    if not input.dtype.is_floating_point:
        raise NotImplementedError(f'"round_cpu" not implemented for \'{input.dtype.word}\'')
    # torch's round_decimals: nearbyint(x * 10**d) / 10**d (x / 10**-d for d < 0), in the input's dtype
    data, ten = input._data, np.asarray(10.0 ** builtins_abs(decimals), input._data.dtype)
    values = np.rint(data / ten) * ten if decimals < 0 else np.rint(data * ten) / ten
    out = TensorBase._make(dispatch.asarray(values, data.dtype), input.dtype)
    record("RoundBackward1", _zero_backward, [input], [out])
    return out


def trunc(input):
    return _nondiff(input, "trunc")


def _nondiff(input, np_name):
    """Piecewise-constant rounding: zero gradient almost everywhere (torch returns zeros too)."""
    _tensor_arg(np_name, input, 1, "input")
    if input.dtype is bool_:  # torch has no rounding kernel for bool
        raise NotImplementedError(f'"{np_name}_vml_cpu" not implemented for \'Bool\'')
    # NumPy's rounding of a 0-d array is a NumPy scalar: asarray keeps an array (on the input's device)
    out = TensorBase._make(dispatch.asarray(getattr(np, np_name)(input._data), input._data.dtype), input.dtype)
    record(np_name.capitalize() + "Backward0", _zero_backward, [input], [out])
    return out


def _zero_backward(node, g):
    return (creation.zeros_like(g),)  # torch's zeros_like(grad): an inf or NaN gradient gives 0, not NaN


def equal(input, other):
    tape.graph_break("equal() returns a Python bool")
    return input.shape == other.shape and bool((input._data == other._data).all())


def allclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    _same_dtype(input, other)
    return bool(np.allclose(input._data, other._data, rtol=rtol, atol=atol, equal_nan=equal_nan))


def _same_dtype(input, other):
    if input.dtype is not other.dtype:
        raise RuntimeError(f"{input.dtype.word} did not match {other.dtype.word}")


def isclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    _same_dtype(input, other)
    for name, value in (("rtol", rtol), ("atol", atol)):
        if value < 0:
            raise RuntimeError(f"{name} must be greater than or equal to zero, but got {value:g}")
    broadcast_shapes(input._shape, other._shape)  # (torch's message for shapes that do not broadcast)
    if input.dtype is bool_:  # bools are close when equal (NumPy cannot subtract them)
        return eq(input, other)
    close = np.isclose(dispatch.to_host(input._data), dispatch.to_host(other._data), rtol=rtol, atol=atol,
                       equal_nan=equal_nan)
    return TensorBase._make(np.asarray(close), bool_)


def all(input, dim=None, keepdim=False):
    return _bool_reduce(input, dim, keepdim, "all")


def any(input, dim=None, keepdim=False):
    return _bool_reduce(input, dim, keepdim, "any")


def _bool_reduce(input, dim, keepdim, kind):
    if isinstance(dim, (tuple, list)) and not dim:  # torch's all/any over no dims reduce nothing
        out = TensorBase._make(dispatch.c_order((input != 0)._data), bool_)
    else:
        out = dispatch.by_device([input._data], _bool_reduce_numpy, _bool_reduce_folded)(input, dim, keepdim, kind)
    if input.dtype is dtypes.uint8:  # torch keeps uint8 (the type masks had before bool)
        return TensorBase._make(dispatch.asarray(out._data, np.uint8), dtypes.uint8)
    return out


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
    return TensorBase._make(dispatch.c_order(np.asarray(data)), bool_)


_REDUCTIONS = {"all": all, "any": any, **{name: getattr(reduction, name) for name in (
    "sum", "mean", "prod", "max", "min", "amax", "amin", "argmax", "argmin", "norm", "var", "std", "logsumexp", "softmax",
    "log_softmax")}}
for _name, _fn in _REDUCTIONS.items():
    globals()[_name] = _takes_tensor(_fn, _name)
zeros_like, ones_like, full_like = creation.zeros_like, creation.ones_like, creation.full_like


# what `from numgrad.ops.functional import *` publishes: the functions, not this module's own imports
__all__ = [name for name, value in globals().items() if not name.startswith("_") and
           not isinstance(value, types.ModuleType) and
           name not in ("apply", "record", "zero_gradients", "method_form", "TensorBase", "ELEMENTWISE", "bool_", "int64", "no_grad", "dtypes", "builtins_abs",
                        "builtins_max", "builtins_min")]

"""Pointwise functions of torch's namespace with scalar options: copysign, logaddexp, hypot, xlogy, lerp, logit,
nan_to_num, the shrinks, selu/celu and the bitwise ops; each picks its op-table entry."""
import numpy as np

from .._core import dtypes
from .._core.shapes import broadcast_shapes
from ..kernels import dispatch
from ..tensor_base import TensorBase
from . import shape
from .elementwise import apply
from .._core.grad_mode import no_grad
from ..node import record
from . import functional
from .functional import _scalar, _tensor_arg, _type_name, tensors_only


def _invalid_combination(name, got, signatures):
    return TypeError(f"{name}() received an invalid combination of arguments - got ({', '.join(got)}), but expected "
                     "one of:\n" + "".join(f" * ({s})\n" for s in signatures))


def _got(*values):
    return [("Tensor" if isinstance(v, TensorBase) else _type_name(v)) for v in values]


def copysign(input, other):
    if not isinstance(input, TensorBase):
        raise _invalid_combination("copysign", _got(input, other), (
            "Tensor input, Tensor other, *, Tensor out = None", "Tensor input, Number other, *, Tensor out = None"))
    return apply("copysign_scalar" if _scalar(other) else "copysign", input, other)


def logaddexp(input, other):
    tensors_only("logaddexp", input, other)
    return apply("logaddexp", input, other)


def logaddexp2(input, other):
    tensors_only("logaddexp2", input, other)
    return apply("logaddexp2", input, other)


def hypot(input, other):
    tensors_only("hypot", input, other)
    return apply("hypot", input, other)


def xlogy(input, other):
    if _scalar(input):
        return apply("xlogy_scalar_self", other, input)
    return apply("xlogy_scalar_other" if _scalar(other) else "xlogy", input, other)


def lerp(input, end, weight):
    if not isinstance(end, TensorBase) or not (isinstance(weight, TensorBase) or _scalar(weight)):
        raise _invalid_combination("lerp", _got(input, end, weight), (
            "Tensor input, Tensor end, Tensor weight, *, Tensor out = None",
            "Tensor input, Tensor end, Number weight, *, Tensor out = None"))
    for name, t in (("end", end), ("weight", weight)):  # (a 0-d weight may have another dtype)
        if isinstance(t, TensorBase) and t._dtype is not input._dtype and (name == "end" or t._shape):
            raise RuntimeError(f"expected dtype {input.dtype.c_name} for `{name}` but got dtype {t.dtype.c_name}")
    return apply("lerp_tensor" if isinstance(weight, TensorBase) else "lerp", input, end, weight)


def logit(input, eps=None):
    _tensor_arg("logit", input, 1, "input")
    return apply("logit", input) if eps is None else apply("logit_eps", input, eps)


def nan_to_num(input, nan=0.0, posinf=None, neginf=None):
    _tensor_arg("nan_to_num", input, 1, "input")
    if not input.dtype.is_floating_point:  # integers and bools have nothing to replace: a copy
        return shape.clone(input)
    info = np.finfo(input.dtype.np)
    return apply("nan_to_num", input, float(nan), float(info.max) if posinf is None else posinf,
                 float(info.min) if neginf is None else neginf)


def _check_lambd(input, lambd):
    if input.dtype.is_floating_point and not 0 <= lambd <= float(np.finfo(input.dtype.np).max):
        raise RuntimeError(f"lambda must be in range [0, {float(np.finfo(input.dtype.np).max):g}] for input dtype "
                           f"{input.dtype.word}, but found {lambd:g}")


def softshrink(input, lambd=0.5):
    _check_lambd(input, lambd)
    return apply("softshrink", input, lambd)


def hardshrink(input, lambd=0.5):
    return apply("hardshrink", input, lambd)


def _threshold_scalars(input, threshold, value):
    """threshold's two numbers as its kernel reads them: converted to the input's type with c10's overflow check
    (an integer input truncates them; a half type rounds them)."""
    scalars = []
    for name, position, v in (("threshold", 2, threshold), ("value", 3, value)):
        if not _scalar(v):
            raise TypeError(f"threshold(): argument '{name}' (position {position}) must be Number, not {_type_name(v)}")
        d = input.dtype
        if d is not dtypes.bool_:
            v = dtypes.check_scalar_fits(v, d)
            v = dtypes.wrap_scalar(v if d.is_floating_point else int(v), d)
        scalars.append(v)
    return scalars


def threshold(input, threshold, value):
    _tensor_arg("threshold", input, 1, "input")
    return apply("threshold", input, *_threshold_scalars(input, threshold, value))


def threshold_in_place(input, threshold, value):
    """threshold_'s values, recorded by ThresholdBackward1 (the in-place write is the caller's)."""
    _tensor_arg("threshold_", input, 1, "input")
    return apply("threshold_in_place", input, *_threshold_scalars(input, threshold, value))


def selu(input):
    return apply("selu", input)


def celu(input, alpha=1.0):
    if alpha == 0:
        raise RuntimeError("ZeroDivisionError: alpha cannot be 0 for CELU")
    return apply("celu", input, alpha)


# ---- prelu: a composite recorded under torch's node name ---------------------------------------------

def _channel_view(weight, input):
    """prelu's weight broadcast along the channel dim (dim 1; an input of fewer dims has one channel)."""
    if weight.numel() == 1:
        return weight.reshape(())
    return weight.reshape((weight.numel(),) + (1,) * (input.dim() - 2))


def prelu(input, weight):
    if weight.dim() > 1:
        raise RuntimeError(f"prelu: Expected `weight` to be a scalar or 1D tensor, but got: ndim = {weight.dim()}")
    channels = input.shape[1] if input.dim() >= 2 else 1
    if weight.numel() != 1 and weight.numel() != channels:
        raise RuntimeError(f"Mismatch of parameter numbers and input channel size. Found parameter numbers = "
                           f"{weight.numel()} and channel size = {channels}.")
    with no_grad():
        out = functional.where(input > 0, input, input * _channel_view(weight, input))
    record("PreluKernelBackward0", _prelu_backward, [input, weight], [out], saved={"self": input, "weight": weight})
    return out


def _prelu_backward(node, g):
    x, w = node.saved("self"), node.saved("weight")
    positive = x > 0
    grad_input = functional.where(positive, g, g * _channel_view(w, x))
    grad_weight = functional.where(positive, 0.0, g * x)
    if w.numel() == 1:
        grad_weight = grad_weight.sum().reshape(w.shape)
    elif x.dim() >= 2:
        grad_weight = grad_weight.sum([d for d in range(x.dim()) if d != 1])
    return grad_input, grad_weight


# ---- bitwise ops: integer and bool tensors only -----------------------------------------------------------

_BITWISE = {"bitwise_and": (np.bitwise_and, "bitwise_and_cpu"), "bitwise_or": (np.bitwise_or, "bitwise_or_cpu"),
            "bitwise_xor": (np.bitwise_xor, "bitwise_xor_cpu"), "bitwise_left_shift": (np.left_shift, "lshift_cpu"),
            "bitwise_right_shift": (np.right_shift, "rshift_cpu")}


def bitwise(name, input, other):
    """A two-operand bitwise op in torch's result dtype; floating results are refused as torch's kernels do."""
    fn, kernel = _BITWISE[name]
    if not isinstance(input, TensorBase) and not isinstance(other, TensorBase):
        raise TypeError(f"{name}() received an invalid combination of arguments - got ({_type_name(input)}, "
                        f"{_type_name(other)}), but expected one of:\n"
                        " * (Tensor input, Tensor other, *, Tensor out = None)\n"
                        " * (Number self, Tensor other)\n"
                        f"      didn't match because some of the arguments have invalid types: (!{_type_name(input)}!, "
                        f"!{_type_name(other)}!)\n"
                        " * (Tensor input, Number other, *, Tensor out = None)\n")
    tensors = [t for t in (input, other) if isinstance(t, TensorBase)]
    broadcast_shapes(*(t._shape for t in tensors))
    result = dtypes.result_type([(t._dtype, len(t._shape)) for t in tensors],
                                [v for v in (input, other) if not isinstance(v, TensorBase)])
    if result.is_floating_point:
        raise NotImplementedError(f'"{kernel}" not implemented for \'{result.word}\'')
    if name.endswith("shift") and result is dtypes.bool_:  # (a bool and a number shift as int64)
        raise NotImplementedError(f'"{kernel}" not implemented for \'Bool\'')
    values = [dispatch.to_host(v._data) if isinstance(v, TensorBase) else v for v in (input, other)]
    values = [np.asarray(v).astype(result.np) for v in values]
    if name.endswith("shift"):  # torch's shifts past the width give 0 (or -1 for a negative right shift)
        width = 8 * result.np.itemsize
        shifted = fn(values[0], np.clip(values[1], 0, width - 1))
        over = (values[1] >= width) | (values[1] < 0)
        out = np.where(over, np.where(values[0] < 0, -1, 0) if name == "bitwise_right_shift" else 0, shifted)
    else:
        out = fn(values[0], values[1])
    return TensorBase._make(_c_order(out, result), result)


def bitwise_and(input, other):
    return bitwise("bitwise_and", input, other)


def bitwise_or(input, other):
    return bitwise("bitwise_or", input, other)


def bitwise_xor(input, other):
    return bitwise("bitwise_xor", input, other)


def bitwise_left_shift(input, other):
    return bitwise("bitwise_left_shift", input, other)


def bitwise_right_shift(input, other):
    return bitwise("bitwise_right_shift", input, other)


def bitwise_not(input):
    _tensor_arg("bitwise_not", input, 1, "input")
    if input.dtype.is_floating_point:
        raise NotImplementedError(f'"bitwise_not_cpu" not implemented for \'{input.dtype.word}\'')
    data = dispatch.to_host(input._data)
    out = np.logical_not(data) if input.dtype is dtypes.bool_ else np.invert(data)
    return TensorBase._make(_c_order(out, input.dtype), input.dtype)


def _c_order(values, dtype):
    # a fresh C-order array of `dtype` (np.ascontiguousarray would make a 0-d result 1-d)
    return np.array(values, dtype.np, order="C")


__all__ = ["copysign", "logaddexp", "logaddexp2", "hypot", "xlogy", "lerp", "logit", "nan_to_num", "hardshrink",
           "threshold", "selu", "celu", "prelu", "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_left_shift",
           "bitwise_right_shift",
           "bitwise_not"]

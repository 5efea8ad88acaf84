"""More pointwise functions of torch's namespace: addcmul, addcdiv, heaviside, float_power (op-table
entries or compositions of them) and gcd, lcm (integers only, computed on the host as the bitwise ops are)."""
import numpy as np

from .._core import dtypes
from .._core.shapes import broadcast_shapes
from ..kernels import dispatch
from ..tensor_base import TensorBase
from . import shape
from .elementwise import apply
from .functional import _scalar, _tensor_arg, pow as _pow
from .pointwise import _got, _invalid_combination

__all__ = ["addcmul", "addcdiv", "heaviside", "float_power", "gcd", "lcm"]

ADDCDIV_INTEGERS = ("Integer division with addcdiv is no longer supported, and in a future  release addcdiv will "
                    "perform a true division of tensor1 and tensor2. The historic addcdiv behavior can be implemented "
                    "as (input + value * torch.trunc(tensor1 / tensor2)).to(input.dtype) for integer inputs and as "
                    "(input + value * tensor1 / tensor2) for float inputs. The future addcdiv behavior is just the "
                    "latter implementation: (input + value * tensor1 / tensor2), for all dtypes.")


def _three_tensors(name, input, tensor1, tensor2):
    for position, (arg, t) in enumerate((("input", input), ("tensor1", tensor1), ("tensor2", tensor2)), 1):
        _tensor_arg(name, t, position, arg)


def _check_value(tensors, value):
    """The value becomes a number of the result's type, with c10's overflow check (-1.5 refused for uint8)."""
    dtypes.check_scalar_fits(value, dtypes.result_type([(t._dtype, len(t._shape)) for t in tensors], []))


def addcmul(input, tensor1, tensor2, *, value=1):
    _three_tensors("addcmul", input, tensor1, tensor2)
    _check_value((input, tensor1, tensor2), value)
    return apply("addcmul", input, tensor1, tensor2, value)


def addcdiv(input, tensor1, tensor2, *, value=1):
    _three_tensors("addcdiv", input, tensor1, tensor2)
    if not tensor1._dtype.is_floating_point and not tensor2._dtype.is_floating_point:
        raise RuntimeError(ADDCDIV_INTEGERS)
    _check_value((input, tensor1, tensor2), value)
    return apply("addcdiv", input, tensor1, tensor2, value)


def heaviside(input, values):
    _tensor_arg("heaviside", input, 1, "input")
    _tensor_arg("heaviside", values, 2, "values")
    if input._dtype is not values._dtype:
        raise RuntimeError("heaviside is not yet implemented for tensors with different dtypes.")
    return apply("heaviside", input, values)


def values_first(name, fn):
    """Tensor.heaviside(_): torch's binding refuses a `values` that is not a Tensor (argument 1) before all else."""
    def method(self, values):
        _tensor_arg(name, values, 1, "values")
        return fn(self, values)
    method.__name__ = name
    return method


def float_power(input, exponent):
    """pow computed in float64 whatever the operands' dtypes (torch's float_power casts them first)."""
    if not isinstance(input, TensorBase) and not isinstance(exponent, TensorBase):
        raise _invalid_combination("float_power", _got(input, exponent), (
            "Tensor input, Tensor exponent, *, Tensor out = None", "Number self, Tensor exponent, *, Tensor out = None",
            "Tensor input, Number exponent, *, Tensor out = None"))
    as_double = [shape.to_dtype(v, dtypes.float64) if isinstance(v, TensorBase) else
                 (float(v) if _scalar(v) else v) for v in (input, exponent)]
    return _pow(*as_double)


def float_power_(input, exponent):
    """The in-place form's check (Tensor.float_power_ then writes the float64 result into self)."""
    if input._dtype is not dtypes.float64:
        raise RuntimeError(f"the base given to float_power_ has dtype {input._dtype.word} but the operation's result "
                           "requires dtype Double")
    return float_power(input, exponent)


def _integer_pair(name, input, other):
    _tensor_arg(name, input, 1, "input")
    _tensor_arg(name, other, 2, "other")
    broadcast_shapes(input._shape, other._shape)
    result = dtypes.result_type([(t._dtype, len(t._shape)) for t in (input, other)], [])
    if result.is_floating_point or result is dtypes.bool_:
        raise NotImplementedError(f'"{name}_cpu" not implemented for \'{result.word}\'')
    values = [np.asarray(dispatch.to_host(t._data)).astype(result.np) for t in (input, other)]
    return result, values


def gcd(input, other):
    result, (a, b) = _integer_pair("gcd", input, other)
    out = np.gcd(a, b).astype(result.np)  # (np.gcd takes absolute values, as torch's calc_gcd)
    return TensorBase._make(np.array(out, result.np, order="C"), result)  # (a 0-d result stays 0-d)


@np.errstate(all="ignore")
def lcm(input, other):
    result, (a, b) = _integer_pair("lcm", input, other)
    g = np.gcd(a, b).astype(result.np)
    # torch's abs(a / g * b) in the integer type, wrapping as C++ does; 0 where the gcd is 0
    out = np.where(g == 0, 0, np.abs((a // np.where(g == 0, 1, g)) * b)).astype(result.np)
    return TensorBase._make(np.array(out, result.np, order="C"), result)  # (a 0-d result stays 0-d)

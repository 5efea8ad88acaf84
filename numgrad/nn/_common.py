"""Small helpers shared by the nn ops: wrapping numpy results, reading which inputs want gradients."""

from .._core import dtypes
from .._core.grad_mode import no_grad
from ..kernels import dispatch
from ..node import record
from ..tensor import Tensor


def new_tensor(data, dtype):
    """A tensor holding `data` (cast to `dtype`) that no graph knows yet."""
    return Tensor._make(dispatch.asarray(data, dtype.np), dtype)  # GPU memory stays there


def constant(data):
    """A tensor for an array (host or GPU) used as a constant in backward formulas."""
    data = dispatch.asarray(data)
    return Tensor._make(data, dtypes.from_numpy_dtype(data.dtype))


def wants(node, i):
    """Whether input i of `node` needs a gradient (an edge to follow)."""
    return node.next_functions[i][0] is not None


def check_reduction(reduction):
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"{reduction} is not a valid value for reduction")


def pair(value, name="value"):
    if isinstance(value, int):
        return (value, value)
    value = tuple(value)
    if len(value) == 1:
        return (value[0], value[0])
    return value


def refuse_dtype(kernel, input, accepted):
    """torch's NotImplementedError from a CPU kernel's dtype dispatch, when input's dtype is not `accepted`."""
    if not accepted(input._dtype):
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{input._dtype.word}'")


def add_scalar(t, number):
    """t + number as torch's C++ at::add(Tensor, Scalar) records it: AddBackward1, with no edge for the number
    (Python's `t + 2` is AddBackward0)."""
    with no_grad():
        out = t + number
    record("AddBackward1", _pass_through, [t], [out])
    return out


def _pass_through(node, g):
    return (g,)

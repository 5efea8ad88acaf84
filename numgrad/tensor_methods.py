"""Binds the functional API onto Tensor as methods, operators and in-place forms."""
import numpy as np

from . import creation, dtypes, functional as F
from .ops import indexing, reduction, shape
from .ops.elementwise import apply
from .tensor import Tensor


def _bind(name, fn):
    setattr(Tensor, name, fn)


for _name in ("neg", "exp", "log", "log1p", "expm1", "sqrt", "rsqrt", "sin", "cos", "tan", "tanh", "sigmoid",
              "relu", "abs", "sign", "reciprocal", "erf", "logical_not", "isnan", "square", "floor", "ceil",
              "round", "trunc", "add", "sub", "mul", "div", "pow", "clamp", "clip", "clamp_min", "clamp_max",
              "maximum", "minimum", "eq", "ne", "lt", "le", "gt", "ge", "logical_and", "logical_or",
              "logical_xor", "equal", "allclose", "isclose", "all", "any", "sum", "mean", "prod", "max", "min",
              "amax", "amin", "argmax", "argmin", "norm", "var", "std", "logsumexp", "softmax", "log_softmax",
              "nonzero", "subtract", "multiply", "divide", "true_divide", "negative", "absolute", "greater",
              "less", "greater_equal", "less_equal", "not_equal", "floor_divide"):
    _bind(_name, getattr(F, _name))

for _name in ("reshape", "view", "flatten", "unflatten", "squeeze", "unsqueeze", "permute", "transpose",
              "expand", "expand_as", "clone", "contiguous"):
    _bind(_name, getattr(shape, _name))
Tensor.t = shape.t_
Tensor.T = property(shape.T)
Tensor.mT = property(lambda t: shape.transpose(t, -2, -1))
Tensor.swapaxes = Tensor.swapdims = shape.transpose
Tensor.gather = indexing.gather
Tensor.where = lambda self, condition, other: F.where(condition, self, other)


def _reflected(fn):
    return lambda self, other: fn(other, self)


# The operators call the op table directly: `self` is a tensor, so the functional forms' argument
# juggling is not needed on this, the most travelled, path.
Tensor.__add__ = Tensor.__radd__ = lambda self, other: apply("add", self, other)
Tensor.__sub__ = lambda self, other: apply("sub", self, other)
Tensor.__rsub__ = lambda self, other: apply("rsub", self, other)
Tensor.__mul__ = Tensor.__rmul__ = lambda self, other: apply("mul", self, other)
Tensor.__truediv__ = F.div
Tensor.__rtruediv__ = _reflected(F.div)
Tensor.__pow__ = F.pow
Tensor.__rpow__ = _reflected(F.pow)
Tensor.__neg__ = F.neg
Tensor.__pos__ = lambda self: self
Tensor.__abs__ = F.abs
Tensor.__eq__ = F.eq
Tensor.__ne__ = F.ne
Tensor.__lt__ = F.lt
Tensor.__le__ = F.le
Tensor.__gt__ = F.gt
Tensor.__ge__ = F.ge
Tensor.__hash__ = lambda self: id(self)


def _logical(name, bitwise_int):
    def op(self, other):
        if self.dtype is dtypes.bool_ and (not isinstance(other, Tensor) or other.dtype is dtypes.bool_):
            return getattr(F, name)(self, other)
        other_data = other._data if isinstance(other, Tensor) else other
        return Tensor._make(np.asarray(bitwise_int(self._data, other_data)), self.dtype)
    return op


Tensor.__and__ = Tensor.__rand__ = _logical("logical_and", np.bitwise_and)
Tensor.__or__ = Tensor.__ror__ = _logical("logical_or", np.bitwise_or)
Tensor.__xor__ = Tensor.__rxor__ = _logical("logical_xor", np.bitwise_xor)


def _invert(self):
    if self.dtype is dtypes.bool_:
        return F.logical_not(self)
    if self.dtype.is_floating_point:
        raise TypeError("ufunc 'invert' not supported for the input types")
    return Tensor._make(np.invert(self._data), self.dtype)


Tensor.__invert__ = _invert


Tensor.__floordiv__ = F.floor_divide
Tensor.__rfloordiv__ = _reflected(F.floor_divide)


# ---- in-place forms: compute out of place, then write into self (version bump, grad_fn rebase) ----

def _inplace(fn):
    def op(self, *args, **kwargs):
        self._check_inplace()
        return self._write(fn(self, *args, **kwargs))
    return op


for _name in ("add", "sub", "mul", "div", "pow", "clamp", "clip", "clamp_min", "clamp_max", "relu", "neg", "exp",
              "log", "sqrt", "abs", "sigmoid", "tanh", "sign", "reciprocal", "square", "sin", "cos", "floor",
              "round", "maximum", "minimum", "logical_not", "erf", "log1p", "expm1", "rsqrt", "tan"):
    _bind(_name + "_", _inplace(getattr(F, _name)))
Tensor.__iadd__ = Tensor.add_
Tensor.__isub__ = Tensor.sub_
Tensor.__imul__ = Tensor.mul_
Tensor.__itruediv__ = Tensor.div_
Tensor.__ipow__ = Tensor.pow_


def _fill_from(self, source, name):
    """Overwrites self with a broadcast `source` (fill_, zero_, copy_), as a differentiable op named as
    torch names it; the old values get no gradient, a tensor source gets the gradient summed to its shape."""
    from .autograd.node import record
    self._check_inplace()
    src = source if isinstance(source, Tensor) else None
    value = np.broadcast_to(source._data if src is not None else np.asarray(source), self._data.shape)
    out = Tensor._make(value.astype(self._dtype.np), self._dtype)
    differentiable_src = src if src is not None and src._dtype.is_floating_point else None
    inputs = [self] if name in ("ZeroBackward0", "FillBackward2") else [self, differentiable_src]
    record(name, _fill_backward, inputs, [out], {"src_shape": src._data.shape if src is not None else ()})
    return self._write(out)


def _fill_backward(node, g):
    grad_self = g * 0 if node.next_functions[0][0] is not None else None
    if len(node.next_functions) == 1 or node.next_functions[1][0] is None:
        return (grad_self,) + (None,) * (len(node.next_functions) - 1)
    return grad_self, reduction.sum_to(g, node.saved("src_shape")).to(node.input_meta[1][1])


def fill_(self, value):
    scalar = not isinstance(value, Tensor)
    if not scalar and value._data.ndim != 0:
        raise RuntimeError(f"fill_ only supports 0-dimension value tensor but got tensor with {value._data.ndim} "
                           "dimensions.")
    return _fill_from(self, value, "FillBackward2" if scalar else "FillBackward3")


def zero_(self):
    return _fill_from(self, 0, "ZeroBackward0")


def copy_(self, src, non_blocking=False):
    return _fill_from(self, src, "CopyBackwards")


Tensor.fill_, Tensor.zero_, Tensor.copy_ = fill_, zero_, copy_


# ---- dtype conversion -----------------------------------------------------------------------------

def to(self, *args, dtype=None, device=None, copy=False, non_blocking=False):
    from .ops.device import to_device
    for a in args:
        if isinstance(a, Tensor):
            dtype, device = a.dtype, a.device
        elif isinstance(a, dtypes.dtype):
            dtype = a
        else:
            device = a
    out = self
    if device is not None:
        out = to_device(out, device)
    if dtype is not None:
        out = shape.to_dtype(out, dtypes.to_dtype(dtype), copy and out is self)
    return shape.clone(out) if copy and out is self else out


Tensor.to = to
Tensor.float = lambda self: to(self, dtypes.float32)
Tensor.double = lambda self: to(self, dtypes.float64)
Tensor.long = lambda self: to(self, dtypes.int64)
Tensor.int = lambda self: to(self, dtypes.int64)
Tensor.bool = lambda self: to(self, dtypes.bool_)
Tensor.type_as = lambda self, other: to(self, other.dtype)
Tensor.cpu = lambda self, memory_format=None: self.to("cpu")
Tensor.cuda = lambda self, device=None, non_blocking=False, memory_format=None: \
    self.to("cuda" if device is None else device)


def _new(factory):
    """Tensor.new_zeros and friends: a factory defaulting to this tensor's dtype."""
    def make(self, *args, dtype=None, requires_grad=False, device=None):
        return factory(*args, dtype=dtype or self.dtype, requires_grad=requires_grad, device=device or self.device)
    return make


Tensor.new_tensor = _new(creation.tensor)
Tensor.new_zeros = Tensor.new_empty = _new(creation.zeros)
Tensor.new_ones = _new(creation.ones)
Tensor.new_full = _new(creation.full)

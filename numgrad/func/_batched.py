"""vmap's batching rules: a BatchedTensor carries the whole batch (batch dimension first) through one call of the
function, each op applied once to the batch. It has only the methods it has a rule for; anything else (a numgrad
function given it, .item(), indexing, Python control flow on values) raises NoRule, and vmap then falls back to the
per-sample loop, so a function it cannot batch is still computed exactly."""
from .._core.shapes import Size, wrap_dim
from ..ops import linalg
from ..spec.table import ELEMENTWISE
from ..tensor import Tensor
from ..tensor_base import TensorBase


class NoRule(Exception):
    """The batched call met something without a batching rule."""


def _dims(dim, ndim, keep_all=False):
    """Logical reduction dims -> physical ones (after the batch dim); None: all logical dims."""
    if dim is None:
        return tuple(range(1, ndim + 1))
    dims = dim if isinstance(dim, (tuple, list)) else (dim,)
    return tuple(wrap_dim(d, ndim) + 1 for d in dims)


class BatchedTensor:
    __slots__ = ("value",)
    __hash__ = object.__hash__

    def __init__(self, value):
        self.value = value  # the physical tensor: (batch, *logical shape)

    # ---- what the function sees: the logical (per-sample) tensor ------------------------------------------
    @property
    def shape(self):
        return Size(self.value.shape[1:])

    def size(self, dim=None):
        return self.shape if dim is None else self.shape[dim]

    def dim(self):
        return self.value.dim() - 1

    ndim = property(dim)

    @property
    def dtype(self):
        return self.value.dtype

    @property
    def device(self):
        return self.value.device

    def numel(self):
        n = 1
        for s in self.shape:
            n *= s
        return n

    def __len__(self):
        if not self.dim():
            raise NoRule("len() of a 0-d tensor")
        return self.shape[0]

    def __getattr__(self, name):
        raise NoRule(name)

    def _refuse(self, *args, **kwargs):
        raise NoRule("a value read out of a batched tensor")

    __bool__ = __float__ = __int__ = __index__ = __iter__ = __array__ = __getitem__ = __setitem__ = _refuse

    # ---- elementwise: operands aligned so that broadcasting never meets the batch dimension ------------------
    def _lifted(self, ndim):
        v = self.value
        extra = ndim - (v.dim() - 1)
        return v.reshape(v.shape[0], *([1] * extra), *v.shape[1:]) if extra > 0 else v

    def _binary(self, other, op, reflected=False):
        if isinstance(other, BatchedTensor):
            n = max(self.dim(), other.dim())
            a, b = self._lifted(n), other._lifted(n)
        elif isinstance(other, TensorBase):
            a, b = self._lifted(other.dim()), other
        elif isinstance(other, (int, float, bool)):
            a, b = self.value, other
        else:
            raise NoRule(type(other))
        return BatchedTensor(op(b, a) if reflected else op(a, b))


def _binary_method(op, reflected=False):
    return lambda self, other: self._binary(other, op, reflected)


_OPERATORS = {"add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b,
              "truediv": lambda a, b: a / b, "pow": lambda a, b: a ** b, "lt": lambda a, b: a < b,
              "le": lambda a, b: a <= b, "gt": lambda a, b: a > b, "ge": lambda a, b: a >= b,
              "eq": lambda a, b: a == b, "ne": lambda a, b: a != b}
for _name, _op in _OPERATORS.items():
    setattr(BatchedTensor, f"__{_name}__", _binary_method(_op))
    if _name in ("add", "sub", "mul", "truediv", "pow"):
        setattr(BatchedTensor, f"__r{_name}__", _binary_method(_op, reflected=True))
for _name, _op in {"add": _OPERATORS["add"], "sub": _OPERATORS["sub"], "mul": _OPERATORS["mul"],
                   "div": _OPERATORS["truediv"], "pow": _OPERATORS["pow"], "maximum": lambda a, b: a.maximum(b),
                   "minimum": lambda a, b: a.minimum(b)}.items():
    setattr(BatchedTensor, _name, _binary_method(_op))
BatchedTensor.__neg__ = lambda self: BatchedTensor(-self.value)


def _unary_method(name):
    return lambda self: BatchedTensor(getattr(self.value, name)())


# the op table's one-input entries: elementwise, so the batch dimension is just more elements
for _entry in ELEMENTWISE.values():
    if _entry.published and len(_entry.inputs) == 1 and hasattr(Tensor, _entry.name):
        setattr(BatchedTensor, _entry.name, _unary_method(_entry.name))
for _name in ("relu", "sigmoid", "tanh", "exp", "log", "sin", "cos", "abs", "sqrt", "rsqrt", "square", "neg",
              "clone", "contiguous", "float", "double"):
    setattr(BatchedTensor, _name, _unary_method(_name))


def _clamp(self, min=None, max=None):
    if isinstance(min, (TensorBase, BatchedTensor)) or isinstance(max, (TensorBase, BatchedTensor)):
        raise NoRule("clamp with tensor bounds")
    return BatchedTensor(self.value.clamp(min, max))


BatchedTensor.clamp = _clamp


# ---- reductions ----------------------------------------------------------------------------------------------

def _reduction(name):
    def reduce(self, dim=None, keepdim=False):
        return BatchedTensor(getattr(self.value, name)(_dims(dim, self.dim()), keepdim=keepdim))
    return reduce


for _name in ("sum", "mean", "amax", "amin"):
    setattr(BatchedTensor, _name, _reduction(_name))
BatchedTensor.logsumexp = lambda self, dim, keepdim=False: BatchedTensor(
    self.value.logsumexp(_dims(dim, self.dim()), keepdim=keepdim))
BatchedTensor.softmax = lambda self, dim: BatchedTensor(self.value.softmax(wrap_dim(dim, self.dim()) + 1))
BatchedTensor.log_softmax = lambda self, dim: BatchedTensor(self.value.log_softmax(wrap_dim(dim, self.dim()) + 1))


# ---- shape ops -------------------------------------------------------------------------------------------------

def _shape_args(shape):
    return tuple(shape[0]) if len(shape) == 1 and isinstance(shape[0], (tuple, list)) else tuple(shape)


def _reshape(self, *shape):
    return BatchedTensor(self.value.reshape(self.value.shape[0], *_shape_args(shape)))


def _permute(self, *dims):
    n = self.dim()
    return BatchedTensor(self.value.permute(0, *(wrap_dim(d, n) + 1 for d in _shape_args(dims))))


def _transpose(self, dim0, dim1):
    n = self.dim()
    return BatchedTensor(self.value.transpose(wrap_dim(dim0, n) + 1, wrap_dim(dim1, n) + 1))


def _t(self):
    if self.dim() > 2:
        raise NoRule("t() of more than 2 dims")  # (torch's error comes from the loop)
    return self if self.dim() < 2 else self.transpose(0, 1)


def _unsqueeze(self, dim):
    return BatchedTensor(self.value.unsqueeze(wrap_dim(dim, self.dim() + 1) + 1))


def _squeeze(self, dim=None):
    shape = list(self.shape)
    dims = range(len(shape)) if dim is None else [wrap_dim(d, len(shape)) for d in
                                                  (dim if isinstance(dim, (tuple, list)) else (dim,))]
    kept = [s for i, s in enumerate(shape) if not (i in dims and s == 1)]
    return BatchedTensor(self.value.reshape(self.value.shape[0], *kept))


def _flatten(self, start_dim=0, end_dim=-1):
    n = self.dim()
    if n == 0:
        return self.reshape(1)
    return BatchedTensor(self.value.flatten(wrap_dim(start_dim, n) + 1, wrap_dim(end_dim, n) + 1))


def _expand(self, *sizes):
    sizes = _shape_args(sizes)
    return BatchedTensor(self._lifted(len(sizes)).expand(self.value.shape[0], *sizes))


BatchedTensor.reshape = BatchedTensor.view = _reshape
BatchedTensor.permute = _permute
BatchedTensor.transpose = _transpose
BatchedTensor.t = _t
BatchedTensor.unsqueeze = _unsqueeze
BatchedTensor.squeeze = _squeeze
BatchedTensor.flatten = _flatten
BatchedTensor.expand = _expand


# ---- matmul ----------------------------------------------------------------------------------------------------

def _matmul(a, b):
    """torch.matmul's cases on a batch: 1-d operands made 2-d (and the added dim removed after), batched operands
    given the other's leading dims so that matmul's broadcasting never meets the batch dimension."""
    if not isinstance(a, (BatchedTensor, TensorBase)) or not isinstance(b, (BatchedTensor, TensorBase)):
        raise NoRule("matmul with a non-tensor")
    la, lb = a.dim(), b.dim()
    if la == 0 or lb == 0:
        raise NoRule("matmul of a 0-d tensor")  # (torch's error comes from the loop)

    def as_2d(x, axis):
        if isinstance(x, BatchedTensor):
            return BatchedTensor(x.value.unsqueeze(axis))
        return x.unsqueeze(axis)
    a2, b2 = (as_2d(a, -2) if la == 1 else a), (as_2d(b, -1) if lb == 1 else b)
    n = max(a2.dim(), b2.dim())
    pa = a2._lifted(n) if isinstance(a2, BatchedTensor) else a2
    pb = b2._lifted(n) if isinstance(b2, BatchedTensor) else b2
    r = linalg.matmul(pa, pb)
    if la == 1:
        r = r.squeeze(-2)
    if lb == 1:
        r = r.squeeze(-1)
    return BatchedTensor(r)


BatchedTensor.matmul = BatchedTensor.__matmul__ = _matmul
BatchedTensor.__rmatmul__ = lambda self, other: _matmul(other, self)

"""nn.Parameter: a leaf tensor that a Module registers as one of its parameters."""
from ..tensor import Tensor
from .._core import dtypes
from ..ops.creation import empty


class Parameter(Tensor):
    """A tensor that requires grad by default and shares storage with the tensor it wraps, as in torch."""

    def __new__(cls, data=None, requires_grad=True):
        if data is None:
            data = empty(0)
        p = cls._make(data._data, data._dtype)
        p._vc = data._vc  # like detach(): the same storage, the same version counter
        p.requires_grad_(requires_grad)
        return p

    def __init__(self, data=None, requires_grad=True):
        pass  # everything happens in __new__ (Tensor defines no __init__ to chain to)

    def __repr__(self):
        return "Parameter containing:\n" + super().__repr__()

    __str__ = __repr__

    def __deepcopy__(self, memo):
        if id(self) in memo:
            return memo[id(self)]
        p = Parameter._make(self._data.copy(), self._dtype, self._requires_grad)
        memo[id(self)] = p
        return p

    def __reduce_ex__(self, protocol):
        return (_rebuild_parameter, (self._data, self._dtype.name, self._requires_grad))


def _rebuild_parameter(data, dtype_name, requires_grad):
    return Parameter._make(data, dtypes._by_name(dtype_name), requires_grad)


"""torch.autograd.Variable: the pre-0.4 wrapper, now a constructor returning a tensor (and any tensor is one)."""
from ..tensor_base import TensorBase


class _VariableMeta(type):
    def __instancecheck__(cls, obj):
        return isinstance(obj, TensorBase)


class Variable(metaclass=_VariableMeta):
    """Variable(data, requires_grad=False): a new leaf tensor sharing `data`'s values, as torch's legacy
    constructor makes it."""

    __module__ = "torch.autograd.variable"

    def __new__(cls, data, requires_grad=False, volatile=False):
        if not isinstance(data, TensorBase):
            raise TypeError(f"Variable data has to be a tensor, but got {type(data).__name__}")
        t = data.detach()
        return t.requires_grad_(requires_grad) if requires_grad else t

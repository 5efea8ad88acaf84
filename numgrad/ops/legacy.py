"""torch's legacy tensor types (FloatTensor, LongTensor, ...): constructors by size or data, and isinstance checks."""
import numbers

from .._core import dtypes
from .._core.shapes import Size
from ..tensor_base import TensorBase
from . import creation

# torch's TensorOptions text in the message refusing a tensor of another dtype
_OPTIONS = ("TensorOptions(dtype={}, device=cpu, layout=Strided, requires_grad=false (default), pinned_memory=false "
            "(default), memory_format=(nullopt))")


class LegacyTensorType(type):
    """The class of torch.FloatTensor and its kin: calling one makes a CPU tensor of its dtype, and a CPU tensor of
    that dtype is an instance of it."""

    def __instancecheck__(cls, obj):
        return isinstance(obj, TensorBase) and obj._dtype is cls.dtype and not obj.is_cuda

    def __call__(cls, *args, device=None):
        d = cls.dtype
        if len(args) == 1 and isinstance(args[0], TensorBase):
            if args[0]._dtype is not d:
                raise TypeError(f"expected {_OPTIONS.format(d.c_name)} (got {_OPTIONS.format(args[0]._dtype.c_name)})")
            return args[0].detach()  # a new tensor of the same storage, as torch's
        if args and all(isinstance(a, numbers.Integral) and not isinstance(a, bool) for a in args) or \
                len(args) == 1 and isinstance(args[0], Size):
            return creation.empty(*args, dtype=d)
        if len(args) == 1 and isinstance(args[0], (str, bytes)):
            raise TypeError(f"new(): invalid data type '{type(args[0]).__name__}'")
        if len(args) == 1 and isinstance(args[0], numbers.Number):
            raise TypeError(f"new(): data must be a sequence (got {type(args[0]).__name__})")
        if not args:
            return creation.empty(0, dtype=d)
        return creation.tensor(args[0], dtype=d)


def _legacy(name, d):
    return LegacyTensorType(name, (), {"dtype": d, "is_cuda": False, "__module__": "torch", "__qualname__": name})


FloatTensor = _legacy("FloatTensor", dtypes.float32)
DoubleTensor = _legacy("DoubleTensor", dtypes.float64)
HalfTensor = _legacy("HalfTensor", dtypes.float16)
BFloat16Tensor = _legacy("BFloat16Tensor", dtypes.bfloat16)
ByteTensor = _legacy("ByteTensor", dtypes.uint8)
CharTensor = _legacy("CharTensor", dtypes.int8)
ShortTensor = _legacy("ShortTensor", dtypes.int16)
IntTensor = _legacy("IntTensor", dtypes.int32)
LongTensor = _legacy("LongTensor", dtypes.int64)
BoolTensor = _legacy("BoolTensor", dtypes.bool_)

__all__ = ["FloatTensor", "DoubleTensor", "HalfTensor", "BFloat16Tensor", "ByteTensor", "CharTensor", "ShortTensor",
           "IntTensor", "LongTensor", "BoolTensor"]

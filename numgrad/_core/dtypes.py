"""The four dtypes numgrad supports and torch's type-promotion rules between them."""
import builtins
import math

import numpy as np


class dtype:
    """A tensor element type; printed as torch prints its own (`torch.float32`) so reprs match."""

    __slots__ = ("name", "np", "is_floating_point", "itemsize", "_rank", "word", "c_name")

    def __init__(self, name, np_dtype, is_floating_point, rank, word, c_name):
        self.name, self.np, self.is_floating_point, self._rank = name, np.dtype(np_dtype), is_floating_point, rank
        self.itemsize = self.np.itemsize
        # how torch's messages name the type: "Float" ('not implemented for 'Float''), "float" (C++ name)
        self.word, self.c_name = word, c_name

    def __repr__(self):
        return "torch." + self.name

    def __reduce__(self):
        return (_by_name, (self.name,))


bool_ = dtype("bool", np.bool_, False, 0, "Bool", "bool")
int64 = dtype("int64", np.int64, False, 1, "Long", "long int")
float32 = dtype("float32", np.float32, True, 2, "Float", "float")
float64 = dtype("float64", np.float64, True, 3, "Double", "double")
long, float, double = int64, float32, float64  # torch's aliases

ALL = (bool_, int64, float32, float64)
_BY_NP = {d.np: d for d in ALL}
_BY_NAME = {d.name: d for d in ALL}
_default_float = [float32]


def _by_name(name):
    return _BY_NAME[name]


def get_default_dtype():
    return _default_float[0]


def set_default_dtype(d):
    if d not in (float32, float64):
        raise TypeError("only floating-point types are supported as the default type")
    _default_float[0] = d


def from_numpy_dtype(np_dtype):
    """Maps a numpy dtype onto ours; narrower ints widen to int64 and float16 to float32."""
    np_dtype = np.dtype(np_dtype)
    if np_dtype in _BY_NP:
        return _BY_NP[np_dtype]
    if np_dtype.kind in "iu":
        return int64
    if np_dtype.kind == "f":
        return float32 if np_dtype.itemsize <= 4 else float64
    raise TypeError(f"can't convert np.ndarray of type {np_dtype}. The only supported types are: "
                    "float64, float32, int64, and bool.")


def to_dtype(d):
    """Accepts our dtype, a numpy dtype or a Python type (float, int, bool)."""
    if isinstance(d, dtype):
        return d
    if d is builtins.float:
        return get_default_dtype()
    if d is builtins.int:
        return int64
    if d is builtins.bool:
        return bool_
    return from_numpy_dtype(d)


def _category(d):
    return 2 if d.is_floating_point else (1 if d is int64 else 0)


def promote_types(a, b):
    return a if a._rank >= b._rank else b


def scalar_dtype(value):
    """The dtype a Python scalar takes when it is wrapped into an operation (torch's wrapped number)."""
    if isinstance(value, (builtins.bool, np.bool_)):
        return bool_
    if isinstance(value, (builtins.int, np.integer)):
        return int64
    if isinstance(value, (builtins.float, np.floating)):
        return float64  # wrapped doubles never widen a float32 tensor: see result_type
    raise TypeError(f"unsupported scalar {value!r}")


def result_type(tensors_dims, scalars):
    """torch.result_type: dimensioned tensors outrank 0-d tensors, which outrank Python scalars;
    a lower group only counts when its category (bool < int < float) is higher."""
    groups = [[d for d, ndim in tensors_dims if ndim > 0], [d for d, ndim in tensors_dims if ndim == 0],
              [scalar_dtype(s) for s in scalars]]
    result = None
    for i, group in enumerate(groups):
        if not group:
            continue
        g = group[0]
        for d in group[1:]:
            g = promote_types(g, d)
        if i == 2 and g is float64:
            g = get_default_dtype()  # a Python float alone is a default-dtype float
        if result is None:
            result = g
        elif _category(g) > _category(result):
            result = g if i < 2 else (get_default_dtype() if g.is_floating_point else g)
    return result if result is not None else get_default_dtype()


# torch's C++ names for the types in its overflow message
_STORAGE_NAME = {"int64": "int64_t", "float32": "float", "float64": "double"}


def check_scalar_fits(value, d):
    """torch's check on a Python number stored into a tensor of dtype `d` (fill_, full, masked_fill,
    setitem): NaN, an infinity or an out-of-range number for an integer type, or a finite number beyond a
    float type's range, raises (inf and NaN fit every float type; anything fits bool)."""
    if d is bool_ or isinstance(value, (bool, np.bool_)) or not isinstance(value, (builtins.int, builtins.float, np.number)):
        return
    if isinstance(value, (builtins.int, np.integer)):
        fits = -2 ** 63 <= value < 2 ** 63 if not d.is_floating_point else abs(value) <= builtins.float(np.finfo(d.np).max)
    elif d.is_floating_point:
        fits = not math.isfinite(value) or abs(value) <= builtins.float(np.finfo(d.np).max)
    else:
        fits = math.isfinite(value) and -2 ** 63 <= value < 2 ** 63
    if not fits:
        raise RuntimeError(f"value cannot be converted to type {_STORAGE_NAME[d.name]} without overflow")

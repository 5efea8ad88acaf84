"""numgrad's dtypes (bool, the integer and floating types torch has on the CPU) and torch's type promotion."""
import builtins
import math

import ml_dtypes
import numpy as np


class dtype:
    """A tensor element type; printed as torch prints its own (`torch.float32`) so reprs match."""

    __slots__ = ("name", "np", "is_floating_point", "itemsize", "_rank", "word", "c_name", "kernel", "is_signed",
                 "is_narrow")

    def __init__(self, name, np_dtype, is_floating_point, rank, word, c_name, kernel=None):
        self.name, self.np, self.is_floating_point, self._rank = name, np.dtype(np_dtype), is_floating_point, rank
        self.itemsize = self.np.itemsize
        # how torch's messages name the type: "Float" ('not implemented for 'Float''), "float" (C++ name)
        self.word, self.c_name = word, c_name
        # the dtype the generated kernels compute in: narrow integers in int64 and half types in float32, as
        # torch's CPU kernels compute half types in float, then stored (rounded, or wrapped) in this dtype;
        # so that each op compiles for 4 dtypes, not 10
        self.kernel = kernel or self
        self.is_narrow = kernel is not None  # stored in a dtype the kernels do not compute in
        self.is_signed = name != "uint8" and name != "bool"

    is_complex = False

    def __repr__(self):
        return "torch." + self.name

    def __reduce__(self):
        return (_by_name, (self.name,))


# _rank orders each category's types by width (promote_types reads it with the category)
bool_ = dtype("bool", np.bool_, False, 0, "Bool", "bool")
int64 = dtype("int64", np.int64, False, 4, "Long", "long int")
uint8 = dtype("uint8", np.uint8, False, 1, "Byte", "unsigned char", int64)
int8 = dtype("int8", np.int8, False, 1, "Char", "signed char", int64)
int16 = dtype("int16", np.int16, False, 2, "Short", "short int", int64)
int32 = dtype("int32", np.int32, False, 3, "Int", "int", int64)
float32 = dtype("float32", np.float32, True, 2, "Float", "float")
float64 = dtype("float64", np.float64, True, 3, "Double", "double")
float16 = dtype("float16", np.float16, True, 1, "Half", "c10::Half", float32)
bfloat16 = dtype("bfloat16", ml_dtypes.bfloat16, True, 1, "BFloat16", "c10::BFloat16", float32)
long, float, double, int, short, half = int64, float32, float64, int32, int16, float16  # torch's aliases

ALL = (bool_, uint8, int8, int16, int32, int64, float16, bfloat16, float32, float64)
INTEGERS = (uint8, int8, int16, int32, int64)
_BY_NP = {d.np: d for d in ALL}
_BY_NAME = {d.name: d for d in ALL}
_default_float = [float32]


def _by_name(name):
    return _BY_NAME[name]


_BY_LEGACY_NAME = {f"torch.{d.word}Tensor": d for d in ALL}


def from_legacy_type(t):
    """The dtype of a legacy tensor type or its name (torch.FloatTensor, 'torch.IntTensor'), as Tensor.type
    takes them; other values as they are."""
    if isinstance(t, str):
        if t not in _BY_LEGACY_NAME:
            raise ValueError(f"invalid type: '{t}'")
        return _BY_LEGACY_NAME[t]
    return t if isinstance(t, dtype) else getattr(t, "dtype", t)


def get_default_dtype():
    return _default_float[0]


def set_default_dtype(d):
    if d not in (float32, float64, float16, bfloat16):
        raise TypeError("only floating-point types are supported as the default type")
    _default_float[0] = d


NUMPY_TYPES_MESSAGE = ("The only supported types are: float64, float32, float16, complex64, complex128, int64, int32, "
                       "int16, int8, uint64, uint32, uint16, uint8, and bool.")


def from_numpy_dtype(np_dtype):
    """Maps a numpy dtype onto ours; the unsigned types wider than uint8 (which numgrad does not store) widen to
    int64, as their values need."""
    np_dtype = np.dtype(np_dtype)
    if np_dtype in _BY_NP:
        return _BY_NP[np_dtype]
    if np_dtype.kind in "iu":
        return int64
    if np_dtype.kind == "f":
        return float32 if np_dtype.itemsize <= 4 else float64
    raise TypeError(f"can't convert np.ndarray of type numpy.{np_dtype}. {NUMPY_TYPES_MESSAGE}")


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
    return 2 if d.is_floating_point else (0 if d is bool_ else 1)


def can_cast(source, target):
    """torch.can_cast: a result may be written into a tensor of its category or a higher one (int16 into
    uint8 wraps), never a float into an integer type nor a number into bool."""
    return _category(source) <= _category(target)


def promote_types(a, b):
    """torch.promote_types: the higher category wins; within one, the wider type; uint8 with int8 is int16 and
    float16 with bfloat16 is float32 (neither holds the other's values)."""
    if a is b:
        return a
    ca, cb = _category(a), _category(b)
    if ca != cb:
        return a if ca > cb else b
    if a._rank == b._rank:  # uint8/int8 or float16/bfloat16
        return int16 if ca == 1 else float32
    return a if a._rank > b._rank else b


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
_STORAGE_NAME = {"int64": "int64_t", "float32": "float", "float64": "double", "int32": "int", "int16": "int16_t",
                 "int8": "int8_t", "uint8": "uint8_t", "float16": "c10::Half", "bfloat16": "c10::BFloat16"}


def int_fits(value, d):
    """c10's overflow check of a number into integer type `d`: an integer fits an unsigned type negated when
    its magnitude does (it wraps, as C++ converts); a float must lie within the type's range."""
    info = np.iinfo(d.np)
    if isinstance(value, (builtins.float, np.floating)):
        return math.isfinite(value) and info.min <= value <= info.max if d is not int64 else \
            math.isfinite(value) and -2 ** 63 <= value < 2 ** 63
    if not d.is_signed and value < 0:
        return -value <= info.max
    return info.min <= value <= info.max


def check_scalar_fits(value, d, one_element=False):
    """torch's check on a Python number stored into a tensor of dtype `d` (fill_, full, masked_fill,
    setitem): NaN, an infinity or an out-of-range number for an integer type, or a finite number beyond a
    float type's range, raises (inf and NaN fit every float type; anything fits bool). Returns the number as
    the tensor stores it (-2 is 254 in uint8, as C++ converts), which NumPy takes without an OverflowError.
    `one_element`: torch fills a one-element tensor through its scalar_fill, whose conversion to a half type
    is unchecked (70000.0 becomes inf); setitem fills a 0-d tensor of the target's dtype that way first."""
    if d is bool_ or isinstance(value, (bool, np.bool_)) or \
            not isinstance(value, (builtins.int, builtins.float, np.number)):
        return value
    if d.is_floating_point and d.is_narrow and one_element:
        fits = True
    elif isinstance(value, (builtins.int, np.integer)):
        fits = int_fits(value, d) if not d.is_floating_point else abs(value) <= float_max(d)
    elif d.is_floating_point:
        fits = not math.isfinite(value) or abs(value) <= float_max(d)
    else:
        fits = int_fits(value, d)
    if not fits:
        raise RuntimeError(f"value cannot be converted to type {_STORAGE_NAME[d.name]} without overflow")
    return wrap_scalar(value, d)


def float_max(d):
    """The largest finite value of float dtype `d` (bfloat16 too, which np.finfo does not know)."""
    return builtins.float(ml_dtypes.finfo(d.np).max)


def wrap_scalar(value, d):
    """A Python number as it reads in an op computing in narrow dtype `d` (torch casts it to `d` first: 1000
    is -24 to an int8 tensor; a float rounds to half precision), in d's kernel type."""
    if isinstance(value, (builtins.bool, np.bool_)) or not d.is_narrow:
        return value
    if d.is_floating_point:
        return builtins.float(cast(np.asarray(value, np.float64), d))
    return builtins.int(np.asarray(builtins.int(value) & (2 ** 64 - 1), np.uint64).astype(d.np))


@np.errstate(over="ignore", invalid="ignore")  # a value beyond the type's range becomes inf, silently as in torch
def cast(arr, d):
    """arr.astype(d's type) as torch converts: a double becomes a half type through float (c10::Half and
    c10::BFloat16 are made from a float), which rounds twice where a direct conversion would round once."""
    if d.is_narrow and d.is_floating_point and arr.dtype == np.float64:
        arr = arr.astype(np.float32)
    return arr.astype(d.np)

"""Tensor factories: tensor, from_numpy, ones, zeros, full, empty, arange, linspace, eye, *_like."""
import builtins
import math
import numbers

import numpy as np

from .._core import dtypes
from .._core.warn import warn
from .. import lazy
from ..kernels import dispatch, tape
from ..kernels.dispatch import as_device
from ..tensor_base import TensorBase


def _size(size, fn="empty"):
    """Accepts f(2, 3), f((2, 3)), f([2, 3]) and f(size=()) alike."""
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = size[0]
    elif len(size) == 1 and isinstance(size[0], TensorBase) and size[0].dim() == 1:
        size = size[0].tolist()
    out = []
    for s in size:
        if isinstance(s, float) or not isinstance(s, (numbers.Integral, TensorBase)):
            if len(size) == 1:
                raise TypeError(f"{fn}(): argument 'size' (position 1) must be tuple of ints, not {type(s).__name__}")
            raise TypeError(f"{fn}(): argument 'size' (position 1) must be tuple of ints, but found element of "
                            f"type {type(s).__name__} at pos {len(out)}")
        if int(s) < 0:
            if fn == "zeros":
                raise RuntimeError("zeros: Dimension size must be non-negative.")
            raise RuntimeError(f"Trying to create tensor with negative dimension {int(s)}: [{', '.join(str(int(x)) for x in size)}]")
        out.append(int(s))
    return tuple(out)


def _wrap(data, dtype, device, requires_grad):
    data = dispatch.place(data, as_device(device))  # made on the host, then (for a GPU) one host-to-device copy
    t = TensorBase._make(data, dtype)
    if requires_grad:
        if not dtype.is_floating_point:
            raise RuntimeError("Only Tensors of floating point and complex dtype can require gradients")
        t._requires_grad = True
    return t


def _infer_dtype(obj):
    """torch's inference from nested Python data: any float makes it the default float, else int, else bool."""
    if isinstance(obj, TensorBase):
        return obj._dtype
    if isinstance(obj, (np.ndarray, np.generic)):  # numpy arrays and scalars keep their dtype
        return dtypes.from_numpy_dtype(obj.dtype)
    if isinstance(obj, (builtins.bool, np.bool_)):
        return dtypes.bool_
    if isinstance(obj, numbers.Integral):
        if not -2**63 <= obj < 2**63:
            raise ValueError("Overflow when unpacking long long")
        return dtypes.int64
    if isinstance(obj, numbers.Real):
        return dtypes.get_default_dtype()
    if isinstance(obj, (list, tuple)):
        kinds = [_infer_dtype(o) for o in obj]
        if not kinds:
            return dtypes.get_default_dtype()
        best = kinds[0]
        for k in kinds[1:]:
            best = dtypes.promote_types(best, k)
        return best
    if isinstance(obj, (str, bytes)):
        raise TypeError(f"new(): invalid data type '{type(obj).__name__}'")
    raise RuntimeError(f"Could not infer dtype of {type(obj).__name__}")


def _to_nested(obj, inside=False):
    if isinstance(obj, TensorBase):
        if inside:  # a tensor inside a sequence is one number, as torch reads it
            if math.prod(obj._shape) != 1:
                raise ValueError("only one element tensors can be converted to Python scalars")
            return obj._data.reshape(())
        return obj._data
    if isinstance(obj, (list, tuple)):
        return [_to_nested(o, True) for o in obj]
    return obj


def tensor(data, dtype=None, device=None, requires_grad=False, pin_memory=False):
    if isinstance(data, TensorBase):
        warn("To copy construct from a tensor, it is recommended to use sourceTensor.detach().clone() "
             "or sourceTensor.detach().clone().requires_grad_(True), rather than "
             "torch.tensor(sourceTensor).")
    d = dtypes.to_dtype(dtype) if dtype is not None else _infer_dtype(data)
    if isinstance(data, (list, tuple)) and not _is_rectangular(data):
        raise ValueError(f"expected sequence of length {len(data[0])} at dim 1 (got {len(data[1])})")
    values = _to_nested(data)
    if not d.is_floating_point and d is not dtypes.bool_:  # inf or NaN has no integer value
        floats = np.asarray(values)
        if floats.dtype.kind == "f" and not np.isfinite(floats).all() or d.is_narrow and floats.size and \
                _python_data(data) and not all(dtypes.int_fits(v.item(), d) for v in (floats.min(), floats.max())):
            raise RuntimeError(f"value cannot be converted to type {d.name} without overflow")
    try:
        # a narrow dtype from Python numbers: as torch, through int64 (wrapping) or double (rounding via float)
        arr = np.array(values, dtype=d.np, copy=True) if not d.is_narrow else \
            dtypes.cast(np.array(values, dtype=np.float64 if d.is_floating_point else np.int64), d)
    except OverflowError:  # a Python int beyond int64
        raise ValueError("Overflow when unpacking long long") from None
    if tape.active and _python_data(data):  # numbers written in the code: a constant of a numgrad.compile trace
        tape.constant(arr)
    return _wrap(arr, d, device, requires_grad)


def _python_data(obj):
    """Whether `obj` is Python numbers only (nested lists and tuples of them), no array or tensor."""
    if isinstance(obj, (list, tuple)):
        return all(_python_data(o) for o in obj)
    return isinstance(obj, (bool, int, float))


def _is_rectangular(data):
    lengths = {len(x) if isinstance(x, (list, tuple)) else -1 for x in data}
    return len(lengths) <= 1


def as_tensor(data, dtype=None, device=None):
    if isinstance(data, TensorBase) and (dtype is None or dtypes.to_dtype(dtype) is data._dtype):
        return data
    if isinstance(data, np.ndarray) and (dtype is None or dtypes.to_dtype(dtype).np == data.dtype):
        try:
            return from_numpy(data)
        except TypeError:
            pass
    return tensor(data, dtype=dtype, device=device)


def from_numpy(array):
    if not isinstance(array, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(array).__name__})")
    if array.dtype.kind not in "biuf":
        raise TypeError(f"can't convert np.ndarray of type numpy.{array.dtype.type.__name__}. "
                        f"{dtypes.NUMPY_TYPES_MESSAGE}")
    d = dtypes.from_numpy_dtype(array.dtype)
    if d.np != array.dtype:  # uint16 and wider unsigned types: numgrad holds their values as int64 (a copy)
        return TensorBase._make(array.astype(d.np), d)
    lazy.export(array)  # NumPy code keeps writing access: never read it lazily
    return TensorBase._make(array, d)  # shares memory, as torch does


def _filled(shape, value, d, device, requires_grad):
    """A tensor of `value` everywhere; on the GPU filled there (no copy from the host)."""
    value = dtypes.check_scalar_fits(value, d, one_element=math.prod(shape) == 1)
    return _wrap(dispatch.full_on(shape, value, d.np, as_device(device)), d, device, requires_grad)


def _factory(value, name):
    def make(*size, dtype=None, device=None, requires_grad=False, out=None, layout=None, pin_memory=False,
             **kw):
        if "size" in kw:
            size = (kw.pop("size"),)
        d = dtypes.to_dtype(dtype) if dtype is not None else dtypes.get_default_dtype()
        return _filled(_size(size, name), value, d, device, requires_grad)
    make.__name__ = name
    return make


zeros = _factory(0, "zeros")
ones = _factory(1, "ones")
empty = _factory(0, "empty")  # zero-filled: uninitialised memory would make results irreproducible


def full(size, fill_value, dtype=None, device=None, requires_grad=False):
    d = dtypes.to_dtype(dtype) if dtype is not None else _infer_dtype(fill_value)
    if isinstance(fill_value, TensorBase) and not fill_value._shape:  # torch reads a 0-d tensor as its number
        fill_value = fill_value.item()
    return _filled(_size((size,)), fill_value, d, device, requires_grad)


def _like(factory):
    def make(t, dtype=None, device=None, requires_grad=False, memory_format=None):
        out = factory(*t.shape, dtype=dtype or t.dtype, device=device or t.device, requires_grad=requires_grad)
        return _preserve_layout(out, t)
    return make


def _preserve_layout(out, t):
    """torch's preserve_format: the result of a *_like op takes a dense input's strides exactly (those of its
    size-1 dims too), which later ops read (matmul folds a batch only when its strides chain)."""
    src, arr = t._arr, out._arr
    if src is None or arr is None or not (dispatch.is_host(src) and dispatch.is_host(arr)) or arr.shape != src.shape:
        return out
    strides = tuple(s // src.itemsize * arr.itemsize for s in src.strides)
    if strides != arr.strides and lazy.is_dense_array(src):
        laid = np.lib.stride_tricks.as_strided(np.empty(max(arr.size, 1), arr.dtype), arr.shape, strides)
        laid[...] = arr
        out._arr = laid
    return out


zeros_like = _like(zeros)
ones_like = _like(ones)
empty_like = _like(empty)


def full_like(t, fill_value, dtype=None, device=None, requires_grad=False):
    return _preserve_layout(full(t.shape, fill_value, dtype=dtype or t.dtype, device=device or t.device,
                                 requires_grad=requires_grad), t)


def arange(start, end=None, step=1, dtype=None, device=None, requires_grad=False):
    if end is None:
        start, end = 0, start
    start, end, step = (v.item() if isinstance(v, TensorBase) else v for v in (start, end, step))
    if not (math.isfinite(start) and math.isfinite(end)):
        raise RuntimeError(f"unsupported range: {_scalar_text(start)} -> {_scalar_text(end)}")
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if (end - start) / step < 0:
        raise RuntimeError("upper bound and lower bound inconsistent with step sign")
    all_int = builtins.all(isinstance(v, numbers.Integral) for v in (start, end, step))
    d = dtypes.to_dtype(dtype) if dtype is not None else (dtypes.int64 if all_int else dtypes.get_default_dtype())
    n = math.ceil((end - start) / step)
    data = (start + np.arange(n, dtype=np.float64 if not all_int else np.int64) * step).astype(d.np)
    return _wrap(data, d, device, requires_grad)


def _scalar_text(v):
    """A number as torch's messages print a Scalar (C++ stream: 6 significant digits, inf, nan)."""
    return str(v) if isinstance(v, numbers.Integral) else f"{v:g}"


@np.errstate(all="ignore")  # IEEE results (inf, NaN) without NumPy's warnings: torch is silent
def linspace(start, end, steps, dtype=None, device=None, requires_grad=False):
    d = dtypes.to_dtype(dtype) if dtype is not None else dtypes.get_default_dtype()
    steps = int(steps)
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    i = np.arange(steps, dtype=np.float64)
    if steps == 1:
        return _wrap(np.array([start], dtype=d.np), d, device, requires_grad)
    step = (end - start) / (steps - 1) if steps > 1 else 0.0
    # torch fills the first half from the start and the second half from the end
    data = np.where(i < steps // 2, start + i * step, end - (steps - 1 - i) * step)
    return _wrap(data.astype(d.np), d, device, requires_grad)


def eye(n, m=None, dtype=None, device=None, requires_grad=False):
    d = dtypes.to_dtype(dtype) if dtype is not None else dtypes.get_default_dtype()
    if n < 0:
        raise RuntimeError(f"n must be greater or equal to 0, got {n}")
    if m is not None and m < 0:
        raise RuntimeError(f"m must be greater or equal to 0, got {m}")
    return _wrap(np.eye(n, m if m is not None else n, dtype=d.np), d, device, requires_grad)

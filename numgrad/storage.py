"""Array helpers for code that handles host (NumPy) and GPU (cuda.array.DeviceArray) storage alike."""
import numpy as np


def on_gpu(arr):
    return arr.__class__ is not np.ndarray and hasattr(arr, "buf")


def full(shape, value, np_dtype, like=None, gpu=False):
    """`value` everywhere in a new array of `shape`: on the GPU when `gpu` is true or array `like` lives
    there, else a NumPy array."""
    if gpu or (like is not None and on_gpu(like)):
        from .cuda import array
        return array.full(shape, value, np_dtype)
    return np.full(shape, value, np_dtype)


def zeros(shape, np_dtype, like):
    return full(shape, 0, np_dtype, like)


def asarray(values, np_dtype=None):
    """`values` (an array, host or GPU, or a scalar) as an array of `np_dtype`, copied only to convert."""
    if on_gpu(values):
        return values if np_dtype is None else values.astype(np_dtype, copy=False)
    return np.asarray(values, np_dtype)


def contiguous(arr):
    """`arr` in C order (itself when it already is)."""
    return arr.contiguous() if on_gpu(arr) else np.ascontiguousarray(arr)


def strided(flat, shape, strides, offset):
    """A view of flat contiguous array `flat` with element `strides`, starting `offset` elements in."""
    if on_gpu(flat):
        from .cuda.array import DeviceArray
        return DeviceArray(flat.buf, shape, [s * flat.itemsize for s in strides], flat.offset + offset)
    return np.lib.stride_tricks.as_strided(flat[offset:], shape, [s * flat.itemsize for s in strides])


def element_offset(view, root):
    """Where view `view` starts inside array `root`, in elements."""
    if on_gpu(view):
        return view.offset - root.offset
    return (view.__array_interface__["data"][0] - root.__array_interface__["data"][0]) // root.itemsize

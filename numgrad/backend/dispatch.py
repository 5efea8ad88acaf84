"""The one place that decides CPU or CUDA: array helpers that serve host (NumPy) and GPU (DeviceArray)
storage alike, device arguments, and kernel launches on the array's device. numba.cuda is imported only
when a GPU array exists or is asked for."""
import numpy as np

from .._core.device import CPU, CUDA0, device
from .cpu import kernels as cpu_kernels
from .cuda import runtime as cuda_runtime


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


def device_of_array(arr):
    return CPU if arr.__class__ is np.ndarray else getattr(arr, "numgrad_device", CPU)


def as_device(d):
    """A device argument (None, 'cpu', 'cuda', 'cuda:0', an int GPU index or a device) as a device;
    a CUDA device is checked to exist (torch's errors)."""
    if d is None:
        return CPU
    if isinstance(d, int) and not isinstance(d, bool):
        d = device("cuda", d)
    d = device(d)
    if d.type == "cuda":
        cuda_runtime.lazy_init()
        if (d.index or 0) >= cuda_runtime.device_count():
            raise RuntimeError("CUDA error: invalid device ordinal\nCUDA kernel errors might be asynchronously "
                               "reported at some other API call, so the stacktrace below might be incorrect.")
        return CUDA0 if not d.index else d
    return CPU


def from_host(arr):
    """A GPU copy of host array `arr`."""
    from .cuda.array import from_host
    return from_host(arr)


def to_host(arr):
    """`arr` as a host array: itself, or a copy of GPU memory (the only reads that leave the device)."""
    return arr if arr.__class__ is np.ndarray else arr.to_host()


def copy_into(dst, src):
    """Writes `src` into array `dst` (same shape), across devices when they differ."""
    if dst.__class__ is np.ndarray:
        np.copyto(dst, to_host(src), casting="unsafe")
    else:
        from .cuda.array import copy_into
        copy_into(dst, src if on_gpu(src) else from_host(src))


def run_elementwise(name, inputs, outputs, args, out_dtypes, n, dtype_name, outs=None):
    """Runs an elementwise kernel (backend.cpu.kernels.run_elementwise) on the CPU, or its CUDA twin when an
    argument lives on the GPU."""
    for a in args:
        if a.__class__ is not np.ndarray and not isinstance(a, (np.generic, int, float)):
            from .cuda import array as cuda_array
            return cuda_array.run_elementwise(name, inputs, outputs, args, out_dtypes, n, dtype_name, outs)
    return cpu_kernels.run_elementwise(name, inputs, outputs, args, out_dtypes, n, dtype_name, outs)

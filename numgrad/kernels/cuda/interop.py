"""Zero-copy exchange of GPU memory with other libraries through __cuda_array_interface__ (CuPy, torch,
Numba); DLPack (numgrad/dlpack.py) builds on it."""
import ctypes
import math

import numpy as np

from . import kernels as target
from .array import DeviceArray, _c_strides


def _span(shape, strides, itemsize):
    """Elements from the first to one past the last one a strided view reads (non-negative strides)."""
    if not math.prod(shape):
        return 0
    return sum((d - 1) * s for d, s in zip(shape, strides)) // itemsize + 1


def device_array_from_interface(desc, owner):
    """A DeviceArray over the memory `desc` (a __cuda_array_interface__ dict) describes; `owner` is kept
    alive as long as the memory is in use."""
    dtype = np.dtype(desc["typestr"])
    shape = tuple(desc["shape"])
    strides = desc.get("strides") or None
    if strides is None:
        strides = _c_strides(shape, dtype.itemsize)
    if any(s < 0 for s in strides):
        raise RuntimeError("numgrad cannot wrap GPU memory with negative strides")
    pointer = desc["data"][0]
    n = max(_span(shape, strides, dtype.itemsize), 1)
    if target.SIMULATOR:  # the simulator's device memory is host memory
        from numba.cuda.simulator.cudadrv.devicearray import FakeCUDAArray
        raw = (ctypes.c_char * (n * dtype.itemsize)).from_address(pointer) if pointer else \
            bytearray(n * dtype.itemsize)
        buf = FakeCUDAArray(np.frombuffer(raw, dtype=dtype, count=n))
    else:
        from numba import cuda
        flat = {"shape": (n,), "strides": None, "typestr": dtype.str, "data": (pointer, False), "version": 3}
        buf = cuda.from_cuda_array_interface(flat, owner=owner, sync=False)
    try:
        buf.numgrad_owner = owner  # the simulator's array does not keep it
    except AttributeError:
        pass
    return DeviceArray(buf, shape, strides, 0)


def device_array_from_object(obj):
    """A DeviceArray over the memory of any object with `__cuda_array_interface__`."""
    if target.SIMULATOR and not hasattr(obj, "__cuda_array_interface__") and hasattr(obj, "_ary"):
        desc = obj._ary.__array_interface__  # a simulator device array: its memory is a host array's
        desc = dict(desc, strides=desc["strides"] or None)
    else:
        desc = obj.__cuda_array_interface__
    return device_array_from_interface(desc, obj)

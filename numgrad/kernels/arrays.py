"""What an array is: host memory (a NumPy array) or GPU memory (kernels/cuda's DeviceArray, which has a `buf`).
A leaf module, so that the IR can tell where a program's inputs live without importing a backend."""
import numpy as np


def on_gpu(arr):
    return arr.__class__ is not np.ndarray and hasattr(arr, "buf")


def length_error(kernel, n, arr):
    """The error for kernel `kernel`, run over `n` elements, given array `arr` of another length: a loop
    indexing every array by one range would read or write past its end (a crash, or wrong numbers)."""
    return RuntimeError(f"numgrad internal error: the {kernel} kernel runs over {n} elements but was given an array "
                        f"of {arr.size} elements (shape {list(arr.shape)})")


_DTYPE_NAMES = {}


def dtype_name(dtype):
    """np.dtype(dtype).name, remembered: the property costs ~3 us a call, and kernel lookups ask on every op."""
    name = _DTYPE_NAMES.get(dtype)
    if name is None:
        name = _DTYPE_NAMES[dtype] = np.dtype(dtype).name
    return name

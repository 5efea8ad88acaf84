"""What an array is: host memory (a NumPy array) or GPU memory (kernels/cuda's DeviceArray, which has a `buf`).
A leaf module, so that the IR can tell where a program's inputs live without importing a backend."""
import ml_dtypes
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


# the types the kernels compute narrow dtypes in (numgrad._core.dtypes: dtype.kernel): Numba compiles each kernel
# for four element types, and knows no bfloat16
WIDER = {**{np.dtype(t): np.dtype(np.int64) for t in (np.int8, np.int16, np.int32, np.uint8)},
         np.dtype(np.float16): np.dtype(np.float32), np.dtype(ml_dtypes.bfloat16): np.dtype(np.float32)}


def widened(arr):
    """A host array as a kernel reads it: one of a narrow dtype cast to its kernel type (a copy), others as
    they are."""
    wide = WIDER.get(arr.dtype)
    return arr if wide is None else arr.astype(wide)


def is_float(np_dtype):
    """Whether a NumPy dtype holds floats (NumPy's kind of ml_dtypes' bfloat16 is 'V')."""
    return kernel_dtype(np_dtype).kind == "f"


def numpy_floats(arr):
    """arr, a bfloat16 one as float32 (exact): NumPy's sorts, unique and accumulating max misread its NaNs."""
    return arr.astype(np.float32) if arr.dtype == BFLOAT16 else arr


BFLOAT16 = np.dtype(ml_dtypes.bfloat16)


def kernel_dtype(np_dtype):
    """The type a kernel computes values of `np_dtype` in."""
    np_dtype = np.dtype(np_dtype)
    return WIDER.get(np_dtype, np_dtype)

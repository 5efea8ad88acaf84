"""What an array is: host memory (a NumPy array) or GPU memory (backend/cuda's DeviceArray, which has a `buf`).
A leaf module, so that the IR can tell where a program's inputs live without importing a backend."""
import numpy as np


def on_gpu(arr):
    return arr.__class__ is not np.ndarray and hasattr(arr, "buf")

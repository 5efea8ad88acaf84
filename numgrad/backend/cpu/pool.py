"""Reused output buffers for large kernel results. A fresh 40 MB array costs ~10^4 page faults, more
than the arithmetic that fills it; the pool keeps the arrays it handed out and gives one back out once
nothing but the pool refers to it (its tensors and views are gone)."""
import sys

import numpy as np

MIN_BYTES = 1 << 20  # smaller arrays come from malloc's own free lists
MAX_BYTES = 1 << 30  # beyond this much pooled memory, new arrays are not kept
_free = {}  # (size, dtype) -> arrays the pool owns
_held = [0]


def empty(n, dtype):
    """An uninitialised flat array of `n` elements of `dtype`."""
    dtype = np.dtype(dtype)
    if n * dtype.itemsize < MIN_BYTES:
        return np.empty(n, dtype)
    key = (n, dtype)
    arrays = _free.get(key)
    if arrays is None:
        arrays = _free[key] = []
    for arr in arrays:
        # references: this list, the loop variable and getrefcount's argument: nobody else has it
        if sys.getrefcount(arr) == 3:
            return arr
    arr = np.empty(n, dtype)
    if _held[0] + arr.nbytes <= MAX_BYTES:
        arrays.append(arr)
        _held[0] += arr.nbytes
    return arr


def clear():
    """Forgets every pooled array (each is freed once its last user is gone)."""
    _free.clear()
    _held[0] = 0

"""Adding rows into an array at repeated indices (embedding's and index_put's backward) as a Numba loop:
NumPy's np.add.at takes about 0.6 us per row of 64 where the loop takes a few ns per element."""
from numba import njit

from ..loader import guard_caches as _guard_caches


@njit(cache=True, nogil=True)
def add_rows(target, index, values):
    """target[index[i]] += values[i] for each i in order (np.add.at's order, so the same bits), for 2-d C-order
    target and values and 1-d int64 index; negative indices count from the end. Returns False, having
    written nothing, when an index is out of range."""
    rows = target.shape[0]
    for i in range(index.shape[0]):
        k = index[i]
        if k < -rows or k >= rows:
            return False
    width = target.shape[1]
    for i in range(index.shape[0]):
        k = index[i]
        if k < 0:
            k += rows
        t, v = target[k], values[i]
        for j in range(width):
            t[j] += v[j]
    return True


_guard_caches(globals())  # numgrad checks what Numba loads from its cache (loader._RecoveringCache)

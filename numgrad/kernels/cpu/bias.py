"""A Linear layer's bias in numgrad.compile's tape: added to the product's rows in place, and a ReLU's backward
with its result's column sums (the next Linear's bias gradient) in one pass over the rows."""
import numpy as np
from numba import njit


@njit(cache=True, nogil=True, error_model="numpy")
def relu_backward_column_sums(g, out, grad, acc, sums):
    """grad = where(out <= 0, 0, g) (the op table's relu_backward) over C-order 2-d arrays of at least one row,
    and sums = grad.sum(0) as sum's float fold gives it (kernels.column_sums: each column's float64 sum from its
    first row down, rounded once by + 0.0 into sums' type). `acc`: float64 scratch of a row's length. Each row
    is summed while it is in registers (30 against 38-47 us for the two kernels on a warm (256, 512) float32)."""
    rows, n = g.shape
    zero = g.dtype.type(0)
    gk, ok, rk = g[0], out[0], grad[0]
    for j in range(n):
        v = zero if ok[j] <= zero else gk[j]
        rk[j] = v
        acc[j] = v
    for k in range(1, rows):
        gk, ok, rk = g[k], out[k], grad[k]
        for j in range(n):
            v = zero if ok[j] <= zero else gk[j]
            rk[j] = v
            acc[j] = acc[j] + np.float64(v)
    for j in range(n):
        sums[j] = acc[j] + 0.0


@njit(cache=True, nogil=True, error_model="numpy")
def add_to_rows(x, b):
    """x[i, j] = x[i, j] + b[j] for a C-order 2-d `x` and a row `b` of its dtype (NumPy's broadcast add, in place)."""
    rows, n = x.shape
    for k in range(rows):
        xk = x[k]
        for j in range(n):
            xk[j] = xk[j] + b[j]

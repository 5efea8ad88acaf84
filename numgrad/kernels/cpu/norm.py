"""layer_norm over rows as Numba loops: the moments in one pass, the output in another, and the backward's
row sums and column sums likewise, where NumPy makes a temporary per step. Rows whose values could overflow
a square (or hold inf/NaN) are left to the NumPy path, which follows torch's Welford order there."""
import numpy as np
from numba import njit

from ..loader import guard_caches as _guard_caches
from .intrinsics import add_reorderable as radd


@njit(cache=True, nogil=True, error_model="numpy")
def forward_rows(x, w, b, has_w, has_b, eps, out, mean, rstd):
    """layer_norm of each row of x (C order) into out, mean and rstd (x's dtype; eps a scalar of it):
    x * rstd + (-mean * rstd), then * w, + b, as torch's kernel. Returns False when a row needs torch's
    Welford order (its sum of squares >= 1e30 in float32, 1e300 in float64, inf or NaN); out is then not
    filled."""
    rows, n = x.shape
    # the sum of squares stands in for the largest |x| (a max chain does not vectorise): it passes the
    # limit whenever one value does, and more often, which only sends more rows to the exact NumPy path
    limit = 1e30 if x.itemsize == 4 else 1e300
    one = eps * 0 + 1  # 1 in x's dtype
    for r in range(rows):
        row = x[r]
        s = 0.0
        squares = 0.0
        for j in range(n):
            v = np.float64(row[j])
            s = radd(s, v)
            squares = radd(squares, v * v)
        if not (squares < limit):  # also inf and NaN
            return False
        m = s / n
        v = 0.0
        for j in range(n):
            d = row[j] - m
            v = radd(v, d * d)
        mean[r] = m
        rstd[r] = v / n  # the variance, rounded to x's dtype as torch holds it
        rstd[r] = one / np.sqrt(rstd[r] + eps)
    for r in range(rows):
        row, o = x[r], out[r]
        a = rstd[r]
        c = -mean[r] * a
        if has_w and has_b:
            for j in range(n):
                o[j] = (row[j] * a + c) * w[j] + b[j]
        elif has_w:
            for j in range(n):
                o[j] = (row[j] * a + c) * w[j]
        elif has_b:
            for j in range(n):
                o[j] = (row[j] * a + c) + b[j]
        else:
            for j in range(n):
                o[j] = row[j] * a + c
    return True


@njit(cache=True, nogil=True, error_model="numpy")
def backward_rows(dy, x, mean, rstd, gamma, has_gamma, want_dx, want_dg, want_db, dx, dgamma, dbeta):
    """layer_norm_backward_frame's formulas over rows (C-order dy and x): dx = a * gdy + b * x + c per row,
    dgamma = sum over rows of dy * (a * x - a * mean), dbeta = sum of dy; sums accumulate in float64."""
    rows, n = x.shape
    scale = 1.0 / n
    g_acc = np.zeros(n)
    b_acc = np.zeros(n)
    for r in range(rows):
        a = rstd[r]
        m = mean[r]
        row, d = x[r], dy[r]
        if want_dg:
            na = -a * m
            for j in range(n):
                g_acc[j] += d[j] * (a * row[j] + na)
        if want_db:
            for j in range(n):
                b_acc[j] += d[j]
        if want_dx:
            ds = 0.0
            db = 0.0
            if has_gamma:
                for j in range(n):
                    gd = d[j] * gamma[j]
                    ds = radd(ds, np.float64(gd * row[j]))
                    db = radd(db, np.float64(gd))
            else:
                for j in range(n):
                    ds = radd(ds, np.float64(d[j] * row[j]))
                    db = radd(db, np.float64(d[j]))
            bb = (db * m - ds) * a * a * a * scale
            cc = -bb * m - db * a * scale
            o = dx[r]
            if has_gamma:
                for j in range(n):
                    o[j] = a * (d[j] * gamma[j]) + bb * row[j] + cc
            else:
                for j in range(n):
                    o[j] = a * d[j] + bb * row[j] + cc
    if want_dg:
        for j in range(n):
            dgamma[j] = g_acc[j]
    if want_db:
        for j in range(n):
            dbeta[j] = b_acc[j]


_guard_caches(globals())  # numgrad checks what Numba loads from its cache (loader._RecoveringCache)

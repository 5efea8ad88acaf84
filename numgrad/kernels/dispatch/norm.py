"""layer_norm's row kernels where they apply (host arrays of float32 or float64); None elsewhere, and the
caller's NumPy formulas run (the GPU, torch's Welford order for rows near overflow, empty shapes)."""
import numpy as np

from ..cpu import norm as cpu_norm
from . import ROW_FLOATS

_EMPTY = {dt: np.zeros(0, dt) for dt in ROW_FLOATS}


def _usable(*arrays):
    return all(a is None or (a.__class__ is np.ndarray and a.dtype in ROW_FLOATS) for a in arrays)


def layer_norm_rows(x, weight, bias, eps):
    """(out, mean, rstd) of layer_norm over the rows of 2-d `x` (weight and bias 1-d or None), or None."""
    if not _usable(x, weight, bias) or not x.size or x.shape[1] == 0:
        return None
    dt = x.dtype
    x = np.ascontiguousarray(x)
    out = np.empty_like(x)
    mean, rstd = np.empty(x.shape[0], dt), np.empty(x.shape[0], dt)
    ok = cpu_norm.forward_rows(x, _or_empty(weight, dt), _or_empty(bias, dt), weight is not None,
                               bias is not None, dt.type(eps), out, mean, rstd)
    return (out, mean, rstd) if ok else None


def layer_norm_backward_rows(dy, x, mean, rstd, gamma, want):
    """(dx, dgamma, dbeta) of layer_norm from 2-d dy and x, 1-d mean and rstd (None where `want` says no),
    or None."""
    if not _usable(dy, x, mean, rstd, gamma) or not x.size or len({a.dtype for a in (dy, x, mean, rstd)}) > 1:
        return None
    dt = x.dtype
    dy, x = np.ascontiguousarray(dy), np.ascontiguousarray(x)
    dx = np.empty_like(x) if want[0] else _EMPTY[dt].reshape(0, 0)
    dgamma = np.empty(x.shape[1], dt) if want[1] else _EMPTY[dt]
    dbeta = np.empty(x.shape[1], dt) if want[2] else _EMPTY[dt]
    cpu_norm.backward_rows(dy, x, np.ascontiguousarray(mean), np.ascontiguousarray(rstd), _or_empty(gamma, dt),
                           gamma is not None, bool(want[0]), bool(want[1]), bool(want[2]), dx, dgamma, dbeta)
    return (dx if want[0] else None, dgamma if want[1] else None, dbeta if want[2] else None)


def _or_empty(arr, dt):
    return _EMPTY[dt] if arr is None else np.ascontiguousarray(arr, dt)


# ---- replays (numgrad.compile): the row kernels bound to the trace's arrays once; None where a bound argument
# would be a copy made now (a strided x, another dtype), and the recorded call replays instead
def bind_layer_norm_rows(x, weight, bias, eps, out, mean, rstd):
    """A call refilling trace arrays `out` (x's 2-d shape), `mean` and `rstd` (1-d) with layer_norm_rows of x;
    it returns False where a row needs torch's Welford order (the caller then runs its exact path)."""
    if not _usable(x, weight, bias) or not x.size or not _own(x, weight, bias, out, mean, rstd):
        return None
    dt = x.dtype
    args = (x, _or_empty(weight, dt), _or_empty(bias, dt), weight is not None, bias is not None, dt.type(eps), out,
            mean, rstd)
    kernel = cpu_norm.forward_rows
    return lambda: kernel(*args)  # (the caller names the replay)


def bind_layer_norm_backward_rows(dy, x, mean, rstd, gamma, want, dx, dgamma, dbeta):
    """A call refilling trace arrays dx, dgamma, dbeta (None where `want` says no) with layer_norm_backward_rows."""
    if not _usable(dy, x, mean, rstd, gamma) or not x.size or len({a.dtype for a in (dy, x, mean, rstd)}) > 1 or\
            not _own(dy, x, mean, rstd, gamma, dx, dgamma, dbeta):
        return None
    dt = x.dtype
    args = (dy, x, mean, rstd, _or_empty(gamma, dt), gamma is not None, bool(want[0]), bool(want[1]), bool(want[2]),
            dx if want[0] else _EMPTY[dt].reshape(0, 0), dgamma if want[1] else _EMPTY[dt],
            dbeta if want[2] else _EMPTY[dt])
    kernel = cpu_norm.backward_rows

    def replay():
        kernel(*args)
    replay.describes = f"layer_norm backward rows of {x.shape} (prepared)"
    return replay


def _own(*arrays):
    """Every array C-contiguous: the kernel reads and writes them, not copies."""
    return all(a is None or (a.__class__ is np.ndarray and a.flags.c_contiguous) for a in arrays)

"""nll_loss's row picks through the CPU's Numba loops where they apply (host float arrays, int64 targets);
None elsewhere, and the caller's NumPy formulas run (the GPU path is nn/_loss.py's tensor ops)."""
import numpy as np

from ..cpu import loss as cpu_loss
from . import ROW_FLOATS


def _index(ignore_index):
    """ignore_index as an int64 the loops compare with: one outside int64 matches no checked target, nor does
    -1 (the targets lie in [0, classes))."""
    return ignore_index if -2 ** 63 <= ignore_index < 2 ** 63 else -1


def _usable(x, target):
    return (x.__class__ is np.ndarray and target.__class__ is np.ndarray and x.dtype in ROW_FLOATS
            and target.dtype == np.int64 and x.ndim == 2 and target.ndim == 1 and x.shape[0] == target.size)


def nll_rows(x, target, weight, ignore_index):
    """(losses, picked weights) of nll_loss for 2-d `x` (rows, classes), 1-d checked `target` and 1-d
    `weight` of x's dtype, or None."""
    if not _usable(x, target):
        return None
    losses, picked = np.empty(target.size, x.dtype), np.empty(target.size, x.dtype)
    cpu_loss.nll_rows(np.ascontiguousarray(x), target, np.ascontiguousarray(weight), _index(ignore_index), losses,
                     picked)
    return losses, picked


def nll_coefficients(target, ignore_index, picked, scale, coef):
    """nll_loss's gradient coefficients into zeros `coef` (rows, classes) for the rows nll_rows picked:
    -picked * scale at each row's target. False (nothing written) where the loops do not apply."""
    if not (coef.__class__ is np.ndarray and coef.flags.c_contiguous and _usable(coef, target)):
        return False
    cpu_loss.nll_coefficients(target, _index(ignore_index), picked, scale, coef)
    return True


_REDUCTIONS = {"none": 0, "mean": 1, "sum": 2}


def nll_forward(x, target, weight, ignore_index, reduction, want_coef):
    """nll_loss of a 1-d or 2-d input, `x` as (rows, classes), in one loop (cpu/loss.py: torch's sums to the
    bit): (the first target out of bounds or None, the losses (rows,) or the 0-d loss, the gradient's
    coefficients or None); None where the loop does not apply."""
    if not _usable(x, target) or (weight is not None and weight.dtype != x.dtype):
        return None
    code = _REDUCTIONS[reduction]
    losses, sums = np.empty(target.size if code == 0 else 0, x.dtype), np.empty(3, x.dtype)
    coef = np.zeros(x.shape if want_coef else (0, x.shape[1]), x.dtype)
    ignoring = -2 ** 63 <= ignore_index < 2 ** 63  # one outside int64 matches no target
    bad = cpu_loss.nll_forward(np.ascontiguousarray(x), target, np.empty(0, x.dtype) if weight is None else
                               np.ascontiguousarray(weight), ignore_index if ignoring else 0, ignoring, code, losses,
                               sums, coef)
    if bad >= 0:
        return target[bad], None, None
    return None, losses if code == 0 else sums[:1].reshape(()), coef if want_coef else None

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


def nll_loop_applies(x, target, weight):
    """Whether nll_forward serves these arrays: host floats (rows, classes), int64 targets, weights of x's dtype."""
    return _usable(x, target) and (weight is None or weight.dtype == x.dtype)


def nll_forward(x, target, weight, ignore_index, reduction, want_coef, out=None):
    """nll_loss of a 1-d or 2-d input, `x` as (rows, classes), in one loop (cpu/loss.py: torch's sums to the
    bit): [the losses (rows,) or the 0-d loss, the gradient's coefficients or None] (`out`: a replay's
    buffers, written). Raises torch's IndexError for a target out of bounds."""
    call, results = _nll_call(x, target, weight, ignore_index, reduction, want_coef)
    call()
    if out is None:
        return results
    for mine, theirs in zip(results, out):
        if theirs is not None:
            np.copyto(theirs, mine)
    return out


def _nll_call(x, target, weight, ignore_index, reduction, want_coef, out=None):
    """(call, results): call() runs the loop into the arrays of `results` (`out` when given) and raises for a
    target out of bounds."""
    code = _REDUCTIONS[reduction]
    x = np.ascontiguousarray(x)
    if out is not None and code != 0:  # the loss is a 0-d view of `sums`, written by the loop
        sums = out[0].base if out[0].base is not None and out[0].base.size == 3 else None
        if sums is None:
            return None
    else:
        sums = np.empty(3, x.dtype)
    losses = (out[0] if out is not None else np.empty(target.size, x.dtype)) if code == 0 else np.empty(0, x.dtype)
    if want_coef:
        coef = out[1] if out is not None else np.empty(x.shape, x.dtype)  # (call() zeroes it)
    else:
        coef = np.empty((0, x.shape[1]), x.dtype)
    ignoring = -2 ** 63 <= ignore_index < 2 ** 63  # one outside int64 matches no target
    args = (x, target, np.empty(0, x.dtype) if weight is None else np.ascontiguousarray(weight),
            ignore_index if ignoring else 0, ignoring, code, losses, sums, coef)
    kernel = cpu_loss.nll_forward

    def call():
        if want_coef:
            coef.fill(0)  # (a replay's buffer holds the last step's coefficients)
        bad = kernel(*args)
        if bad >= 0:
            raise IndexError(f"Target {target[bad]} is out of bounds.")
    return call, [losses if code == 0 else sums[:1].reshape(()), coef if want_coef else None]


def _prepare_nll_forward(result, x, target, weight, ignore_index, reduction, want_coef, out=None):
    """A replay of nll_forward: the loop bound to the trace's arrays once (none where x was copied)."""
    if not x.flags.c_contiguous or (weight is not None and not weight.flags.c_contiguous):
        return None
    bound = _nll_call(x, target, weight, ignore_index, reduction, want_coef, out=result)
    if bound is None:
        return None
    call = bound[0]
    call.describes = f"nll_loss loop ({x.shape[0]} rows of {x.shape[1]}, prepared)"
    return call


nll_forward.prepare = _prepare_nll_forward

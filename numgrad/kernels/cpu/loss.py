"""nll_loss's per-row picks as Numba loops: each row's loss and weight, and the gradient's coefficients,
where NumPy's path builds half a dozen temporaries (fancy indexing, masks, wheres) per step."""
import numpy as np
from numba import njit

from ..loader import guard_caches as _guard_caches


@njit(cache=True, nogil=True, error_model="numpy")
def nll_rows(x, target, weight, ignore_index, losses, picked_weights):
    """losses[i] = -x[i, t] * weight[t] and picked_weights[i] = weight[t] for t = target[i], both +0.0 where t
    is ignore_index; the targets were checked against the class count."""
    for i in range(x.shape[0]):
        t = target[i]
        if t == ignore_index:
            losses[i] = 0
            picked_weights[i] = 0
        else:
            w = weight[t]
            picked_weights[i] = w
            losses[i] = -x[i, t] * w


@njit(cache=True, nogil=True, error_model="numpy")
def nll_coefficients(target, ignore_index, picked_weights, scale, coef):
    """coef (zeros, (rows, classes)) at [i, target[i]] = -picked_weights[i] * scale, left 0 where ignored."""
    for i in range(target.shape[0]):
        t = target[i]
        if t != ignore_index:
            coef[i, t] = -picked_weights[i] * scale


@njit(cache=True, nogil=True, error_model="numpy")
def nll_forward(x, target, weight, ignore, ignoring, reduction, losses, sums, coef):
    """nll_loss of a 1-d or 2-d input (x as C-contiguous (rows, classes)) in one pass, as torch's
    nll_loss_out_frame computes it: reduction 0 writes each row's loss to `losses` (+0.0 where ignored); 1
    (mean) and 2 (sum) write the loss to sums[0] and the total weight to sums[1] (sums[2] is scratch), summed
    in x's dtype in torch's cascade (partial sums of 16 rows, then of 16 partials, ...): torch's value bit for
    bit.
    `weight` is empty without class weights; targets equal to `ignore` are skipped when `ignoring`. When coef
    (zeros of x's shape) has rows, the gradient's coefficient goes to each row's target: -weight (none, sum)
    or -weight / total weight (mean), rounded as torch's backward rounds them for a unit gradient. Returns
    the row of the first target out of [0, classes), or -1."""
    rows, classes = x.shape
    weighted = weight.shape[0] > 0
    levels = 8
    ceil_log2 = 1
    while (1 << ceil_log2) < rows:
        ceil_log2 += 1
    power = max(4, ceil_log2 // levels)
    mask = (1 << power) - 1
    partial_loss = np.zeros(levels, x.dtype)
    partial_weight = np.zeros(levels, x.dtype)
    ignored = 0
    for b in range(rows):
        t = target[b]
        if ignoring and t == ignore:
            ignored += 1
            if reduction == 0:
                losses[b] = 0
            continue
        if t < 0 or t >= classes:
            return b
        d = x[b, t]
        if reduction == 0:
            losses[b] = -d * weight[t] if weighted else -d
            continue
        if weighted:
            partial_loss[0] -= d * weight[t]
            partial_weight[0] += weight[t]
        else:
            partial_loss[0] -= d
        for j in range(levels - 1):
            if (b & (mask << (j * power))) != 0:
                break
            partial_weight[j + 1] += partial_weight[j]
            partial_loss[j + 1] += partial_loss[j]
            partial_weight[j] = 0
            partial_loss[j] = 0
    if reduction != 0:
        sums[0] = 0
        sums[1] = 0
        for j in range(levels):
            sums[0] += partial_loss[j]
        if weighted:
            for j in range(levels):
                sums[1] += partial_weight[j]
        else:
            sums[1] = rows - ignored
        if reduction == 1:
            sums[0] = sums[0] / sums[1]
    if coef.shape[0] == 0:
        return -1
    sums[2] = 1  # the scale, in x's dtype: 1, or 1 / total weight for the mean
    if reduction == 1:
        sums[2] = sums[2] / sums[1]
    for b in range(rows):
        t = target[b]
        if not (ignoring and t == ignore):
            coef[b, t] = -(weight[t] * sums[2]) if weighted else -sums[2]
    return -1


_guard_caches(globals())  # numgrad checks what Numba loads from its cache (loader._RecoveringCache)

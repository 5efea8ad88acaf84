"""nll_loss's per-row picks as Numba loops: each row's loss and weight, and the gradient's coefficients,
where NumPy's path builds half a dozen temporaries (fancy indexing, masks, wheres) per step."""
from numba import njit


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

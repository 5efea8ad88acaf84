"""Separable linear resampling: reflection and replication padding, average and adaptive average pooling and
interpolation each read an output position as a weighted sum of a few input positions along each spatial dim.
One op (taps per dim) and its adjoint serve them all, forward and backward, create_graph included."""

import numpy as np

from ..kernels import dispatch
from ..node import record
from ._common import new_tensor


class Taps:
    """One spatial dim's map: output o reads input positions index[o, t] with weights weight[o, t] (None: all
    ones), summed in t's order; where valid[o, t] is False the tap adds nothing (None: every tap counts).
    `from_zero`: the sum starts from +0.0, as torch's pooling sums do (a window of -0.0 averages to +0.0); else it
    starts from the first tap, as its interpolations do."""

    def __init__(self, index, in_size, weight=None, valid=None, from_zero=False):
        self.from_zero = from_zero
        self.index = np.ascontiguousarray(index, np.int64).reshape(len(index), -1)
        self.in_size = in_size
        self.weight = None if weight is None else np.asarray(weight).reshape(self.index.shape)
        self.valid = None if valid is None or np.all(valid) else np.asarray(valid, bool).reshape(self.index.shape)

    def by_target(self):
        """The taps that count, ordered by the input position they read: (outputs, weights or None, targets,
        where each target's run starts), for the adjoint's segmented sums."""
        if not hasattr(self, "_by_target"):
            keep = np.ones(self.index.shape, bool) if self.valid is None else self.valid
            outputs = np.broadcast_to(np.arange(self.index.shape[0])[:, None], self.index.shape)[keep]
            targets = self.index[keep]
            order = np.argsort(targets, kind="stable")
            targets = targets[order]
            starts = np.flatnonzero(np.r_[True, targets[1:] != targets[:-1]]) if len(targets) else targets
            weight = None if self.weight is None else self.weight[keep][order]
            self._by_target = (outputs[order], weight, targets[starts], starts)
        return self._by_target


def _gather_axis(x, taps, axis):
    shape = [1] * x.ndim
    shape[axis] = taps.index.shape[0]
    total = None
    for t in range(taps.index.shape[1]):
        term = np.take(x, taps.index[:, t], axis=axis)
        if taps.weight is not None:
            term = term * taps.weight[:, t].astype(x.dtype).reshape(shape)
        if taps.valid is not None:  # masked, not weighted by zero: an inf elsewhere must not make NaN here;
            # -0.0 is the sum's identity, so a masked tap leaves even a -0.0 sum as it is
            term = np.where(taps.valid[:, t].reshape(shape), term, x.dtype.type(-0.0))
        total = term if total is None else total + term
    return total + x.dtype.type(0) if taps.from_zero else total


def _opmath(arr, wide):
    """arr as the resampling computes in: a half type in float32 where `wide` (torch's upsample kernels round
    once, at the end), else as it is."""
    return dispatch.widened(arr) if wide and arr.dtype.kind not in "iub" else arr


def gather_array(x, plan, wide=False):
    """`x` resampled along each (axis, Taps) of `plan`, in order."""
    stored, x = x.dtype, _opmath(x, wide)
    for axis, taps in plan:
        x = _gather_axis(x, taps, axis)
    return np.ascontiguousarray(x.astype(stored, copy=False))


def _scatter_axis(g, taps, axis):
    # a segmented sum per input position of the outputs that read it: only the taps that count take part,
    # so a NaN or inf reaches only the positions torch's scatter sends it to
    outputs, weight, targets, starts = taps.by_target()
    moved = np.moveaxis(g, axis, -1)
    out = np.zeros(moved.shape[:-1] + (taps.in_size,), g.dtype)
    if len(outputs):
        values = moved[..., outputs]
        if weight is not None:
            values = values * weight.astype(g.dtype)
        # added onto the zeros, as torch's backward kernels accumulate into a zeroed gradient (-0.0 sums give +0.0)
        out[..., targets] += np.add.reduceat(values, starts, axis=-1)
    return np.moveaxis(out, -1, axis)


def scatter_array(g, plan, wide=False):
    """The adjoint of gather_array: each output value added back to the input positions it read."""
    stored, g = g.dtype, _opmath(g, wide)
    for axis, taps in reversed(plan):
        g = _scatter_axis(g, taps, axis)
    return np.ascontiguousarray(g.astype(stored, copy=False))


def _resample_backward(node, g):
    check = node.saved("check_grad")
    if check is not None:
        check(g)
    return (adjoint(g, node.saved("plan"), node.saved("name")),)


def _adjoint_backward(node, g):
    return (resample(g, node.saved("plan"), node.saved("name")),)


def resample(x, plan, name, check_grad=None, saves_input=False):
    """`x` resampled by `plan` ((axis, Taps) pairs), recorded as node `name` (torch's, e.g.
    UpsampleBilinear2DBackward0); `check_grad(g)` is the check torch's backward kernel makes on its gradient;
    `saves_input`: torch's node saves x (the pools do, upsampling does not), so an in-place write to x after
    the call makes the backward raise, naming x."""
    dispatch.require_host(name[:name.index("Backward")], x._data)
    out = new_tensor(dispatch.numpy_op(gather_array, x._data, plan, name.startswith("Upsample")), x._dtype)
    saved = {"plan": plan, "name": name, "check_grad": check_grad}
    if saves_input:
        saved["self"] = x
    record(name, _resample_backward, [x], [out], saved)
    return out


def adjoint(g, plan, name):
    """The backward of resample(., plan, name): itself differentiable, so create_graph works through it."""
    out = new_tensor(dispatch.numpy_op(scatter_array, g._data, plan, name.startswith("Upsample")), g._dtype)
    record(name.replace("Backward0", "BackwardBackward0"), _adjoint_backward, [g], [out],
           {"plan": plan, "name": name})
    return out

"""A parameter group's step as one kernel call over all its parameters (torch's foreach/fused steps): the arrays
of the parameters and their state are gathered once into a plan, which each later step checks by identity alone
(C-level maps, no per-parameter Python) before it hands the gradients to the kernel."""
import operator
from itertools import chain, repeat

import numpy as np

from .. import lazy
from ..kernels import dispatch, tape
from ..kernels.dispatch import optim as optim_kernels
from ..tensor import Tensor

_DATA = operator.attrgetter("_data")
_GRAD_SLOT, _GRAD_FN = operator.attrgetter("_grad"), operator.attrgetter("_grad_fn")
_ARR = operator.attrgetter("_arr")
_DTYPE = operator.attrgetter("dtype")
_RAVEL = np.ndarray.ravel
_SHAPE = operator.attrgetter("shape")
_STRIDES = operator.attrgetter("strides")
_is, _is_not = operator.is_, operator.is_not
_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))
_STEP = np.dtype(np.float32)


def _host_flat(arr, dtype, shape):
    """`arr` as a flat view if it is a C-contiguous host array of `dtype` and `shape`, else None (torch's ops then
    broadcast or raise: the one-at-a-time step does as they do)."""
    if arr.__class__ is not np.ndarray or arr.dtype != dtype or arr.shape != shape or not arr.flags.c_contiguous:
        return None
    return arr.reshape(-1)


def _arrays(tensors):
    """The tensors' arrays as `_data` hands them out. When no pending result reads any memory (lazy.READERS: none
    to compute before a write) and no trace watches, their stored arrays, read by C-level maps: no Python per
    tensor at each step; else (or where one is pending) `_data`'s."""
    if not lazy.READERS and not tape.active:
        arrays = list(map(_ARR, tensors))
        if all(map(_is_not, arrays, repeat(None))):
            return arrays
    return list(map(_DATA, tensors))


def _padded(arrays, pad):
    """`arrays` as a tuple padded with `pad` to a multiple of the kernel's chunk."""
    missing = -len(arrays) % optim_kernels.CHUNK
    return tuple(arrays) + (pad,) * missing


class GroupPlan:
    """The arrays of one group's step: the parameters (`params`, the ones with a gradient), their state dicts and
    state tensors, as the flat tuples the kernel takes. `counted`: the step counts live in one float32 array
    (`steps`), each parameter's state["step"] a 0-d view of it, so a step counts them all in one operation."""

    def __init__(self, state, params, datas, dicts, tensors, operands, steps, first, pad):
        self.state, self.params, self.datas, self.dicts = state, params, datas, dicts
        self.n, self.pad = len(params), pad
        self.shapes, self.dtypes = [a.shape for a in datas], [a.dtype for a in datas]
        self.strides = [a.strides for a in datas]  # C-contiguous ones (build checked)
        self.value_ids = None if dicts is None else tuple(map(id, chain.from_iterable(map(dict.values, dicts))))
        self.tensors, self.arrays = tensors, tuple(map(_DATA, tensors))
        self.operands, self.steps, self.first = operands, steps, first
        self.vcs = [p._vc for p in params]

    def holds(self, state, params):
        """Whether this plan still describes the group: the same parameters with the same arrays, the same state
        dicts holding the same tensors with the same arrays (load_state_dict, a replaced .data or state entry
        all show here)."""
        return (len(params) == self.n and state is self.state and all(map(_is, params, self.params))
                and all(map(_is, _arrays(params), self.datas))
                and (self.dicts is None or (self._same_dicts(state, params)
                                            and tuple(map(id, chain.from_iterable(map(dict.values, self.dicts))))
                                            == self.value_ids
                                            and all(map(_is, _arrays(self.tensors), self.arrays)))))

    def _same_dicts(self, state, params):
        """Whether `state` maps each parameter to the dict the plan holds. The usual state, the group's parameters
        alone in their order, is read without a lookup (a tensor's hash is a Python call); any other by lookups."""
        if len(state) == self.n and all(map(_is, state, params)):
            return all(map(_is, state.values(), self.dicts))
        return all(map(_is, map(state.get, params), self.dicts))

    def gradients(self, grads):
        """The gradient arrays as the kernel's padded tuple of flat views, or None where one is not a host array
        of its parameter's dtype and shape (strided ones are read through a C-order copy)."""
        arrays = _arrays(grads)
        if list(map(_SHAPE, arrays)) != self.shapes:
            return None
        if list(map(_STRIDES, arrays)) != self.strides:  # (a transposed one, say: copied, as a copy is counted)
            arrays = list(map(dispatch.contiguous, arrays))
        try:  # (ndarray.ravel refuses any other array class)
            flats = list(map(_RAVEL, arrays))
        except TypeError:
            return None
        if list(map(_DTYPE, flats)) != self.dtypes:
            return None
        return _padded(flats, self.pad)

    def phases(self):
        """{phase: indices of the parameters in it}: a step count after this step's count, or (uncounted
        optimizers) whether it is a parameter's first step; one phase in the usual case."""
        if self.steps is not None:
            counts = self.steps.tolist()
            if counts.count(counts[0]) == self.n:  # the usual case: one count, stepped without a ufunc call
                # (torch's `step_t += 1` in float32: the float64 sum of a float32 count and 1 is exact, or rounds
                # far from any float32 rounding boundary; rounded to float32 once, it is the float32 sum)
                count = float(_STEP.type(counts[0] + 1.0))
                self.steps.fill(count)
                return {count: None}
            self.steps += np.float32(1)  # torch's `step_t += 1` on each float32 count
            counts = self.steps.tolist()
        else:
            counts, self.first = self.first, [False] * self.n
        if counts.count(counts[0]) == self.n:
            return {counts[0]: None}
        found = {}
        for i, c in enumerate(counts):
            found.setdefault(c, []).append(i)
        return found


def build(opt, group, params, grads, keys):
    """A plan for `params` of `group` (`grads`: their gradients), their missing state made first (opt._init_state):
    `keys` are the state entries the kernel reads, in its order (None for an array it leaves unused). None, with
    the state as it was, where the step goes one parameter at a time: GPU, strided or large arrays, mixed dtypes,
    state of other shapes or kinds."""
    datas = [p._data for p in params]
    dtype = datas[0].dtype
    if dtype not in _FLOATS or len({id(p) for p in params}) != len(params):  # (a duplicate steps twice, in turn)
        return None
    flats = [_host_flat(a, dtype, a.shape) for a in datas]
    if any(f is None or f.size >= optim_kernels.PARALLEL_MIN for f in flats):
        return None
    for g, d in zip(grads, datas):
        a = g._data
        if a.__class__ is not np.ndarray or a.dtype != dtype or a.shape != d.shape:
            return None
    state = opt.state
    before = {p: dict(state[p]) for p in params if p in state}
    first = [opt._init_state(group, p, state[p]) for p in params]
    plan = _gather(state, params, datas, flats, keys, first)
    if plan is None:  # the state goes back as it was: the one-at-a-time step makes its own
        for p in params:
            if p in before:
                state[p].clear()
                state[p].update(before[p])
            else:
                del state[p]
    return plan


def _gather(state, params, datas, flats, keys, first):
    """build's plan from the state made; None if some state is not the kernel's kind."""
    dicts = [state[p] for p in params]
    if not any(dicts):  # an optimizer that keeps nothing (SGD without momentum): no entries, as torch
        for p in params:
            del state[p]
        dicts = None
    pad = flats[0][:0]
    operands, tensors = [_padded(flats, pad), None], []
    for key in keys:
        if key is None:
            operands.append(_padded([pad] * len(params), pad))
            continue
        column = [d.get(key) for d in dicts]
        if not all(isinstance(t, Tensor) for t in column):
            return None
        flat = [_host_flat(t._data, d.dtype, d.shape) for t, d in zip(column, datas)]
        if any(f is None for f in flat):
            return None
        operands.append(_padded(flat, pad))
        tensors += column
    steps = None
    if dicts is not None and "step" in dicts[0]:
        column = [d.get("step") for d in dicts]
        if not all(isinstance(t, Tensor) and t._data.__class__ is np.ndarray and t._data.shape == () and
                   t._data.dtype == _STEP for t in column):
            return None
        steps = np.array([t._data[()] for t in column], _STEP)
        for k, t in enumerate(column):  # each count becomes a view of `steps`, the tensor itself kept
            t._data = steps[k:k + 1].reshape(())
        tensors += column
    return GroupPlan(state, params, datas, None if dicts is None else tuple(dicts), tuple(tensors), operands,
                     steps, first, pad)


def step(opt, group, params, grads, keys):
    """One step of `group` through its plan (made or remade as needed); False, having changed nothing, where
    the group goes one parameter at a time."""
    plans = opt.__dict__.setdefault("_plans", {})
    plan = plans.get(id(group))
    if plan is None or plan[0] is not group or plan[1] != keys or not plan[2].holds(opt.state, params):
        made = build(opt, group, params, grads, keys)
        for k in [k for k, v in plans.items() if not any(v[0] is g for g in opt.param_groups)]:
            del plans[k]  # (a group load_state_dict replaced)
        if made is None:
            plans.pop(id(group), None)
            return False
        plan = plans[id(group)] = (group, keys, made)
    flats = plan[2].gradients(grads)
    if flats is None:
        return False
    _run(opt, group, plan[2], flats)
    return True


def replay(opt):
    """Optimizer.step's usual case in one pass: every group with a gradient for each parameter and a plan that
    still holds steps through it, with none of the general path's grad mode or per-group lists (a compiled call
    replays the step's Python at every call, on caches its kernels have just flushed). False, having changed
    nothing, where some group needs the general path."""
    plans = opt.__dict__.get("_plans")
    if not plans:
        return False
    ready = []
    for group in opt.param_groups:
        plan = plans.get(id(group))
        if plan is None or plan[0] is not group or group.get("capturable"):
            return False
        params = group["params"]
        if any(map(_GRAD_FN, params)):  # (a non-leaf's .grad warns: the general path reads it)
            return False
        grads = list(map(_GRAD_SLOT, params))
        if not all(map(_is_not, grads, repeat(None))) or plan[1] != opt._group_keys(group) or \
                not plan[2].holds(opt.state, params):
            return False
        flats = plan[2].gradients(grads)
        if flats is None:
            return False
        ready.append((group, plan[2], flats))
    for group, plan, flats in ready:
        _run(opt, group, plan, flats)
    return True


def _run(opt, group, plan, flats):
    """The step of `group` through `plan`, which holds, on the gradients' flat views `flats` (plan.gradients)."""
    operands = plan.operands
    operands[1] = flats
    for phase, indices in plan.phases().items():
        name, scalars = opt._scalars(group, phase)
        if indices is None:
            optim_kernels.many(name, operands, scalars)
        else:
            optim_kernels.many(name, [_padded([a[i] for i in indices], plan.pad) for a in operands], scalars)
    operands[1] = None  # (the gradients are not the plan's: no reference to their memory until the next step)
    for vc in plan.vcs:
        vc[0] += 1  # an in-place change, visible to saved-tensor checks as torch's add_ is

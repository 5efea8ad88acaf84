"""Optimizer: parameter groups, per-parameter state, zero_grad, state_dict; subclasses define _update."""
import copy
import operator
import warnings
from collections import defaultdict
from itertools import chain, repeat

import numpy as np

from ..kernels import dispatch, tape
from ..autograd.functional import zero_grads
from .._core.grad_mode import no_grad
from ..tensor import Tensor
from .._core.grad_mode import enable_grad
from . import _foreach


class _RequiredParameter:
    def __repr__(self):
        return "<required parameter>"


required = _RequiredParameter()


def zeros_like_param(p):
    """Zeroed optimizer state beside parameter `p` (on its device)."""
    return Tensor._make(dispatch.zeros(p._shape, p._dtype.np, p._data), p._dtype)


_ONE_F32 = np.float32(1)
_GRAD = operator.attrgetter("grad")
_GRAD_SLOT, _GRAD_FN = operator.attrgetter("_grad"), operator.attrgetter("_grad_fn")
_PARAMS = operator.itemgetter("params")


def count_step(step):
    """`step += 1` on the 0-d step-count tensor (float32, as torch keeps it); returns the new count as a float.
    A host count is read and written as a NumPy scalar: item()'s device-aware path cost ~14 us per parameter
    per step, and an in-place ufunc on the 0-d array 1.3 us (this runs once per parameter per step)."""
    count = step._data
    if count.__class__ is np.ndarray:
        count[()] = count[()] + _ONE_F32
        return float(count[()])
    count[...] += 1
    return float(step.item())


def _typename(obj):
    """torch.typename: a builtin's bare name, otherwise module.qualname."""
    module = getattr(type(obj), "__module__", "") or ""
    qualname = type(obj).__qualname__
    return qualname if module in ("", "builtins") else f"{module}.{qualname}"


def check_tensor_lr(lr, name="lr", foreach=None, capturable=True):
    """torch's check of a learning rate (or beta) given as a tensor: one element (and, for the optimizers with
    a capturable option, not with foreach=True unless capturable)."""
    if isinstance(lr, Tensor):
        if foreach and not capturable:
            raise ValueError(f"{name} as a Tensor is not supported for capturable=False and foreach=True")
        if lr.numel() != 1:
            raise ValueError(f"Tensor {name} must be 1-element")


def check_fused(fused, differentiable, foreach):
    if fused:
        if differentiable:
            raise RuntimeError("`fused` does not support `differentiable`")
        if foreach:
            raise RuntimeError("`fused` and `foreach` cannot be `True` together.")


class Optimizer:
    def __init__(self, params, defaults):
        self.defaults = defaults
        self.state = defaultdict(dict)  # torch's: opt.state[p] of a parameter without state is {}
        self.param_groups = []
        if isinstance(params, Tensor):
            raise TypeError("params argument given to the optimizer should be an iterable of Tensors or dicts, "
                            f"but got torch.{params.dtype.word}Tensor")
        groups = list(params)
        if not groups:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(groups[0], dict):
            groups = [{"params": groups}]
        for group in groups:
            self.add_param_group(group)

    def add_param_group(self, param_group):
        """torch's checks, in its order: a dict, an ordered collection of leaf tensors, the required options,
        a warning for duplicates within the group, an error for parameters of other groups."""
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {type(param_group)}")
        params = param_group["params"]
        if isinstance(params, set):
            raise TypeError("optimizer parameters need to be organized in ordered collections, but the ordering of "
                            "tensors in sets will change between runs. Please use a list instead.")
        param_group = dict(param_group)
        param_group["params"] = [params] if isinstance(params, Tensor) else list(params)
        for p in param_group["params"]:
            if not isinstance(p, Tensor):
                raise TypeError(f"optimizer can only optimize Tensors, but one of the params is {_typename(p)}")
            if not p.is_leaf:
                raise ValueError("can't optimize a non-leaf Tensor")
        for name, default in self.defaults.items():
            if default is required and name not in param_group:
                raise ValueError(f"parameter group didn't specify a value of required optimization parameter {name}")
            param_group.setdefault(name, default)
        if len({id(p) for p in param_group["params"]}) != len(param_group["params"]):
            warnings.warn("optimizer contains a parameter group with duplicate parameters; in future, this will cause "
                          "an error; see github.com/pytorch/pytorch/issues/40967 for more information", stacklevel=3)
        existing = {id(p) for g in self.param_groups for p in g["params"]}
        if any(id(p) in existing for p in param_group["params"]):
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(param_group)

    def zero_grad(self, set_to_none=True):
        zero_grads(chain.from_iterable(map(_PARAMS, self.param_groups)), set_to_none)

    def step(self, closure=None):
        rec = tape.recorder()
        if rec is not None and not rec.depth:
            if closure is not None:  # the closure's forward and backward are part of the step: trace them
                tape.graph_break("optimizer.step(closure): the closure runs inside the step")
            else:  # a compiled call repeats the step as Python: it reads lr, the step count and state then
                return rec.live(f"{type(self).__name__}.step", self._step, None)
        return self._step(closure)

    def _step(self, closure):
        if closure is None and _foreach.replay(self):
            return None
        loss = None
        if closure is not None:
            with enable_grad():
                loss = closure()
        with no_grad():
            for group in self.param_groups:
                params = group["params"]
                # (leaves, as they usually are: .grad's slot by a C-level map, with no property call per parameter;
                # a parameter made a non-leaf since reads .grad, which warns)
                grads = list(map(_GRAD if any(map(_GRAD_FN, params)) else _GRAD_SLOT, params))
                if not all(map(operator.is_not, grads, repeat(None))):
                    params = [p for p, g in zip(params, grads) if g is not None]
                    grads = [g for g in grads if g is not None]
                    if not params:
                        continue
                if group.get("capturable") and not group.get("fused"):
                    self._check_capturable(group, params)
                keys = self._group_keys(group)
                if keys is not None and _foreach.step(self, group, params, grads, keys):
                    continue
                for p, g in zip(params, grads):
                    # (an optimizer that keeps nothing for a parameter, SGD without momentum, leaves no entry, as torch)
                    state = self.state[p] if p in self.state else {}
                    self._update(group, p, p._data, g._data, state)
                    if state and p not in self.state:
                        self.state[p] = state
                    p._vc[0] += 1  # an in-place change, visible to saved-tensor checks as torch's add_ is
        return loss

    def _group_keys(self, group):
        """The state entries a step over the whole group in one kernel call reads (_foreach.step), in the kernel's
        order (None: an array the group's options leave unused); None for one parameter at a time (_update)."""
        return None

    def _init_state(self, group, p, state):
        """Makes what `state` (parameter `p`'s) lacks before a step; returns whether it made any (a first step)."""
        return False

    def _scalars(self, group, phase):
        """(kernel name, scalars) of a step of the group's parameters in `phase`: their step count after this
        step's count, or for optimizers that count nothing, whether it is their first step."""
        raise NotImplementedError

    _CAPTURABLE = "params and state_steps"  # what torch's capturable check names
    _CAPTURABLE_DEVICES = (['cuda', 'xpu', 'hpu', 'privateuseone', 'xla'], ['cuda', 'xpu', 'hpu', 'privateuseone'])

    def _check_capturable(self, group, params):
        """torch's refusal of capturable=True for host parameters (single-tensor and foreach wording), after its
        _init_group made their state."""
        if all(p.device.type in ("cuda", "xpu") for p in params):
            return
        for p in params:
            self._init_state(group, p, self.state[p])
        foreach = bool(group.get("foreach"))
        what = self._CAPTURABLE.replace(" and", ", and") if foreach and "," in self._CAPTURABLE else \
            self._CAPTURABLE
        raise AssertionError(f"If capturable=True, {what} must be on supported devices: "
                             f"{self._CAPTURABLE_DEVICES[foreach]}.")

    def _update(self, group, p, data, grad, state):
        """Updates parameter `p` (its array `data`) from gradient array `grad` and its `state`, through
        kernels.dispatch.optim.run (which checks the state's shapes against the parameter's, as torch's
        ops do)."""
        raise NotImplementedError

    # ---- state -----------------------------------------------------------------------------------
    def state_dict(self):
        """torch's layout: parameters named by their position across groups."""
        index, groups = {}, []
        for group in self.param_groups:
            packed = {k: v for k, v in group.items() if k != "params"}
            ids = []
            for p in group["params"]:
                index.setdefault(id(p), len(index))
                ids.append(index[id(p)])
            packed["params"] = ids
            groups.append(packed)
        state = {index[id(p)]: s for p, s in self.state.items() if id(p) in index}
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, state_dict):
        groups, saved_groups = self.param_groups, state_dict["param_groups"]
        if len(groups) != len(saved_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        if any(len(g["params"]) != len(s["params"]) for g, s in zip(groups, saved_groups)):
            raise ValueError("loaded state dict contains a parameter group that doesn't match the size of optimizer's "
                             "group")
        by_index = {i: p for s, g in zip(saved_groups, groups) for i, p in zip(s["params"], g["params"])}
        self.state = defaultdict(dict)  # torch's: opt.state[p] of a parameter without state is {}
        for key, value in state_dict["state"].items():
            key = int(key)
            if key in by_index:
                p = by_index[key]
                self.state[p] = {k: (_cast_like(v, p) if isinstance(v, Tensor) and k != "step" else copy.deepcopy(v))
                                 for k, v in value.items()}
        self.param_groups = [{**{k: v for k, v in s.items() if k != "params"}, "params": g["params"]}
                             for s, g in zip(saved_groups, groups)]

    def __repr__(self):
        lines = [type(self).__name__ + " ("]
        for i, group in enumerate(self.param_groups):
            lines.append(f"Parameter Group {i}")
            for key in sorted(k for k in group if k != "params"):
                lines.append(f"    {key}: {group[key]}")
        return "\n".join(lines) + "\n)"


def _cast_like(value, param):
    """A copy of state tensor `value` with parameter `param`'s dtype, on its device (torch's
    value.to(dtype=param.dtype, device=param.device)); shapes are checked when a step uses it."""
    if dispatch.is_host(value._data) and dispatch.is_host(param._data):
        data = np.array(value._data, dtype=param._data.dtype)
    else:
        data = dispatch.place(dispatch.asarray(value._data, param._data.dtype), dispatch.device_of_array(param._data))
    return Tensor._make(data, param._dtype)

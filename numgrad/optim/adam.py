"""Adam and AdamW (decoupled weight decay), with amsgrad."""
import math

from ..ops import creation
from .._core import dtypes
from ..kernels.dispatch import optim
from ..tensor import Tensor
from .optimizer import Optimizer, check_fused, check_tensor_lr, count_step, zeros_like_param


def _check(lr, eps, betas, weight_decay, foreach, capturable, differentiable, fused):
    """torch's checks of Adam's options, in its order."""
    check_tensor_lr(lr, "lr", foreach, capturable)
    if not 0.0 <= lr:
        raise ValueError(f"Invalid learning rate: {lr}")
    if not 0.0 <= eps:
        raise ValueError(f"Invalid epsilon value: {eps}")
    if not 0.0 <= betas[0] < 1.0:
        raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
    if not 0.0 <= betas[1] < 1.0:
        raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")
    if not 0.0 <= weight_decay:
        raise ValueError(f"Invalid weight_decay value: {weight_decay}")
    if not (all(isinstance(b, float) for b in betas[:2]) or all(isinstance(b, Tensor) for b in betas[:2])):
        raise ValueError("betas must be either both floats or both Tensors")
    for i in (0, 1):
        check_tensor_lr(betas[i], f"betas[{i}]", foreach, capturable)
    check_fused(fused, differentiable, foreach)


def _to_scalar(value):
    """A 1-element tensor beta as its number (torch's _to_scalar keeps it a 0-d tensor; its value is what the
    update reads)."""
    return value.item() if isinstance(value, Tensor) else value


class Adam(Optimizer):
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, amsgrad=False, *,
                 foreach=None, maximize=False, capturable=False, differentiable=False, fused=None,
                 decoupled_weight_decay=False):
        _check(lr, eps, betas, weight_decay, foreach, capturable, differentiable, fused)
        super().__init__(params, dict(lr=lr, betas=tuple(_to_scalar(b) for b in betas), eps=eps, weight_decay=weight_decay, amsgrad=amsgrad,
                                      maximize=maximize, foreach=foreach, capturable=capturable,
                                      differentiable=differentiable, fused=fused,
                                      decoupled_weight_decay=decoupled_weight_decay))

    def _init_state(self, group, p, state):
        if not state:
            # torch keeps the step count as a float32 0-d tensor
            state["step"] = creation.tensor(0.0, dtype=dtypes.float32)
            state["exp_avg"] = zeros_like_param(p)
            state["exp_avg_sq"] = zeros_like_param(p)
            if group["amsgrad"]:
                state["max_exp_avg_sq"] = zeros_like_param(p)

    def _update_group(self, group, params):
        """The usual step (no amsgrad, maximize or coupled weight decay) of host parameters of one dtype: checks once
        for the group, then the one-parameter kernel on each (dispatch.optim.adam_many), the same arithmetic."""
        decoupled = group["decoupled_weight_decay"]
        lr, wd = group["lr"], float(group["weight_decay"])
        if group["amsgrad"] or group["maximize"] or (wd != 0 and not decoupled) or isinstance(lr, Tensor):
            return False
        states = [self.state.get(p) for p in params]
        if not all(states):
            if any(states):  # part of the group has state: one at a time (a parameter added later)
                return False
            # the first step: the state _update would make (GPU or strided arrays then go one at a time, below)
            states = [self.state[p] for p in params]
            for p, st in zip(params, states):
                self._init_state(group, p, st)
        arrays = [p._data for p in params] + [st["exp_avg"]._data for st in states] + \
            [st["exp_avg_sq"]._data for st in states]
        flat = self._flat_group(group, params, arrays)
        if flat is None:
            return False
        lr = float(lr)
        beta1, beta2 = (float(b) for b in group["betas"])
        neg_step_sizes, bias_corrections = [], []
        for st in states:
            step = count_step(st["step"])
            neg_step_sizes.append(-(lr / (1 - beta1 ** step)))
            bias_corrections.append(math.sqrt(1 - beta2 ** step))
        optim.adam_many(*flat, neg_step_sizes, bias_corrections, 1.0 - beta1, beta2, 1.0 - beta2,
                        float(group["eps"]), 1.0 - lr * wd if decoupled else 1.0)
        return True

    def _update(self, group, p, data, grad, state):
        self._init_state(group, p, state)
        step = count_step(state["step"])
        lr, wd = float(group["lr"]), float(group["weight_decay"])
        beta1, beta2 = group["betas"]
        beta1, beta2 = float(beta1), float(beta2)
        decoupled = group["decoupled_weight_decay"]
        vmax = state["max_exp_avg_sq"]._data if group["amsgrad"] else None
        optim.run("adam", data, grad, state["exp_avg"]._data, state["exp_avg_sq"]._data,
                          vmax, -(lr / (1 - beta1 ** step)), 1.0 - beta1, beta2, 1.0 - beta2,
                          math.sqrt(1 - beta2 ** step), float(group["eps"]), 0.0 if decoupled else wd,
                          1.0 - lr * wd if decoupled else 1.0, bool(group["amsgrad"]), bool(group["maximize"]))


class AdamW(Adam):
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2, amsgrad=False, *,
                 maximize=False, foreach=None, capturable=False, differentiable=False, fused=None):
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, foreach=foreach, maximize=maximize,
                         capturable=capturable, differentiable=differentiable, fused=fused,
                         decoupled_weight_decay=True)

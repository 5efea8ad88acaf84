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
        if state:
            return False
        # torch keeps the step count as a float32 0-d tensor
        state["step"] = creation.tensor(0.0, dtype=dtypes.float32)
        state["exp_avg"] = zeros_like_param(p)
        state["exp_avg_sq"] = zeros_like_param(p)
        if group["amsgrad"]:
            state["max_exp_avg_sq"] = zeros_like_param(p)
        return True

    def _group_keys(self, group):
        if isinstance(group["lr"], Tensor):
            return None
        return ["exp_avg", "exp_avg_sq", "max_exp_avg_sq" if group["amsgrad"] else None]

    def _scalars(self, group, step):
        lr, wd = float(group["lr"]), float(group["weight_decay"])
        beta1, beta2 = map(float, group["betas"])
        decoupled = group["decoupled_weight_decay"]
        return "adam", (-(lr / (1 - beta1 ** step)), 1.0 - beta1, beta2, 1.0 - beta2, math.sqrt(1 - beta2 ** step),
                        float(group["eps"]), 0.0 if decoupled else wd, 1.0 - lr * wd if decoupled else 1.0,
                        bool(group["amsgrad"]), bool(group["maximize"]))

    def _update(self, group, p, data, grad, state):
        self._init_state(group, p, state)
        name, scalars = self._scalars(group, count_step(state["step"]))
        vmax = state["max_exp_avg_sq"]._data if group["amsgrad"] else None
        optim.run(name, data, grad, state["exp_avg"]._data, state["exp_avg_sq"]._data, vmax, *scalars)


class AdamW(Adam):
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2, amsgrad=False, *,
                 maximize=False, foreach=None, capturable=False, differentiable=False, fused=None):
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, foreach=foreach, maximize=maximize,
                         capturable=capturable, differentiable=differentiable, fused=fused,
                         decoupled_weight_decay=True)

"""Adamax: Adam with the infinity norm of past gradients (one update kernel)."""
from ..kernels.dispatch import optim
from ..tensor import Tensor
from ._checks import check_options, new_step
from .optimizer import Optimizer, count_step, zeros_like_param


class Adamax(Optimizer):
    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, foreach=None, *,
                 maximize=False, differentiable=False, capturable=False):
        check_options(lr, eps, weight_decay, betas)
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, foreach=foreach,
                                      maximize=maximize, differentiable=differentiable, capturable=capturable))

    def _init_state(self, group, p, state):
        if state:
            return False
        state["step"] = new_step()
        state["exp_avg"] = zeros_like_param(p)
        state["exp_inf"] = zeros_like_param(p)
        return True

    def _group_keys(self, group):
        return None if isinstance(group["lr"], Tensor) else ["exp_avg", "exp_inf"]

    def _scalars(self, group, step):
        beta1, beta2 = (float(b) for b in group["betas"])
        clr = float(group["lr"]) / (1 - beta1 ** step)
        return "adamax", (-clr, 1 - beta1, beta2, float(group["eps"]), float(group["weight_decay"]),
                          bool(group["maximize"]))

    def _update(self, group, p, data, grad, state):
        self._init_state(group, p, state)
        name, scalars = self._scalars(group, count_step(state["step"]))
        optim.run(name, data, grad, state["exp_avg"]._data, state["exp_inf"]._data, *scalars)

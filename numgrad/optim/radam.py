"""RAdam: Adam with the variance rectification term, plain momentum while the variance is untrustworthy (one
update kernel)."""
from ..kernels.dispatch import optim
from ..tensor import Tensor
from ._checks import check_options, new_step
from .optimizer import Optimizer, count_step, zeros_like_param


class RAdam(Optimizer):
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, decoupled_weight_decay=False,
                 *, foreach=None, maximize=False, capturable=False, differentiable=False):
        check_options(lr, eps, weight_decay, betas)
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, maximize=maximize,
                                      foreach=foreach, capturable=capturable,
                                      decoupled_weight_decay=decoupled_weight_decay, differentiable=differentiable))

    def _init_state(self, group, p, state):
        if state:
            return False
        state["step"] = new_step()
        state["exp_avg"] = zeros_like_param(p)
        state["exp_avg_sq"] = zeros_like_param(p)
        return True

    def _group_keys(self, group):
        return None if isinstance(group["lr"], Tensor) else ["exp_avg", "exp_avg_sq"]

    def _scalars(self, group, step):
        lr, wd = float(group["lr"]), float(group["weight_decay"])
        beta1, beta2 = (float(b) for b in group["betas"])
        bias_correction2 = 1 - beta2 ** step
        rho_inf = 2 / (1 - beta2) - 1
        rho_t = rho_inf - 2 * step * (beta2 ** step) / bias_correction2
        rectified = rho_t > 5.0
        rect = ((rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t)) ** 0.5 \
            if rectified else 1.0
        decoupled = group["decoupled_weight_decay"]
        return "radam", (-1.0, 1 - beta1, beta2, 1 - beta2, 1 - beta1 ** step, lr, bias_correction2 ** 0.5, rect,
                         float(group["eps"]), 0.0 if decoupled else wd, 1 - lr * wd if decoupled and wd != 0 else 1.0,
                         rectified, bool(group["maximize"]))

    def _update(self, group, p, data, grad, state):
        self._init_state(group, p, state)
        name, scalars = self._scalars(group, count_step(state["step"]))
        optim.run(name, data, grad, state["exp_avg"]._data, state["exp_avg_sq"]._data, *scalars)

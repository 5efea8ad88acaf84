"""Adadelta: running averages of squared gradients and of squared updates (one update kernel)."""
from ..kernels.dispatch import optim
from ..tensor import Tensor
from ._checks import check_lr, new_step
from .optimizer import Optimizer, count_step, zeros_like_param


class Adadelta(Optimizer):
    def __init__(self, params, lr=1.0, rho=0.9, eps=1e-6, weight_decay=0, foreach=None, *, capturable=False,
                 maximize=False, differentiable=False):
        check_lr(lr)
        if not 0.0 <= rho <= 1.0:
            raise ValueError(f"Invalid rho value: {rho}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        super().__init__(params, dict(lr=lr, rho=rho, eps=eps, weight_decay=weight_decay, maximize=maximize,
                                      capturable=capturable, foreach=foreach, differentiable=differentiable))

    _CAPTURABLE_DEVICES = (Optimizer._CAPTURABLE_DEVICES[1],) * 2  # torch's single-tensor Adadelta names no xla

    def _init_state(self, group, p, state):
        if state:
            return False
        state["step"] = new_step()
        state["square_avg"] = zeros_like_param(p)
        state["acc_delta"] = zeros_like_param(p)
        return True

    def _group_keys(self, group):
        return None if isinstance(group["lr"], Tensor) else ["square_avg", "acc_delta"]

    def _scalars(self, group, step):
        rho = float(group["rho"])
        return "adadelta", (-float(group["lr"]), rho, 1.0 - rho, float(group["eps"]), float(group["weight_decay"]),
                            bool(group["maximize"]))

    def _update(self, group, p, data, grad, state):
        self._init_state(group, p, state)
        name, scalars = self._scalars(group, count_step(state["step"]))
        optim.run(name, data, grad, state["square_avg"]._data, state["acc_delta"]._data, *scalars)

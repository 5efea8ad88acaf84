"""SGD with momentum, dampening, Nesterov momentum and weight decay."""

from ..kernels.dispatch import optim
from ..tensor import Tensor
from .optimizer import Optimizer, check_fused, check_tensor_lr, zeros_like_param


class SGD(Optimizer):
    def __init__(self, params, lr=1e-3, momentum=0, dampening=0, weight_decay=0, nesterov=False, *, maximize=False,
                 foreach=None, differentiable=False, fused=None):
        check_tensor_lr(lr)
        if lr < 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if momentum < 0.0:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        check_fused(fused, differentiable, foreach)
        super().__init__(params, dict(lr=lr, momentum=momentum, dampening=dampening, weight_decay=weight_decay,
                                      nesterov=nesterov, maximize=maximize, foreach=foreach,
                                      differentiable=differentiable, fused=fused))

    def _group_keys(self, group):
        if isinstance(group["lr"], Tensor):
            return None
        return ["momentum_buffer" if float(group["momentum"]) != 0 else None]

    def _init_state(self, group, p, state):
        if float(group["momentum"]) != 0 and state.get("momentum_buffer") is None:
            state["momentum_buffer"] = zeros_like_param(p)  # the first step writes it: torch's clone of the gradient
            return True
        return False

    def _scalars(self, group, first):
        return "sgd", (-float(group["lr"]), float(group["weight_decay"]), float(group["momentum"]),
                       1.0 - float(group["dampening"]), bool(group["nesterov"]), bool(group["maximize"]), first)

    def _update(self, group, p, data, grad, state):
        first = self._init_state(group, p, state)
        name, scalars = self._scalars(group, first)
        optim.run(name, data, grad, state["momentum_buffer"]._data if float(group["momentum"]) != 0 else None,
                  *scalars)

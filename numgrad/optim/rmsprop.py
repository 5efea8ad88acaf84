"""RMSprop, plain or centered, with momentum and weight decay."""

from ..ops import creation
from .._core import dtypes
from ..kernels.dispatch import optim
from ..tensor import Tensor
from .optimizer import Optimizer, check_tensor_lr, count_step, zeros_like_param


class RMSprop(Optimizer):
    def __init__(self, params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0, centered=False,
                 capturable=False, foreach=None, maximize=False, differentiable=False):
        check_tensor_lr(lr)
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= momentum:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if not 0.0 <= alpha:
            raise ValueError(f"Invalid alpha value: {alpha}")
        super().__init__(params, dict(lr=lr, momentum=momentum, alpha=alpha, eps=eps, centered=centered,
                                      weight_decay=weight_decay, capturable=capturable, foreach=foreach,
                                      maximize=maximize, differentiable=differentiable))

    _CAPTURABLE_DEVICES = (Optimizer._CAPTURABLE_DEVICES[0],) * 2  # torch's foreach RMSprop names xla too

    def _init_state(self, group, p, state):
        if state:
            return False
        state["step"] = creation.tensor(0.0, dtype=dtypes.float32)
        state["square_avg"] = zeros_like_param(p)
        if group["momentum"] > 0:
            state["momentum_buffer"] = zeros_like_param(p)
        if group["centered"]:
            state["grad_avg"] = zeros_like_param(p)
        return True

    def _group_keys(self, group):
        if isinstance(group["lr"], Tensor):
            return None
        return ["square_avg", "grad_avg" if group["centered"] else None,
                "momentum_buffer" if group["momentum"] > 0 else None]

    def _scalars(self, group, step):
        return "rmsprop", (-float(group["lr"]), float(group["alpha"]), 1.0 - float(group["alpha"]),
                           float(group["eps"]), float(group["weight_decay"]), float(group["momentum"]),
                           bool(group["centered"]), bool(group["maximize"]))

    def _update(self, group, p, data, grad, state):
        self._init_state(group, p, state)
        name, scalars = self._scalars(group, count_step(state["step"]))
        optim.run(name, data, grad, state["square_avg"]._data,
                  state["grad_avg"]._data if group["centered"] else None,
                  state["momentum_buffer"]._data if group["momentum"] > 0 else None, *scalars)

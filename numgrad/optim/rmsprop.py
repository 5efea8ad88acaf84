"""RMSprop, plain or centered, with momentum and weight decay."""

from ..ops import creation
from .._core import dtypes
from ..kernels.dispatch import optim
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

    def _update(self, group, p, data, grad, state):
        zeros = lambda: zeros_like_param(p)  # noqa: E731
        if not state:
            state["step"] = creation.tensor(0.0, dtype=dtypes.float32)
            state["square_avg"] = zeros()
            if group["momentum"] > 0:
                state["momentum_buffer"] = zeros()
            if group["centered"]:
                state["grad_avg"] = zeros()
        count_step(state["step"])
        optim.run("rmsprop", data, grad, state["square_avg"]._data,
                          state["grad_avg"]._data if group["centered"] else None,
                          state["momentum_buffer"]._data if group["momentum"] > 0 else None,
                          -float(group["lr"]), float(group["alpha"]), 1.0 - float(group["alpha"]), float(group["eps"]),
                          float(group["weight_decay"]), float(group["momentum"]), bool(group["centered"]),
                          bool(group["maximize"]))

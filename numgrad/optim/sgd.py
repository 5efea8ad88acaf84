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

    def _update_group(self, group, params):
        """The usual step (no weight decay, Nesterov or maximize; momentum past its first step, or none) of host
        parameters of one dtype: checks once for the group, then the one-parameter kernel on each."""
        lr, momentum = group["lr"], float(group["momentum"])
        if float(group["weight_decay"]) != 0 or group["nesterov"] or group["maximize"] or isinstance(lr, Tensor):
            return False
        arrays = [p._data for p in params]
        if momentum != 0:
            states = [self.state.get(p) for p in params]
            if any(not st or st.get("momentum_buffer") is None for st in states):
                return False  # the first step makes the buffers (one at a time)
            arrays += [st["momentum_buffer"]._data for st in states]
        flat = self._flat_group(group, params, arrays)
        if flat is None:
            return False
        optim.sgd_many(*flat, -float(lr), momentum, 1.0 - float(group["dampening"]))
        return True

    def _update(self, group, p, data, grad, state):
        momentum = float(group["momentum"])
        buf = state.get("momentum_buffer")
        first = buf is None
        if momentum != 0 and first:
            buf = state["momentum_buffer"] = zeros_like_param(p)
        buf_data = buf._data if momentum != 0 else None
        optim.run("sgd", data, grad, buf_data, -float(group["lr"]), float(group["weight_decay"]), momentum,
                          1.0 - float(group["dampening"]), bool(group["nesterov"]), bool(group["maximize"]), first)

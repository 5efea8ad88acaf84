"""Adagrad: per-element learning rates from the sum of squared gradients (one update kernel); its state is made
when the optimizer is, as torch's."""
from ..kernels import dispatch
from ..kernels.dispatch import optim
from ..tensor import Tensor
from ._checks import check_lr, new_step
from .optimizer import Optimizer, check_fused, count_step


class Adagrad(Optimizer):
    def __init__(self, params, lr=1e-2, lr_decay=0, weight_decay=0, initial_accumulator_value=0, eps=1e-10,
                 foreach=None, *, maximize=False, differentiable=False, fused=None):
        check_lr(lr)
        if not 0.0 <= lr_decay:
            raise ValueError(f"Invalid lr_decay value: {lr_decay}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if not 0.0 <= initial_accumulator_value:
            raise ValueError(f"Invalid initial_accumulator_value value: {initial_accumulator_value}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        super().__init__(params, dict(lr=lr, lr_decay=lr_decay, eps=eps, weight_decay=weight_decay,
                                      initial_accumulator_value=initial_accumulator_value, foreach=foreach,
                                      maximize=maximize, differentiable=differentiable, fused=fused))
        check_fused(fused, differentiable, foreach)
        for group in self.param_groups:
            for p in group["params"]:
                self._init_state(group, p, self.state[p])

    def _init_state(self, group, p, state):
        if state:
            return False
        state["step"] = new_step()
        state["sum"] = Tensor._make(dispatch.full(p._shape, self.defaults["initial_accumulator_value"], p._dtype.np,
                                                  p._data), p._dtype)
        return True

    def _group_keys(self, group):
        return None if isinstance(group["lr"], Tensor) else ["sum"]

    def _scalars(self, group, step):
        clr = float(group["lr"]) / (1 + (step - 1) * group["lr_decay"])
        return "adagrad", (-clr, float(group["eps"]), float(group["weight_decay"]), bool(group["maximize"]))

    def _update(self, group, p, data, grad, state):
        self._init_state(group, p, state)
        name, scalars = self._scalars(group, count_step(state["step"]))
        optim.run(name, data, grad, state["sum"]._data, *scalars)

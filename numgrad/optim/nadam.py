"""NAdam: Adam with Nesterov momentum and its momentum-decay schedule (one update kernel); the running product
of the momentum coefficients is a float32 0-d state, as torch's."""

from ..kernels.dispatch import optim
from ..ops import creation
from .._core import dtypes
from ._checks import check_options, new_step
from .optimizer import Optimizer, count_step, zeros_like_param


class NAdam(Optimizer):
    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, momentum_decay=4e-3,
                 decoupled_weight_decay=False, *, foreach=None, maximize=False, capturable=False,
                 differentiable=False):
        check_options(lr, eps, weight_decay, betas)
        if not 0.0 <= momentum_decay:
            raise ValueError(f"Invalid momentum_decay value: {momentum_decay}")
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                                      momentum_decay=momentum_decay, decoupled_weight_decay=decoupled_weight_decay,
                                      maximize=maximize, foreach=foreach, capturable=capturable,
                                      differentiable=differentiable))

    _CAPTURABLE = "params, mu_products and state_steps"

    def _init_state(self, group, p, state):
        if state:
            return False
        state["step"] = new_step()
        state["mu_product"] = creation.tensor(1.0, dtype=dtypes.float32)
        state["exp_avg"] = zeros_like_param(p)
        state["exp_avg_sq"] = zeros_like_param(p)
        return True

    def _update(self, group, p, data, grad, state):
        self._init_state(group, p, state)
        step = count_step(state["step"])
        lr, wd, decay = float(group["lr"]), float(group["weight_decay"]), float(group["momentum_decay"])
        beta1, beta2 = (float(b) for b in group["betas"])
        mu = beta1 * (1.0 - 0.5 * (0.96 ** (step * decay)))
        mu_next = beta1 * (1.0 - 0.5 * (0.96 ** ((step + 1) * decay)))
        product = state["mu_product"]
        # `mu_product *= mu` in the state's dtype (float32), the Python factor cast to it first
        product._data[...] = product._data * product._data.dtype.type(mu)
        mu_product = float(product.item())
        decoupled = group["decoupled_weight_decay"]
        optim.run("nadam", data, grad, state["exp_avg"]._data, state["exp_avg_sq"]._data,
                  -lr * (1.0 - mu) / (1.0 - mu_product), (-lr * mu_next) / (1.0 - mu_product * mu_next), 1 - beta1,
                  beta2, 1 - beta2, 1 - beta2 ** step, float(group["eps"]), 0.0 if decoupled else wd,
                  1 - lr * wd if decoupled and wd != 0 else 1.0, bool(group["maximize"]))



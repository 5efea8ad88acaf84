"""torch.autograd.functional: backward and grad (gradients.py), jacobian, hessian, vjp, jvp, hvp, vhp (jacobians.py)."""
from .gradients import CREATE_GRAPH_CYCLE, backward, grad, zero_grads
from .jacobians import hessian, hvp, jacobian, jvp, vhp, vjp

__all__ = ["backward", "grad", "zero_grads", "CREATE_GRAPH_CYCLE", "jacobian", "hessian", "vjp", "jvp", "hvp", "vhp"]

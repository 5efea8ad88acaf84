"""numgrad.func, as torch.func: grad, grad_and_value, vjp, jvp, linearize, jacrev, jacfwd, hessian, vmap,
functional_call and stack_module_state."""
from ._functional_call import functional_call, stack_module_state
from ._transforms import grad, grad_and_value, hessian, jacfwd, jacrev, jvp, linearize, vjp
from ._vmap import vmap

__all__ = ["functional_call", "grad", "grad_and_value", "hessian", "jacfwd", "jacrev", "jvp", "linearize",
           "stack_module_state", "vjp", "vmap"]

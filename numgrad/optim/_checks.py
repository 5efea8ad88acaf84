"""torch's checks of the options the adaptive optimizers share (lr, eps, betas, weight_decay), in its order."""
from .._core import dtypes
from ..ops import creation
from .optimizer import check_tensor_lr


def check_lr(lr):
    check_tensor_lr(lr)
    if not 0.0 <= lr:
        raise ValueError(f"Invalid learning rate: {lr}")


def check_options(lr, eps, weight_decay, betas=None):
    check_lr(lr)
    if not 0.0 <= eps:
        raise ValueError(f"Invalid epsilon value: {eps}")
    if betas is not None:
        for i in (0, 1):
            if not 0.0 <= betas[i] < 1.0:
                raise ValueError(f"Invalid beta parameter at index {i}: {betas[i]}")
    if not 0.0 <= weight_decay:
        raise ValueError(f"Invalid weight_decay value: {weight_decay}")


def new_step():
    """torch's step count: a float32 0-d tensor."""
    return creation.tensor(0.0, dtype=dtypes.float32)


"""dropout: the mask drawn by numgrad's generator, applied as one multiplication (torch's MulBackward0 graph)."""
import numpy as np

from ..kernels import dispatch
from ..ops.random import generator as _generator
from ..tensor import Tensor


def dropout(input, p=0.5, training=True, inplace=False):
    """Zeroes each element with probability p and scales the rest by 1/(1-p) (torch's MulBackward0 graph);
    the identity outside training."""
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if not training or p == 0.0:
        return input
    keep = _generator().random(input.shape) >= p
    scale = np.asarray(0.0 if p == 1.0 else 1.0 / (1.0 - p), input._data.dtype)
    noise = (keep * scale).astype(input._data.dtype)
    noise = dispatch.place(noise, input.device)  # drawn by numgrad's host generator: one copy to a GPU
    noise = Tensor._make(noise, input._dtype)
    return input.mul_(noise) if inplace else input * noise

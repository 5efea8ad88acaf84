"""nn.functional: the functional form of every layer and loss (torch.nn.functional's names)."""
import warnings

import numpy as np

from ..kernels import dispatch
from ..ops import functional as _core
from ..ops import reduction as _reduction
from ..ops.shape import flatten
from ..ops.random import generator as _generator
from ..tensor import Tensor
from ._activation import *  # noqa: F401,F403  silu, elu, hardtanh, glu, prelu, rrelu, ...
from ._activation import __all__ as _activations
from ._conv import conv2d, max_pool2d
from ._linear import embedding, linear
from ._loss import binary_cross_entropy, binary_cross_entropy_with_logits, cross_entropy, l1_loss, mse_loss, \
    nll_loss
from ._norm import batch_norm, layer_norm

__all__ = ["relu", "gelu", "tanh", "sigmoid", "softmax", "log_softmax", "dropout", "linear", "embedding",
           "batch_norm", "layer_norm", "conv2d", "max_pool2d", "flatten", "mse_loss", "l1_loss", "nll_loss",
           "cross_entropy", "binary_cross_entropy", "binary_cross_entropy_with_logits", "relu_", "identity",
           *_activations]


def relu(input, inplace=False):
    return input.relu_() if inplace else _core.relu(input)


def relu_(input):
    return input.relu_()


def gelu(input, approximate="none"):
    return _core.gelu(input, approximate)


def tanh(input):
    return _core.tanh(input)


def sigmoid(input):
    return _core.sigmoid(input)


def identity(input):
    return input


def _softmax_dim(name, ndim, stacklevel=3):
    warnings.warn(f"Implicit dimension choice for {name} has been deprecated. Change the call to include dim=X as "
                  "an argument.", UserWarning, stacklevel=stacklevel)
    return 0 if ndim in (0, 1, 3) else 1


def softmax(input, dim=None, _stacklevel=3, dtype=None):
    if dim is None:
        dim = _softmax_dim("softmax", input.dim(), _stacklevel)
    return _reduction.softmax(input, dim, dtype)


def log_softmax(input, dim=None, _stacklevel=3, dtype=None):
    if dim is None:
        dim = _softmax_dim("log_softmax", input.dim(), _stacklevel)
    return _reduction.log_softmax(input, dim, dtype)


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

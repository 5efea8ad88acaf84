"""nn.functional: the functional form of every layer and loss (torch.nn.functional's names)."""
import warnings

from ..ops import functional as _core
from ..ops import reduction as _reduction
from ..ops.shape import flatten
from ._attention import scaled_dot_product_attention
from ._conv import conv2d, max_pool2d
from ._dropout import dropout
from ._embedding_bag import embedding_bag
from ._group_norm import group_norm, instance_norm
from ._linear import embedding, linear
from ._loss import binary_cross_entropy, binary_cross_entropy_with_logits, cross_entropy, l1_loss, mse_loss, \
    nll_loss
from ._norm import batch_norm, layer_norm

__all__ = ["relu", "gelu", "tanh", "sigmoid", "softmax", "log_softmax", "dropout", "linear", "embedding",
           "batch_norm", "layer_norm", "conv2d", "max_pool2d", "flatten", "mse_loss", "l1_loss", "nll_loss",
           "cross_entropy", "binary_cross_entropy", "binary_cross_entropy_with_logits", "relu_", "identity",
           "scaled_dot_product_attention", "group_norm", "instance_norm",
           "embedding_bag"]


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

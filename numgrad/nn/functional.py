"""nn.functional: the functional form of every layer and loss (torch.nn.functional's names)."""
import warnings

from .._core import dtypes
from .._core.grad_mode import is_grad_enabled
from ..ops import functional as _core
from ..ops import reduction as _reduction
from ..ops.shape import flatten
from ..ops.reshaping import one_hot
from ._conv import conv1d, conv2d, conv3d, max_pool2d
from ._conv_transpose import conv_transpose1d, conv_transpose2d, conv_transpose3d
from ._fold import channel_shuffle, fold, native_channel_shuffle, pixel_shuffle, pixel_unshuffle, unfold
from ._interpolate import interpolate, upsample, upsample_bilinear, upsample_nearest
from ._attention import scaled_dot_product_attention
from ._bilinear import bilinear
from ._distance import cosine_similarity, pairwise_distance, pdist
from ._dropout import alpha_dropout, dropout, dropout1d, dropout2d, dropout3d, feature_alpha_dropout
from ._local_response_norm import local_response_norm
from ._loss_composite import multilabel_soft_margin_loss, triplet_margin_with_distance_loss
from ._loss_margin import hinge_embedding_loss, multilabel_margin_loss, soft_margin_loss
from ._embedding_bag import embedding_bag
from ._group_norm import group_norm, instance_norm
from ._activation import *  # noqa: F401,F403  silu, elu, hardtanh, glu, prelu, rrelu, ...
from ._activation import __all__ as _activations
from ._linear import embedding, linear
from ._loss import binary_cross_entropy, binary_cross_entropy_with_logits, cross_entropy, l1_loss, mse_loss, \
    nll_loss
from ._loss_extra import cosine_embedding_loss, ctc_loss, gaussian_nll_loss, huber_loss, kl_div, \
    margin_ranking_loss, multi_margin_loss, poisson_nll_loss, smooth_l1_loss, triplet_margin_loss
from ._norm import batch_norm, layer_norm
from ._rms_norm import rms_norm
from ._pad import pad
from ._pool import adaptive_avg_pool1d, adaptive_avg_pool2d, adaptive_avg_pool3d, adaptive_max_pool1d, \
    adaptive_max_pool2d, adaptive_max_pool3d, avg_pool1d, avg_pool2d, avg_pool3d, lp_pool1d, lp_pool2d, lp_pool3d, \
    max_pool1d, max_pool3d, max_unpool1d, max_unpool2d, max_unpool3d
from ._pool import adaptive_max_pool1d_with_indices, adaptive_max_pool2d_with_indices, \
    adaptive_max_pool3d_with_indices, max_pool1d_with_indices, max_pool2d_with_indices, max_pool3d_with_indices

__all__ = ["relu", "gelu", "tanh", "sigmoid", "softmax", "log_softmax", "softmin", "normalize", "dropout", "linear",
           "embedding", "batch_norm", "layer_norm", "rms_norm", "conv1d", "conv2d", "conv3d", "conv_transpose1d",
           "conv_transpose2d", "conv_transpose3d", "max_pool2d", "flatten", "mse_loss", "l1_loss", "nll_loss",
           "cross_entropy", "binary_cross_entropy", "binary_cross_entropy_with_logits", "relu_", "identity", "pad",
           "avg_pool1d", "avg_pool2d", "avg_pool3d", "adaptive_avg_pool1d", "adaptive_avg_pool2d",
           "adaptive_avg_pool3d", "adaptive_max_pool1d", "adaptive_max_pool2d", "adaptive_max_pool3d", "max_pool1d",
           "max_pool3d", "max_unpool1d", "max_unpool2d", "max_unpool3d", "lp_pool1d", "lp_pool2d", "lp_pool3d",
           "interpolate", "upsample", "upsample_nearest", "upsample_bilinear", "unfold", "fold", "pixel_shuffle",
           "pixel_unshuffle", "max_pool1d_with_indices", "max_pool2d_with_indices", "max_pool3d_with_indices",
           "adaptive_max_pool1d_with_indices", "adaptive_max_pool2d_with_indices", "adaptive_max_pool3d_with_indices",
           "one_hot", "smooth_l1_loss", "huber_loss", "kl_div", "poisson_nll_loss", "gaussian_nll_loss",
           "cosine_embedding_loss", "margin_ranking_loss", "triplet_margin_loss", "multi_margin_loss", "ctc_loss",
           "scaled_dot_product_attention", "group_norm", "instance_norm", "embedding_bag", "alpha_dropout",
           "feature_alpha_dropout", "dropout1d", "dropout2d", "dropout3d", "soft_margin_loss", "hinge_embedding_loss",
           "multilabel_margin_loss", "multilabel_soft_margin_loss",
           "triplet_margin_with_distance_loss", "cosine_similarity", "pairwise_distance", "pdist",
           "local_response_norm",
           "bilinear", "channel_shuffle", "native_channel_shuffle", *_activations]


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


def softmin(input, dim=None, _stacklevel=3, dtype=None):
    if dim is None:
        dim = _softmax_dim("softmin", input.dim(), _stacklevel)
    return (-input).softmax(dim) if dtype is None else (-input).softmax(dim, dtype=dtype)


def normalize(input, p=2.0, dim=1, eps=1e-12, out=None):
    """input over its p-norm along dim, the norm held at eps or above (torch's composite: NormBackward1,
    ClampMinBackward0, ExpandBackward0, DivBackward0)."""
    if out is None:
        return input / input.norm(p, dim, keepdim=True).clamp_min(eps).expand_as(input)
    # torch's out= path: torch.div(input, denom, out=out), which refuses autograd and casts into out's dtype
    if is_grad_enabled() and (input.requires_grad or out.requires_grad):
        raise RuntimeError("div(): functions with out=... arguments don't support automatic differentiation, but one "
                           "of the arguments requires grad.")
    result = input / input.norm(p, dim, keepdim=True).clamp_min_(eps).expand_as(input)
    if not dtypes.can_cast(result.dtype, out.dtype):
        raise RuntimeError(f"result type {result.dtype.word} can't be cast to the desired output type {out.dtype.word}")
    return out.copy_(result)

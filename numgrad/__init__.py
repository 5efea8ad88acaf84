"""numgrad: a PyTorch-compatible reverse-mode autograd with Numba kernels. The public API, re-exported."""
import importlib

from . import accelerator, amp, autograd, backends, cuda, distributed, func, nn, optim, utils
from .amp import autocast, get_autocast_dtype, is_autocast_enabled
from .ops import functional, random  # torch.functional, torch.random
from ._core import dtypes
from ._core.device import device
from ._core.dtypes import (bfloat16, bool_ as bool, double, float, float16, float32, float64, get_default_dtype,
                           half, int, int8, int16, int32, int64, long, promote_types, set_default_dtype, short,
                           uint8)
from ._core.printing import get_printoptions, set_printoptions
from ._core.type_info import finfo, iinfo
from ._core.shapes import Size
from ._core.warn import is_warn_always_enabled, set_warn_always
from .backends._flags import (are_deterministic_algorithms_enabled, get_deterministic_debug_mode,
                              get_float32_matmul_precision, is_deterministic_algorithms_warn_only_enabled,
                              set_deterministic_debug_mode, set_float32_matmul_precision,
                              use_deterministic_algorithms)
from .compile import compile, explain
from .autograd.anomaly_mode import is_anomaly_check_nan_enabled, is_anomaly_enabled, set_detect_anomaly
from .autograd import (enable_grad, inference_mode, is_grad_enabled, is_inference_mode_enabled, no_grad,
                       set_grad_enabled)
from .lazy import fusion, is_fusion_enabled, set_fusion
from .ops.creation import (arange, as_tensor, empty, empty_like, eye, from_numpy, full, full_like, linspace, ones,
                           ones_like, tensor, zeros, zeros_like)
from .ops.functional import *  # noqa: F401,F403  the elementwise and reduction functions
from .ops.functional import abs, all, any, max, min, pow, round, sum  # shadowing builtins, as torch does
from .ops.elementwise import result_type
from .ops.indexing import *  # noqa: F401,F403
from .ops.pointwise import *  # noqa: F401,F403  copysign, lerp, xlogy, nan_to_num, bitwise ops, ...
from .ops.pointwise_more import *  # noqa: F401,F403  threshold, addcmul, addcdiv, heaviside, float_power, gcd, lcm
from .ops.join import *  # noqa: F401,F403
from .ops.linalg import *  # noqa: F401,F403
from .ops.generator import Generator
from .ops.legacy import *  # noqa: F401,F403  FloatTensor, LongTensor, ...
from .ops.random import (default_generator, get_rng_state, initial_seed, manual_seed, multinomial, normal, rand,
                         rand_like, randint, randint_like, randn, randn_like, randperm, seed, set_rng_state)
from .ops.einsum import *  # noqa: F401,F403
from .ops.reshaping import *  # noqa: F401,F403
from .ops.scan import *  # noqa: F401,F403
from .ops.sorting import *  # noqa: F401,F403
from .ops.scatter import *  # noqa: F401,F403
from .ops.statistics import *  # noqa: F401,F403
from .ops.building import *  # noqa: F401,F403
from .ops.index_reduce import index_reduce
from .ops.distance import cdist
from .ops.shape import clone, expand, flatten, permute, reshape, squeeze, transpose, unsqueeze
from .nn._activation import celu_, rrelu, rrelu_, selu_, threshold_
from .nn._bilinear import bilinear
from .nn._distance import cosine_similarity, pairwise_distance, pdist
from .nn._dropout import NAMESPACE_FORMS as _DROPOUTS
from .nn._fold import channel_shuffle, native_channel_shuffle
from .serialization import load, save
from .tensor import Tensor
from .utils import dlpack
from .utils.dlpack import from_dlpack, to_dlpack
from . import profiler, viz  # after the tensor layer they draw and time
from .kernels.cpu import host_memory as _host_memory, pool as _pool
from .kernels.dispatch import get_num_threads, set_num_threads
from .nn._pad import constant_pad_nd  # torch's top-level names of these nn ops
from .nn.functional import adaptive_avg_pool1d, avg_pool1d, conv1d, conv2d, conv3d, conv_transpose1d, \
    conv_transpose2d, conv_transpose3d, max_pool1d, max_pool2d, max_pool3d, pixel_shuffle, pixel_unshuffle

__version__ = "0.1.0"

# torch's namespace forms of the dropouts: (input, p, train), refusing a bad p in C++'s words
dropout, dropout_, feature_dropout, feature_dropout_, alpha_dropout, alpha_dropout_, feature_alpha_dropout, \
    feature_alpha_dropout_ = (_DROPOUTS[name] for name in (
        "dropout", "dropout_", "feature_dropout", "feature_dropout_", "alpha_dropout", "alpha_dropout_",
        "feature_alpha_dropout", "feature_alpha_dropout_"))

_host_memory.tune()  # freed arrays stay in the heap for the next step (NUMGRAD_MALLOC_TUNING=0: malloc as it is)


# ---- memory: large kernel results (1 MiB and more) reuse buffers from a pool (kernels/cpu/pool.py) ----
def empty_cache():
    """Releases every pooled buffer that no tensor, view or exported array (`.numpy()`) uses any more,
    giving its memory back to the system. The pool keeps at most NUMGRAD_POOL_MAX_BYTES (default 1 GiB;
    0 turns it off), and the free memory malloc keeps for the next step (kernels/cpu/host_memory.py)."""
    _pool.empty_cache()
    _host_memory.release()


def memory_reserved():
    """Bytes of host memory the buffer pool holds, its buffers in use and its free ones."""
    return _pool.memory_reserved()


def memory_allocated():
    """Bytes of the pool's buffers in use: each buffer the pool handed out for a kernel result (of at
    least 1 MiB) counts in full while any tensor, view of it or array exported from it (`.numpy()`) is
    alive. Smaller arrays, and those made when the pool is full or off, are plain NumPy memory and are
    not counted."""
    return _pool.memory_allocated()


def memory_stats():
    """The buffer pool's state, a dict: `reserved` and `allocated` bytes (as memory_reserved and
    memory_allocated), `cap` (the most it may reserve, from NUMGRAD_POOL_MAX_BYTES), `hits` (results
    given a free pooled buffer), `misses` (results of 1 MiB or more that needed new memory), `releases`
    (buffers given back to the system: by empty_cache, or to make room under the cap)."""
    return _pool.memory_stats()


def __getattr__(name):
    """numgrad.testing is loaded on first use (PEP 562): it imports numgrad itself, the library it hands
    to the functions it compares with torch."""
    if name == "testing":
        return importlib.import_module(".testing", __name__)
    raise AttributeError(f"module 'numgrad' has no attribute '{name}'")


def __dir__():
    return sorted([*globals(), "testing"])

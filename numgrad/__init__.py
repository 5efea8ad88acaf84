"""numgrad: a PyTorch-compatible reverse-mode autograd with Numba kernels. The public API, re-exported."""
from . import autograd, dtypes, testing
from ._printing import get_printoptions, set_printoptions
from .autograd import enable_grad, inference_mode, is_grad_enabled, is_inference_mode_enabled, no_grad, \
    set_grad_enabled
from .creation import arange, as_tensor, empty, empty_like, eye, from_numpy, full, full_like, linspace, ones, \
    ones_like, tensor, zeros, zeros_like
from .dtypes import bool_ as bool, double, float, float32, float64, get_default_dtype, int64, long, \
    set_default_dtype
from .lazy import fusion, is_fusion_enabled, set_fusion
from .functional import *  # noqa: F401,F403  the elementwise and reduction functions
from .functional import abs, all, any, max, min, pow, round, sum  # shadowing builtins on purpose, as torch does
from .ops.indexing import *  # noqa: F401,F403
from .ops.join import *  # noqa: F401,F403
from .ops.linalg import *  # noqa: F401,F403
from .ops.shape import clone, expand, flatten, permute, reshape, squeeze, transpose, unsqueeze
from .random import manual_seed, normal, rand, rand_like, randint, randint_like, randn, randn_like, randperm, seed
from .tensor import Size, Tensor, device
from . import tensor_methods  # noqa: F401  binds methods and operators onto Tensor
from . import cuda, nn, optim  # noqa: E402  after the Tensor methods they build on (cuda imports no numba.cuda)
from .serialization import load, save  # noqa: E402
from .dlpack import from_dlpack, to_dlpack  # noqa: E402  also Tensor.__dlpack__, numgrad.utils.dlpack

__version__ = "0.1.0"

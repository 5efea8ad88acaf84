"""autocast: a region (or decorated function) whose products and convolutions run in bfloat16 (or float16) and
losses in float32, by torch's CPU lists (ops/autocast.py applies them)."""
import functools
import warnings

from .._core import dtypes
from .._core.state import STATE
from ..kernels.cuda.runtime import is_available as cuda_available

_DEVICE_TYPES = ("cpu", "cuda", "mps", "xpu", "hpu", "mtia", "maia", "xla", "meta")
_LOWER = (dtypes.bfloat16, dtypes.float16)


def is_autocast_available(device_type):
    return device_type in ("cpu", "cuda")


def get_autocast_dtype(device_type):
    """The dtype autocast on `device_type` casts to: the one given to the enclosing autocast, else its default."""
    if device_type not in _DEVICE_TYPES:
        raise RuntimeError(f"Invalid device string: '{device_type}'")
    if device_type == "cpu" and STATE.autocast is not None:
        return STATE.autocast
    return dtypes.bfloat16 if device_type == "cpu" else dtypes.float16


def is_autocast_enabled(device_type="cuda"):
    """Whether autocast is on for `device_type` (torch's default asks about CUDA's)."""
    return device_type == "cpu" and STATE.autocast is not None


class autocast:
    """torch.autocast(device_type, dtype=None, enabled=True, cache_enabled=None), a context manager or decorator.
    Only CPU autocast exists here: on 'cuda' without a GPU it is disabled with torch's warning."""

    __module__ = "torch.amp.autocast_mode"

    def __init__(self, device_type, dtype=None, enabled=True, cache_enabled=None):
        if not isinstance(device_type, str):
            raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
        self.device = device_type
        self.fast_dtype = get_autocast_dtype(device_type) if dtype is None else dtype
        self._enabled = enabled
        if device_type not in ("cpu", "cuda"):
            raise RuntimeError(f"User specified an unsupported autocast device_type '{device_type}'")
        if device_type == "cuda" and enabled and not cuda_available():
            warnings.warn("CUDA is not available or torch_xla is imported. Disabling autocast.", stacklevel=2)
            self._enabled = False
        elif enabled and self.fast_dtype not in _LOWER:
            name = device_type.upper()
            warnings.warn(f"In {name} autocast, but the target dtype is not supported. Disabling autocast.\n{name} "
                          f"Autocast only supports dtypes of {', '.join(map(str, _LOWER))} currently.", stacklevel=2)
            self._enabled = False

    def __enter__(self):
        self.prev = STATE.autocast
        STATE.autocast = self.fast_dtype if self._enabled else None
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        STATE.autocast = self.prev
        return False

    def __call__(self, func):
        if not callable(func):
            raise TypeError(f"autocast()(func) requires a callable, but got {type(func).__name__}. Did you mean to use "
                            "autocast as a context manager? For example:\n    with torch.autocast(device_type=...):\n"
                            "        output = model(input)")

        @functools.wraps(func)
        def run(*args, **kwargs):
            with self:
                return func(*args, **kwargs)
        return run

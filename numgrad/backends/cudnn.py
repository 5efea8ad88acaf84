"""torch.backends.cudnn: enabled, benchmark, deterministic, allow_tf32 and benchmark_limit as settable flags,
flags() to set them for a block. numgrad uses no cuDNN (its convolutions are its own kernels), so
is_available() is False and version() None, as in torch's CPU build."""
import contextlib
import sys
import types

from . import _flags

_BOOLS = {"enabled": ("cudnn_enabled", "set_enabled_cudnn"), "benchmark": ("cudnn_benchmark", "set_benchmark_cudnn"),
          "deterministic": ("cudnn_deterministic", "set_deterministic_cudnn"),
          "allow_tf32": ("cudnn_allow_tf32", "set_allow_tf32_cublas")}  # (torch names the cuBLAS setter here)


def is_available():
    return False


def version():
    return None


def is_acceptable(tensor):
    return False


@contextlib.contextmanager
def flags(enabled=False, benchmark=False, benchmark_limit=10, deterministic=False, allow_tf32=True):
    """Sets the flags for the block and restores the previous ones after it."""
    saved = dict(_flags.FLAGS)
    module = sys.modules[__name__]
    module.enabled, module.benchmark, module.deterministic, module.allow_tf32 = (enabled, benchmark, deterministic,
                                                                                 allow_tf32)
    _flags.FLAGS["cudnn_benchmark_limit"] = benchmark_limit
    try:
        yield
    finally:
        for key in ("cudnn_enabled", "cudnn_benchmark", "cudnn_deterministic", "cudnn_allow_tf32",
                    "cudnn_benchmark_limit"):
            _flags.FLAGS[key] = saved[key]


class _CudnnModule(types.ModuleType):
    """The module's class: its flags are properties over the process-wide settings (as torch's CudnnModule)."""

    def __getattr__(self, name):
        if name in _BOOLS:
            return _flags.FLAGS[_BOOLS[name][0]]
        if name == "benchmark_limit":
            return _flags.FLAGS["cudnn_benchmark_limit"]
        raise AttributeError(f"module '{__name__}' has no attribute '{name}'")

    def __setattr__(self, name, value):
        if name in _BOOLS:
            _flags.set_bool(_BOOLS[name][0], value, _BOOLS[name][1])
        elif name == "benchmark_limit":
            _flags.FLAGS["cudnn_benchmark_limit"] = value
        else:
            super().__setattr__(name, value)


sys.modules[__name__].__class__ = _CudnnModule

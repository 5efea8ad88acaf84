"""numgrad.accelerator: torch.accelerator's device-agnostic entry points. numgrad's one accelerator is CUDA
(through Numba); without a GPU there is none, and the calls that need one raise torch's error."""
from . import cuda
from ._core.device import device as _device

__all__ = ["current_accelerator", "current_device_idx", "current_device_index", "device_count", "empty_cache",
           "is_available", "memory_allocated", "memory_reserved", "memory_stats", "set_device_idx",
           "set_device_index", "synchronize"]

_NONE = "Cannot access accelerator device when none is available."


def is_available():
    return cuda.is_available()


def device_count():
    return cuda.device_count()


def current_accelerator(check_available=False):
    """device('cuda') when numgrad can use a GPU, else None (also with check_available, as torch)."""
    return _device("cuda") if cuda.is_available() else None


def _require():
    if not cuda.is_available():
        raise RuntimeError(_NONE)


def current_device_index():
    _require()
    return cuda.current_device()


def set_device_index(device, /):
    """numgrad uses one GPU: index 0 (or a device of it)."""
    _require()
    index = device.index if isinstance(device, _device) else device
    if index not in (None, 0):
        raise RuntimeError(f"numgrad uses one GPU: device index {index} is not available")


def synchronize(device=None, /):
    _require()
    cuda.synchronize(device)


def empty_cache():
    _require()
    cuda.empty_cache()


def memory_stats(device_index=None, /):
    _require()
    return cuda.memory_stats(device_index)


def memory_allocated(device_index=None, /):
    _require()
    return cuda.memory_allocated(device_index)


def memory_reserved(device_index=None, /):
    _require()
    return cuda.memory_reserved(device_index)


current_device_idx = current_device_index  # torch's older names
set_device_idx = set_device_index

"""numgrad.cuda: torch.cuda's entry points. Numba's CUDA target is imported on first use, so importing
numgrad needs no CUDA installation."""
from ..backend.cuda.runtime import device_count, is_available, lazy_init as _lazy_init, numba_cuda as _numba_cuda
from ..utils import dlpack

__all__ = ["as_tensor", "current_device", "device_count", "get_device_name", "is_available", "synchronize"]


def current_device():
    _lazy_init()
    return 0


def synchronize(device=None):
    """Waits for every kernel launched so far to finish (for timing)."""
    dlpack.synchronize()


def get_device_name(device=None):
    _lazy_init()
    from ..backend.cuda import kernels as target
    if target.SIMULATOR:
        return "Numba CUDA simulator"
    name = _numba_cuda().get_current_device().name
    return name.decode() if isinstance(name, bytes) else name


def as_tensor(obj):
    """A CUDA tensor sharing the memory of any object with `__cuda_array_interface__` (CuPy, a torch
    CUDA tensor, a Numba device array), without copying."""
    return dlpack.cuda_tensor(obj)

"""numgrad.cuda: torch.cuda's entry points. Numba's CUDA target is imported on first use, so importing
numgrad needs no CUDA installation."""
from ..kernels.cuda import runtime as _runtime
from ..kernels.cuda.runtime import device_count, is_available, lazy_init as _lazy_init, numba_cuda as _numba_cuda
from ..kernels.dispatch.lazy_cuda import cuda as _cuda_target
from ..utils import dlpack
from . import amp

__all__ = ["as_tensor", "current_device", "device_count", "empty_cache", "get_device_name", "is_available",
           "manual_seed", "manual_seed_all", "memory_allocated", "memory_reserved", "memory_stats", "synchronize"]


def current_device():
    _lazy_init()
    return 0


def manual_seed(seed):
    """Accepted for torch's scripts: numgrad draws a GPU tensor's random values on the host, from the
    generator numgrad.manual_seed seeds, so there is no separate GPU stream to seed."""
    int(seed)


def manual_seed_all(seed):
    """As manual_seed: numgrad's random values for every device come from the host's default generator."""
    int(seed)


def synchronize(device=None):
    """Waits for every kernel launched so far to finish (for timing)."""
    dlpack.synchronize()


def get_device_name(device=None):
    _lazy_init()
    if _cuda_target().kernels.SIMULATOR:
        return "Numba CUDA simulator"
    name = _numba_cuda().get_current_device().name
    return name.decode() if isinstance(name, bytes) else name


def as_tensor(obj):
    """A CUDA tensor sharing the memory of any object with `__cuda_array_interface__` (CuPy, a torch
    CUDA tensor, a Numba device array), without copying."""
    return dlpack.cuda_tensor(obj)


# ---- memory: numgrad has no caching allocator on the GPU; these answer as torch.cuda's do -------------
def empty_cache():
    """Gives GPU memory that no array uses back to the driver: numgrad caches none, so this runs the
    frees Numba has deferred. Before any CUDA work, and without a GPU, it does nothing and returns None,
    as torch's CPU build."""
    _runtime.empty_cache()


def memory_stats(device=None):
    """torch.cuda.memory_stats's current-bytes entries, `allocated_bytes.all.current` and
    `reserved_bytes.all.current`; an empty dict before numgrad made a device array, and without a GPU,
    as torch's CPU build. `device` is accepted for torch's signature (numgrad uses one GPU)."""
    return _runtime.memory_stats()


def memory_allocated(device=None):
    """Bytes of GPU memory held by numgrad's live device arrays (0 without a GPU, as torch's CPU build)."""
    return memory_stats(device).get("allocated_bytes.all.current", 0)


def memory_reserved(device=None):
    """memory_allocated plus the bytes Numba has yet to free (empty_cache frees them); numgrad keeps no
    cache. 0 without a GPU, as torch's CPU build."""
    return memory_stats(device).get("reserved_bytes.all.current", 0)

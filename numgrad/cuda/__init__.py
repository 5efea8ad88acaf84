"""numgrad.cuda: torch.cuda's entry points. Numba's CUDA target is imported on first use, so importing
numgrad needs no CUDA installation."""
import functools


@functools.lru_cache(maxsize=None)
def _numba_cuda():
    """numba.cuda, or None when it cannot be imported."""
    try:
        from numba import cuda
    except Exception:  # numba-cuda missing or broken: no CUDA, as torch's CPU build
        return None
    return cuda


def is_available():
    cuda = _numba_cuda()
    if cuda is None:
        return False
    try:
        return bool(cuda.is_available())
    except Exception:
        return False


def device_count():
    return len(_numba_cuda().gpus) if is_available() else 0


def current_device():
    _lazy_init()
    return 0


def _lazy_init():
    """Raises the error of torch's CPU build (the test oracle) when there is no GPU to put a tensor on:
    numba-cuda missing, or no GPU and driver found."""
    if not is_available():
        raise AssertionError("Torch not compiled with CUDA enabled")


def synchronize(device=None):
    """Waits for every kernel launched so far to finish (for timing)."""
    _lazy_init()
    _numba_cuda().synchronize()


def get_device_name(device=None):
    _lazy_init()
    from ..kernels import cuda as target
    if target.SIMULATOR:
        return "Numba CUDA simulator"
    name = _numba_cuda().get_current_device().name
    return name.decode() if isinstance(name, bytes) else name


def as_tensor(obj):
    """A CUDA tensor sharing the memory of any object with `__cuda_array_interface__` (CuPy, a torch
    CUDA tensor, a Numba device array), without copying."""
    _lazy_init()
    from .interop import tensor_from_interface
    return tensor_from_interface(obj)

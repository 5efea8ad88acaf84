"""Whether a GPU is there: numba.cuda is imported on first use, so importing numgrad needs no CUDA."""
import functools


@functools.lru_cache(maxsize=None)
def numba_cuda():
    """numba.cuda, or None when it cannot be imported."""
    try:
        from numba import cuda
    except Exception:  # numba-cuda missing or broken: no CUDA, as torch's CPU build
        return None
    return cuda


def is_available():
    cuda = numba_cuda()
    if cuda is None:
        return False
    try:
        return bool(cuda.is_available())
    except Exception:
        return False


def device_count():
    return len(numba_cuda().gpus) if is_available() else 0


def lazy_init():
    """Raises the error of torch's CPU build (the test oracle) when there is no GPU to put a tensor on:
    numba-cuda missing, or no GPU and driver found."""
    if not is_available():
        raise AssertionError("Torch not compiled with CUDA enabled")

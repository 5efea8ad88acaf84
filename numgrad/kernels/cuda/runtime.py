"""Whether a GPU is there (numba.cuda is imported on first use, so importing numgrad needs no CUDA), and
the bytes of GPU memory numgrad's device arrays hold."""
import collections
import functools
import threading
import weakref


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


# ---- memory: numgrad has no caching allocator on the GPU --------------------------------------------
# Numba allocates each device array and frees it once its last reference goes (some frees deferred in
# the context's queue). numgrad counts the bytes of the device arrays it makes (array.empty, from_host,
# the reductions' results): added under the lock when made, the freed sizes queued without it (the
# finalizer may run in any thread, even one holding the lock) and subtracted when next read.
_memory_lock = threading.Lock()
_memory = {"made": 0, "allocated": 0}
_freed = collections.deque()


def track(buf):
    """Counts Numba device array `buf` in memory_allocated until it is freed; returns it."""
    nbytes = int(buf.nbytes)
    with _memory_lock:
        _memory["made"] += 1
        _memory["allocated"] += nbytes
    weakref.finalize(buf, _freed.append, nbytes)
    return buf


def _allocated():
    with _memory_lock:
        while _freed:
            _memory["allocated"] -= _freed.popleft()
        return _memory["made"], _memory["allocated"]


def _pending_frees():
    """Numba's deferred deallocations in the current context (None for the simulator)."""
    return getattr(numba_cuda().current_context(), "deallocations", None)


def memory_stats():
    """torch.cuda.memory_stats's current-bytes entries: {} before numgrad made a device array (as torch's
    CPU build, which never has one); then `allocated_bytes.all.current`, the bytes of numgrad's live
    device arrays, and `reserved_bytes.all.current`, those plus the bytes Numba has yet to free."""
    made, allocated = _allocated()
    if not made:
        return {}
    pending = _pending_frees()
    return {"allocated_bytes.all.current": allocated,
            "reserved_bytes.all.current": allocated + int(getattr(pending, "_size", 0) or 0)}


def empty_cache():
    """Runs Numba's deferred frees, so that memory no array uses goes back to the driver. Nothing to do
    (and no synchronisation) before numgrad made a device array, or without a GPU."""
    made, _ = _allocated()
    if not made:
        return
    pending = _pending_frees()
    if pending is not None and len(pending):
        pending.clear()

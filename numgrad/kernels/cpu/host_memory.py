"""glibc malloc's thresholds fixed at their adaptive ceiling, so that freed arrays stay in the heap for the
next step instead of going back to the system and faulting in again.

Why: glibc serves a request of `M_MMAP_THRESHOLD` bytes or more (128 KiB at start) with a fresh mmap, and
gives the top of its heap back once more than `M_TRIM_THRESHOLD` is free there. It raises both as it sees
large frees, but only to the sizes it has seen. A training step allocates and frees arrays of many sizes
(im2col buffers, matmul results, transposed copies), so every step kept meeting fresh pages: the eager
convnet step took about 1 050 page faults, the GPT block step 720, each a zeroed 4 KiB page. Fixed at
glibc's own ceiling for the adaptive values (32 MiB and twice that) they take none, and those steps ran
16-40% faster. Arrays above 32 MiB are still mmapped and returned at once (the buffer pool, pool.py, keeps
the kernel results among them).

The price is the one of any caching allocator: freed memory below the top of the heap stays with the
process until `release()` (which `numgrad.empty_cache()` calls) trims it. `NUMGRAD_MALLOC_TUNING=0` leaves
malloc as it is; so do MALLOC_MMAP_THRESHOLD_ or MALLOC_TRIM_THRESHOLD_ set in the environment (glibc's
own settings win), and any C library other than glibc."""
import ctypes
import ctypes.util
import os
import sys

ENV = "NUMGRAD_MALLOC_TUNING"
M_TRIM_THRESHOLD, M_MMAP_THRESHOLD = -1, -3  # glibc's malloc.h
MMAP_THRESHOLD = 32 << 20  # glibc's DEFAULT_MMAP_THRESHOLD_MAX on 64-bit: the most it adapts to by itself
TRIM_THRESHOLD = 2 * MMAP_THRESHOLD  # what glibc pairs with it when it adapts

_state = {"libc": None}  # glibc's handle once its thresholds are fixed


def _glibc():
    """glibc's handle, or None on another C library or system."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        libc.gnu_get_libc_version  # musl and the others lack it
        libc.mallopt, libc.malloc_trim
    except (OSError, AttributeError):
        return None
    return libc


def tune():
    """Fixes the thresholds (once per process) unless the environment says otherwise; True when it did."""
    if _state["libc"] is not None:
        return True
    value = os.environ.get(ENV, "").strip()
    if value not in ("", "0", "1"):
        raise ValueError(f"{ENV} must be 0 (leave malloc as it is) or 1, got {value!r}")
    if value == "0" or "MALLOC_MMAP_THRESHOLD_" in os.environ or "MALLOC_TRIM_THRESHOLD_" in os.environ:
        return False
    libc = _glibc()
    # mmap's first: setting either one turns off glibc's adapting of both
    if libc is not None and libc.mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD) and\
            libc.mallopt(M_TRIM_THRESHOLD, TRIM_THRESHOLD):
        _state["libc"] = libc
    return tuned()


def tuned():
    """Whether this process runs with the fixed thresholds."""
    return _state["libc"] is not None


def release():
    """Gives the heap's free memory back to the system (glibc's malloc_trim), as numgrad.empty_cache() does
    for the buffer pool; nothing when malloc was not tuned."""
    if _state["libc"] is not None:
        _state["libc"].malloc_trim(0)

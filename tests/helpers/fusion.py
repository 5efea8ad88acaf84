"""Tests of the fused kernels with small tensors: the small-tensor path (lazy.SMALL_MAX) turned off."""
import contextlib

from numgrad import lazy


@contextlib.contextmanager
def fused_at_every_size():
    """Results of every size go through fusion (pending expressions, fused regions), as large ones do by
    default; small ones otherwise compute at once (lazy.compute_small), which would leave a test of the fused
    kernels with small tensors testing nothing fused."""
    previous, lazy.SMALL_MAX = lazy.SMALL_MAX, 0
    try:
        yield
    finally:
        lazy.SMALL_MAX = previous

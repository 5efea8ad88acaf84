"""CPU optimizer kernels: dispatch/optim.py's bodies under the CPU loop header, split over threads."""
import functools

from .. import loader
from . import threads
from .kernels import HEADER, LOOP_HEADER, UNSIGNED_RANGE

# An update is bound by memory, not arithmetic: split over two threads it ran no faster up to 2^19 elements
# (Adam 225 vs 228 us), and inside a step, right after the GEMMs while BLAS's threads still spin, slower (the
# MLP steps' Adam 0.70-0.95 -> 0.52 ms, SGD-momentum 0.61 -> 0.35 ms for 401k parameters). From 2^21 on the
# second thread pays (Adam on 2^23: 10.6 -> 5.8 ms).
PARALLEL_MIN = 1 << 21


def kernel_source(body, dtype_name):
    """kernel(start, stop, arrays..., scalars...) updating elements [start, stop); `body` is one of
    dispatch/optim.py's (params, loop) pairs."""
    params, loop = body
    # an unsigned index, never wrapped by Numba: a signed one from range(start, stop) would be, and that stops
    # LLVM vectorising the loop (Adam's ran 8x slower that way)
    loop = loop.replace("for i in range(start, stop):", UNSIGNED_RANGE)
    return f"{HEADER}\nT = np.{dtype_name}\n\n\n{LOOP_HEADER}\ndef kernel(start, stop, {params}):{loop}"


@functools.lru_cache(maxsize=None)
def kernel(body, name, dtype_name):
    return loader.load_module(f"optim_{name}_{dtype_name}", kernel_source(body, dtype_name)).kernel


_kernels = {}  # (name, dtype) -> kernel: found without the lru_cache's hash of the body's source per parameter


def run(body, name, p, *args):
    """Runs one optimizer's body over the host arrays (`p`, then its gradient and state), then scalars (the
    arrays come first, as kernels/dispatch/optim.py passes them)."""
    found = _kernels.get((name, p.dtype))
    if found is None:
        found = _kernels[(name, p.dtype)] = kernel(body, name, p.dtype.name)
    n = p.size
    if n < PARALLEL_MIN:
        found(0, n, p, *args)
    else:
        threads.over(found, n, p, *args)

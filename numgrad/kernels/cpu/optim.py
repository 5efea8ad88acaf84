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


# ---- one call for many parameters (torch's foreach/fused steps) -------------------------------------------
# A kernel over a tuple of CHUNK arrays per operand: one Numba call updates CHUNK parameters (a call costs ~1 us
# plus ~50 ns per array, against ~3 us per parameter one at a time). The tuple's length is part of the kernel's
# type, so every group is cut into chunks of CHUNK (padded with empty arrays): one signature per body and dtype.
# Its first compile grows with CHUNK (Adam's, Numba warm: 4 -> 0.8 s, 8 -> 1.2 s, against 0.2-0.3 s for the
# one-parameter kernel): 4 covers a two-layer MLP's parameters in one call.
CHUNK = 4


def many_kernel_source(body, dtype_name):
    """kernel(tuples of CHUNK arrays..., scalars...): kernel_source's one-parameter kernel called on each array of
    the tuples in turn. (The body inlined in a loop over the tuples ran 1.4-2x slower on an MLP's weights: the
    loop over one parameter's elements vectorises only as a function of its own.)"""
    params = body[0].split(", ")
    n = next(i for i, a in enumerate(params) if a.startswith("neg_"))
    arrays, scalars = params[:n], ", ".join(params[n:])
    one = kernel_source(body, dtype_name).replace("def kernel(", "def one(")
    each = ", ".join(f"{a}_all[k]" for a in arrays)
    return (f"{one}\n\n{LOOP_HEADER}\ndef kernel({', '.join(a + '_all' for a in arrays)}, {scalars}):\n"
            f"    for k in range({CHUNK}):\n        one(0, {arrays[0]}_all[k].size, {each}, {scalars})\n")


@functools.lru_cache(maxsize=None)
def many_kernel(body, name, dtype_name):
    return loader.load_module(f"optim_many_{name}_{dtype_name}", many_kernel_source(body, dtype_name)).kernel


_many_kernels = {}  # (name, dtype) -> kernel


def run_many(body, name, dtype, operands, scalars):
    """Runs one optimizer's body over many host parameters: `operands` holds, for each array of the body (the
    parameters, gradients, then each state), a tuple of flat C-contiguous arrays of `dtype`, all of one length
    and a multiple of CHUNK long (run_many's callers pad with empty arrays)."""
    found = _many_kernels.get((name, dtype))
    if found is None:
        found = _many_kernels[(name, dtype)] = many_kernel(body, name, dtype.name)
    n = len(operands[0])
    if n == CHUNK:
        found(*operands, *scalars)
        return
    for start in range(0, n, CHUNK):
        found(*[a[start:start + CHUNK] for a in operands], *scalars)

"""CPU target: a range loop header around generated bodies; large ranges are split over threads."""
import functools
import math
import os

import numpy as np
from numba import njit

from ...spec.table import REDUCTIONS
from .. import loader, lower
from ..arrays import dtype_name, length_error
from . import pool, threads
from .threads import PARALLEL_MIN

# error_model="numpy": x / 0 gives inf or nan as in torch, not ZeroDivisionError; nogil: the threads of
# threads.py run one kernel over parts of a range at once. no_cfunc_wrapper: kernels are called from Python
# and from each other, never as C function pointers, so the second wrapper Numba makes by default is only
# code to compile; _nrt=False: a kernel allocates nothing and reads arrays its caller keeps alive, so its
# reference counting is dead code. Together they cut the LLVM IR of the compiled MLP Adam step's six kernels
# by 28% and the instructions spent compiling them by 22% (callgrind).
LOOP_HEADER = "@njit(cache=True, nogil=True, error_model='numpy', no_cfunc_wrapper=True, _nrt=False)"
# the header of a kernel that allocates (np.empty): that needs Numba's runtime
ALLOCATING_LOOP_HEADER = "@njit(cache=True, nogil=True, error_model='numpy', no_cfunc_wrapper=True)"
_HELPERS = os.path.join(os.path.dirname(__file__), "scalar_math.py")
_RULES = os.path.join(os.path.dirname(os.path.dirname(__file__)), "scalar_rules.py")
_INTRINSICS = os.path.join(os.path.dirname(__file__), "intrinsics.py")
# the helpers' digests: Numba's cache of a generated module checks only that module's file, so a change in
# what it imports must change its source
HEADER = (f"# helpers {loader.file_digest(_HELPERS)} {loader.file_digest(_RULES)} {loader.file_digest(_INTRINSICS)}\n"
          "import math\nimport numpy as np\nfrom numba import njit\nfrom numgrad.kernels.cpu.scalar_math import *\n")


# Numba wraps a signed index it cannot prove non-negative (an index from range(start, stop)), which stops
# LLVM vectorising the loop; an unsigned index is never wrapped. Unsigned rather than slices from `start`
# indexed from 0: the same vector loop, and the kernel's first compile 0.10 -> 0.07 s (relu's).
UNSIGNED_RANGE = "for i in range(np.uint64(start), np.uint64(stop)):"
TARGET = lower.Target("cpu", HEADER, LOOP_HEADER, ("start", "stop"), UNSIGNED_RANGE, view=None, ref="{n}")


def elementwise_kernel(name, inputs, is_array, outputs, dtype_name):
    """The kernel(start, stop, *inputs, *outputs) computing `outputs` ((name, expr) pairs) from `inputs`."""
    return lower.elementwise_kernel(name, inputs, is_array, outputs, dtype_name, TARGET)


def run_elementwise(name, inputs, outputs, args, out_dtypes, n, dtype_name, outs=None):
    """Runs one generated loop over `n` elements; `args` are flat contiguous arrays or scalars.
    `name` must identify `inputs` and `outputs` (it keys the kernel cache together with the rest).
    `outs` are flat arrays to write into (an output may be one of the inputs); by default fresh ones."""
    is_array = tuple([a.__class__ is np.ndarray for a in args])
    for a in args:  # the loop indexes every array by one range: check before it reads past an end
        if a.__class__ is np.ndarray and a.size != n:
            raise length_error(name, n, a)
    kernel = elementwise_kernel(name, inputs, is_array, outputs, dtype_name)
    if outs is None:
        outs = [pool.empty(n, d) for d in out_dtypes]
    else:
        for o in outs:
            if o.size != n:
                raise length_error(name, n, o)
    if n:
        threads.over(kernel, n, *args, *outs, parallel=n >= PARALLEL_MIN)
    return outs


def bind_elementwise(name, inputs, outputs, args, refresh, n, dtype_name, outs):
    """A replay of run_elementwise into `outs` with `args` bound once (numgrad.compile): refresh lists
    (argument index, scalar type, source array) of the scalars read again at each replay. None for a range
    split over the threads (run_elementwise itself replays it)."""
    if n >= PARALLEL_MIN and threads.count() > 1:
        return None
    kernel = elementwise_kernel(name, inputs, tuple([a.__class__ is np.ndarray for a in args]), outputs, dtype_name)
    return bound_replay(kernel, [0, n, *args, *outs], 2, refresh, f"elementwise kernel {name} ({n} elements, prepared)")


def bound_replay(kernel, bound, offset, refresh, describes):
    """A replay calling kernel(*bound), after writing each scalar of `refresh` ((index, scalar type, source
    array): a one-element input read again) at bound[offset + index]."""
    def replay():
        for i, to_scalar, src in refresh:
            bound[offset + i] = to_scalar(src.flat[0])
        kernel(*bound)
    replay.describes = describes
    return replay


def _prepare_run_elementwise(result, name, inputs, outputs, args, out_dtypes, n, dtype_name, outs=None):
    # the recorded call replays with these very arguments: bound once, they are the same
    return bind_elementwise(name, inputs, outputs, args, (), n, dtype_name, result) if n else None


run_elementwise.prepare = _prepare_run_elementwise


SUM_UPDATE = REDUCTIONS["sum"].update  # its row loop may regroup (below)


def reduction_source(update, acc_dtype_name):
    """A reduction over the middle axis of a contiguous (outer, K, inner) array, as two kernels that Numba
    compiles only when called (each costs about 0.1 s the first time, in a cold cache): `rows(t0, t1, x,
    out, idx, K)` folds rows [t0, t1) of length K (inner == 1); `blocks(t0, t1, x, out, idx, outer, K,
    inner, B)` folds blocks [t0, t1) of B positions of the inner axis, so that the innermost loop runs over
    contiguous memory. `update` is a statement list (using `acc`, `best`, `x_i`, `k`) that folds element
    `x_i` at position `k` into the accumulator. A fold of values (sum, prod) leaves `idx` alone."""
    # a block folds straight into its slices of `out` and `idx`, and a fold of values tracks no position: no
    # np.empty or np.zeros in the kernel (each Numba overload a process meets first costs up to 0.15 s of
    # its first compile). (b6d5f26 did this and was reverted: the eager convnet step ran 20% slower. That
    # was glibc's page faults, which host_memory.py removes, not this kernel: its sums timed the same.)
    tracks = any("BEST" in stmt for stmt in update)
    # a sum along one contiguous row is a chain of dependent adds (4 cycles each) unless LLVM may regroup
    # them: the reorderable add vectorises it (a (8, 21632) row sum, conv's bias gradient, 140 -> 10 us)
    if update == SUM_UPDATE:  # over a slice from 0 (see below), so that no index needs wrapping
        row_loop = f"""        row = x[base + 1:base + K]
        for k in range(K - 1):
            acc = add_reorderable(acc, np.{acc_dtype_name}(row[k]))
"""
    else:
        row_loop = f"""        for k in range(1, K):
            x_i = np.{acc_dtype_name}(x[base + k])
{lower.fold_statements(update, 12)}"""
    return f"""{HEADER}from numgrad.kernels.cpu.intrinsics import add_reorderable

{LOOP_HEADER}
def rows(t0, t1, x, out, idx, K):
    for o in range(t0, t1):
        base = o * K
        acc = np.{acc_dtype_name}(x[base])
{"        best = 0" + chr(10) if tracks else ""}{row_loop}        out[o] = acc
{"        idx[o] = best" + chr(10) if tracks else ""}

{LOOP_HEADER}
def blocks(t0, t1, x, out, idx, outer, K, inner, B):
    nb = (inner + B - 1) // B
    for t in range(t0, t1):
        o = t // nb
        j0 = (t % nb) * B
        j1 = j0 + B if j0 + B < inner else inner
        base = o * K * inner
        # rows are sliced and loops run from 0: an index Numba cannot prove non-negative is wrapped
        # element by element, which keeps LLVM from vectorising the loop
        w = j1 - j0
        accs = out[o * inner + j0:o * inner + j1]
{"        bests = idx[o * inner + j0:o * inner + j1]" + chr(10) if tracks else ""}        first = x[base + j0:base + j1]
        for jj in range(w):
            accs[jj] = first[jj]
{"            bests[jj] = 0" + chr(10) if tracks else ""}        for k in range(1, K):
            xr = x[base + k * inner + j0:base + k * inner + j1]
            for jj in range(w):
                x_i = np.{acc_dtype_name}(xr[jj])
{lower.fold_statements(update, 16, "accs[jj]", "bests[jj]" if tracks else None)}"""


@functools.lru_cache(maxsize=None)
def reduction_kernels(name, update, acc_dtype_name):
    """The module whose `rows` and `blocks` fold with `update` (see reduction_source)."""
    return loader.load_module(f"reduce_{name}_{acc_dtype_name}", reduction_source(update, acc_dtype_name))


# Inner-axis block: long enough for SIMD, short enough that blocks spread over threads.
INNER_BLOCK = 1024


def _layout(x, axes):
    """Views `x` as a contiguous (outer, K, inner) array with the reduced `axes` in the middle."""
    nd = x.ndim
    if len(axes) == nd and x.flags.c_contiguous:  # the whole tensor
        return x, 1, x.size, 1
    if axes and list(axes) != list(range(axes[0], axes[-1] + 1)):
        keep = [d for d in range(nd) if d not in axes]
        x = x.transpose(keep + list(axes))
        axes = tuple(range(len(keep), nd))
    x = np.ascontiguousarray(x)
    shape = x.shape
    if not axes:
        return x, math.prod(shape), 1, 1
    r0, r1 = axes[0], axes[-1] + 1
    return x, math.prod(shape[:r0]), math.prod(shape[r0:r1]), math.prod(shape[r1:])


def run_reduction(name, update, x, axes, acc_dtype, combine=None, want_index=False):
    """Reduces `x` over `axes` (sorted, non-empty, every reduced extent > 0); returns values flat in the
    order of the kept axes, in `acc_dtype`, and the positions along the flattened reduced axes."""
    x, outer, K, inner = _layout(x, tuple(axes))
    flat = x.reshape(-1)
    kernels = reduction_kernels(name, update, dtype_name(acc_dtype))
    m = outer * inner
    out, idx = np.empty(m, acc_dtype), np.empty(m, np.int64)
    n = flat.size
    parallel = n >= PARALLEL_MIN and threads.count() > 1
    if parallel and m == 1 and combine is not None and not want_index:
        # one long reduction: fold equal chunks in parallel, then the partials and the tail
        chunks = 8 * threads.count()
        k = n // chunks
        partial = np.empty(chunks, acc_dtype)
        threads.over(kernels.rows, chunks, flat, partial, np.empty(chunks, np.int64), k)
        if n > k * chunks:
            tail = np.empty(1, acc_dtype)
            kernels.rows(0, 1, flat[k * chunks:], tail, np.empty(1, np.int64), n - k * chunks)
            partial = np.concatenate([partial, tail])
        with np.errstate(all="ignore"):  # IEEE results (inf, NaN) without NumPy's warnings: torch is silent
            return combine.reduce(partial, keepdims=False).reshape(1).astype(acc_dtype), idx
    if inner == 1:
        threads.over(kernels.rows, outer, flat, out, idx, K, parallel=parallel and outer > 1)
    else:
        blocks = outer * -(-inner // INNER_BLOCK)
        threads.over(kernels.blocks, blocks, flat, out, idx, outer, K, inner, INNER_BLOCK,
                     parallel=parallel and blocks > 1)
    return out, idx


def fold_at_once(name, update, x, axes, acc_dtype):
    """run_reduction's values for a small fold of values (sum, prod) in this thread: a C-order `x` whose `axes` run
    contiguously calls its kernel directly (the same call run_reduction makes below PARALLEL_MIN, without its
    layout work and thread hand-off), any other goes through run_reduction."""
    a0, a1 = axes[0], axes[-1] + 1
    if not x.flags.c_contiguous or a1 - a0 != len(axes):
        return run_reduction(name, update, x, axes, acc_dtype)[0]
    shape = x.shape
    outer, K, inner = math.prod(shape[:a0]), math.prod(shape[a0:a1]), math.prod(shape[a1:])
    kernels = reduction_kernels(name, update, dtype_name(acc_dtype))
    out = np.empty(outer * inner, acc_dtype)
    if inner == 1:
        kernels.rows(0, outer, x.reshape(-1), out, _UNTRACKED_INDEX, K)
    else:
        kernels.blocks(0, outer * -(-inner // INNER_BLOCK), x.reshape(-1), out, _UNTRACKED_INDEX, outer, K, inner,
                       INNER_BLOCK)
    return out


_UNTRACKED_INDEX = np.empty(1, np.int64)  # (a fold of values leaves its positions alone)


def bind_reduction(name, update, x, axes, acc_dtype):
    """A replay of run_reduction with its kernel and arrays bound once: (call, values), call() refolding `x`
    into `values` (flat, acc_dtype); None where the fold reads a copy of x made now or splits over the threads."""
    laid, outer, K, inner = _layout(x, tuple(axes))
    if not np.may_share_memory(laid, x) or (laid.size >= PARALLEL_MIN and threads.count() > 1):
        return None
    flat = laid.reshape(-1)
    kernels = reduction_kernels(name, update, dtype_name(acc_dtype))
    m = outer * inner
    out, idx = np.empty(m, acc_dtype), np.empty(m, np.int64)
    if inner == 1:
        return functools.partial(kernels.rows, 0, outer, flat, out, idx, K), out
    blocks = outer * -(-inner // INNER_BLOCK)
    return functools.partial(kernels.blocks, 0, blocks, flat, out, idx, outer, K, inner, INNER_BLOCK), out


@njit(cache=True, nogil=True, error_model="numpy")
def column_sums(x, acc, out):
    """sum's fold over the rows of a C-order 2-d `x` (the blocks kernel's order: each column's float64 sum from
    its first element down) and round_sums, in one call: a small Linear layer's bias gradient. `acc`: float64
    scratch of a row's length."""
    K, n = x.shape
    first = x[0]
    for j in range(n):
        acc[j] = first[j]
    for k in range(1, K):
        row = x[k]
        for j in range(n):
            acc[j] = acc[j] + np.float64(row[j])
    for j in range(n):
        out[j] = acc[j] + 0.0


@njit(cache=True, nogil=True, error_model="numpy")
def round_sums(values, out):
    """out[i] = values[i] + 0.0 in out's type: a float64 fold's sums rounded once, a sum of -0.0s made +0.0 (torch's
    sum starts from +0.0), past float32's range inf, without NumPy's warning."""
    for i in range(values.size):
        out[i] = values[i] + 0.0

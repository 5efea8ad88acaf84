"""Softmax and log-softmax over the last dim, forward and backward, as row kernels: each row is read
from cache after its first pass, so a (4096, 1024) softmax costs one read and one write of memory."""
import functools
import math

import numpy as np

from .. import loader
from ..arrays import dtype_name as np_name  # (several functions here take a dtype_name argument)
from . import fused, pool, threads
from .kernels import HEADER, LOOP_HEADER, bound_replay


# Rows are sliced and loops run over range(K): an index Numba cannot prove non-negative is checked (and
# wrapped) element by element, which also stops vectorisation. Sums accumulate in float64 (float32 rows
# too); the float32 results are rounded once at the end.
# Four functions, not one per direction with `log` a flag: Numba compiles a function on its first call, so a
# step that uses only log_softmax (cross_entropy) compiles only its two (about 0.4 s saved on a cold start).
# Each direction's rows start alike: a row's slices, the forward's max, the sum to come.
# The forwards store the exps in a loop of their own and sum them in the next: a float32 loop that also adds in
# float64 runs at float64's vector width, exp included (a (4096, 1024) softmax: 8.3 -> 5.5 ms on one thread);
# the row is in cache for the second loop, and the sum is the same.
_FORWARD_ROWS = """    for o in range(o0, o1):
        xr = x[o * K:o * K + K]
        yr = out[o * K:o * K + K]
        m = np.{dt}(-np.inf)
        for j in range(K):
            m = maximum(m, xr[j])
        s = np.float64(0)
"""
_BACKWARD_ROWS = """    for o in range(o0, o1):
        gr = g[o * K:o * K + K]
        yr = y[o * K:o * K + K]
        dr = out[o * K:o * K + K]
        s = np.float64(0)
"""
_SOURCE = """
# helpers {digest}
from numgrad.kernels.cpu.intrinsics import add_reorderable, maximum


{header}
def forward(o0, o1, K, x, out):
{forward_rows}        for j in range(K):
            yr[j] = {exp}(xr[j] - m)
        for j in range(K):
            s = add_reorderable(s, np.float64(yr[j]))
        r = np.{dt}(1) / np.{dt}(s)
        for j in range(K):
            yr[j] = yr[j] * r


{header}
def log_forward(o0, o1, K, x, out):
{forward_rows}        # (x - max) - log(sum), in torch's order: adding log(sum) to max first loses digits
        for j in range(K):
            yr[j] = {exp}(xr[j] - m)  # the exps, kept in the output row only until the sum is known
        for j in range(K):
            s = add_reorderable(s, np.float64(yr[j]))
        ls = np.{dt}(math.log(s))
        for j in range(K):
            yr[j] = (xr[j] - m) - ls


{header}
def backward(o0, o1, K, g, y, out):
{backward_rows}        for j in range(K):
            s = add_reorderable(s, np.float64(gr[j] * yr[j]))
        t = np.{dt}(s)
        for j in range(K):
            dr[j] = yr[j] * (gr[j] - t)


{header}
def log_backward(o0, o1, K, g, y, out):
{backward_rows}        for j in range(K):
            s = add_reorderable(s, np.float64(gr[j]))
        t = np.{dt}(s)
        for j in range(K):
            dr[j] = gr[j] - {exp}(yr[j]) * t
"""


def _exp(dtype_name):
    """The kernels' exp: float32's vectorising one (scalar_math.exp_f32), libm's for float64."""
    return "exp_f32" if dtype_name == "float32" else "math.exp"


@functools.lru_cache(maxsize=None)
def _module(dtype_name):
    rows = {"forward_rows": _FORWARD_ROWS.format(dt=dtype_name), "backward_rows": _BACKWARD_ROWS}
    source = HEADER + _SOURCE.format(digest=loader.file_digest(__file__), header=LOOP_HEADER, dt=dtype_name,
                                     exp=_exp(dtype_name), **rows)
    return loader.load_module(f"softmax_{dtype_name}", source)


def _rows(kernel, arrays, out_shape, dtype, out=None, lead=(), tail=()):
    """kernel(o0, o1, K, *lead, *arrays flat, out, *tail) over the rows, split over the threads when large."""
    K = out_shape[-1]
    flat = [np.ascontiguousarray(a).reshape(-1) for a in arrays]
    # shaped, not a view: a gradient the engine may keep; a replay's buffer when given
    out = pool.empty(flat[0].size, dtype, out_shape) if out is None else out
    rows = flat[0].size // K if K else 0
    threads.over(kernel, rows, K, *lead, *flat, out.reshape(-1), *tail, parallel=flat[0].size >= threads.PARALLEL_MIN)
    return out


def forward(x, log, out=None):
    """softmax (or log_softmax) of array `x` over its last dim (into C-contiguous `out` when given)."""
    module = _module(np_name(x.dtype))
    return _rows(module.log_forward if log else module.forward, [x], x.shape, x.dtype, out)


def backward(g, y, log, out=None):
    """The gradient for `g` flowing into softmax (log_softmax) output `y`, over the last dim."""
    module = _module(np_name(y.dtype))
    return _rows(module.log_backward if log else module.backward, [g, y], y.shape, y.dtype, out)


# ---- the backward of a gradient still pending (softmax(x) * w, a dropout after softmax): its fused expression
# is computed in the row loop and kept in the output row until the row's sum is known, so it never goes to
# memory (a (4096, 1024) step: one write and one read of 16 MB fewer). The same arithmetic as backward's.
_PENDING = """{header}from numgrad.kernels.cpu.intrinsics import add_reorderable


{loop_header}
def kernel(o0, o1, K, {params}, y, out{rider_outs}):
    for o in range(o0, o1):
        base = o * K
        yr = y[base:base + K]
        dr = out[base:base + K]
        s = np.float64(0)
{element}
            dr[jj] = {var}
{riders}        for jj in range(K):  # a loop of its own: see intrinsics.add_reorderable
            s = add_reorderable(s, np.float64({term}))
        t = np.{dt}(s)
        for jj in range(K):
            dr[jj] = {result}
"""


def _pending_source(program, var, riders, log, dtype_name):
    return _PENDING.format(header=HEADER, loop_header=LOOP_HEADER, params=fused.params(program),
                           element="\n".join(fused.element_loop(program, 8, "base", "0", "K")), var=var,
                           rider_outs="".join(f", R{k}" for k in range(len(riders))),
                           riders="".join(f"            R{k}[F + jj] = {v}\n" for k, v in enumerate(riders)),
                           dt=dtype_name,
                           term="dr[jj]" if log else "dr[jj] * yr[jj]",
                           result=f"dr[jj] - {_exp(dtype_name)}(yr[jj]) * t" if log else "yr[jj] * (dr[jj] - t)")


def _backward_pending_module(program, var, riders, log, dtype_name):
    return loader.cached(("softmax_pending", log, dtype_name, program.key((var,) + tuple(riders))),
                         "softmax_pending", lambda: _pending_source(program, var, riders, log, dtype_name))


def backward_pending(program, var, y, log, riders=(), out=None):
    """backward for an incoming gradient that is `var` of fused `program` (over y's shape), never stored, and
    the program's vars `riders` (lazy.take_riders), each written to a flat array. Returns [the gradient, *those
    arrays] (`out`: that list, a replay's buffers)."""
    if program.sources:
        program.refresh()
    _, _, args = fused.layout(program, len(program.shape) - 1)  # leaves: whole, per row or per column
    module = _backward_pending_module(program, var, riders, log, np_name(y.dtype))
    if out is None:
        out = [None] + [pool.empty(y.size, np.dtype(program.var_dtypes[v])) for v in riders]
    out[0] = _rows(module.kernel, [y], y.shape, y.dtype, out[0], lead=args, tail=out[1:])
    return out


# ---- the forward of an input still pending (the logits' bias add before cross_entropy): its fused expression is
# computed into the output row, which holds it until the row's max and sum are known, so it never goes to memory.
# log_softmax sums the exps as it computes them (the output row holds the inputs), softmax as forward does.
_FORWARD_PENDING = """{header}from numgrad.kernels.cpu.intrinsics import add_reorderable, maximum


{loop_header}
def kernel(o0, o1, K, {params}, out):
    for o in range(o0, o1):
        base = o * K
        yr = out[base:base + K]
{element}
            yr[jj] = {var}
        m = np.{dt}(-np.inf)
        for j in range(K):
            m = maximum(m, yr[j])
        s = np.float64(0)
{tail}"""
_FORWARD_PENDING_TAIL = {
    False: """        for j in range(K):
            yr[j] = {exp}(yr[j] - m)
        for j in range(K):
            s = add_reorderable(s, np.float64(yr[j]))
        r = np.{dt}(1) / np.{dt}(s)
        for j in range(K):
            yr[j] = yr[j] * r
""",
    True: """        for j in range(K):
            s = add_reorderable(s, np.float64({exp}(yr[j] - m)))
        ls = np.{dt}(math.log(s))
        for j in range(K):
            yr[j] = (yr[j] - m) - ls
"""}


def _forward_pending_source(program, var, log, dtype_name):
    return _FORWARD_PENDING.format(header=HEADER, loop_header=LOOP_HEADER, params=fused.params(program),
                                   element="\n".join(fused.element_loop(program, 8, "base", "0", "K")), var=var,
                                   dt=dtype_name,
                                   tail=_FORWARD_PENDING_TAIL[log].format(exp=_exp(dtype_name), dt=dtype_name))


def _forward_pending_module(program, var, log, dtype_name):
    return loader.cached(("softmax_forward_pending", log, dtype_name, program.key((var,))),
                         "softmax_forward_pending", lambda: _forward_pending_source(program, var, log, dtype_name))


def forward_pending(program, var, log, dtype, out=None):
    """forward for an input that is `var` of fused `program` (over the input's shape), never stored: a new
    C-contiguous array of `dtype` (`out`: a replay's buffer)."""
    if program.sources:
        program.refresh()
    shape = program.shape
    _, _, args = fused.layout(program, len(shape) - 1)  # leaves: whole, per row or per column
    module = _forward_pending_module(program, var, log, np_name(dtype))
    n, K = math.prod(shape), shape[-1]
    out = pool.empty(n, dtype, shape) if out is None else out
    threads.over(module.kernel, n // K, K, *args, out.reshape(-1), parallel=n >= threads.PARALLEL_MIN)
    return out


# ---- replays of the pending kernels (numgrad.compile): the layout and kernel found once, the arguments bound ----
def _bound_replay(program, kernel, rows, K, arrays, what):
    """A replay calling kernel(0, rows, K, *the program's leaves, *arrays) on one thread, or None when a leaf
    is a copy made for the trace or the rows are many enough to split over the threads."""
    prepared = fused.prepared_args(program, len(program.shape) - 1)
    if prepared is None or (rows * K >= threads.PARALLEL_MIN and threads.count() > 1):
        return None
    _, _, args, refresh = prepared
    return bound_replay(kernel, [0, rows, K, *args, *arrays], 3, refresh, f"{what} ({rows} rows of {K}, prepared)")


def _prepare_rows(result, arrays, kernel, what):
    """A replay of forward/backward: the row kernel on the trace's C-contiguous `arrays` and `result`, one thread
    (None: a strided input, read through a copy, or rows to split over the threads)."""
    if not all(a.flags.c_contiguous for a in (*arrays, result)) or result.size == 0 or \
            (result.size >= threads.PARALLEL_MIN and threads.count() > 1):
        return None
    K = result.shape[-1]
    rows = result.size // K
    return bound_replay(kernel, [0, rows, K, *[a.reshape(-1) for a in arrays], result.reshape(-1)], 0, (),
                        f"{what} ({rows} rows of {K}, prepared)")


def _prepare_forward(result, x, log, out=None):
    module = _module(np_name(x.dtype))
    kernel, what = (module.log_forward, "log_softmax") if log else (module.forward, "softmax")
    return _prepare_rows(result, [x], kernel, what)


def _prepare_backward(result, g, y, log, out=None):
    module = _module(np_name(y.dtype))
    return _prepare_rows(result, [g, y], module.log_backward if log else module.backward,
                         "log_softmax backward" if log else "softmax backward")


forward.prepare = _prepare_forward
backward.prepare = _prepare_backward


def _prepare_forward_pending(result, program, var, log, dtype, out=None):
    K = program.shape[-1]
    kernel = _forward_pending_module(program, var, log, np_name(dtype)).kernel
    return _bound_replay(program, kernel, result.size // K, K, [result.reshape(-1)], "softmax forward pending")


def _prepare_backward_pending(result, program, var, y, log, riders=(), out=None):
    if not y.flags.c_contiguous:  # the kernel would read a copy made at the trace
        return None
    K = y.shape[-1]
    kernel = _backward_pending_module(program, var, riders, log, np_name(y.dtype)).kernel
    return _bound_replay(program, kernel, y.size // K, K, [y.reshape(-1), result[0].reshape(-1), *result[1:]],
                         "softmax backward pending")


forward_pending.prepare = _prepare_forward_pending
backward_pending.prepare = _prepare_backward_pending

"""Deferred elementwise results: an op records an expression instead of running, and a whole region of
them runs as one fused kernel when something reads the values (or sums them, see sum_region).

Safety rule: a pending result reads its inputs' arrays when it is computed, so anything that may write
to an array first computes the pending results that read it: Tensor._data (every access other than
the fused kernels' own) calls before_access, keyed by the array's root storage so views count too.
Arrays NumPy code can write behind our back (numpy(), from_numpy) are never read lazily.

Layout: a result gets the strides torch's TensorIterator would give it (result_layout, at the end), and
its kernel, fused or not, runs in that memory order."""
import contextlib
import functools
import math
import threading
import weakref

import numpy as np

from ._core import state as _core_state
from ._core.state import NEW_THREADS, STATE
from .kernels import dispatch, lower, tape
from .kernels.arrays import WIDER, widened
from .kernels.dispatch import fused

MAX_REGION = 40  # ops in one pending expression; beyond it the inputs are computed first
# results of at most this many elements compute at once (compute_small): below it a pending expression, region
# planning and a thread hand-off cost more than the passes over memory that fusion saves (measured on 2 cores,
# docs/PERFORMANCE.md)
SMALL_MAX = _core_state.small_max()
READERS = {}  # id(root array) -> weak references to pending expressions that read it
# An entry goes when its array is accessed (before_access pops it) or when no expression in it waits any more
# (_drop_finished, after one is computed or freed): a stale entry changes no result, but while READERS is not
# empty every Tensor._data pays before_access. Changes other than before_access's pop (atomic) hold the lock:
# a list dropped while another thread appends a waiting reader to it would lose that reader.
_READERS_LOCK = threading.Lock()
_FREED = []  # the _Keys of expressions freed while pending: their entries are dropped at the next before_access
EXPORTED = {}  # id(root array) -> weak reference to it: memory NumPy code may write to


KERNEL_DTYPE = {np.dtype(np.bool_): "bool_", np.dtype(np.int64): "int64", np.dtype(np.float32): "float32",
                np.dtype(np.float64): "float64"}


def set_fusion(enabled):
    """Turns fusion (deferred elementwise ops, fused kernels forward and backward) on or off in this
    thread and in the threads that start using numgrad after it; returns this thread's previous setting."""
    previous = STATE.fusion
    STATE.fusion = NEW_THREADS["fusion"] = bool(enabled)
    return previous


def is_fusion_enabled():
    return STATE.fusion


@contextlib.contextmanager
def fusion(enabled=True):
    """with numgrad.fusion(False): ... runs the block with fusion off (or on), in this thread only."""
    previous, STATE.fusion = STATE.fusion, bool(enabled)
    try:
        yield
    finally:
        STATE.fusion = previous


def root(arr):
    return dispatch.storage(arr)


def export(arr):
    """`arr`'s memory is now reachable from NumPy code."""
    r = root(arr)
    EXPORTED[id(r)] = weakref.ref(r)
    if len(EXPORTED) > 4096:
        for k in [k for k, ref in EXPORTED.items() if ref() is None]:
            del EXPORTED[k]


def is_exported(arr):
    ref = EXPORTED.get(id(root(arr)))
    return ref is not None and ref() is not None


def before_access(arr):
    """Computes the pending results that read `arr`'s storage (the caller may write to it)."""
    if _FREED:
        _drop_freed()
    # an array owning its memory is its own root: no call for the usual case (every tensor access asks)
    refs = READERS.pop(id(arr if arr.__class__ is np.ndarray and arr.base is None else root(arr)), None)
    if refs:
        for ref in refs:
            expr = ref()
            if expr is not None and expr.arr is None and not expr.forcing:
                expr.force()


def _register(key, expr_ref, keys):
    """Lists expression `expr_ref` under READERS[key]; `keys` is the expression's own list of its keys."""
    keys.append(key)
    with _READERS_LOCK:
        refs = READERS.get(key)
        if refs is None:
            READERS[key] = [expr_ref]
        else:
            refs.append(expr_ref)
            if len(refs) > 64:  # a new list: before_access may be walking this one, which it popped
                READERS[key] = [r for r in refs if _waiting(r)]


def _waiting(ref):
    expr = ref()
    return expr is not None and expr.arr is None


def _drop_finished(keys):
    """Drops from the READERS entries under `keys` the expressions that no longer wait, and the entries left
    empty (call with the lock held). A new list rather than a changed one: before_access may be walking the
    old one, which it popped."""
    for key in keys:
        refs = READERS.get(key)
        if refs is not None:
            waiting = [r for r in refs if _waiting(r)]
            if not waiting:
                READERS.pop(key, None)
            elif len(waiting) < len(refs):
                READERS[key] = waiting


class _Keys(list):
    """Where READERS lists one pending expression, and its weak reference's callback: that may run at any
    allocation (inside _register, say), so it only records; before_access drops the entries."""
    __slots__ = ()

    def __call__(self, ref):
        if self:
            _FREED.append(self)


def _drop_freed():
    with _READERS_LOCK:
        while _FREED:
            _drop_finished(_FREED.pop())


class LazyExpr:
    """One deferred op: op-table entry, arguments (tensors, pending or not, and Python scalars), the dtype
    it computes in and its result's dtype, shape and strides (None: C order); `arr` holds the values once
    computed."""
    __slots__ = ("entry", "args", "compute", "dtype", "shape", "strides", "size", "arr", "users", "device",
                 "forcing", "keys", "__weakref__")

    def force(self):
        if self.arr is None:
            if self.size == 1 and not self._broadcasts():  # one op on computed inputs: the op's own kernel
                #                                             (shared with unfused mode)
                self.forcing = True  # reading the inputs must not compute this expression again
                try:
                    self.arr = compute_now(self.entry, self.args, self.compute, self.dtype, self.shape,
                                           self.strides)
                finally:
                    self.forcing = False
            else:  # the region runs in the result's memory order (see result_layout)
                order = None if self.strides is None else memory_order(self.strides)
                program = fused.Program(self.shape, order)
                var = value_of(program, self)
                (flat,) = fused.run_map(program, [var], [self.dtype.np])
                self.arr = flat.reshape(self.shape) if self.strides is None else shaped(flat, self.shape, self.strides)
            self.computed(self.arr)
        return self.arr

    def _broadcasts(self):
        """A large host result reads an input broadcast (a bias): the fused kernel reads it as a row or column
        where the op's own kernel reads a full copy (a (512, 256) bias add 123 -> 60 us). Small ones keep the
        op's kernel: one kernel fewer to compile."""
        if self.device.type != "cpu" or math.prod(self.shape) < fused.BROADCAST_MIN:
            return False
        for a in self.args:
            if hasattr(a, "_lazy"):
                arr = a._arr if a._arr is not None else a._lazy.arr
                if arr is not None and arr.shape != self.shape and arr.size > 1:
                    return True
        return False

    def computed(self, arr):
        """`arr` holds the values now (computed here or by a kernel that also computed something else)."""
        self.arr, self.args = arr, None  # the inputs may be freed now
        if self.keys:  # this expression was often its inputs' last waiting reader
            with _READERS_LOCK:
                _drop_finished(self.keys)
            self.keys.clear()  # nothing left for its callback to do
        users, self.users = self.users, None
        if users:  # pending results that read this one now read its array (those still waiting)
            key = id(root(arr))
            for ref in users:
                user = ref()
                if user is not None and user.arr is None:
                    _register(key, ref, user.keys)


BOOL = np.dtype(np.bool_)


def operand(value, shape, n, np_dtype, order=None):
    """A kernel argument: a scalar for Python numbers and one-element tensors, else a flat contiguous
    array of the broadcast shape (broadcast operands are materialised), its dims taken in `order`
    (slowest first; None: as they are)."""
    if not hasattr(value, "_lazy"):  # a Python or NumPy scalar, not a tensor
        return np_dtype.type(value)
    return operand_array(value._data, shape, n, np_dtype, order)


def operand_array(arr, shape, n, np_dtype, order=None):
    """operand for a tensor's array (or a scalar)."""
    if not (arr.__class__ is np.ndarray or hasattr(arr, "flat_buffer")):
        return np_dtype.type(arr)
    if not dispatch.is_host(arr):  # GPU memory: broadcast and cast on the device, never read here
        if arr.shape != shape:
            arr = arr.broadcast_to(shape)
        return arr.contiguous(np_dtype).flat_buffer()
    if arr.size == 1 or (arr.size and not any(arr.strides)):  # one value, possibly expanded
        return np_dtype.type(arr.flat[0])
    if arr.dtype != np_dtype:
        arr = arr.astype(np_dtype)
    if arr.shape != shape:
        arr = np.broadcast_to(arr, shape)
    if order is not None:  # an input laid out as the result is read in memory order: no copy
        arr = arr.transpose(order)
    return arr.ravel()


def bound_operands(values, kinds, shape, n, order=None):
    """operand_array of each of `values` as a replay may keep it: (arguments, refresh), refresh listing
    (index, scalar type, source array) of one-element arrays read as scalars, which a replay reads again; None
    when an operand is a copy made now (a broadcast or a cast) or GPU memory."""
    args, refresh = [], []
    for i, (a, kind) in enumerate(zip(values, kinds)):
        if a.__class__ is not np.ndarray and not isinstance(a, (np.generic, int, float)):
            return None
        k = operand_array(a, shape, n, kind, order)
        if a.__class__ is np.ndarray:
            if k.__class__ is not np.ndarray:
                refresh.append((i, kind.type, a))
            elif not np.may_share_memory(k, a):
                return None
        args.append(k)
    return args, refresh


def compute_now(entry, args, compute, out_dtype, shape, strides=None):
    """The op's values as an array of `strides` (None: C order), by its own (unfused) kernel."""
    # tensors' arrays, scalars as they are; only read, so the other pending results reading them stay pending
    values = [array_to_read(a) if hasattr(a, "_lazy") else a for a in args]
    return dispatch.numpy_op(_compute_arrays, entry, values, compute.np, out_dtype, shape, strides)


def compute_small(entry, args, np_dtype, out_dtype, shape, n):
    """compute_now for a small C-order result outside a trace, when every tensor input holds its values in
    host memory: (the values, the SmallCall that computed them, reusable on arguments of the same signature);
    None otherwise (a pending or GPU input)."""
    for a in args:
        if hasattr(a, "_lazy") and a._arr.__class__ is not np.ndarray:  # pending (None), or not host memory
            return None
    call = SmallCall(entry, args, np_dtype, out_dtype, shape, n)
    return call.run(args), call


# how a SmallCall turns an argument into a kernel operand: the array itself (one dim, C order), its flat view, its
# one value (one element, or broadcast from one), operand_array's general way (a broadcast or a cast), a scalar
WHOLE, FLAT, ONE, GENERAL, SCALAR = range(5)


class SmallCall:
    """One small-tensor-path call of an op on one signature of arguments (the tensors' dtypes, shapes and
    strides, the scalars' types), worked out once: how each argument becomes a kernel operand, the kernel, the
    result's dtype and shape. elementwise.apply keeps it for the next call of that signature."""

    __slots__ = ("entry", "np_dtype", "out_dtype", "shape", "n", "kernel", "np_out", "operands", "node_meta",
                 "two_whole")

    def __init__(self, entry, args, np_dtype, out_dtype, shape, n):
        self.entry, self.np_dtype, self.out_dtype, self.shape, self.n = entry, np_dtype, out_dtype, shape, n
        self.node_meta = {}  # a backward plan's pattern -> its node's input shapes and dtypes (elementwise.py)
        self.np_out = out_dtype.np
        operands, is_array = [], []
        for a, nm in zip(args, entry.inputs):
            kind = BOOL if nm in entry.bool_inputs else np_dtype
            if not hasattr(a, "_lazy"):
                how = SCALAR
            else:
                arr = a._arr
                if arr.shape == shape and arr.dtype == kind and arr.flags.c_contiguous:
                    how = WHOLE if arr.ndim == 1 else FLAT
                elif arr.size == 1 or (arr.size and not any(arr.strides)):  # (operand_array's scalar case)
                    how = ONE
                else:
                    how = GENERAL
            operands.append((how, kind))
            is_array.append(how in (WHOLE, FLAT, GENERAL))
        self.operands = tuple(operands)
        # the commonest call, a binary op on two one-dim arrays of the result's shape and dtype (x * y)
        self.two_whole = len(operands) == 2 and all(how == WHOLE for how, _ in operands)
        self.kernel = dispatch.small_elementwise_kernel(entry.name, entry.inputs, tuple(is_array),
                                                        entry.forward_outputs, KERNEL_DTYPE[np_dtype])

    def run(self, args):
        """The result's array for arguments of this call's signature."""
        if self.two_whole and tape.profiler is None:
            out = np.empty(self.n, self.np_out)
            self.kernel(0, self.n, args[0]._arr, args[1]._arr, out)
            return out
        kargs = []
        for a, (how, kind) in zip(args, self.operands):
            if how == WHOLE:
                kargs.append(a._arr)
            elif how == FLAT:
                kargs.append(a._arr.reshape(-1))
            elif how == SCALAR:
                kargs.append(kind.type(a))
            elif how == ONE:
                kargs.append(kind.type(a._arr.flat[0]))
            else:
                kargs.append(operand_array(a._arr, self.shape, self.n, kind))
        out = np.empty(self.n, self.np_out)
        if tape.profiler is not None:  # (timed as a kernel)
            entry = self.entry
            dispatch.run_small_elementwise(entry.name, entry.inputs, entry.forward_outputs, kargs, None, self.n,
                                           KERNEL_DTYPE[self.np_dtype], outs=[out])
        else:
            self.kernel(0, self.n, *kargs, out)
        return out if len(self.shape) == 1 else out.reshape(self.shape)


def computes_at_once(n):
    """Whether work of `n` elements takes the small-tensor path: at most SMALL_MAX, outside a numgrad.compile
    trace (a replay then runs a fused region's one kernel where eager runs the small path's several calls)."""
    return n <= SMALL_MAX and not tape.active


def fuses(n):
    """Whether work of `n` elements goes through fusion (pending expressions, fused regions): any non-empty size
    the small-tensor path does not take."""
    return n > 0 and not computes_at_once(n)


def is_small_and_computed(t):
    """Whether tensor `t` holds its values in host memory and the small-tensor path takes its size: a reduction
    of it runs its own kernel at once (a fused region's planning costs more than it saves)."""
    arr = t._arr
    return arr.__class__ is np.ndarray and computes_at_once(arr.size)


def _compute_arrays(entry, values, np_dtype, out_dtype, shape, strides, flat_out=None):
    """compute_now on arrays: one recorded call for numgrad.compile (it reads the inputs at replay, and with
    `flat_out`, the result's memory in its order, writes there)."""
    n = math.prod(shape)
    order = None if strides is None else memory_order(strides)
    # operands are made at each call: a one-element input is read as a scalar then, a cast is made again
    kargs = [operand_array(a, shape, n, BOOL if nm in entry.bool_inputs else np_dtype, order)
             for a, nm in zip(values, entry.inputs)]
    (flat,) = dispatch.run_elementwise(entry.name, entry.inputs, entry.forward_outputs, kargs, (out_dtype.np,), n,
                                         KERNEL_DTYPE[np_dtype], None if flat_out is None else [flat_out])
    return flat.reshape(shape) if strides is None else shaped(flat, shape, strides)


def _prepare_compute(result, entry, values, np_dtype, out_dtype, shape, strides):
    """A replay of _compute_arrays that writes into the trace's result (no new array, no copy): the kernel
    with its operands bound once where they are the inputs' own memory, else the whole call again."""
    if result.__class__ is not np.ndarray:
        return None
    flat = result.reshape(-1) if strides is None and result.flags.c_contiguous else result.base
    if flat.__class__ is not np.ndarray or flat.ndim != 1 or flat.size != result.size or \
            not np.shares_memory(flat, result):
        return None
    n = math.prod(shape)
    kinds = [BOOL if nm in entry.bool_inputs else np_dtype for nm in entry.inputs]
    bound = bound_operands(values, kinds, shape, n, None if strides is None else memory_order(strides))
    if bound is not None:
        replay = dispatch.bind_elementwise(entry.name, entry.inputs, entry.forward_outputs, *bound, n,
                                           KERNEL_DTYPE[np_dtype], [flat])
        if replay is not None:
            return replay
    return functools.partial(_compute_quietly, entry, values, np_dtype, out_dtype, shape, strides, flat)


@np.errstate(all="ignore")  # as dispatch.numpy_op runs it: IEEE results without NumPy's warnings
def _compute_quietly(*args):
    _compute_arrays(*args)


_compute_arrays.prepare = _prepare_compute


def defer(tensor_cls, entry, args, compute, out_dtype, shape, device, strides=None):
    """A pending result of `entry` on `args`, or None when it must run now (an input NumPy code can
    write to, or a region grown too large)."""
    size, pending_inputs, arrays = 1, [], []
    for a in args:
        if isinstance(a, tensor_cls):
            arr = a._arr
            if arr is None:
                e = a._lazy
                if e.arr is None:
                    size += e.size
                    pending_inputs.append(e)
                    continue
                arr = e.arr
            if EXPORTED and is_exported(arr) or arr.dtype in WIDER:  # (a narrow dtype is cast first)
                return None
            arrays.append(arr)
    if size > MAX_REGION:
        return None
    e = LazyExpr()
    keys = _Keys()  # where READERS lists it: its callback drops those entries once it is freed
    e.entry, e.args, e.compute, e.dtype, e.shape, e.strides, e.size, e.arr, e.users, e.device, e.forcing, e.keys =\
        entry, args, compute, out_dtype, shape, strides, size, None, None, device, False, keys
    ref = weakref.ref(e, keys)
    for pending_input in pending_inputs:  # when it is computed, its readers move to its array
        if pending_input.users is None:
            pending_input.users = [ref]
        else:
            pending_input.users.append(ref)
    for arr in arrays:
        _register(id(root(arr)), ref, keys)
    t = tensor_cls._make(None, out_dtype)
    t._lazy = e
    return t


def value_of(program, e):
    """Adds the steps computing pending expression `e` (and the pending ones it reads) to `program`."""
    memo = program.memo
    var = memo.get(id(e))
    if var is not None:
        return var
    entry = e.entry
    compute_name = KERNEL_DTYPE[e.compute.np]
    bool_inputs = entry.bool_inputs
    mapping = []
    for a, nm in zip(e.args, entry.inputs):
        if hasattr(a, "_lazy"):  # input_read and tensor_value inlined for a tensor: this runs per step
            arr = a._arr
            if arr is None:
                pending_input = a._lazy
                arr = pending_input.arr
                if arr is None:
                    mapping.append((nm, value_of(program, pending_input),
                                    "bool_" if nm in bool_inputs else compute_name))
                    continue
            if tape.active and STATE.recorder is not None:
                STATE.recorder.seen(a, arr)
            dtype = arr.dtype if arr.__class__ is np.ndarray else np.dtype(arr.dtype)
            mapping.append((nm, program.leaf(arr, KERNEL_DTYPE[dtype]), "bool_" if nm in bool_inputs else compute_name))
        else:
            mapping.append(input_read(program, entry, nm, a, compute_name))
    var = memo[id(e)] = program.step(entry.forward, tuple(mapping), compute_name, KERNEL_DTYPE[e.dtype.np])
    program.ops.append(entry.name)
    return var


def input_read(program, entry, nm, value, compute_name):
    """How a kernel step reads input `nm` of op-table `entry` holding `value` (a tensor, pending or
    not, or a Python scalar): (name, ref, dtype it is read as) for Program.step."""
    want = "bool_" if nm in entry.bool_inputs else compute_name
    if hasattr(value, "_lazy"):  # a tensor (never one of the exponents below)
        return nm, tensor_value(program, value), want
    if nm in entry.scalar_only and value in lower.POW_FORMS and not isinstance(value, bool):
        return nm, repr(value), None  # x ** 2 and the like become products in the code
    return nm, program.leaf(value, want), want


def tensor_value(program, t):
    """The var holding tensor `t`'s values: its pending expression's steps, or a leaf for its array."""
    arr = t._arr
    if arr is None:
        e = t._lazy
        if e.arr is None:
            return value_of(program, e)
        arr = e.arr
    if tape.active and STATE.recorder is not None:
        STATE.recorder.seen(t, arr)
    if arr.__class__ is np.ndarray and arr.dtype in WIDER:
        arr = widened(arr)
    return program.leaf(arr, KERNEL_DTYPE[arr.dtype if arr.__class__ is np.ndarray else np.dtype(arr.dtype)])


def array_to_read(t):
    """Tensor `t`'s array, for a caller that only reads it: the pending results reading it stay pending
    (Tensor._data computes them first, for a caller that may write)."""
    arr = t._arr
    if arr is None:
        return t._data
    if tape.active and STATE.recorder is not None:
        STATE.recorder.seen(t, arr)
    return arr


def pending(t):
    """The pending expression of tensor `t`, or None if its values exist."""
    if t._arr is not None:
        return None
    e = t._lazy
    return e if e.arr is None else None


def write_pending_into(result, target):
    """Computes pending tensor `result` straight into `target`'s storage (same shape and dtype,
    C-contiguous) when its region reads that storage only at the element it writes; False otherwise."""
    e = pending(result)
    arr = target._arr
    if e is None or arr is None or e.size == 1 or result._dtype is not target._dtype or\
            not dispatch.is_host(arr) or\
            e.shape != arr.shape or not arr.flags.c_contiguous or 0 in arr.shape:
        return False
    e.forcing = True
    try:
        arr = target._data  # computes the other pending readers of this storage first
    finally:
        e.forcing = False
    program = fused.Program(e.shape)
    var = value_of(program, e)
    flat = arr.reshape(-1)
    for leaf in program.leaves:  # reading the target elsewhere than at i would see values already written
        if leaf.kind != "scalar" and np.shares_memory(leaf.value, arr) and\
                not (leaf.value.shape == arr.shape and leaf.value.strides == arr.strides and
                     leaf.value.ctypes.data == arr.ctypes.data):
            return False
    fused.run_map(program, [var], [e.dtype.np], outs=[flat])
    e.arr, e.args = arr, None
    return True


def softmax_rows_forward(t, log):
    """softmax's (log_softmax's) last-dim forward of pending host tensor `t`: its expression is computed inside
    the row kernel and never stored (t stays pending for other readers)."""
    program = fused.Program(t._shape)
    var = tensor_value(program, t)
    return dispatch.row_softmax_pending(program, var, t._dtype.np, log)


def softmax_rows_backward(g, y, log):
    """softmax's (log_softmax's) last-dim backward for pending gradient `g` into host output array `y`: g's
    expression is computed inside the row kernel and never stored. Riders of g's shape are computed there
    too, each into an array of its own."""
    program = fused.Program(g._shape)
    var = tensor_value(program, g)
    riders = take_riders(g)
    results = dispatch.row_softmax_backward_pending(program, var, y, log, tuple(value_of(program, e) for e in riders))
    for e, flat in zip(riders, results[1:]):
        e.computed(flat.reshape(e.shape))
    return results[0]


# ---- riders: a leaf's gradient computed by a sibling's kernel -------------------------------------------------
# softmax(x) * w: MulBackward's gradient for the softmax stays pending and is computed inside softmax's backward
# row kernel; w's gradient, g * y, reads the same row. Left pending as a rider (AccumulateGrad keeps it as .grad
# unforced), that kernel writes it too, instead of a pass of its own over y. Whatever no kernel took is
# computed at the end of the backward pass (engine.run), so a backward leaves no work for later.
def add_rider(t):
    """Inside backward: pending gradient tensor `t`, going to a leaf, may ride along a row kernel."""
    e = pending(t)
    if STATE.riders is not None and e is not None and e.strides is None and e.device.type == "cpu":
        STATE.riders.append(e)


def is_rider(t):
    e = pending(t)
    return e is not None and STATE.riders is not None and any(r is e for r in STATE.riders)


def take_riders(g):
    """The riders a row kernel over pending gradient `g` computes too: those of its shape, still pending."""
    riders = STATE.riders
    if not riders:
        return ()
    taken, left = [], []
    for e in riders:
        (taken if e.arr is None and not e.forcing and e.shape == g._shape else left).append(e)
    riders[:] = left
    return taken


def compute_riders(riders):
    """End of backward: the riders no kernel took."""
    for e in riders:
        if e.arr is None:
            e.force()


def fold_region(t, split=0, kind="sum", acc_dtype="float64"):
    """Folds tensor `t` (sum, max or min) over its dims from `split` on in one pass with several
    accumulators; a pending `t` is computed inside the pass and never stored."""
    program = fused.Program(t._shape)
    var = tensor_value(program, t)
    return fused.run_fold(program, var, acc_dtype, split, kind)


# ---- result layout: torch's TensorIterator gives a result the memory order of its inputs ----------
def contiguous_strides(shape):
    """torch's C-order strides, in elements (a size-0 or size-1 dim counts as 1)."""
    strides, acc = [0] * len(shape), 1
    for d in range(len(shape) - 1, -1, -1):
        strides[d] = acc
        acc *= max(shape[d], 1)
    return tuple(strides)


def _dense_in_order(shape, strides, order):
    """The dims, taken fastest first in `order`, are C-contiguous (size-1 dims' strides ignored, as torch)."""
    acc = 1
    for d in order:
        if shape[d] != 1:
            if strides[d] != acc:
                return False
            acc *= shape[d]
    return True


def _is_contiguous(shape, strides):
    """torch's is_contiguous."""
    return _dense_in_order(shape, strides, range(len(shape) - 1, -1, -1))


def _is_channels_last(shape, strides):
    """torch's is_contiguous(memory_format=torch.channels_last) for a 4-d tensor: C, W, H, N fastest first."""
    return len(shape) == 4 and _dense_in_order(shape, strides, (1, 3, 2, 0))


def _is_dense(shape, strides):
    """torch's is_non_overlapping_and_dense: some order of the dims is C-contiguous (size-1 dims aside)."""
    return _dense_in_order(shape, strides, sorted(range(len(shape)), key=lambda d: strides[d]))


def is_dense_array(arr):
    """torch's is_non_overlapping_and_dense of a host array."""
    return _is_dense(arr.shape, tuple(st // arr.itemsize for st in arr.strides))


def _same_shape_layout(operands, shape):
    """TensorIterator's fast setup (every operand of the result's shape, no scalar): the strides it gives
    the result, None for C order, or False when it falls back to reorder_dimensions."""
    if all(_is_contiguous(shape, st) for _, st in operands):
        return None
    if all(_is_channels_last(shape, st) for _, st in operands):
        _, c, h, w = shape
        return (h * w * c, 1, w * c, c)
    first = operands[0][1]
    if all(st == first for _, st in operands) and _is_dense(shape, first):
        return first
    return False


def _broadcast_strides(op_shape, op_strides, shape):
    """An operand's strides in the result's shape: 0 where it is broadcast (a size-1 dim of its own keeps
    its stride)."""
    lead = len(shape) - len(op_shape)
    return (0,) * lead + tuple(0 if d == 1 and shape[lead + i] != 1 else s
                               for i, (d, s) in enumerate(zip(op_shape, op_strides)))


def dim_order(operands, shape):
    """reorder_dimensions: the result's dims fastest first, by an insertion sort asking the operands in
    turn (the first that tells two dims apart decides)."""
    strides = [_broadcast_strides(s, st, shape) for s, st in operands]

    def should_swap(d0, d1):
        for st in strides:
            s0, s1 = st[d0], st[d1]
            if s0 == 0 or s1 == 0:  # broadcast in one of them: this operand cannot tell
                continue
            if s0 != s1:
                return 1 if s0 > s1 else -1
            if shape[d0] > shape[d1]:
                return 1
        return 0

    perm = list(range(len(shape) - 1, -1, -1))
    for i in range(1, len(perm)):
        d1 = i
        for d0 in range(i - 1, -1, -1):
            c = should_swap(perm[d0], perm[d1])
            if c > 0:
                perm[d0], perm[d1] = perm[d1], perm[d0]
                d1 = d0
            elif c < 0:
                break
    return perm


@functools.lru_cache(maxsize=4096)  # a model meets few layouts, and sorting dims in Python costs microseconds
def result_strides(operands, shape, scalars):
    """The strides (in elements) torch gives an elementwise result of `shape` computed from `operands`
    (a tuple of (shape, strides) of each tensor input of one or more dims, in argument order); `scalars`: a 0-d
    tensor or Python scalar takes part too. None means C order."""
    if not operands:
        return None
    if not scalars and all(s == shape for s, _ in operands):
        fast = _same_shape_layout(operands, shape)
        if fast is not False:
            return None if fast is None or fast == contiguous_strides(shape) else fast
    perm = dim_order(operands, shape)
    if perm == list(range(len(shape) - 1, -1, -1)):
        return None
    strides, acc = [0] * len(shape), 1
    for d in perm:
        strides[d] = acc
        acc *= shape[d]
    strides = tuple(strides)
    return None if strides == contiguous_strides(shape) else strides


# Python scalars that are no operand of torch's kernel (pow's exponent, clamp's bounds): they do not stop
# TensorIterator's fast setup for inputs of one shape; other scalars are wrapped 0-d operands that do
_NOT_OPERANDS = frozenset(("pow", "rpow", "clamp", "clamp_min", "clamp_max", "clamp_min_fn", "clamp_max_fn"))
# entries whose inputs torch's kernel takes the other way round: torch.rsub(a, b) runs sub(b, a)
_SWAPPED = frozenset(("rsub_tensor",))


def result_layout(entry, args, tensors, shape):
    """The strides torch gives `entry`'s result of `shape` (two or more dims) on `args` (`tensors`: the
    tensors among them), None for C
    order. The usual case (every input C-contiguous: a result in C order) only looks at flags (and at the
    strides of size-1 dims, which torch's sort reads too); a pending input counts with the strides its
    values will have."""
    for t in tensors:
        arr = t._arr
        if arr is None:
            e = t._lazy
            if e.arr is None:
                if e.strides is not None:
                    return _laid_out(entry, args, shape)
                continue
            arr = e.arr
        # a C-contiguous array may still give a size-1 dim other strides (a transposed row), which the sort reads
        if not arr.flags.c_contiguous or (1 in arr.shape and arr.strides != _c_strides_bytes(arr.shape, arr.itemsize)):
            return _laid_out(entry, args, shape)
    return None


@functools.lru_cache(maxsize=4096)
def _c_strides_bytes(shape, itemsize):
    """C-order strides in bytes (for shapes with a size-1 dim, whose strides a C-contiguous array may vary)."""
    return tuple(s * itemsize for s in contiguous_strides(shape))


def _laid_out(entry, args, shape):
    """result_layout for inputs not all in C order."""
    operands, scalars = [], False
    for a, nm in zip(args, entry.inputs):
        if not hasattr(a, "_lazy"):
            scalars = scalars or not (nm in entry.scalar_only and entry.name in _NOT_OPERANDS)
            continue
        op = _operand_layout(a)
        if op[0]:
            operands.append(op)
        else:
            scalars = True
    if entry.name in _SWAPPED:
        operands.reverse()
    return result_strides(tuple(operands), shape, scalars)


def _operand_layout(t):
    """(shape, strides in elements) of tensor `t`, pending or not."""
    arr = t._arr
    if arr is None:
        e = t._lazy
        if e.arr is None:
            return e.shape, e.strides or contiguous_strides(e.shape)
        arr = e.arr
    size = arr.itemsize
    return arr.shape, tuple(s // size for s in arr.strides)


def memory_order(strides):
    """The dims of a dense layout, slowest first: the result's values are computed in this order."""
    return tuple(sorted(range(len(strides)), key=lambda d: -strides[d]))


def shaped(flat, shape, strides):
    """Flat array `flat`, holding values in memory order, seen with `shape` and `strides` (elements)."""
    size = flat.itemsize
    return np.ndarray(shape, flat.dtype, buffer=flat, strides=tuple(s * size for s in strides))

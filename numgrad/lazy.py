"""Deferred elementwise results: an op records an expression instead of running, and a whole region of
them runs as one fused kernel when something reads the values (or sums them, see sum_region).

Safety rule: a pending result reads its inputs' arrays when it is computed, so anything that may write
to an array first computes the pending results that read it: Tensor._data (every access other than
the fused kernels' own) calls before_access, keyed by the array's root storage so views count too.
Arrays NumPy code can write behind our back (numpy(), from_numpy) are never read lazily."""
import contextlib
import math
import weakref

import numpy as np

from ._core.state import STATE
from .backend import dispatch, lower
from .backend import fused

MAX_REGION = 40  # ops in one pending expression; beyond it the inputs are computed first
READERS = {}  # id(root array) -> weak references to pending expressions that read it
EXPORTED = {}  # id(root array) -> weak reference to it: memory NumPy code may write to

_FORCING = set()  # ids of expressions being computed right now

KERNEL_DTYPE = {np.dtype(np.bool_): "bool_", np.dtype(np.int64): "int64", np.dtype(np.float32): "float32",
                np.dtype(np.float64): "float64"}


def set_fusion(enabled):
    """Turns fusion (deferred elementwise ops, fused kernels forward and backward) on or off in this
    thread; returns the previous setting."""
    previous, STATE.fusion = STATE.fusion, bool(enabled)
    return previous


def is_fusion_enabled():
    return STATE.fusion


@contextlib.contextmanager
def fusion(enabled=True):
    """with numgrad.fusion(False): ... runs the block with fusion off (or on)."""
    previous = set_fusion(enabled)
    try:
        yield
    finally:
        set_fusion(previous)


def root(arr):
    if dispatch.on_gpu(arr):  # a CUDA view: its storage
        return arr.buf
    base = arr.base
    while isinstance(base, np.ndarray):
        arr, base = base, base.base
    return arr


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
    refs = READERS.pop(id(root(arr)), None)
    if refs:
        for ref in refs:
            expr = ref()
            if expr is not None and expr.arr is None and id(expr) not in _FORCING:
                expr.force()


def _register(key, expr_ref):
    refs = READERS.get(key)
    if refs is None:
        READERS[key] = [expr_ref]
    else:
        refs.append(expr_ref)
        if len(refs) > 64:
            refs[:] = [r for r in refs if r() is not None and r().arr is None]


class LazyExpr:
    """One deferred op: op-table entry, arguments (tensors, pending or not, and Python scalars), the dtype
    it computes in and its result's dtype and shape; `arr` holds the values once computed."""
    __slots__ = ("entry", "args", "compute", "dtype", "shape", "size", "arr", "users", "device", "__weakref__")

    def force(self):
        if self.arr is None:
            if self.size == 1:  # one op on computed inputs: the op's own kernel (shared with unfused mode)
                _FORCING.add(id(self))  # reading the inputs must not compute this expression again
                try:
                    self.arr = compute_now(self.entry, self.args, self.compute, self.dtype, self.shape)
                finally:
                    _FORCING.discard(id(self))
            else:
                program = fused.Program(self.shape)
                var = value_of(program, self)
                (flat,) = fused.run_map(program, [var], [self.dtype.np])
                self.arr = flat.reshape(self.shape)
            self.args = None  # the inputs may be freed now
            users, self.users = self.users, None
            if users:  # pending results that read this one now read its array
                key = id(root(self.arr))
                for ref in users:
                    _register(key, ref)
        return self.arr


BOOL = np.dtype(np.bool_)


def operand(value, shape, n, np_dtype):
    """A kernel argument: a scalar for Python numbers and one-element tensors, else a flat contiguous
    array of the broadcast shape (broadcast operands are materialised)."""
    if not hasattr(value, "_lazy"):  # a Python or NumPy scalar, not a tensor
        return np_dtype.type(value)
    arr = value._data
    if arr.__class__ is not np.ndarray:  # GPU memory: broadcast and cast on the device, never read here
        if arr.shape != shape:
            arr = arr.broadcast_to(shape)
        return arr.contiguous(np_dtype).flat_buffer()
    if arr.size == 1 or (arr.size and not any(arr.strides)):  # one value, possibly expanded
        return np_dtype.type(arr.flat[0])
    if arr.dtype != np_dtype:
        arr = arr.astype(np_dtype)
    if arr.shape != shape:
        arr = np.broadcast_to(arr, shape)
    return arr.ravel()


def compute_now(entry, args, compute, out_dtype, shape):
    """The op's values as an array, by its own (unfused) kernel."""
    n = math.prod(shape)
    np_dtype = compute.np
    kargs = [operand(a, shape, n, BOOL if nm in entry.bool_inputs else np_dtype) for a, nm in zip(args, entry.inputs)]
    (flat,) = dispatch.run_elementwise(entry.name, entry.inputs, entry.forward_outputs, kargs, (out_dtype.np,), n,
                                         KERNEL_DTYPE[np_dtype])
    return flat.reshape(shape)


def defer(tensor_cls, entry, args, compute, out_dtype, shape, device):
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
            if EXPORTED and is_exported(arr):
                return None
            arrays.append(arr)
    if size > MAX_REGION:
        return None
    e = LazyExpr()
    e.entry, e.args, e.compute, e.dtype, e.shape, e.size, e.arr, e.users, e.device =\
        entry, args, compute, out_dtype, shape, size, None, None, device
    ref = weakref.ref(e)
    for pending_input in pending_inputs:  # when it is computed, its readers move to its array
        if pending_input.users is None:
            pending_input.users = [ref]
        else:
            pending_input.users.append(ref)
    for arr in arrays:
        _register(id(root(arr)), ref)
    t = tensor_cls._make(None, out_dtype)
    t._lazy = e
    return t


def value_of(program, e):
    """Adds the steps computing pending expression `e` (and the pending ones it reads) to `program`."""
    memo = program.memo
    var = memo.get(id(e))
    if var is not None:
        return var
    entry, compute = e.entry, e.compute
    compute_name = KERNEL_DTYPE[compute.np]
    mapping = [input_read(program, entry, nm, a, compute_name) for a, nm in zip(e.args, entry.inputs)]
    var = memo[id(e)] = program.step(entry.forward, tuple(mapping), compute_name, KERNEL_DTYPE[e.dtype.np])
    return var


def input_read(program, entry, nm, value, compute_name):
    """How a kernel step reads input `nm` of op-table `entry` holding `value` (a tensor, pending or
    not, or a Python scalar): (name, ref, dtype it is read as) for Program.step."""
    if nm in entry.scalar_only and value in lower.POW_FORMS and not isinstance(value, bool):
        return nm, repr(value), None  # x ** 2 and the like become products in the code
    want = "bool_" if nm in entry.bool_inputs else compute_name
    if hasattr(value, "_lazy"):
        return nm, tensor_value(program, value), want
    return nm, program.leaf(value, want), want


def tensor_value(program, t):
    """The var holding tensor `t`'s values: its pending expression's steps, or a leaf for its array."""
    arr = t._arr
    if arr is None:
        e = t._lazy
        if e.arr is None:
            return value_of(program, e)
        arr = e.arr
    return program.leaf(arr, KERNEL_DTYPE[np.dtype(arr.dtype)])


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
            arr.__class__ is not np.ndarray or\
            e.shape != arr.shape or not arr.flags.c_contiguous or 0 in arr.shape:
        return False
    _FORCING.add(id(e))
    try:
        arr = target._data  # computes the other pending readers of this storage first
    finally:
        _FORCING.discard(id(e))
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


def fold_region(t, split=0, kind="sum", acc_dtype="float64"):
    """Folds tensor `t` (sum, max or min) over its dims from `split` on in one pass with several
    accumulators; a pending `t` is computed inside the pass and never stored."""
    program = fused.Program(t._shape)
    var = tensor_value(program, t)
    return fused.run_fold(program, var, acc_dtype, split, kind)

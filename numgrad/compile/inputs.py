"""A compiled call's tensor arguments that need no grad: the trace runs on a proxy over a buffer of the tape's
own; a replay either copies the caller's values into that buffer or, where the tape's entries can read the
caller's memory as it is, remakes those entries on it (no copy of a batch at each step)."""
import numpy as np

from ..kernels import dispatch
from ..tensor_base import TensorBase
from . import recorder as _recorder
from . import slots as _slots

# below this, copying an argument costs less than remaking the entries that read it, as for a result (the small
# MLP's batch of 8 KiB: 8 us more a step bound than copied; the MLP's 784 KiB: about 100 us less)
MIN_BYTES = _slots.MIN_BYTES


class Input:
    """A tensor argument replayed through the tape: its buffer, the proxy the trace ran on, and (`binds`) how
    the entries reading the buffer are made again on the caller's memory, when they can be."""
    __slots__ = (
        "binds",
        "bound",
        "buf",
        "dtype",
        "last",
        "last_version",
        "position",
        "proxy",
        "shape",
        "start_version",
        "tape_roots",
    )

    def __init__(self, position, t):
        self.position = position
        self.buf = dispatch.contiguous(t._data).copy() if dispatch.is_host(t._data) else t._data.copy()
        self.proxy = TensorBase._make(self.buf, t._dtype)
        self.proxy._vc[0] = self.start_version = t._vc[0]  # the argument's count, as eager reads it
        self.shape, self.dtype = t._shape, t._dtype
        self.last, self.last_version = t, t._vc[0]
        self.binds = None  # [(entry list, index, the entry's recipe over Views)] (bind_plan)
        self.bound = self.buf  # the memory the entries read now
        self.tape_roots = None  # ids of the arrays the tape knows (never read in place: it may write them)

    def accepts(self, t):
        return isinstance(t, TensorBase) and not t._requires_grad and t._dtype is self.dtype and \
            t._shape == self.shape and t._data.__class__ is self.buf.__class__ and t.is_contiguous()

    def load(self, t):
        if t is self.last and t._vc[0] == self.last_version:
            return  # the same tensor, unchanged since the last call: its values are where the entries read
        self.last, self.last_version = t, t._vc[0]
        arr = t._data
        if self.binds is not None and self._readable(arr):
            if arr is not self.bound:
                self._bind(arr)
            return
        if self.bound is not self.buf:
            self._bind(self.buf)
        dispatch.copy_into(self.buf, arr)

    def _readable(self, arr):
        """Whether the entries can read `arr` in place: host memory laid out as the buffer, and none the tape
        knows (its buffers, constants and the arrays from before the call it reads or writes)."""
        return arr.__class__ is np.ndarray and arr.strides == self.buf.strides and arr.dtype == self.buf.dtype \
            and arr.flags.aligned and arr.flags.c_contiguous and id(dispatch.storage(arr)) not in self.tape_roots

    def _bind(self, arr):
        """Points the entries reading the argument, and the proxy the trace's graph saved, at `arr`."""
        for target, index, recipe in self.binds:
            filled = _filled_recipe(recipe, arr)
            if target.__class__ is list:
                # (made again on the buffer too: the tape holds one entry per call, as many references to the
                # .grad arrays it writes as when sealed, see Variant.aliased)
                target[index] = _recorder.make_entry(*filled)
            else:  # a slot's entry: the slot makes it for the buffer it chooses (compile/slots.py)
                target.recipe, target.version = filled, target.version + 1
        self.proxy._arr = self.bound = arr


class View:
    """An array of a recipe that is a view of an argument's buffer: where it lies in that memory."""
    __slots__ = ("dtype", "offset", "shape", "strides", "whole")

    def __init__(self, arr, buf):
        self.shape, self.dtype, self.strides = arr.shape, arr.dtype, arr.strides
        self.offset = dispatch.data_ptr(arr) - dispatch.data_ptr(buf)
        self.whole = arr.shape == buf.shape and arr.strides == buf.strides and self.offset == 0 and \
            arr.dtype == buf.dtype

    def on(self, arr):
        if self.whole:
            return arr
        return np.ndarray(self.shape, self.dtype, buffer=arr, offset=self.offset, strides=self.strides)


_UNREACHABLE = object()


def _template(value, buf):
    """`value` (a recipe's argument) with each view of `buf` replaced by its View; _UNREACHABLE when some array
    of the buffer sits where a remade entry could not reach it (inside a fused program, say)."""
    if value.__class__ is np.ndarray:
        return View(value, buf) if dispatch.storage(value) is buf else value
    if value.__class__ in (list, tuple):  # (a named tuple, a kernel's plan, stays as it is)
        items = [_template(v, buf) for v in value]
        if any(t is _UNREACHABLE for t in items):
            return _UNREACHABLE
        return items if value.__class__ is list else tuple(items)
    if any(dispatch.storage(a) is buf for a in _recorder.arrays_of(value)):
        return _UNREACHABLE
    return value


def _filled(value, arr):
    if value.__class__ is View:
        return value.on(arr)
    if value.__class__ in (list, tuple):
        items = [_filled(v, arr) for v in value]
        return items if value.__class__ is list else tuple(items)
    return value


def _filled_recipe(recipe, arr):
    """A recipe over Views as the recorder's (fn, args, kwargs, out_kw, result), on memory `arr`."""
    fn, method, args, kwargs, out_kw, result = recipe
    if method is not None:  # a bound method of a view of the buffer (arr.astype)
        fn = getattr(fn.on(arr), method)
    return fn, _filled(args, arr), {k: _filled(v, arr) for k, v in kwargs.items()}, out_kw, result


def bind_plan(rec, inputs, backward, slots, spec):
    """After the trace: for each host argument of MIN_BYTES or more, the entries that read its buffer and how
    to make each again on other memory (inp.binds: [(entry list or Slot, index, recipe)]), when every one
    of them can be: a recorded call with results (none in the buffer), its arrays in plain arguments; and
    when no result is copied out of the buffer and no tensor the trace's own graph saved, beside the proxy,
    is a view of it (a view made in the call reads the buffer, wherever the proxy points later)."""
    forward = len(rec.entries)
    slot_at = {slot.position: slot for slot in slots}
    read_as_buffer = _slots.copied_roots(spec, {}).keys() | (backward.saved_roots if backward is not None else set())
    known = {id(root) for root in rec.known.values()}
    for inp in inputs:
        buf = inp.buf
        if buf.__class__ is not np.ndarray or buf.nbytes < MIN_BYTES or id(buf) in read_as_buffer:
            continue
        binds = []
        for index, touched in rec.touches.items():
            if id(buf) not in touched:
                continue
            entries, at = (rec.entries, index) if index < forward else \
                (backward.entries if backward is not None else None, index - forward)
            recipe = rec.recipes.get(index)
            if entries is None or at >= len(entries) or recipe is None:
                break
            recipe = _recipe(recipe, buf)
            if recipe is None:
                break
            binds.append((slot_at.get(index, entries), at, recipe))
        else:
            if binds:
                inp.binds, inp.tape_roots = binds, known


def _recipe(recipe, buf):
    """A recorded call's recipe with the views of `buf` as Views: (fn, method name or None, args, kwargs,
    out_kw, result); None when it cannot be made again on other memory."""
    fn, args, kwargs, out_kw, result = recipe
    outputs = result if isinstance(result, (list, tuple)) else [result]
    if any(r is not None and dispatch.storage(r) is buf for r in outputs):
        return None  # it writes the buffer
    method, owner = None, getattr(fn, "__self__", None)
    if owner.__class__ is np.ndarray and dispatch.storage(owner) is buf:
        fn, method = View(owner, buf), fn.__name__
    elif owner is not None and _template(owner, buf) is _UNREACHABLE:
        return None
    args, kwargs = _template(args, buf), {k: _template(v, buf) for k, v in kwargs.items()}
    if args is _UNREACHABLE or any(v is _UNREACHABLE for v in kwargs.values()):
        return None
    return fn, method, args, kwargs, out_kw, result

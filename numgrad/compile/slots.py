"""Results a replay hands out in memory of their own instead of copies of the tape's buffers: the one entry
that writes such a result is made again for a few buffers, and each replay writes into one that nobody holds
any more (a result the user keeps from an earlier call never changes, as in eager)."""
import sys

import numpy as np

from ..kernels import dispatch
from ..tensor_base import TensorBase
from . import recorder as _recorder

MIN_BYTES = 1 << 16  # below this, copying a result costs less than remaking an entry now and then
KEEP = 4  # buffers a slot reuses; when the user holds all of them, the oldest stays the user's alone


class Slot:
    """One result's memory across replays: the buffers it writes in turn (the trace's own is the user's)."""

    def __init__(self, rec, position, root, shape, assigns, grad):
        self.position = position  # the entry that writes the result
        self.recipe = rec.recipes[position]
        self.root = root
        self.shape = shape  # the result's shape (its array is the buffer itself, or that buffer reshaped)
        self.assigns = assigns  # [(entry index, leaf)]: the result is also these leaves' .grad
        self.dtype = None if grad is None else grad._dtype
        self.buffers = []  # [buffer, its entry, its .grad assignments, its .grad tensor, reference counts]
        # what this call hands out (first the trace's own buffer and .grad tensor)
        self.current, self.grad = root, grad

    def choose(self, entries):
        """Points the tape at a buffer nobody outside holds (a new one when the user holds them all)."""
        self.current = self.grad = None  # (the references of the last call's result are not the user's)
        for b in self.buffers:
            if _counts(b) == b[4]:
                break
        else:
            if len(self.buffers) >= KEEP:
                self.buffers.pop(0)  # held by the user: it is theirs now
            b = self._new_buffer()
        entries[self.position] = b[1]
        for (index, _), assign in zip(self.assigns, b[2]):
            entries[index] = assign
        self.current, self.grad = b[0], b[3]

    def array(self):
        buf = self.current
        return buf if buf.shape == self.shape else buf.reshape(self.shape)

    def _new_buffer(self):
        fn, args, kwargs, out_kw, result = self.recipe
        buf = np.empty_like(self.root)
        if isinstance(result, (list, tuple)):
            new = type(result)(buf if r is self.root else r for r in result)
        else:
            new = buf
        grad = None
        assigns = []
        if self.assigns:
            grad = TensorBase._make(buf if buf.shape == self.shape else buf.reshape(self.shape), self.dtype)
            assigns = [_recorder.grad_assignment(leaf, grad) for _, leaf in self.assigns]
        b = [buf, _recorder.make_entry(fn, args, kwargs, out_kw, new), assigns, grad]
        self.buffers.append(b)
        del buf, new, grad, assigns
        b.append(_counts(b))  # the tape's own references to the buffer and its .grad tensor
        return b


def _counts(b):
    return sys.getrefcount(b[0]), 0 if b[3] is None else sys.getrefcount(b[3])


def plan(rec, spec, forward_entries):
    """The output spec with each result that a slot can serve as ("slot", Slot, dtype, requires_grad, nr),
    and the slots. A result qualifies when its array is all of a host buffer of the tape, in C order, large,
    written whole by one recorded call that does not read it, read or written by no other entry (forward or
    backward) but the assignment of the same tensor as a leaf's .grad, and outside the graph of the results."""
    users = {}
    for index, roots in rec.touches.items():
        for r in roots:
            users.setdefault(r, []).append(index)
    assigned = {}  # id(root) -> [(entry index, leaf, tensor)]
    for index, e in enumerate(rec.entries[:forward_entries]):
        leaf, value = _recorder.grad_assigned(e)
        if value is not None and value._arr is not None:
            assigned.setdefault(id(dispatch.storage(value._arr)), []).append((index, leaf, value))
    slots = []
    shared = _copied_roots(spec, {})  # a buffer two results copy stays copied (a slot would leave one stale)

    def convert(s):
        kind = s[0]
        if kind == "seq":
            return ("seq", s[1], [convert(x) for x in s[2]])
        if kind == "dict":
            return ("dict", s[1], {k: convert(x) for k, x in s[2].items()})
        if kind != "copy":
            return s
        _, arr, dtype, requires_grad, nr, plain, value = s
        slot = None if shared.get(id(dispatch.storage(arr)), 0) > 1 else \
            _slot_for(rec, arr, value, nr, users, assigned, forward_entries)
        if slot is None:
            return s[:6]
        slots.append(slot)
        return ("slot", slot, dtype, requires_grad, nr)
    return convert(spec), slots


def _copied_roots(spec, counts):
    """id(root) -> how many results the spec copies out of that buffer."""
    if spec[0] == "copy":
        key = id(dispatch.storage(spec[1]))
        counts[key] = counts.get(key, 0) + 1
    elif spec[0] in ("seq", "dict"):
        for s in (spec[2] if spec[0] == "seq" else spec[2].values()):
            _copied_roots(s, counts)
    return counts


def _slot_for(rec, arr, value, nr, users, assigned, forward_entries):
    if arr.__class__ is not np.ndarray or arr.nbytes < MIN_BYTES or not arr.flags.c_contiguous or \
            (nr is not None and nr != -1):
        return None
    root = dispatch.storage(arr)
    if root.__class__ is not np.ndarray or not root.flags.c_contiguous or root.dtype != arr.dtype or \
            root.size != arr.size or dispatch.data_ptr(root) != dispatch.data_ptr(arr):
        return None
    grads = assigned.get(id(root), [])
    if any(t is not value for _, _, t in grads) or (grads and value._requires_grad):
        return None
    touching = [i for i in users.get(id(root), []) if all(i != g[0] for g in grads)]
    if len(touching) != 1 or touching[0] >= forward_entries or touching[0] not in rec.recipes:
        return None
    position = touching[0]
    fn, args, kwargs, out_kw, result = rec.recipes[position]
    outputs = result if isinstance(result, (list, tuple)) else [result]
    if sum(r is root for r in outputs) != 1 or \
            any(dispatch.storage(a) is root for a in _recorder.arrays_of((args, list(kwargs.values())))):
        return None
    return Slot(rec, position, root, arr.shape, [(i, leaf) for i, leaf, _ in grads], value if grads else None)


def rebuild(spec):
    """The tensor a replay hands out for a slot's result."""
    _, slot, dtype, requires_grad, nr = spec
    if slot.grad is not None:
        return slot.grad  # the leaf's .grad, returned: the same tensor, as eager returns it
    return TensorBase._make(slot.array(), dtype, requires_grad)

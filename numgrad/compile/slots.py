"""Results and .grads a replay hands out in memory of their own instead of writing them into memory the user
may hold (or copying them out of the tape's buffers): the one entry that writes such a tensor is made again
for a few buffers, and each replay writes into one that nobody holds any more (a result or a .grad the user
keeps from an earlier call never changes, as in eager)."""
import sys

import numpy as np

from ..kernels import dispatch
from ..tensor_base import TensorBase
from . import recorder as _recorder

MIN_BYTES = 1 << 16  # below this, copying a result costs less than remaking an entry now and then
KEEP = 4  # buffers a slot reuses; when the user holds all of them, the oldest stays the user's alone


class Slot:
    """One result's (or .grad's) memory across replays: the buffers it writes in turn (the trace's own is
    the user's)."""

    def __init__(self, rec, position, root, shape, assigns, grad):
        self.position = position  # the entry that writes the result
        # how to make that entry; an argument read in place changes it (compile/inputs.py), and `version`
        # then tells the entries made before from those made on its current arrays
        self.recipe, self.version = rec.recipes[position], 0
        self.root = root
        # a prepared fill reads the value it fills from its result (dispatch's _prepare_host_full): a new buffer
        # starts with it, as the trace left it (the user may write the trace's own buffer since)
        self.first = root.flat[0] if root.size else None
        self.shape = shape  # the result's shape (its array is the buffer itself, or that buffer reshaped)
        self.assigns = assigns  # [(entry index, leaf)]: the result is also these leaves' .grad
        self.leaves = tuple(leaf for _, leaf in assigns)
        self.dtype = None if grad is None else grad._dtype
        # [buffer, its entry, its .grad assignments, its .grad tensor, reference counts, the entry's version]
        self.buffers = []
        self.used = None  # the buffer the tape writes now
        # what this call hands out (first the trace's own buffer and .grad tensor)
        self.current, self.grad = root, grad

    def choose(self, entries):
        """Points the tape at a buffer nobody outside holds (a new one when the user holds them all): the one
        it writes now when free, else another."""
        self.current = self.grad = None  # (the references of the last call's result are not the user's)
        b = self.used
        # (_free written out for the usual .grad of one leaf: a replay runs this for every slot)
        if b is None or sys.getrefcount(b[0]) != b[4][0] or (b[3] is not None and (
                sys.getrefcount(b[3]) - (self.leaves[0]._grad is b[3]) != b[4][1] if len(self.leaves) == 1
                else not self._free(b))):
            for b in self.buffers:
                if self._free(b):
                    break
            else:
                if len(self.buffers) >= KEEP:
                    self.buffers.pop(0)  # held by the user: it is theirs now
                b = self._new_buffer()
            entries[self.position] = b[1]
            for (index, _), assign in zip(self.assigns, b[2]):
                entries[index] = assign
            self.used = b
        if b[5] != self.version:
            entries[self.position] = b[1] = self._entry(b[0])
            b[5] = self.version
        self.current, self.grad = b[0], b[3]

    def _free(self, b):
        """Whether only the tape refers to buffer `b` and its .grad tensor, beside the leaves whose .grad it
        is (a replay assigns them another: eager would drop it for a new one)."""
        if sys.getrefcount(b[0]) != b[4][0]:
            return False
        if b[3] is None:
            return True
        held = sys.getrefcount(b[3])  # (before a local name refers to it too)
        grad = b[3]
        for leaf in self.leaves:
            held -= leaf._grad is grad
        return held == b[4][1]

    def array(self):
        buf = self.current
        return buf if buf.shape == self.shape else buf.reshape(self.shape)

    def _entry(self, buf):
        """The entry writing the result into `buf`, made from the recipe."""
        fn, args, kwargs, out_kw, result = self.recipe
        if isinstance(result, (list, tuple)):
            new = type(result)(buf if r is self.root else r for r in result)
        else:
            new = buf
        return _recorder.make_entry(fn, args, kwargs, out_kw, new)

    def _new_buffer(self):
        buf = np.empty_like(self.root)
        if self.first is not None:
            buf.flat[0] = self.first
        grad = None
        assigns = []
        if self.assigns:
            grad = TensorBase._make(buf if buf.shape == self.shape else buf.reshape(self.shape), self.dtype)
            assigns = [_recorder.grad_assignment(leaf, grad) for _, leaf in self.assigns]
        b = [buf, self._entry(buf), assigns, grad]
        self.buffers.append(b)
        del buf, grad, assigns
        b.append(_counts(b))  # the tape's own references to the buffer and its .grad tensor
        b.append(self.version)
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
    shared = copied_roots(spec, {})  # a buffer two results copy stays copied (a slot would leave one stale)
    spec = _with_slots(spec, slots, shared, rec, users, assigned, forward_entries)
    # a .grad the call assigns and does not return: a slot too, of any size (a replay writing into a .grad the
    # user kept would change it, where eager makes a new one; the tape's grads held run eager, see
    # Variant.aliased). One a result copies out of its buffer stays there.
    served = {id(slot.root) for slot in slots} | shared.keys()
    for key, grads in assigned.items():
        value = grads[0][2]
        if key not in served:
            slot = _slot_for(rec, value._arr, value, None, users, assigned, forward_entries, 0)
            if slot is not None and all(slot.position != other.position for other in slots):
                slots.append(slot)
    return spec, slots


def _with_slots(s, slots, shared, rec, users, assigned, forward_entries):
    """plan's output spec `s` with each copied result a slot serves as a slot entry (the slots appended to
    `slots`). A module-level function, not a closure calling itself: that would be a reference cycle keeping
    the recorder, and the arrays its recipes hold, alive until the garbage collector ran, so that a .grad's
    reference count at Variant.seal would count them and a held .grad would later look free."""
    kind = s[0]
    if kind == "seq":
        return ("seq", s[1], [_with_slots(x, slots, shared, rec, users, assigned, forward_entries) for x in s[2]])
    if kind == "dict":
        return ("dict", s[1], {k: _with_slots(x, slots, shared, rec, users, assigned, forward_entries)
                               for k, x in s[2].items()})
    if kind != "copy":
        return s
    _, arr, dtype, requires_grad, nr, plain, value = s
    slot = None if shared.get(id(dispatch.storage(arr)), 0) > 1 else \
        _slot_for(rec, arr, value, nr, users, assigned, forward_entries)
    if slot is not None and any(slot.position == other.position for other in slots):
        slot = None  # one entry with two results: a slot remakes it for its own alone
    if slot is None:
        return s[:6]
    slots.append(slot)
    return ("slot", slot, dtype, requires_grad, nr)


def copied_roots(spec, counts):
    """id(root) -> how many results the spec copies out of that buffer."""
    if spec[0] == "copy":
        key = id(dispatch.storage(spec[1]))
        counts[key] = counts.get(key, 0) + 1
    elif spec[0] in ("seq", "dict"):
        for s in (spec[2] if spec[0] == "seq" else spec[2].values()):
            copied_roots(s, counts)
    return counts


def _slot_for(rec, arr, value, nr, users, assigned, forward_entries, min_bytes=MIN_BYTES):
    if arr.__class__ is not np.ndarray or arr.nbytes < min_bytes or not arr.flags.c_contiguous or \
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
    # another result of the entry that is a .grad: each buffer's entry would refer to its memory too, which
    # the tape counts to see whether the user holds it (Variant.aliased); and the slot would write it alone
    if any(r is not root and r is not None and id(dispatch.storage(r)) in assigned for r in outputs):
        return None
    return Slot(rec, position, root, arr.shape, [(i, leaf) for i, leaf, _ in grads], value if grads else None)


def rebuild(spec):
    """The tensor a replay hands out for a slot's result."""
    _, slot, dtype, requires_grad, nr = spec
    if slot.grad is not None:
        return slot.grad  # the leaf's .grad, returned: the same tensor, as eager returns it
    return TensorBase._make(slot.array(), dtype, requires_grad)

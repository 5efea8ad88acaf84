"""The gradients waiting at each node during one backward pass, summed as they arrive.

A tensor's `_fresh` flag says that this pass alone holds its buffer: a sum may be written into it in
place, and AccumulateGrad (node.accumulate_into_grad) may keep it as the leaf's `.grad` without a copy.
Only the backward machinery sets it: this module, and fused_backward for the gradients it computes."""
from sys import getrefcount
from types import SimpleNamespace

import numpy as np

from .. import lazy
from .._core.state import STATE
from ..kernels import dispatch, tape
from ..node import add_into
from ..ops.elementwise import ElementwiseBackward
from ..tensor_base import TensorBase


class GradBuffers:
    """node -> {output number: gradient summed so far}."""

    def __init__(self):
        self.slots = {}

    def add(self, node, nr, g):
        slot = self.slots.get(node)
        if slot is None:
            self.slots[node] = {nr: g}
        else:
            slot[nr] = _sum(slot.get(nr), g)

    def take(self, node):
        """The node's incoming gradients, one per output (None where none arrived)."""
        return self.taken(self.slots.pop(node, None))

    @staticmethod
    def taken(inputs):
        """take's list for a node's slot `inputs` (None: nothing arrived)."""
        if not inputs:
            return [None]
        if len(inputs) == 1 and 0 in inputs:  # the usual node: one output
            return [inputs[0]]
        return [inputs.get(i) for i in range(max(inputs) + 1)]


def _sum(a, b):
    if a is None:
        return b
    if not STATE.grad_enabled:
        for own, other in ((a, b), (b, a)):  # sum into whichever is the engine's own buffer
            arr = own._arr
            if own._fresh and arr is not None and arr.flags.writeable and arr.shape == other._shape and\
                    other._arr is not None:  # (a pending `other` is summed in its own fused pass below)
                add_into(own, other)
                return own
    s = a + b
    s._fresh = True
    return s


def own_new_results(node, results, grads, detect):
    """Marks results the node's backward made just now as held by this pass alone: an elementwise node's
    results other than its incoming gradient; with `detect` (fusion on), other nodes' pending results and
    arrays that are nobody's view and that nothing else refers to (an incoming gradient, a saved tensor, a
    hook, a pending expression: each holds a reference)."""
    if isinstance(node, ElementwiseBackward):
        for r in results:
            if r is not None and r is not grads[0]:
                r._fresh = True
        return
    if not detect:
        return
    i = -1
    for r in results:  # (not enumerate: its reused tuple would hold a reference to r)
        i += 1
        if r is None or r._fresh:
            continue
        arr = r._arr
        if arr is None:
            if not any(r is g for g in grads):
                r._fresh = True
        elif r._grad_fn is None and dispatch.owns_memory(arr):
            # outside a trace, the reference counts say it (a count above the loop's own is another holder);
            # a trace's recorder holds every array it saw, so there the node's inputs and saved values are asked
            if (getrefcount(r) == _RESULT_REFS and getrefcount(arr) == _ARRAY_REFS) if not tape.active else \
                    not any(r is g for g in grads) and id(arr) not in _arrays_read(node, grads):
                r._fresh = True
        elif r._base is not None and results.__class__ is list and _takes_over(node, r, grads, results):
            results[i] = _plain(r)


def _counts_when_held_by_the_loop_alone():
    """sys.getrefcount's counts, in own_new_results's loop, for a result that only `results` holds and for its
    array that only the result holds: worked out here by the same code, not assumed (an interpreter that
    borrows a reference counts fewer)."""
    results = [SimpleNamespace(_arr=np.empty(1))]  # (a tensor's stand-in: tensor classes are not made yet)
    for r in results:
        arr = r._arr
        return getrefcount(r), getrefcount(arr)


_RESULT_REFS, _ARRAY_REFS = _counts_when_held_by_the_loop_alone()


def _arrays_read(node, grads):
    """The ids of the arrays of the node's incoming gradients and saved values (the node keeps them alive)."""
    held = {id(g._arr) for g in grads if g is not None and g._arr is not None}
    for v in node._saved.values():
        t, data = getattr(v, "tensor", None), getattr(v, "data", None)
        if t is not None and t._arr is not None:
            held.add(id(t._arr))
        if data is not None:
            held.add(id(data))
    return held


def _takes_over(node, r, grads, results):
    """Whether result `r` is a view of an incoming gradient this pass alone holds (the transpose's backward
    of a column-major gradient) and the only thing of the node that refers to that memory: it then takes
    the gradient's place as the pass's own, and AccumulateGrad keeps it without a copy."""
    g = r._base
    if not g._fresh or g._arr is None or r._grad_fn is not None or not any(g is x for x in grads) or \
            not dispatch.is_host(g._arr):
        return False
    root = dispatch.storage(g._arr)
    if r._arr.size != root.size or not lazy.is_dense_array(r._arr):  # all of that memory, each element once
        return False
    for other in results:
        if other is not None and other is not r and (other is g or other._arr is None or
                                                    dispatch.storage(other._arr) is root):
            return False
    return not any(_holds_memory(v, root) for v in node._saved.values())


def _plain(view):
    """A tensor over `view`'s array that is nobody's view (as torch's AccumulateGrad detaches what it keeps),
    marked as the pass's own in place of the gradient it views."""
    view._base._fresh = False
    plain = TensorBase._make(view._arr, view._dtype)
    plain._fresh = True
    return plain


def _holds_memory(saved, root):
    t = getattr(saved, "tensor", None)
    data = getattr(saved, "data", None)
    return (data is not None and dispatch.is_host(data) and dispatch.storage(data) is root) or \
        (t is not None and t._arr is not None and dispatch.is_host(t._arr) and dispatch.storage(t._arr) is root)




def disown_repeated(results):
    """One tensor sent down two edges: no AccumulateGrad may keep it as its own."""
    if len(results) == 2:  # (the usual case: a binary op's two gradients)
        a, b = results
        if a is b and a is not None:
            a._fresh = False
        return
    seen = set()
    for r in results:
        if r is not None:
            if id(r) in seen:
                for r2 in results:
                    if r2 is not None:
                        r2._fresh = False
                return
            seen.add(id(r))


def disown(g):
    """A hook may keep a reference to `g`: it is no longer this pass's alone."""
    g._fresh = False

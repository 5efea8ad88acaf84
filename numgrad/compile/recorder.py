"""The recorder: while numgrad.compile traces one call, the kernel layer's hooks (kernels/tape.py) hand it each
piece of array work, which becomes one entry of a tape; it knows which arrays the tape made (its buffers),
which it reads from tensors made before the call (guarded at replay) and which are constants, and notes
what breaks the graph."""
import functools
import os
import sys
import threading
import weakref

import numpy as np

from .._core.state import STATE
from ..kernels import dispatch, tape
from ..kernels.arrays import on_gpu

_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class GraphBreak(RuntimeError):
    """What fullgraph=True raises where a graph would break (torch raises torch._dynamo's Unsupported)."""


_PLUMBING = {"graph_break", "made", "call", "check", "seen", "user_frame", "_make", "_data", "_host", "call_into"}


def user_frame():
    """'file:line' of the innermost frame outside numgrad (the user's line that reached the op), and the
    innermost numgrad functions below it ('op < caller')."""
    frame, inner = sys._getframe(1), []
    while frame is not None:
        path = os.path.abspath(frame.f_code.co_filename)
        if not path.startswith(_PACKAGE) and f"{os.sep}numpy{os.sep}" not in path:
            return f"{frame.f_code.co_filename}:{frame.f_lineno}", " < ".join(inner[:3]) or None
        if frame.f_code.co_name not in _PLUMBING:
            inner.append(frame.f_code.co_name)
        frame = frame.f_back
    return "<unknown>", " < ".join(inner[:3]) or None


def _arrays(value, out):
    """The arrays inside a recorded call's argument (nested lists, tuples, a fused Program's leaves)."""
    if value.__class__ is np.ndarray or on_gpu(value):
        out.append(value)
    elif isinstance(value, (list, tuple)):
        for v in value:
            _arrays(v, out)
    elif hasattr(value, "leaves") and hasattr(value, "steps"):  # kernels.ir.Program
        for leaf in value.leaves:
            if leaf.kind != "scalar":
                _arrays(leaf.value, out)
        if value.sources:  # the arrays its scalar leaves are read from
            out.extend(value.sources.values())
    return out


def _copy_results(fn, args, kwargs, olds):
    """Runs a recorded function that allocates its results, and moves them into the trace's buffers."""
    new = fn(*args, **kwargs)
    for old, value in zip(olds, new if isinstance(new, (list, tuple)) else (new,)):
        if value is not old and old is not None:
            dispatch.copy_into(old, value)


def make_entry(fn, args, kwargs, out_kw, result, has_results=True):
    """The tape entry replaying a recorded call into its result arrays `result`."""
    prepare = getattr(fn, "prepare", None)  # a leaner replay the function offers (cpu/fused.py)
    fast = prepare(result, *args, **kwargs) if prepare is not None else None
    if fast is not None:
        return fast
    if out_kw is not None:
        return functools.partial(fn, *args, **{**kwargs, out_kw: result})
    if has_results:
        return functools.partial(_copy_results, fn, args, kwargs,
                                 list(result) if isinstance(result, (list, tuple)) else [result])
    return functools.partial(fn, *args, **kwargs)


class Recorder:
    def __init__(self, fullgraph=False):
        self.fullgraph = fullgraph
        self.entries = []  # zero-argument callables: the replay runs them in order
        # entry index -> (fn, args, kwargs, out_kw, result) of a recorded call with results: how to make the entry
        # again for other result arrays (compile/slots.py hands results out in new memory rather than copies)
        self.recipes = {}
        self.touches = {}  # entry index -> ids of the root arrays it reads or writes (calls, constants, .grad)
        self.known = {}  # id(root array) -> root: buffers the tape made, constants, external arrays
        self.external = {}  # id(root) -> (weak reference to the tensor, its array): read from before the call
        self.breaks = []  # (reason, user's line, numgrad function)
        self.depth = 0  # > 0 inside a recorded function or a live call: nested hooks are part of it
        self.created = []  # weak references to the tensors made during the trace
        self.grads_set = set()  # id(leaf) of leaves whose .grad the call itself assigned
        self.grad_guards = []  # (leaf, .grad object it had when the call first read it)
        self.live_calls = []  # names of the Python calls a replay repeats (optimizer.step, zero_grad)
        self.broken = False
        # id(host root) -> checksum of its bytes after the last recorded work on it: a write the tape did not
        # record (plain NumPy into a buffer it knows) shows as a changed checksum, and breaks the graph
        self.sums = {}
        # id(version counter) -> [counter, its count when first seen]: of the tensors made before the call, so
        # that a replay bumps them as the call's in-place writes did (eager's version errors afterwards)
        self.versions = {}

    # ---- the hooks -----------------------------------------------------------------------------------
    def call(self, fn, args, kwargs, out_kw):
        if self.broken:
            return fn(*args, **kwargs)
        # a bound method's array (arr.astype) is read too
        touched = _arrays(args, _arrays(list(kwargs.values()), _arrays(getattr(fn, "__self__", None), [])))
        if not all(self.check(arr) for arr in touched) or not self.unchanged(touched):
            return fn(*args, **kwargs)
        self.depth += 1
        try:
            result = fn(*args, **kwargs)
        finally:
            self.depth -= 1
        results = [r for r in (result if isinstance(result, (list, tuple)) else [result]) if r is not None]
        if not all(r.__class__ is np.ndarray or on_gpu(r) for r in results):
            self.graph_break(f"{getattr(fn, '__name__', fn)} returned a Python value")
            return result
        # a function writes its results; one returning none wrote into its arguments (copy_into, scatters):
        # those are checksummed again. (A missed in-place write could only break the graph, at the next read.)
        self.remember(results if results else touched)
        for r in results:
            root = dispatch.storage(r)
            self.known[id(root)] = root
        index = len(self.entries)
        self.touches[index] = {id(dispatch.storage(a)) for a in touched + results}
        if results:
            self.recipes[index] = (fn, args, kwargs, out_kw, result)
        self.entries.append(make_entry(fn, args, kwargs, out_kw, result, bool(results)))
        return result

    def remember(self, arrays):
        """Checksums the host memory of `arrays` as the recorded work left it."""
        roots = _host_roots(arrays)
        self.sums.update(zip(roots, dispatch.host_checksums(list(roots.values()))))

    def unchanged(self, arrays):
        """Whether the memory of `arrays` holds what the recorded work left there (else the graph breaks)."""
        roots = {key: root for key, root in _host_roots(arrays).items() if key in self.sums}
        sums = self.sums
        if all(sums[key] == now for key, now in zip(roots, dispatch.host_checksums(list(roots.values())))):
            return True
        self.graph_break("an array the tape knows was written outside the recorded kernels")
        return False

    def verify(self):
        """At the end of the trace: every host buffer holds what the recorded work left there."""
        if not self.broken:
            self.unchanged(list(self.known.values()))

    def check(self, arr):
        """Whether array `arr` is one the tape can read at replay: its buffers, constants, external arrays."""
        if id(dispatch.storage(arr)) in self.known:
            return True
        self.graph_break("an array made outside the recorded kernels is read")
        return False

    def seen(self, t, arr):
        """Tensor `t` hands out its array `arr`: one made before the call is read from outside (guarded)."""
        if self.depth or self.broken:
            return
        root = dispatch.storage(arr)
        if id(root) in self.known:
            return
        self.known[id(root)] = root
        self.external[id(root)] = (weakref.ref(t), arr, t._requires_grad)
        self.versions.setdefault(id(t._vc), [t._vc, t._vc[0]])
        if root.__class__ is np.ndarray:
            self.sums[id(root)] = dispatch.host_checksums([root])[0]

    def made(self, t, arr):
        """Tensor `t` is made during the trace with array `arr`."""
        if self.depth or self.broken:
            return
        self.created.append(weakref.ref(t))
        if arr is None or id(dispatch.storage(arr)) in self.known:
            return
        self.graph_break("an op made a tensor's values outside the recorded kernels")

    def constant(self, arr):
        """Host array `arr` holds values from the traced code itself: a replay writes them again (a later
        recorded write into it would otherwise leave the next replay its values)."""
        root = dispatch.storage(arr)
        self.known[id(root)] = root
        self.touches[len(self.entries)] = {id(root)}
        # (a 0-d constant, the seed gradient of a loss, refills faster than np.copyto copies)
        self.entries.append(functools.partial(arr.fill, arr[()]) if arr.ndim == 0 else
                            functools.partial(np.copyto, arr, arr.copy()))
        self.remember([arr])

    def live(self, name, fn, *args, **kwargs):
        """Runs fn(*args, **kwargs) now and again at each replay, as Python (an optimizer's step reads its
        learning rate, step count and state then)."""
        before = [v[0][0] for v in self.versions.values()]
        self.depth += 1
        try:
            result = fn(*args, **kwargs)
        finally:
            self.depth -= 1
        for v, count in zip(self.versions.values(), before):  # the live call bumps them again at each replay
            v[1] += v[0][0] - count
        if not self.broken:
            self.entries.append(functools.partial(fn, *args, **kwargs))
            self.live_calls.append(name)
            self.remember(list(self.known.values()))  # it may write anything it reaches, as Python
        return result

    def set_grad(self, leaf, value):
        """The call assigns leaf.grad (the engine's accumulation, or user code): a replay assigns it too."""
        if self.depth or self.broken:
            return
        self.grads_set.add(id(leaf))
        if value is not None and value._arr is not None:
            self.touches[len(self.entries)] = {id(dispatch.storage(value._arr))}
        self.entries.append(grad_assignment(leaf, value))

    def read_grad(self, leaf):
        """The engine reads leaf.grad to accumulate into it: unless the call assigned it first, the replay
        needs the same object there."""
        if self.depth or self.broken or id(leaf) in self.grads_set:
            return
        self.grads_set.add(id(leaf))
        self.grad_guards.append((leaf, leaf._grad))

    def graph_break(self, reason):
        if self.depth:  # inside a recorded function or a live call, which a replay runs whole
            return
        where, op = user_frame()
        if self.fullgraph:
            raise GraphBreak(f"numgrad.compile(fullgraph=True): {reason} (in {op}, at {where})")
        if not self.broken:
            self.breaks.append((reason, where, op))
            self.broken = True


def bumps(rec):
    """(version counter, increment) of each tensor from before the call that its recorded writes bumped."""
    return [(vc, vc[0] - start) for vc, start in rec.versions.values() if vc[0] != start]


def _host_roots(arrays):
    """id(root) -> root for the host arrays among `arrays`, each root once."""
    roots = {}
    for arr in arrays:
        if arr.__class__ is np.ndarray:
            root = dispatch.storage(arr)
            roots[id(root)] = root
    return roots


class _GradAssignment(functools.partial):
    """A tape entry assigning a tensor as a leaf's .grad: setattr(leaf, "_grad", value), a C call (no Python
    frame: a replay runs one per parameter, on caches its kernels have just flushed)."""
    describes = "numgrad.compile.recorder.grad_assignment"


def grad_assignment(leaf, value):
    """The tape entry assigning tensor `value` as leaf.grad."""
    return _GradAssignment(setattr, leaf, "_grad", value)


def grad_assigned(entry):
    """(leaf, tensor) of an entry made by grad_assignment, else (None, None)."""
    return (entry.args[0], entry.args[2]) if entry.__class__ is _GradAssignment else (None, None)


def arrays_of(value):
    """The arrays inside a recorded call's arguments."""
    return _arrays(value, [])


def assigned_grads(entries):
    """The tensors the tape's entries assign as .grad (None for an assignment of None)."""
    return [e.args[2] for e in entries if e.__class__ is _GradAssignment]


_active_lock = threading.Lock()  # tape.active counts the tracing threads: no lost update between two


def start(recorder):
    """Makes `recorder` this thread's; returns the previous one (restore with stop)."""
    previous, STATE.recorder = STATE.recorder, recorder
    with _active_lock:
        tape.active += 1
    return previous


def stop(previous):
    STATE.recorder = previous
    with _active_lock:
        tape.active -= 1

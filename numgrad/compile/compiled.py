"""numgrad.compile's compiled function: the first call under new conditions traces fn into a tape (one eager
run whose array work is recorded), later calls whose guards hold replay the tape: precompiled kernels and
BLAS calls on the buffers the trace allocated, with the Python of the live calls (optimizer steps) only."""
import functools
import gc
import numbers
import os
import sys
import threading
import weakref

import numpy as np

from .._core.shapes import storage_span
from .._core.state import STATE
from .._core.warn import warn
from ..kernels import dispatch
from ..node import Node, sequence_now
from ..ops.shape import view_of
from ..tensor_base import TensorBase
from . import backward as _backward
from . import fuse as _fuse
from . import inputs as _inputs
from . import recorder as _recorder
from . import slots as _slots
from .backward import CompiledFunctionBackward

RECOMPILE_LIMIT = 8  # torch._dynamo.config.cache_size_limit
_SCALARS = (bool, int, float, complex, str, type(None))


def _flatten(value, out):
    if isinstance(value, TensorBase):
        out.append(value)
    elif isinstance(value, (list, tuple)):
        for v in value:
            _flatten(v, out)
    elif isinstance(value, dict):
        for v in value.values():
            _flatten(v, out)
    return out


class Variant:
    """One trace: its guards, its tape and how to rebuild the call's result."""

    def __init__(self, mode, arg_spec, rec, inputs, out_builder, backward, slots):
        self.mode = mode
        self.slots = slots  # results handed out in memory of their own (compile/slots.py)
        self.backward = backward  # the BackwardProgram of results whose graph leaves the call, or None
        self.pending = None  # weak reference to the node of the last results, while their backward may come
        self.arg_spec = arg_spec  # per argument: ("input", Input, None) | ("same", obj, None) | ("value", type, v)
        self.loads = [(x.position, x) for kind, x, _ in arg_spec if kind == "input"]
        self.entries = rec.entries
        self.external = list(rec.external.values())
        self.grad_guards = [(leaf, g, None if g is None else g._arr) for leaf, g in rec.grad_guards]
        self.inputs = inputs
        self.build = out_builder
        self.live_calls = rec.live_calls
        self.bumps = _recorder.bumps(rec)  # in-place writes to tensors from before the call: eager's versions
        self.hits = 0
        # the .grad tensors the tape assigns, with the leaves it assigns them to: a replay rewrites their memory,
        # so nobody else may hold them (a .grad a slot serves: the slot sees whether its memory is held)
        owned = {}
        for e in rec.entries:
            leaf, g = _recorder.grad_assigned(e)
            if g is not None and all(g is not slot.grad for slot in slots):
                owned.setdefault(id(g), (g, []))[1].append(leaf)
        self.owned = list(owned.values())
        self.owned_counts = None

    def seal(self):
        """Counts the references to the tensors the tape owns now, while only numgrad holds them."""
        self.owned_counts = _hold_counts(self.owned)

    def aliased(self):
        """Whether user code holds a .grad tensor (or its array) from an earlier call, which eager would
        leave as it is and a replay would overwrite, or results whose backward has yet to read the
        buffers a replay would overwrite."""
        node = self.pending() if self.pending is not None else None
        if node is not None and not node._freed:
            return True
        return any(now[0] > then[0] or now[1] > then[1]
                   for now, then in zip(_hold_counts(self.owned), self.owned_counts))

    def matches(self, args, keywords):
        if (STATE.grad_enabled, STATE.inference, STATE.fusion, keywords) != self.mode or \
                len(args) != len(self.arg_spec):
            return False
        for a, (kind, x, value) in zip(args, self.arg_spec):
            if kind == "input":
                if not x.accepts(a):
                    return False
            elif kind == "same":
                if a is not x:
                    return False
            elif type(a) is not x or a != value:
                return False
        for ref, arr, requires_grad in self.external:
            t = ref()
            if t is None or t._arr is not arr or t._requires_grad != requires_grad:
                return False
        for leaf, g, arr in self.grad_guards:
            if leaf._grad is not g or (g is not None and g._arr is not arr):
                return False
        return True

    def replay(self, args):
        for position, inp in self.loads:
            inp.load(args[position])
        for slot in self.slots:
            slot.choose(self.entries)
        for entry in self.entries:
            entry()
        for vc, increment in self.bumps:
            vc[0] += increment
        self.hits += 1
        return self.results(args)

    def results(self, args):
        """The call's results: a slot's memory as it is, or fresh copies of the tape's buffers; hung on a new
        backward node when their graph leaves the call."""
        node = None
        if self.backward is not None:
            node = CompiledFunctionBackward(self.backward, args)
            self.pending = weakref.ref(node)
        return self.build(args, node)


class CompiledFunction:
    """What numgrad.compile(fn) returns: calls fn through its traced variants (see the module's doc)."""

    def __init__(self, fn, fullgraph=False, dynamic=False):
        self._fn = fn
        self.fullgraph = fullgraph
        self.dynamic = dynamic
        self.variants = []
        self.breaks = []  # (reason, line, op) of the traces that broke
        self.eager_reason = None  # set once the function runs eager for good
        self.traces = 0
        # the tape's buffers serve one call at a time: a call while another thread replays or traces runs eager
        self._busy = threading.Lock()
        functools.update_wrapper(self, fn)

    def __get__(self, obj, objtype=None):  # a compiled method binds like the function it wraps
        return self if obj is None else functools.partial(self, obj)

    def __call__(self, *args, **kwargs):
        keywords = tuple(kwargs)
        if kwargs:
            args = args + tuple(kwargs.values())
            fn = _with_keywords(self._fn, keywords)
        else:
            fn = self._fn
        if self.eager_reason is not None or STATE.recorder is not None:  # nested in a trace: part of it
            return fn(*args)
        if not self._busy.acquire(blocking=False):
            return fn(*args)
        try:
            return self._call(fn, args, keywords)
        finally:
            self._busy.release()

    def _call(self, fn, args, keywords):
        for v in self.variants:
            if v.matches(args, keywords):
                if v.aliased():  # this call runs eager, leaving the tape's buffers alone
                    return fn(*args)
                return v.replay(args)
        if self.traces >= RECOMPILE_LIMIT:
            self.eager_reason = f"recompile limit reached ({RECOMPILE_LIMIT} traces)"
            warn(f"numgrad.compile: {getattr(self._fn, '__name__', self._fn)} reached the recompile limit "
                 f"({RECOMPILE_LIMIT}); it runs eager from now on")
            return fn(*args)
        return self._trace(fn, args, keywords)

    def _trace(self, fn, args, keywords):
        self.traces += 1
        rec = _recorder.Recorder(self.fullgraph)
        mode = (STATE.grad_enabled, STATE.inference, STATE.fusion, keywords)
        arg_spec, inputs, call_args = [], [], []
        for position, a in enumerate(args):
            if _proxyable(a):
                inp = _inputs.Input(position, a)
                rec.known[id(dispatch.storage(inp.buf))] = dispatch.storage(inp.buf)
                arg_spec.append(("input", inp, None))
                inputs.append(inp)
                call_args.append(inp.proxy)
            elif isinstance(a, (*_SCALARS, numbers.Number)):
                arg_spec.append(("value", type(a), a))
                call_args.append(a)
            else:
                arg_spec.append(("same", a, None))
                call_args.append(a)
        first_node = sequence_now()  # the call's own autograd nodes are numbered from here
        previous = _recorder.start(rec)
        try:
            result = fn(*call_args)
            build, backward, slots = self._finish(rec, result, inputs, first_node)
        finally:
            _recorder.stop(previous)
            _give_back(inputs)
        if rec.broken:
            self.breaks.extend(rec.breaks)
            self.eager_reason = "; ".join(f"{r} ({where})" for r, where, _ in rec.breaks)
        elif build is not None:
            variant = Variant(mode, arg_spec, rec, inputs, build, backward, slots)
            self.variants.append(variant)
            if os.environ.get("NUMGRAD_DEBUG") == "1":
                print(describe(variant, getattr(self._fn, "__name__", "fn")), file=sys.stderr)
            recorder = weakref.ref(rec)
            del rec, result
            if recorder() is not None:  # a reference cycle keeps it, and the arrays its recipes read: collected
                gc.collect()  # first, or seal would count their references as the tape's own (a kept .grad then
            variant.seal()  # looks free once they go)
            return variant.results(args)  # as each replay returns them: the next replay rewrites the buffers
        return _unproxy(result, inputs, args)

    def _finish(self, rec, result, inputs, first_node):
        """Still recording: computes what is pending, checks nothing the call made outlives it unseen,
        records the backward of results whose graph leaves the call, and returns the function that rebuilds
        the result at replay, that backward and the result slots ((None, None, None): this trace cannot
        replay)."""
        # values still pending would be computed after the trace, unrecorded; the last made first, so that one
        # fused kernel computes a chain whose intermediates nothing else reads (as eager computes it)
        for ref in reversed(rec.created):
            t = ref()
            if t is not None and t._arr is None and t._lazy is not None:
                t._data  # noqa: B018
        rec.verify()
        if rec.broken:
            return None, None, None
        if any(_arg_state(inp.proxy) != (inp.start_version, False, None) for inp in inputs):
            rec.graph_break("the call changes a tensor argument (in place, or requires_grad)")
            return None, None, None
        outputs = _flatten(result, [])
        created = {id(r()) for r in rec.created if r() is not None}
        roots = []  # results whose graph leaves the call: their backward runs later, outside it
        for o in outputs:
            if id(o) in created and o._grad_fn is not None and not o._grad_fn._freed and \
                    all(o is not r for r in roots):
                roots.append(o)
        kept = outputs + _recorder.assigned_grads(rec.entries)
        allowed = {id(t) for t in kept} | {id(i.proxy) for i in inputs}
        for t in kept:  # a kept view keeps its base
            while t is not None and t._base is not None:
                allowed.add(id(t._base))
                t = t._base
        for ref in rec.created:
            t = ref()
            if t is not None and id(t) not in allowed and t._base is None and _escapes(t, created):
                rec.graph_break("a tensor made inside the call outlives it (stored outside the function)")
                return None, None, None
        spec = _output_spec(result, created, inputs, roots)
        backward = None
        if roots:
            backward = _backward.capture(rec, roots, created, inputs, first_node)
            if backward is None:
                return None, None, None
        _fuse.fuse(rec, len(rec.entries))
        spec, slots = _slots.plan(rec, spec, len(rec.entries))
        _inputs.bind_plan(rec, inputs, backward, slots, spec)
        return functools.partial(_rebuild, spec), backward, slots


def _proxyable(a):
    """A tensor argument a trace may replace by a copy in the tape's own buffer (rebound at each call)."""
    return isinstance(a, TensorBase) and not a._requires_grad and a._base is None and a.is_contiguous()


def _arg_state(a):
    """What a call can change of a tensor argument that it does not own: its version, whether it requires
    grad, its history."""
    return (a._vc[0], a._requires_grad, a._grad_fn) if isinstance(a, TensorBase) else None


def _give_back(inputs):
    """After a trace that changed its copy of an argument (it then runs eager for good), the argument takes
    what eager would have given it: the values, the version count, requires_grad, its history and .grad."""
    for inp in inputs:
        proxy, arg = inp.proxy, inp.last
        if proxy._vc[0] != inp.start_version:
            dispatch.copy_into(arg._data, proxy._data)
            arg._vc[0] += proxy._vc[0] - inp.start_version
        if proxy._requires_grad or proxy._grad_fn is not None or proxy._grad is not None:
            arg._requires_grad, arg._grad_fn, arg._output_nr = proxy._requires_grad, proxy._grad_fn, proxy._output_nr
            arg._grad = proxy._grad
            acc = proxy._accumulator() if proxy._accumulator is not None else None
            if acc is not None:  # a graph made in the call leads to the proxy's AccumulateGrad: the argument's now
                acc.variable = arg
                arg._accumulator = weakref.ref(acc)


def _hold_counts(owned):
    """Per .grad tensor the tape assigns: the references to it but its leaves' (a leaf that still holds it is
    assigned it again, as eager would assign a new one) and those to its array."""
    return [(sys.getrefcount(t) - sum(leaf._grad is t for leaf in leaves), sys.getrefcount(t._arr))
            for t, leaves in owned]


def _escapes(t, created):
    """Whether tensor `t`, made during the trace, is referenced from outside (beyond the loop variable and
    getrefcount's own argument): a view's base or an autograd node may still hold it harmlessly; anything
    else reading it after a replay would see stale values."""
    return sys.getrefcount(t) > 3 and not _only_held_by_graph(t, created)


def _only_held_by_graph(t, created):
    """Whether only autograd's records (a node, a saved tensor), a view made in the call (its base) and
    the trace's own frames refer to `t`."""
    return all(isinstance(r, Node) or type(r).__name__ in ("SavedTensor", "frame") or
               (isinstance(r, TensorBase) and id(r) in created) for r in gc.get_referrers(t))


def _output_spec(value, created, inputs, roots):
    """How a replay rebuilds the result: an argument given back, an object from before the call, or a copy
    of a buffer with its grad_fn (None: none; -1: a graph the call freed; k: output k of the backward)."""
    if isinstance(value, TensorBase):
        position = _input_position(value, inputs)
        if position is not None:
            return ("input", position)
        if id(value) not in created:
            return ("object", value)
        base = value._base
        # (a view made a leaf itself, by requires_grad_(), stays a copy below)
        if value._grad_fn is None and base is not None and not value._requires_grad and dispatch.is_host(base._data):
            position = _input_position(base, inputs)
            if position is not None:  # a view of an argument's proxy: of the argument at replay
                return _view_spec(value, base, base._data, position)
            root = dispatch.storage(base._data)
            if id(base) not in created and root.flags.c_contiguous:
                return _view_spec(value, base, root, None)
        nr = None if value._grad_fn is None else next((k for k, r in enumerate(roots) if r is value), -1)
        arr = value._data
        # (the buffer is the same at each replay: whether a plain copy keeps its strides is known now)
        plain = dispatch.is_host(arr) and arr.copy(order="K").strides == arr.strides
        return ("copy", arr, value._dtype, value._requires_grad, nr, plain, value)  # (plan drops the tensor)
    if isinstance(value, (list, tuple)):
        return ("seq", type(value), [_output_spec(v, created, inputs, roots) for v in value])
    if isinstance(value, dict):
        return ("dict", type(value), {k: _output_spec(v, created, inputs, roots) for k, v in value.items()})
    return ("object", value)


def _rebuild(spec, args, node):
    kind = spec[0]
    if kind == "copy":
        _, arr, dtype, requires_grad, nr, plain = spec
        t = TensorBase._make(arr.copy(order="K") if plain else _copy_like(arr), dtype, requires_grad)
        if nr == -1:
            t._grad_fn = CompiledFunctionBackward()
        elif nr is not None:
            t._grad_fn, t._output_nr = node, nr
            node.outputs[nr] = (t._vc, t._vc[0])
        return t
    if kind == "slot":
        t = _slots.rebuild(spec)
        if spec[4] == -1:
            t._grad_fn = CompiledFunctionBackward()
        return t
    if kind == "input":
        return args[spec[1]]
    if kind == "view":
        return _rebuild_view(args, *spec[1:])
    if kind == "seq":
        return _sequence(spec[1], [_rebuild(s, args, node) for s in spec[2]])
    if kind == "dict":
        return spec[1]({k: _rebuild(s, args, node) for k, s in spec[2].items()})
    return spec[1]


def _view_spec(view, base, root, position):
    """A result that is a view without history of an argument (`position`) or of a tensor from before the
    call (made under no_grad, or of a base that needs no grad): rebuilt at each replay as the same view of
    that tensor, as eager returns it (sharing its memory and version counter, and requiring grad when the
    base does), not as a copy. The view is placed by element strides and offset within `root`: the base's
    storage, or for an argument its proxy's buffer, laid out as the argument. The versions the view
    remembers are kept as distances from the base's count at the end of the call. Host memory only."""
    data = view._data
    now = base._vc[0]
    return ("view", None if position is not None else base, None if position is not None else root, position,
            data.shape, [st // data.itemsize for st in data.strides], dispatch.element_offset(data, root),
            None if view._view_version is None else now - view._view_version,
            None if view._no_grad_view is None else now - view._no_grad_view, view._multi_output)


def _rebuild_view(args, base, root, position, shape, strides, offset, view_age, no_grad_age, multi_output):
    if position is not None:
        base = args[position]
        root = base._data if base._data.flags.c_contiguous else np.ascontiguousarray(base._data)
    t = view_of(base, dispatch.strided(root.reshape(-1), shape, strides, offset))
    # what eager's view remembered, not what view_of derives from the grad mode at this point of the replay
    now = base._vc[0]
    t._view_version = None if view_age is None else now - view_age
    t._no_grad_view = None if no_grad_age is None else now - no_grad_age
    t._multi_output = multi_output
    return t


def _copy_like(arr):
    """A copy of a result with its strides, as eager returned it: a gapped or expanded view's too, over a
    buffer spanning what those strides reach (so that view(), is_contiguous() and in-place writes into
    overlapping memory behave as on eager's result), and the strides eager gave size-1 and empty dims."""
    if not dispatch.is_host(arr):
        return arr.copy()
    out = arr.copy(order="K")
    if out.strides == arr.strides:
        return out
    strides = [st // arr.itemsize for st in arr.strides]
    out = dispatch.strided(np.empty(storage_span(arr.shape, strides), arr.dtype), arr.shape, strides, 0)
    np.copyto(out, arr)
    return out


def _unproxy(value, inputs, args):
    """The traced call's result with the user's tensors where fn returned the proxies it was given."""
    if isinstance(value, TensorBase):
        position = _input_position(value, inputs)
        return value if position is None else args[position]
    if isinstance(value, (list, tuple)):
        return _sequence(type(value), [_unproxy(v, inputs, args) for v in value])
    if isinstance(value, dict):
        return type(value)({k: _unproxy(v, inputs, args) for k, v in value.items()})
    return value


def _input_position(t, inputs):
    """The argument position whose proxy tensor `t` is, or None."""
    for inp in inputs:
        if t is inp.proxy:
            return inp.position
    return None


def _sequence(cls, items):
    """A list, tuple or named tuple of class `cls` holding `items`."""
    return cls(*items) if hasattr(cls, "_fields") else cls(items)


def _with_keywords(fn, names):
    def call(*args):
        n = len(args) - len(names)
        return fn(*args[:n], **dict(zip(names, args[n:])))
    return call


def describe(variant, name):
    """The captured tape, one line per entry (NUMGRAD_DEBUG=1 prints it)."""
    lines = [f"numgrad.compile: {name}: {len(variant.entries)} entries, {len(variant.external)} external "
             f"arrays, live calls {variant.live_calls}"]
    for i, e in enumerate(variant.entries):
        fn = getattr(e, "func", e)
        args = e.args[1] if fn is _recorder._copy_results else getattr(e, "args", ())
        inner = e.args[0] if fn is _recorder._copy_results else fn
        if getattr(inner, "__name__", "") == "_array_result":  # dispatch.numpy_op: name the function it ran
            inner = args[0]
        name = getattr(inner, "__qualname__", None) or getattr(inner, "__name__", None) or type(inner).__name__
        module = getattr(inner, "__module__", None) or type(getattr(inner, "__self__", None)).__module__  # arr.fill
        text = getattr(e, "describes", None) or f"{module}.{name}"
        lines.append(f"  {i:3d} {text}")
    return "\n".join(lines)

"""A compiled call's backward when it runs outside the call (compile(model), then loss.backward()): the trace
runs the call's part of the graph once more, recorded, from placeholder gradients down to the edges leaving
the call (parameters' AccumulateGrad, the histories of arguments), and each replay's results hang on one
CompiledFunctionBackward node whose apply replays that tape."""
import copy
import weakref

import numpy as np

from .._core.state import STATE
from ..autograd import engine
from ..kernels import dispatch, tape
from ..node import FREED, AccumulateGrad, Node, SavedTensor, edge_of
from ..tensor_base import TensorBase

DOUBLE_BACKWARD = "torch.compile with aot_autograd does not currently support double backward"


class CompiledFunctionBackward(Node):
    """The grad_fn of a compiled call's results. Without a program (the call's own backward already used
    and freed the graph) backward through it raises eager's error; with one, it replays the call's
    recorded backward on the buffers its forward replay left."""

    def __init__(self, program=None, args=()):
        super().__init__()
        self.program = program
        if program is not None:
            self.next_functions = program.edges()
            self.versions = program.versions_now(args)
            self.outputs = {}  # output_nr -> (version counter, version) of the result handed out

    def apply(self, grads):
        if self.program is None or self._freed:
            raise RuntimeError(FREED)
        if STATE.grad_enabled:  # the engine turns grad mode on for create_graph
            raise RuntimeError(DOUBLE_BACKWARD)
        tape.graph_break("a compiled call's backward runs inside another traced call")
        return self.program.run(self, grads)

    def apply_without_gradients(self, grads):
        if self.program is None or self._freed:
            raise RuntimeError(FREED)
        self.program.check_versions(self)
        return [None] * len(self.next_functions)


class BackwardProgram:
    """The recorded backward of one traced call: placeholder buffers for the gradients of its results, the
    tape from them to the gradients leaving the call, and what a replay checks first (saved tensors the
    user may have changed in place since the forward, as eager's unpack would)."""

    def __init__(self, grad_inputs, entries, boundary, results, saved, roots, trace_edges):
        self.grad_inputs = grad_inputs  # per output_nr: (buffer, its tensor's dtype)
        # the trace's own results and the edges leaving their graph: that graph saved the very buffers a
        # replay rewrites, so the engine can run it again for what the tape did not record (some results
        # without a gradient: zeros in their place would reach edges eager leaves alone, and 0 * inf is NaN)
        self.roots, self.trace_edges = roots, trace_edges
        self.entries = entries
        self.boundary = boundary  # per edge leaving the call: (weak leaf or None, node, output_nr)
        self.results = results  # per edge: the buffer holding its gradient after the tape, or None
        self.saved = saved  # (SavedTensor, trace's node, argument position or None, output_nr or None)
        self.saved_roots = set()  # ids of the memory the trace's graph saved beside the proxies (capture)

    def edges(self):
        out = []
        for leaf_ref, node, nr in self.boundary:
            if leaf_ref is not None:  # a leaf's AccumulateGrad lives as long as a graph holds it: fetch it again
                leaf = leaf_ref()
                out.append(edge_of(leaf) if leaf is not None else (None, 0))
            else:
                out.append((node, nr))
        return tuple(out)

    def versions_now(self, args):
        """Per saved tensor read from outside the call (an argument by its position): that tensor and its
        version as the forward replay left it; None for a result's own saved value (see outputs)."""
        out = []
        for saved, _, position, output_nr in self.saved:
            if output_nr is None:
                t = args[position] if position is not None else saved.tensor  # a proxy's argument
                out.append((t, t._vc[0]))
            else:
                out.append(None)
        return out

    def check_versions(self, node):
        """Raises eager's error when a tensor the backward reads was modified in place since the forward."""
        for (saved, trace_node, _, output_nr), now in zip(self.saved, node.versions):
            if output_nr is not None:  # a result handed out, as the user may have written it since
                live, (vc, version) = None, node.outputs.get(output_nr, (None, None))
            else:
                live, version = now
                vc = live._vc
            if vc is None or vc[0] == version:
                continue
            stale = copy.copy(saved)
            stale.vc, stale.version = vc, version
            if live is not None and saved.tensor._base is None:  # the tensor itself (a view keeps its shape)
                stale.tensor = live
            stale.unpack(trace_node)  # eager's error: modified by an inplace operation

    def run(self, node, grads):
        self.check_versions(node)
        grads = list(grads) + [None] * (len(self.roots) - len(grads))  # the engine's list ends at the last given
        if any(g is None for g in grads):
            return self.run_graph(grads)
        for (buf, _), g in zip(self.grad_inputs, grads):
            dispatch.copy_into(buf, g._data)
        for entry in self.entries:
            entry()
        return [None if r is None else _copy(r[0], r[1]) for r in self.results]

    def run_graph(self, grads):
        """The backward from the results that got a gradient only, through the trace's own graph (eager)."""
        for saved, _, position, output_nr in self.saved:
            if output_nr is None and position is None:  # check_versions passed: as the forward left it
                saved.version = saved.vc[0]
        given = [(root, g) for root, g in zip(self.roots, grads) if g is not None]
        got = engine.run([r for r, _ in given], [g for _, g in given], True, False,
                         capture=set(self.trace_edges), accumulate=False, stop=True)
        out = []
        for edge in self.trace_edges:
            g = got.get(edge)
            out.append(None if g is None else _copy(g._data, g._dtype))
        return out


def _copy(arr, dtype):
    """A gradient handed to the engine: its own memory (the tape rewrites its buffers at each replay)."""
    return TensorBase._make(arr.copy(order="K") if dispatch.is_host(arr) else arr.copy(), dtype)


def capture(rec, roots, created, inputs, first_node):
    """Records the backward of the call's graph from `roots` (its results with a live graph) down to the
    edges leaving it (nodes numbered before `first_node`, and leaves' AccumulateGrad), while `rec` still
    records. Returns the BackwardProgram, or None when the graph breaks (the reason is in rec.breaks)."""
    walked = _walk([r._grad_fn for r in roots], first_node)
    if walked is None:
        rec.graph_break("a hook or saved-tensor hook in the graph of a result (backward outside the call)")
        return None
    boundary, saved = walked
    proxies = {id(inp.proxy): inp.position for inp in inputs}
    # a tensor made in the call can share the version counter of one from before it (detach() does), which
    # the user may bump between calls: its saved version is the count the replay finds, not the trace's
    proxy_counters = {id(inp.proxy._vc): inp.position for inp in inputs}
    outside_counters = {id(vc) for vc, _ in rec.versions.values()}
    checks = []
    for v, node in saved:
        if v.tensor is None:  # an output of its node: checked when it is one of the results handed out
            nr = next((i for i, r in enumerate(roots) if v.vc is r._vc), None)
            if nr is not None:
                checks.append((v, node, None, nr))
        else:
            base = v.tensor
            while base._base is not None:  # a view shares its base's version counter
                base = base._base
            position = proxies.get(id(base), proxy_counters.get(id(v.vc)))
            if position is not None or id(base) not in created or id(v.vc) in outside_counters:  # from outside
                checks.append((v, node, position, None))
    rec.depth += 1  # the placeholders are made outside the tape
    try:
        grad_inputs = [(dispatch.full(r._shape, 1, r._dtype.np, r._arr), r._dtype) for r in roots]
    finally:
        rec.depth -= 1
    for buf, _ in grad_inputs:
        root = dispatch.storage(buf)
        rec.known[id(root)] = root
    rec.remember([buf for buf, _ in grad_inputs])
    start = len(rec.entries)
    try:
        got = engine.run(roots, [TensorBase._make(buf, dtype) for buf, dtype in grad_inputs], True, False,
                         capture=set(boundary), accumulate=False, stop=True)
        results = []
        for edge in boundary:
            g = got.get(edge)
            results.append(None if g is None else (g._data, g._dtype))  # _data computes a pending value
    except RuntimeError as e:  # the graph's own error (freed by a backward in the call, say)
        rec.graph_break(f"the backward of a result raised: {e}")
        return None
    entries = rec.entries[start:]
    del rec.entries[start:]
    rec.verify()
    if rec.broken:
        return None
    bound = [(weakref.ref(node.variable) if isinstance(node, AccumulateGrad) else None,
              None if isinstance(node, AccumulateGrad) else node, nr) for node, nr in boundary]
    program = BackwardProgram(grad_inputs, entries, bound, results, checks, [_handle(r) for r in roots], boundary)
    program.saved_roots = _saved_roots(saved, proxies)
    return program


def _saved_roots(saved, proxies):
    """ids of the host memory the graph's saved tensors other than the proxies hold (a view of a proxy made in
    the call reads the proxy's buffer, whatever memory the proxy is pointed at later)."""
    roots = set()
    for v, _ in saved:
        arr = v.data if v.tensor is None else None if id(v.tensor) in proxies else v.tensor._arr
        if arr.__class__ is np.ndarray:
            roots.add(id(dispatch.storage(arr)))
    return roots


def _handle(t):
    """A plain tensor standing for result `t` at its graph edge: the engine reaches that edge from it later
    even when `t`, a view, would look at its base (which the user may since have written in place)."""
    node, nr = edge_of(t)
    h = TensorBase._make(t._arr, t._dtype, True)
    h._grad_fn, h._output_nr = node, nr
    return h


def _walk(heads, first_node):
    """The edges leaving the call's nodes below `heads` (numbered from `first_node` on), in order, and
    those nodes' saved tensors; None when a hook would have to run."""
    inside, boundary, saved, stack = set(), [], [], list(heads)
    seen_edges = set()
    while stack:
        node = stack.pop()
        if node in inside:
            continue
        if node.has_hooks():
            return None
        inside.add(node)
        for v in node._saved.values():
            if isinstance(v, SavedTensor):
                if v.hooks is not None:
                    return None
                saved.append((v, node))
        for child, nr in node.next_functions:
            if child is None:
                continue
            if isinstance(child, AccumulateGrad) or child._seq < first_node:
                if (child, nr) not in seen_edges:
                    seen_edges.add((child, nr))
                    boundary.append((child, nr))
            else:
                stack.append(child)
    return boundary, saved

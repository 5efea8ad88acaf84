"""The backward engine: schedules the graph's nodes in dependency order (iteratively: a 100 000-node chain
works), passing each its summed incoming gradients (grad_buffers.py) or running an elementwise region at once
(fused_backward.py)."""

import numpy as np

from .._core.messages import NON_DIFFERENTIABLE_GRAD
from .. import lazy
from .._core.state import ANOMALY, STATE
from .._core.warn import warn
from ..kernels import dispatch, tape
from ..node import AccumulateGrad, edge_of, hooked, hooked_tuple
from ..ops.creation import tensor
from ..ops.elementwise import ElementwiseBackward
from ..tensor_base import TensorBase
from . import fused_backward
from .grad_buffers import GradBuffers, disown, disown_repeated, own_new_results
from .ready_queue import ReadyQueue


def _shape_str(shape):
    return f"torch.Size([{', '.join(str(s) for s in shape)}])"


def _root_grads(outputs, grad_outputs):
    grads = []
    for i, (out, g) in enumerate(zip(outputs, grad_outputs)):
        if g is None:
            arr = out._data
            if arr.size != 1:
                raise RuntimeError("grad can be implicitly created only for scalar outputs")
            if arr.__class__ is np.ndarray and not tape.active:  # (np.full takes four times as long)
                ones = np.empty(arr.shape, arr.dtype)
                ones.fill(1)
            else:
                ones = dispatch.full(out._shape, 1, out._dtype.np, arr)
            g = TensorBase._make(ones, out._dtype)
        elif not isinstance(g, TensorBase):
            g = tensor(g, dtype=out.dtype)
        elif g.shape != out.shape:
            raise RuntimeError(f"Mismatch in shape: grad_output[{i}] has a shape of {_shape_str(g.shape)} and "
                               f"output[{i}] has a shape of {_shape_str(out.shape)}.")
        grads.append(g)
    return grads


def _dependencies(roots):
    """How many edges of the graph below `roots` point at each node (the whole graph runs)."""
    deps, stack = {}, list(roots)
    for child in roots:  # (a root below another root is walked from its own entry only)
        deps[child] = 0
    while stack:
        for child, _ in stack.pop().next_functions:
            if child is not None:
                count = deps.get(child)
                if count is None:  # first seen: walk below it
                    deps[child] = 1
                    stack.append(child)
                else:
                    deps[child] = count + 1
    for root in roots:  # (the callers read a missing count as 0)
        if not deps[root]:
            del deps[root]
    return deps


def _graph(roots, targets, stop=False):
    """Dependency counts, and with `targets` the set of nodes that lead to one (the rest never runs); with
    `stop`, the graph ends at the targets (what lies below them is not walked)."""
    if targets is None:
        return _dependencies(roots), None

    def below(node):
        return iter(()) if stop and node in targets else iter(node.next_functions)

    seen, post = set(), []
    for root in roots:  # one root at a time: a root may lie below another one
        if root in seen:
            continue
        seen.add(root)
        stack = [(root, below(root))]
        while stack:
            node, it = stack[-1]
            for child, _ in it:
                if child is not None and child not in seen:
                    seen.add(child)
                    stack.append((child, below(child)))
                    break
            else:
                stack.pop()
                post.append(node)
    needed = set()
    for node in post:  # children come before parents in post-order
        if node in targets or any(c in needed for c, _ in node.next_functions if c is not None):
            needed.add(node)
    deps = {}
    for node in needed:
        if stop and node in targets:
            continue
        for child, _ in node.next_functions:
            if child is not None and child in needed:
                deps[child] = deps.get(child, 0) + 1
    return deps, needed


@np.errstate(all="ignore")  # IEEE results (inf, NaN) without NumPy's warnings: torch is silent
def run(outputs, grad_outputs, retain_graph, create_graph, capture=None, accumulate=True, stop=False):
    """Backpropagates from `outputs`. `capture` is the set of (node, output_nr) edges whose incoming
    gradient is recorded (autograd.grad); with it, only the part of the graph leading there runs, and with
    `stop` none of the captured nodes runs (numgrad.compile captures a call's backward up to its inputs)."""
    for i, out in enumerate(outputs):
        if not out.requires_grad:  # the property: a view requires grad when its base does
            raise RuntimeError(f"element {i} of tensors does not require grad and does not have a grad_fn")
    buffers, roots = GradBuffers(), []
    for i, (out, g) in enumerate(zip(outputs, _root_grads(outputs, grad_outputs))):
        if not out._dtype.is_floating_point:  # a root's gradient flows into it as any other does
            raise RuntimeError(NON_DIFFERENTIABLE_GRAD)
        node, nr = edge_of(out)
        if node is None:  # a view requiring grad through its base only has no edge (torch: an invalid one)
            raise RuntimeError(f"element {i} of tensors does not require grad and does not have a grad_fn")
        if node not in buffers.slots:
            roots.append(node)
        buffers.add(node, nr, g)
    targets = {node for node, _ in capture} if capture is not None else None
    deps, needed = _graph(roots, targets, stop)
    ready = ReadyQueue()
    heap, slots = ready.heap, buffers.slots
    for n in roots:
        if deps.get(n, 0) == 0:
            ready.push(n)
    fuse = STATE.fusion and not create_graph and not ANOMALY.enabled  # anomaly mode checks node by node
    fuses_above = 0 if tape.active else lazy.SMALL_MAX  # (lazy.fuses, inlined: the sizes a region may take)
    captured = {}

    precomputed = {}  # members of a fused region already run -> their results, sent when they pop

    def send(node, results):
        """Passes a node's results down its edges; a child that got its last one becomes ready. An edge
        into a member of a fused region carries nothing (the region's kernel used that gradient) but still
        counts, so members become ready, and run, in the order torch would run them."""
        if len(results) > 1:
            disown_repeated(results)
        # torch's engine assert: the gradient for input i takes that input's dtype, which must be differentiable
        # (an integer tensor requires grad only after an in-place write of a value that does); input_meta is an
        # instance attribute (record sets it): getattr would go through Node.__getattr__'s AttributeError
        meta = node.__dict__.get("input_meta")
        i = -1
        for (child, nr), g in zip(node.next_functions, results):
            i += 1
            if child is None or (needed is not None and child not in needed):
                continue
            if g is not None:
                m = meta[i] if meta is not None and i < len(meta) else None
                if not (g._dtype if m is None else m[1]).is_floating_point:
                    raise RuntimeError(NON_DIFFERENTIABLE_GRAD)
                if child in slots:
                    buffers.add(child, nr, g)
                else:  # (GradBuffers.add's first gradient, inlined)
                    slots[child] = {nr: g}
            left = deps[child] - 1
            deps[child] = left
            if left == 0:
                if heap:
                    ready.push(child)
                else:  # (the usual chain: the only ready node, nothing to order)
                    heap.append(child)

    prev, STATE.grad_enabled = STATE.grad_enabled, create_graph  # inside backward, grad mode is create_graph
    prev_riders, STATE.riders = STATE.riders, [] if fuse else None
    outermost = STATE.backward_callbacks is None
    if outermost:
        STATE.backward_callbacks = []
    try:
        while heap:
            node = heap.pop() if len(heap) == 1 else ready.pop()  # (the usual chain: nothing to order)
            done = precomputed.pop(node, None) if precomputed else None
            if done is not None:
                if not retain_graph:
                    node.release()
                send(node, done)
                continue
            slot = slots.pop(node, None)  # (GradBuffers.take's usual case inlined: one output)
            grad_list = [slot[0]] if slot is not None and len(slot) == 1 and 0 in slot else buffers.taken(slot)
            # hooks see a missing gradient too (None), as torch's do
            if node._tensor_pre_hooks or node._retained:
                tape.graph_break("a tensor hook or retain_grad runs during backward")
                grad_list = [_run_tensor_hooks(node, nr, g) for nr, g in enumerate(grad_list)]
            elif node.__class__ is AccumulateGrad and node.variable._hooks:
                tape.graph_break("a tensor hook runs during backward")
                grad_list = [_run_leaf_hooks(node.variable, grad_list[0])]
            if capture is not None:
                for nr, g in enumerate(grad_list):
                    if g is not None and (node, nr) in capture:
                        captured[(node, nr)] = g
                if stop and node in targets:
                    continue
                if isinstance(node, AccumulateGrad):
                    if not accumulate:  # autograd.grad: the leaf's .grad stays as it is
                        continue
                elif not any(c in needed for c, _ in node.next_functions if c is not None):
                    continue  # a captured input: nothing below it is wanted
            if node._pre_hooks:
                tape.graph_break("a node pre-hook runs during backward")
                for hook in list(node._pre_hooks.values()):
                    grad_list = hooked_tuple(hook, grad_list, hook(tuple(grad_list)))
            # _fused_region's first tests inlined: no call for the nodes it would turn away at once (a small one)
            region = _fused_region(node, grad_list, deps, needed, targets)\
                if fuse and node.__class__.__base__ is ElementwiseBackward and node.out_numel > fuses_above else None
            if region is not None:
                done = fused_backward.run(region, grad_list[0], buffers.slots) if tape.profiler is None else \
                    tape.profiler.timed(f"autograd::engine::evaluate_function: fused {len(region)} nodes",
                                        "backward", fused_backward.run, region, grad_list[0], buffers.slots)
                for member in region:
                    if member is not node:
                        precomputed[member] = done[member]
                if not retain_graph:
                    node.release()
                send(node, done[node])
                continue
            if tape.profiler is not None:
                results = tape.profiler.timed(f"autograd::engine::evaluate_function: {node.name()}", "backward",
                                              _apply_checked if ANOMALY.enabled else _apply, node, grad_list,
                                              create_graph, *(() if ANOMALY.enabled else (fuse,)))
            elif ANOMALY.enabled:
                results = _apply_checked(node, grad_list, create_graph)
            elif len(grad_list) == 1 and grad_list[0] is not None and not node._post_hooks:
                results = node.apply(grad_list)  # _apply's usual case inlined
                if create_graph:
                    pass
                elif node.__class__.__base__ is ElementwiseBackward:  # (own_new_results's first case inlined)
                    g = grad_list[0]
                    for r in results:
                        if r is not None and r is not g:
                            r._fresh = True
                    g = r = None  # (no gradient kept alive past its node: a checkpointed pass's peak memory)
                else:
                    own_new_results(node, results, grad_list, fuse)
            else:
                results = _apply(node, grad_list, create_graph, fuse)
            if not retain_graph:
                node.release()
            send(node, results)
        if STATE.riders:
            lazy.compute_riders(STATE.riders)
        STATE.grad_enabled = prev
        callbacks = STATE.backward_callbacks if outermost else ()
        while callbacks:  # a callback may queue another
            callbacks.pop(0)()
    finally:
        STATE.grad_enabled, STATE.riders = prev, prev_riders
        if outermost:
            STATE.backward_callbacks = None
    return captured


def queue_callback(callback):
    """Runs `callback()` once the backward pass now running ends (torch's engine.queue_callback; DDP waits
    for its gradient all-reduces there)."""
    if STATE.backward_callbacks is None:
        raise RuntimeError("Final callbacks can only be installed during backward pass.")
    STATE.backward_callbacks.append(callback)


def _fused_region(node, grad_list, deps, needed, targets):
    """The elementwise region to run with `node` in one kernel (fused_backward.region), or None."""
    if grad_list[0] is None or len(grad_list) != 1 or node.__class__.__base__ is not ElementwiseBackward or \
            not lazy.fuses(node.out_numel):  # (region's own first test, before its others)
        return None
    return fused_backward.region(node, deps, needed, targets or ())


def _apply(node, grad_list, create_graph, fuse):
    """One node's backward with its post hooks: its results, one per next_functions entry."""
    if (grad_list[0] is not None if len(grad_list) == 1 else any(g is not None for g in grad_list)):
        results = node.apply(grad_list)
        if not create_graph:
            own_new_results(node, results, grad_list, detect=fuse)
    else:
        results = node.apply_without_gradients(grad_list)
    if node._post_hooks:
        tape.graph_break("a node hook runs during backward")
        for hook in list(node._post_hooks.values()):
            results = hooked_tuple(hook, results, hook(tuple(results), tuple(grad_list)))
    return results


def _apply_checked(node, grad_list, create_graph):
    """_apply in anomaly mode: an error names the forward call that made the node, and a NaN result raises."""
    try:
        results = _apply(node, grad_list, create_graph, False)
        if ANOMALY.check_nan:
            for i, g in enumerate(results):
                if g is not None and g._dtype.is_floating_point and np.isnan(dispatch.to_host(g._data)).any():
                    raise RuntimeError(f"Function '{node.name()}' returned nan values in its {i}th output.")
    except Exception:
        trace = node.metadata.get("traceback_")
        if trace:
            warn(f"Error detected in {node.name()}. Traceback of forward call that caused the error:\n"
                 + "".join(trace))
        else:
            warn(f"Error detected in {node.name()}. No forward pass information available. Enable detect "
                 "anomaly during forward pass for more information.")
        raise
    return results


def _run_leaf_hooks(leaf, g):
    """A leaf's register_hook hooks: torch runs them on its AccumulateGrad's incoming gradient, before that
    node's own pre-hooks, and also when autograd.grad captures the gradient instead of accumulating it."""
    if g is not None:
        disown(g)  # a hook may keep a reference
    for hook in list(leaf._hooks.values()):
        g = hooked(hook, g)
    return g


def _run_tensor_hooks(node, nr, g):
    """Hooks registered on a non-leaf output (register_hook), then retain_grad, which torch runs last."""
    hooks = node._tensor_pre_hooks.get(nr)
    if hooks:
        if g is not None:
            disown(g)
        for hook in list(hooks.values()):
            g = hooked(hook, g)
    ref = node._retained.get(nr)
    t = ref() if ref is not None else None
    if t is not None and g is not None:
        # torch's retain_grad clones into C order (clone(MemoryFormat::Contiguous)), whatever g's layout
        t._grad = g.detach().contiguous().clone() if t._grad is None else (t._grad + g).detach()
    return g

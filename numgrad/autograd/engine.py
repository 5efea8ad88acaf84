"""The backward engine: walks the graph iteratively in dependency order and accumulates gradients."""
import heapq


from ..backend import dispatch
from . import fused_backward
from .._core.state import STATE
from ..node import AccumulateGrad, add_into, edge_of, hooked
from ..ops.creation import tensor
from ..tensor_base import TensorBase


def _shape_str(shape):
    return f"torch.Size([{', '.join(str(s) for s in shape)}])"


def _root_grads(outputs, grad_outputs):
    grads = []
    for i, (out, g) in enumerate(zip(outputs, grad_outputs)):
        if g is None:
            if out._data.size != 1:
                raise RuntimeError("grad can be implicitly created only for scalar outputs")
            g = TensorBase._make(dispatch.full(out._shape, 1, out._dtype.np, out._data), out._dtype)
        elif not isinstance(g, TensorBase):
            g = tensor(g, dtype=out.dtype)
        elif g.shape != out.shape:
            raise RuntimeError(f"Mismatch in shape: grad_output[{i}] has a shape of {_shape_str(g.shape)} and "
                               f"output[{i}] has a shape of {_shape_str(out.shape)}.")
        grads.append(g)
    return grads


def _dependencies(roots):
    """How many edges of the graph below `roots` point at each node (the whole graph runs)."""
    deps, seen, stack = {}, set(roots), list(roots)
    while stack:
        for child, _ in stack.pop().next_functions:
            if child is not None:
                deps[child] = deps.get(child, 0) + 1
                if child not in seen:
                    seen.add(child)
                    stack.append(child)
    return deps


def _graph(roots, targets):
    """Dependency counts, and with `targets` the set of nodes that lead to one (the rest never runs)."""
    if targets is None:
        return _dependencies(roots), None
    seen, post = set(), []
    for root in roots:  # one root at a time: a root may lie below another one
        if root in seen:
            continue
        seen.add(root)
        stack = [(root, iter(root.next_functions))]
        while stack:
            node, it = stack[-1]
            for child, _ in it:
                if child is not None and child not in seen:
                    seen.add(child)
                    stack.append((child, iter(child.next_functions)))
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
        for child, _ in node.next_functions:
            if child is not None and child in needed:
                deps[child] = deps.get(child, 0) + 1
    return deps, needed


def _add(a, b):
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


def run(outputs, grad_outputs, retain_graph, create_graph, capture=None, accumulate=True):
    """Backpropagates from `outputs`. `capture` maps (node, output_nr) edges to slots whose incoming
    gradient is recorded (autograd.grad); with it, only the part of the graph leading there runs."""
    for i, out in enumerate(outputs):
        if not out._requires_grad:
            raise RuntimeError(f"element {i} of tensors does not require grad and does not have a grad_fn")
    grads = _root_grads(outputs, grad_outputs)
    buffers, roots = {}, []
    for out, g in zip(outputs, grads):
        node, nr = edge_of(out)
        if node not in buffers:
            buffers[node] = {}
            roots.append(node)
        buffers[node][nr] = _add(buffers[node].get(nr), g)
    targets = {node for node, _ in capture} if capture is not None else None
    deps, needed = _graph(roots, targets)
    captured = {}
    ready = [(-n._seq, id(n), n) for n in roots if deps.get(n, 0) == 0]
    heapq.heapify(ready)
    fuse = STATE.fusion and not create_graph
    targets = targets or ()

    def _send(node, results, inside):
        """Passes a node's results down its edges; a child that got its last one becomes ready.
        Edges into `inside` (a fused region run together with `node`) carry nothing."""
        if len(results) > 1:
            _disown_repeated(results)
        for (child, nr), g in zip(node.next_functions, results):
            if child is None or child in inside or (needed is not None and child not in needed):
                continue
            if g is not None:
                slot = buffers.get(child)
                if slot is None:
                    buffers[child] = {nr: g}
                else:
                    slot[nr] = _add(slot.get(nr), g)
            left = deps[child] - 1
            deps[child] = left
            if left == 0:
                heapq.heappush(ready, (-child._seq, id(child), child))

    prev = STATE.grad_enabled
    STATE.grad_enabled = create_graph
    try:
        while ready:
            node = heapq.heappop(ready)[2]
            inputs = buffers.pop(node, None) or {}
            if node._tensor_pre_hooks or node._retained:
                for nr in list(inputs):
                    inputs[nr] = _run_tensor_hooks(node, nr, inputs[nr])
            if capture is not None:
                for nr, g in inputs.items():
                    if (node, nr) in capture:
                        captured[(node, nr)] = g
                if not accumulate and isinstance(node, AccumulateGrad):
                    continue
                if not any(c in needed for c, _ in node.next_functions if c is not None):
                    continue  # a captured input: nothing below it is wanted
            if len(inputs) == 1 and 0 in inputs:  # the usual node: one output
                grad_list = [inputs[0]]
            else:
                grad_list = [inputs.get(i) for i in range(max(inputs) + 1)] if inputs else [None]
            if node._pre_hooks:
                for hook in list(node._pre_hooks.values()):
                    r = hook(tuple(grad_list))
                    if r is not None:
                        grad_list = list(r)
            fused_region = None
            if fuse and grad_list[0] is not None and len(grad_list) == 1 and node.__class__.__base__ is\
                    fused_backward.ElementwiseBackward:
                fused_region = fused_backward.region(node, deps, needed, targets)
            if fused_region is not None:
                done = fused_backward.run(fused_region, grad_list[0], buffers)
                inside = set(fused_region)
                for member in fused_region:
                    if not retain_graph:
                        member.release()
                    _send(member, done[member], inside)
                continue
            if any(g is not None for g in grad_list):
                results = node.apply(grad_list)
                if fuse:
                    _own_new_results(node, results, grad_list)
            else:
                results = [None] * len(node.next_functions)
            if node._post_hooks:
                for hook in list(node._post_hooks.values()):
                    r = hook(tuple(results), tuple(grad_list))
                    if r is not None:
                        results = list(r)
            if not retain_graph:
                node.release()
            _send(node, results, ())
    finally:
        STATE.grad_enabled = prev
    return captured


def _own_new_results(node, results, grads):
    """Results the node's backward made just now (pending ones, or arrays that are nobody's view and are
    neither an incoming gradient nor a saved tensor) are held by the engine alone: AccumulateGrad may
    keep them as `.grad` instead of copying."""
    for r in results:
        if r is None or r._fresh or any(r is g for g in grads):
            continue
        arr = r._arr
        if arr is None:
            r._fresh = True
        elif arr.base is None and r._grad_fn is None and not any(g is not None and g._arr is arr for g in grads)\
                and not any(_holds(v, arr) for v in node._saved.values()):
            r._fresh = True


def _holds(saved, arr):
    """Whether a node's saved value (a SavedTensor, or a plain value) refers to array `arr`."""
    t = getattr(saved, "tensor", None)
    return getattr(saved, "data", None) is arr or (t is not None and t._arr is arr)


def _disown_repeated(results):
    """One tensor sent down two edges: no AccumulateGrad may keep it as its own."""
    seen = set()
    for r in results:
        if r is not None:
            if id(r) in seen:
                for r2 in results:
                    if r2 is not None:
                        r2._fresh = False
                return
            seen.add(id(r))


def _run_tensor_hooks(node, nr, g):
    """Hooks registered on a non-leaf output (register_hook), then retain_grad, which torch runs last."""
    hooks = node._tensor_pre_hooks.get(nr)
    if hooks:
        g._fresh = False  # a hook may keep a reference
        for hook in list(hooks.values()):
            g = hooked(hook, g)
    ref = node._retained.get(nr)
    t = ref() if ref is not None else None
    if t is not None and g is not None:
        t._grad = g.detach().clone() if t._grad is None else (t._grad + g).detach()
    return g

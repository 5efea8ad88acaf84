"""Backward of a whole elementwise region in one kernel. From the node the engine is about to run, it
gathers the elementwise nodes whose every incoming gradient comes from inside the region, and computes
the gradients leaving the region in one pass over memory, recomputing from the region's inputs the
values the nodes saved (a pending saved value was never stored at all)."""

import operator

import numpy as np

from .. import lazy
from ..kernels import dispatch
from ..kernels.dispatch import fused
from ..node import SavedTensor
from ..ops.elementwise import ElementwiseBackward
from ..tensor_base import TensorBase
from ..ops.reduction import sum_to

KERNEL_DTYPE = lazy.KERNEL_DTYPE


def _fusable(node):
    return (isinstance(node, ElementwiseBackward) and not node.plan.not_implemented and node.refusal is None
            and not node.by_tensor_ops  # (its derivatives' integer products are not the kernel's)
            and not node._freed and not node.compute.is_narrow  # (half types round each node's gradient)
            and not any(dtype.is_narrow for _, dtype in node.meta.values())  # (a half input's too)
            and not node.has_hooks() and _saved_as_recorded(node))


def _saved_as_recorded(node):
    """No saved tensor was modified in place since (unpacking it raises, which must happen when torch would
    run the node, after the nodes before it) and none goes through saved-tensor hooks (they run when the
    node does, in order with other hooks)."""
    for v in node._saved.values():
        if isinstance(v, SavedTensor) and (v.hooks is not None or v.vc[0] != v.version):
            return False
    return True


_sequence_number = operator.attrgetter("_seq")


def region(head, deps, needed, captured_nodes):
    """The nodes to run with `head` in one kernel, each before the nodes it sends gradients to; None
    when there is nothing to fuse. A node joins when all of its pending incoming edges come from the
    region and it has no hooks, retained grad or capture (those must see its gradient)."""
    if not _fusable(head) or not lazy.fuses(head.out_numel):  # (small, or empty: node by node)
        return None
    shape, nodes, inside, incoming, frontier = head.out_shape, [head], {head}, {}, [head]
    while frontier:
        for child, _ in frontier.pop().next_functions:
            if child is None or child in inside:
                continue
            count = incoming[child] = incoming.get(child, 0) + 1
            if count == deps.get(child) and _fusable(child) and child.out_shape == shape and\
                    (needed is None or child in needed) and child not in captured_nodes and\
                    len(nodes) < lazy.MAX_REGION:  # a bounded kernel: long chains run as several
                nodes.append(child)
                inside.add(child)
                frontier.append(child)
    if len(nodes) == 1:
        return None
    nodes.sort(key=_sequence_number, reverse=True)  # consumers were recorded after what they consume
    return nodes


def _saved_read(program, node, nm, attr, compute):
    """lazy.input_read of what `node` saved as `attr`, read straight from the SavedTensor when unpacking
    could neither raise nor call a hook (_fusable checked versions and hooks): no tensor is rebuilt."""
    saved = node._saved[attr]
    entry = node.entry
    if saved.__class__ is SavedTensor and nm not in entry.bool_inputs and nm not in entry.scalar_only:
        t = saved.tensor
        if t is None:  # an output: its array, or its pending expression
            data = saved.data
            if data.__class__ is lazy.LazyExpr:
                return nm, (lazy.value_of(program, data) if data.arr is None else
                            program.leaf(data.arr, KERNEL_DTYPE[np.dtype(data.arr.dtype)])), compute
            if data is not None:
                return nm, program.leaf(data, KERNEL_DTYPE[np.dtype(data.dtype)]), compute
        elif saved.was_leaf or t._grad_fn is not None:  # else unpacking raises (detached in place)
            return nm, lazy.tensor_value(program, t), compute
    return lazy.input_read(program, entry, nm, node.saved(attr), compute)


def _as(program, var, dtype):
    """`var` rounded to `dtype`, as the unfused path stores a gradient in its input's dtype."""
    name = KERNEL_DTYPE[dtype.np]
    return var if program.var_dtypes[var] == name else program.step("a", (("a", var, name),), name, name)


def run(nodes, g, buffers):
    """Runs the region `nodes` (from region()) for incoming gradient `g` of its head; returns each
    node's results, one per next_functions entry (None for edges inside the region). Gradients that
    reached members from outside the region earlier wait in the engine's `buffers`: they are taken."""
    shape = nodes[0].out_shape
    program = fused.Program(shape)
    inside = set(nodes)
    incoming = {n: [] for n in nodes}
    incoming[nodes[0]].append(lazy.tensor_value(program, g))
    for node in nodes[1:]:
        waiting = buffers.pop(node, None)
        if waiting is not None and waiting.get(0) is not None:
            incoming[node].append(lazy.tensor_value(program, waiting[0]))
    results = {n: [None] * len(n.next_functions) for n in nodes}
    boundary = {}  # (child, nr) -> [(var, node, edge index)], merged in the kernel
    separate = []  # (var, node, edge index): broadcast inputs, summed to their shape afterwards
    for node in nodes:
        plan, compute = node.plan, KERNEL_DTYPE[node.compute.np]
        gvar = incoming[node]
        gvar = program.total(gvar, compute) if len(gvar) != 1 else gvar[0]
        mapping = [("g", gvar, compute)]
        mapping += [_saved_read(program, node, nm, attr, compute) for nm, attr in zip(plan.used, plan.saved_attrs)]
        mapping = tuple(mapping)
        # one var per target: the expressions' steps, then the passed-through gradient; zeros after them
        contributions = [program.step(expr, mapping, compute, compute) for _, expr in plan.exprs]
        program.ops.append(node.name())
        if plan.passed:
            contributions += [gvar] * len(plan.passed)
        meta, edges = node.meta, node.next_functions
        for (nm, idx), var in zip(plan.target_edges, contributions):
            child, nr = edges[idx]
            mshape, mdtype = meta[nm]
            if child in inside:
                incoming[child].append(_as(program, var, mdtype))
            elif mshape == shape and child is not None:
                boundary.setdefault((child, nr), []).append((_as(program, var, mdtype), node, idx))
            else:
                separate.append((var, node, idx))
        for nm, idx in plan.target_edges[len(contributions):]:  # plan.zero
            mshape, mdtype = meta[nm]
            results[node][idx] = TensorBase._make(dispatch.zeros(mshape, mdtype.np, g._data), mdtype)
    out_vars, out_dtypes, slots = [], [], []
    for contributions in boundary.values():
        _, node, idx = contributions[0]
        mdtype = node.meta[node.plan.differentiable[idx]][1]
        var = contributions[0][0] if len(contributions) == 1 else\
            program.total([v for v, _, _ in contributions], KERNEL_DTYPE[mdtype.np])
        out_vars.append(var)
        out_dtypes.append(mdtype)
        slots.append((node, idx, False))
    for var, node, idx in separate:
        out_vars.append(var)
        out_dtypes.append(node.compute)
        slots.append((node, idx, True))
    # every gradient leaving the region may be a zero of its own (sign, say, ends it): no kernel then
    flats = fused.run_map(program, out_vars, [d.np for d in out_dtypes]) if out_vars else []
    for flat, dtype, (node, idx, reduce) in zip(flats, out_dtypes, slots):
        r = TensorBase._make(flat.reshape(shape), dtype)
        if reduce:
            mshape, mdtype = node.meta[node.plan.differentiable[idx]]
            r = sum_to(r, mshape)
            if r._dtype is not mdtype:
                r = r.to(mdtype)
        r._fresh = True
        results[node][idx] = r
    return results

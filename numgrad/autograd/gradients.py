"""autograd.backward and autograd.grad: the user-facing entry points into the engine."""
from . import engine
from ..kernels import tape
from .._core.warn import warn
from ..node import accumulate_into_grad, edge_of
from ..ops.creation import zeros_like


CREATE_GRAPH_CYCLE = (
    "Using backward() with create_graph=True will create a reference cycle between the parameter and its "
    "gradient which can cause a memory leak. We recommend using autograd.grad when creating the graph to avoid "
    "this. If you have to use this function, make sure to reset the .grad fields of your parameters to None "
    "after use to break the cycle and avoid the leak. (Triggered internally at "
    "/__w/pytorch/pytorch/torch/csrc/autograd/engine.cpp:1307.)")


def _seq(x):
    if x is None:
        return None
    return list(x) if isinstance(x, (list, tuple)) else [x]


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False, inputs=None):
    if grad_tensors is None and inputs is None and not create_graph and not retain_graph and \
            not isinstance(tensors, (list, tuple)):  # the usual `loss.backward()`
        engine.run([tensors], [None], False, False)
        return
    tensors = _seq(tensors)
    grads = _seq(grad_tensors) or [None] * len(tensors)
    if retain_graph is None:
        retain_graph = create_graph
    if create_graph:
        warn(CREATE_GRAPH_CYCLE)
    if inputs is None:
        engine.run(tensors, grads, retain_graph, create_graph)
        return
    inputs = _seq(inputs)
    if not inputs:
        raise RuntimeError("`inputs` argument to `backward()` cannot be empty.")
    edges = [edge_of(t) for t in inputs]
    # a leaf input's AccumulateGrad runs in the engine (its hooks and pre-hooks, as in torch); a non-leaf
    # input's captured gradient is accumulated here
    captured = engine.run(tensors, grads, retain_graph, create_graph, capture=set(edges), accumulate=True)
    for t, e in zip(inputs, edges):
        if t._grad_fn is None:
            continue
        t._retains_grad = True  # torch fills .grad of non-leaf inputs and marks them so
        g = captured.get(e)
        if g is not None:
            accumulate_into_grad(t, g, create_graph)


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False, only_inputs=True,
         allow_unused=None, is_grads_batched=False, materialize_grads=False):
    outputs, inputs = _seq(outputs), _seq(inputs)
    if not inputs:  # torch's first check, before anything about the outputs
        raise RuntimeError("`inputs` argument to `grad()` cannot be empty.")
    grads = _seq(grad_outputs) or [None] * len(outputs)
    if retain_graph is None:
        retain_graph = create_graph
    if allow_unused is None:
        allow_unused = materialize_grads
    for i, t in enumerate(inputs):
        if not t.requires_grad:
            raise RuntimeError("One of the differentiated Tensors does not require grad")
    edges = [edge_of(t) for t in inputs]
    captured = engine.run(outputs, grads, retain_graph, create_graph, capture=set(edges), accumulate=False)
    result = []
    for i, (t, e) in enumerate(zip(inputs, edges)):
        g = captured.get(e)
        if g is None:
            if materialize_grads:
                g = zeros_like(t)
            elif not allow_unused:
                raise RuntimeError(f"The differentiated Tensor at index {i} appears to not have been used in the "
                                   "graph. Set allow_unused=True if this is the desired behavior.")
        elif not create_graph:
            g = g.detach()
        result.append(g)
    return tuple(result)


def zero_grads(params, set_to_none=True):
    """Module.zero_grad / Optimizer.zero_grad: drop each `.grad`, or zero it in place (detached)."""
    rec = tape.recorder()
    if rec is not None and not rec.depth:  # a compiled call repeats it at each replay, as Python
        params = list(params)
        rec.live("zero_grad", _zero_grads, params, set_to_none)
        if set_to_none:  # what the call reads of .grad afterwards, it made itself
            rec.grads_set.update(id(p) for p in params)
        return
    _zero_grads(params, set_to_none)


def _zero_grads(params, set_to_none):
    for p in params:
        # a leaf's .grad through its slot, without the property: that of a non-leaf warns, and only a trace hears
        # of a .grad set
        g = p._grad if p._grad_fn is None else p.grad
        if g is None:
            continue
        if set_to_none:
            if tape.active:
                p.grad = None
            else:
                p._grad = None
            continue
        if g.grad_fn is not None:
            g.detach_()
        else:
            g.requires_grad_(False)
        g._data[...] = 0
        g._vc[0] += 1


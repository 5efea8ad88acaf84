"""Forward-mode (JVP) rules: elementwise entries from the op table's derivatives, the others in one table."""
from ..node import Node, op_node_class
from ..ops import creation, join, linalg, reduction
from ..ops.elementwise import EXPRESSION_FUNCS, _derivative
from ..spec.table import NOT_IMPLEMENTED
from ..tensor_base import TensorBase
from .._core.grad_mode import enable_grad
from . import gradients

# torch's refusal for an op it declares not differentiable, and for one whose formula it lacks
NOT_DIFFERENTIABLE = "Trying to use forward AD with aten::{} that does not support it."
NOT_SUPPORTED = ("Trying to use forward AD with {} that does not support it because it has not been implemented yet.\n"
                 "Please file an issue to PyTorch at https://github.com/pytorch/pytorch/issues/new?template=feature-"
                 "request.yml so that we can prioritize its implementation or submit a PR adding the implementation "
                 "to derivatives.yaml")


def elementwise_tangent(entry, args, result):
    """The tangent of an op-table entry's result: the sum over inputs of its backward derivative with the input's
    tangent in place of `g` (an elementwise Jacobian is diagonal, so J^T g and J t are the same expression)."""
    namespace = total = None
    dual = False
    for nm, a in zip(entry.inputs, args):
        tangent = a._fw_grad if isinstance(a, TensorBase) else None
        if tangent is None or nm in entry.bool_inputs or nm in entry.scalar_only:
            continue
        dual = True
        expr = entry.grads.get(nm, "zeros")
        if expr == NOT_IMPLEMENTED:
            raise NotImplementedError(NOT_DIFFERENTIABLE.format(entry.aten or entry.name))
        if expr == "zeros":
            continue
        if namespace is None:
            namespace = dict(EXPRESSION_FUNCS, out=result, **dict(zip(entry.inputs, args)))
        namespace["g"] = tangent
        term = _derivative(expr, namespace, tangent)
        total = term if total is None else total + term
    if total is None:  # (a derivative of zeros: torch's tangent is zeros)
        return creation.zeros_like(result) if dual else None
    return fitted(total, result)


def fitted(tangent, primal):
    """`tangent` broadcast to the primal's shape and cast to its dtype."""
    if tangent._shape != primal._shape:
        tangent = tangent.expand(primal._shape).contiguous()
    return tangent if tangent._dtype is primal._dtype else tangent.to(primal._dtype)


def _or_zeros(tangent, primal):
    return creation.zeros_like(primal) if tangent is None else tangent


def _linear(apply_op):
    """The rule of an op linear in its one input: the op itself applied to the tangent."""
    return lambda inputs, outputs, saved, tangents: [apply_op(tangents[0], outputs[0], saved or {})]


def _axes_or_all(saved):
    return tuple(saved["axes"])


def _summed(t, out, saved):
    axes = _axes_or_all(saved)
    return reduction.sum(t, axes, saved["keepdim"]) if axes else t.clone()


def _averaged(t, out, saved):
    axes = _axes_or_all(saved)
    return reduction.mean(t, axes, saved["keepdim"]) if axes else t.clone()


def _joined(combine):
    def rule(inputs, outputs, saved, tangents):
        return [combine([_or_zeros(t, x) for t, x in zip(tangents, inputs)], saved["dim"])]
    return rule


def _product(inputs, outputs, saved, tangents):
    """d(a @ b) = da @ b + a @ db, for mm, bmm, mv and dot alike."""
    (a, b), (ta, tb) = inputs, tangents
    terms = [linalg.matmul(ta, b) if ta is not None else None, linalg.matmul(a, tb) if tb is not None else None]
    return [_sum_present(terms, outputs[0])]


def _addmm(inputs, outputs, saved, tangents):
    """d(bias + input @ weight.T) (nn.Linear's node)."""
    (bias, x, w), (tbias, tx, tw) = inputs, tangents
    terms = [tbias, linalg.matmul(tx, w.t()) if tx is not None else None,
             linalg.matmul(x, tw.t()) if tw is not None else None]
    return [_sum_present(terms, outputs[0])]


def _sum_present(terms, out):
    total = None
    for t in terms:
        if t is not None:
            total = t if total is None else total + t
    return fitted(total, out)


def _softmax(inputs, outputs, saved, tangents):
    y, t = outputs[0], tangents[0]
    yt = y * t
    return [yt - y * reduction.sum(yt, saved["dim"], True)]


def _log_softmax(inputs, outputs, saved, tangents):
    y, t = outputs[0], tangents[0]
    return [t - reduction.sum(y.exp() * t, saved["dim"], True)]


# node name -> rule(inputs, outputs, saved, input tangents (None where none)) -> output tangents
JVP_RULES = {
    **dict.fromkeys(("ViewBackward0", "ReshapeAliasBackward0", "UnsafeViewBackward0", "SqueezeBackward0",
                     "SqueezeBackward1", "SqueezeBackward2", "UnsqueezeBackward0"),
                    _linear(lambda t, out, s: t.reshape(out._shape))),
    "ExpandBackward0": _linear(lambda t, out, s: t.expand(out._shape)),
    "TBackward0": _linear(lambda t, out, s: t.t()),
    "PermuteBackward0": _linear(lambda t, out, s: t.permute(*s["dims"])),
    "TransposeBackward0": _linear(lambda t, out, s: t.transpose(s["dim0"], s["dim1"])),
    "TransposeBackward1": _linear(lambda t, out, s: t.transpose(s["dim0"], s["dim1"])),
    "CloneBackward0": _linear(lambda t, out, s: t.clone()),
    "SumBackward0": _linear(_summed), "SumBackward1": _linear(_summed),
    "MeanBackward0": _linear(_averaged), "MeanBackward1": _linear(_averaged),
    "CatBackward0": _joined(join.cat), "StackBackward0": _joined(join.stack),
    **dict.fromkeys(("MmBackward0", "BmmBackward0", "MvBackward0", "DotBackward0"), _product),
    "AddmmBackward0": _addmm,
    "SoftmaxBackward0": _softmax, "LogSoftmaxBackward0": _log_softmax,
}


class _TangentEdge(Node):
    """Stands in next_functions for an input with a tangent, so that a backward computes that gradient."""


_EDGE = (_TangentEdge(), 0)


def recorded_tangents(name, backward_fn, inputs, outputs, saved, saved_outputs, tangents):
    """The outputs' tangents of a recorded op: its rule in JVP_RULES, or else J t from the op's own backward
    (J^T u) by differentiating <J^T u, t> with respect to u ("double backward"): exact, and one more backward."""
    rule = JVP_RULES.get(name)
    if rule is not None:
        found = rule(inputs, outputs, saved, tangents)
        return [fitted(t, o) if t is not None else None for t, o in zip(found, outputs)]
    if "::" in name and name.endswith("NotImplemented"):
        raise NotImplementedError(NOT_SUPPORTED.format(name))
    return _by_double_backward(name, backward_fn, inputs, outputs, saved, saved_outputs, tangents)


def _by_double_backward(name, backward_fn, inputs, outputs, saved, saved_outputs, tangents):
    node = op_node_class(name, backward_fn)()
    node.next_functions = tuple(_EDGE if t is not None else (None, 0) for t in tangents)
    node.input_meta = tuple((x._shape, x._dtype) if x is not None else None for x in inputs)
    for key, value in (saved or {}).items():
        node.save(key, value)
    for key, i in dict(saved_outputs).items():
        node.save(key, outputs[i])  # the output itself (its own history), not an output of this stand-in node
    with enable_grad():
        seeds = [creation.zeros_like(o).requires_grad_() if o._dtype.is_floating_point else None for o in outputs]
        grads = node.backward_fn(*seeds)
    pairs = [(g, t) for g, t in zip(grads, tangents) if g is not None and t is not None and g.requires_grad]
    used = [s for s in seeds if s is not None]
    if not pairs or not used:
        return [creation.zeros_like(o) if o._dtype.is_floating_point else None for o in outputs]
    differentiable = any(t.requires_grad for _, t in pairs) or any(x is not None and x.requires_grad for x in inputs)
    found = iter(gradients.grad([g for g, _ in pairs], used, [t for _, t in pairs], create_graph=differentiable,
                                 allow_unused=True, materialize_grads=True))
    return [fitted(next(found), o) if s is not None else None for s, o in zip(seeds, outputs)]


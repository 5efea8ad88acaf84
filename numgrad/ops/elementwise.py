"""Applies op-table elementwise entries: promotion, broadcasting, the generated kernel, the backward node."""
import ast
import functools
import math
import typing

import numpy as np

from .. import lazy
from .._core import dtypes
from .._core.device import CPU
from .._core.grad_mode import no_grad
from .._core.shapes import broadcast_shapes
from .._core.state import ANOMALY, STATE
from .._core.warn import user_stack
from ..kernels import dispatch, lower, scalar_rules, tape
from ..lazy import BOOL, KERNEL_DTYPE, compute_now, operand_array
from ..node import LAST, AccumulateGrad, Node, SavedTensor, check_differentiable, check_saved_versions, edge_of, \
    next_sequence, record
from ..spec.table import ELEMENTWISE, NOT_IMPLEMENTED, NOT_IMPLEMENTED_NODE, SUB_BOOL
from ..tensor_base import TensorBase, check_same_device, wants_grad
from . import creation


def _names_in(expr):
    return {n.id for n in ast.walk(ast.parse(expr, mode="eval")) if isinstance(n, ast.Name)}


@functools.lru_cache(maxsize=None)
def _used_names(name, needed):
    """The inputs (and `out`) that the derivatives of the `needed` inputs read: what backward saves."""
    entry = ELEMENTWISE[name]
    used = set().union(*(_names_in(entry.grads[nm]) for nm in needed if entry.grads[nm] != "zeros"))
    return tuple(nm for nm in (*entry.inputs, "out") if nm in used)


def _check_bool_arithmetic(entry, compute, args):
    if entry.name in ("sub", "rsub", "rsub_tensor") and any(_is_bool(a) for a in args):
        if compute is dtypes.bool_:
            raise RuntimeError("Subtraction, the `-` operator, with two bool tensors is not supported. "
                               "Use the `^` or `logical_xor()` operator instead.")
        raise RuntimeError(SUB_BOOL)
    if compute is dtypes.bool_ and entry.name == "neg":
        raise RuntimeError("Negation, the `-` operator, on a bool tensor is not supported. "
                           "If you are trying to invert a mask, use the `~` or `logical_not()` operator "
                           "instead.")


def _is_bool(a):
    return a._dtype is dtypes.bool_ if isinstance(a, TensorBase) else isinstance(a, (bool, np.bool_))


def _promote(entry, args):
    """The dtype `entry` computes in for `args`; raises torch's refusals (bool arithmetic, a dtype its kernel
    lacks)."""
    compute, refusal = _promote_unrefused(entry, args)
    if refusal:
        raise refusal[0](refusal[1])
    return compute


def _promote_unrefused(entry, args):
    """_promote, with a dtype the kernel lacks returned as (exception, message) instead of raised: torch finds
    that out at dispatch, after the broadcast shape (bool arithmetic is refused before it). Fast path: tensors
    of one dtype, with Python scalars of a category no higher than theirs (the common `x * x`, `x + 2`)."""
    first = None
    for a, nm in zip(args, entry.inputs):
        if nm in entry.bool_inputs or nm in entry.options:
            continue
        if isinstance(a, TensorBase):
            d = a._dtype
            if first is None:
                first = d
            elif d is not first:
                first = None
                break
        elif not (isinstance(a, float) or isinstance(a, int)):
            first = None
            break
    if first is not None and (first.is_floating_point or all(
            isinstance(a, TensorBase) or isinstance(a, bool) or (isinstance(a, int) and first is not dtypes.bool_)
            for a, nm in zip(args, entry.inputs) if nm not in entry.options)):
        compute = first
    else:
        values = [a for a, n in zip(args, entry.inputs) if n not in entry.bool_inputs and n not in entry.options]
        compute = dtypes.result_type([(t._dtype, len(t._shape)) for t in values if isinstance(t, TensorBase)],
                                     [s for s in values if not isinstance(s, TensorBase)])
    refusal = entry.refuses.get(compute.name) or (compute.is_narrow and _narrow_refusal(entry, compute))
    if entry.kind == "float" and not compute.is_floating_point:
        compute = dtypes.get_default_dtype()
    if entry.name in ("sub", "rsub", "rsub_tensor", "neg"):
        _check_bool_arithmetic(entry, compute, args)
    return compute, refusal


def _narrow_refusal(entry, compute):
    """torch's kernels dispatch over all integer types or none: a narrow integer is refused as int64 is, named
    as itself."""
    if compute.is_floating_point or "int64" not in entry.refuses:
        return None
    exc, message = entry.refuses["int64"]
    return exc, message.replace("'Long'", f"'{compute.word}'")


def result_type(tensor1, tensor2):
    """torch.result_type: the dtype an arithmetic op on these tensors or numbers computes in."""
    values = (tensor1, tensor2)
    return dtypes.result_type([(t._dtype, len(t._shape)) for t in values if isinstance(t, TensorBase)],
                              [v for v in values if not isinstance(v, TensorBase)])


def compute_dtype(name, *args):
    """The dtype op `name` computes in for these arguments; raises torch's refusal where it has one."""
    return _promote(ELEMENTWISE[name], args)


def apply(name, *args):
    """Runs elementwise op `name` on tensors and Python scalars, recording its node when needed."""
    # the small-tensor path's repeat: the arguments' signature (dtypes, shapes, strides of tensors computed in
    # host memory; the scalars' types; the default dtype, which an integer tensor and a float promote to) was
    # seen before, so promotion, broadcasting, the device, the layout and the kernel are known (lazy.SmallCall);
    # outside a trace, a profile and forward AD, which each need the general path
    key = None
    if not tape.active and tape.profiler is None and STATE.forward_ad is None:
        key = [name, dtypes.get_default_dtype()]
        for a in args:
            if isinstance(a, TensorBase):
                arr = a._arr
                if arr.__class__ is not np.ndarray:
                    key = None
                    break
                key.append((a._dtype, arr.shape, arr.strides))
            else:
                key.append(a.__class__)
        if key is not None:
            key = tuple(key)
            known = _SMALL_CALLS.get(key)
            if known is not None and known[0].n <= lazy.SMALL_MAX:
                call, compute = known
                result = TensorBase._make(call.run(args), call.out_dtype)
                if STATE.grad_enabled and call.entry.grads:
                    _record(call.entry, args, result, compute, call)
                return result
    entry = ELEMENTWISE[name]
    tensors = [a for a in args if isinstance(a, TensorBase)]
    compute, refusal = _promote_unrefused(entry, args)
    out_dtype = dtypes.bool_ if entry.kind == "compare" else compute
    shape = tensors[0]._shape
    for t in tensors[1:]:
        if t._shape != shape:
            shape = broadcast_shapes(*(t._shape for t in tensors))
            break
    if refusal:
        raise refusal[0](refusal[1])
    device = check_same_device(*tensors, cpu_scalars=True)
    n = math.prod(shape)
    # torch's memory order for the result (a transposed input gives a transposed result); GPU results and
    # empty ones stay in C order
    strides = lazy.result_layout(entry, args, tensors, shape)\
        if len(shape) > 1 and n and device is CPU and not entry.c_order else None
    result = None
    if lazy.computes_at_once(n) and strides is None and device is CPU and not compute.is_narrow:
        small = lazy.compute_small(entry, args, compute.np, out_dtype, shape, n)
        if small is not None:
            result = TensorBase._make(small[0], out_dtype)
            if key is not None:
                if len(_SMALL_CALLS) >= _SMALL_CALLS_MAX:  # (a program of ever new shapes: start again)
                    _SMALL_CALLS.clear()
                _SMALL_CALLS[key] = (small[1], compute)
    if result is None and STATE.fusion and n and not compute.is_narrow:
        result = lazy.defer(TensorBase, entry, args, compute, out_dtype, shape, device, strides)
    if result is None and compute.is_narrow:
        result = TensorBase._make(_compute_widened(entry, args, compute, out_dtype, shape, strides), out_dtype)
    elif result is None:
        result = TensorBase._make(compute_now(entry, args, compute, out_dtype, shape, strides), out_dtype)
    if entry.grads and STATE.grad_enabled:
        _record(entry, args, result, compute)
    if STATE.forward_ad is not None:  # forward AD: the result's tangent (autograd/forward_ad.py)
        STATE.forward_ad.elementwise(entry, args, result)
    return result


def _record(entry, args, result, compute, call=None):
    """The op's backward node, when an input requires grad (in grad mode, for an entry with derivatives);
    `call`: the small-tensor path's SmallCall that computed the result, which knows the arguments' shapes."""
    for t in args:
        if isinstance(t, TensorBase) and (t._requires_grad or (t._base is not None and wants_grad(t))):
            if result._dtype.is_floating_point or _records_integer_result(entry, result):
                node_class(entry.name)(entry, args, result, compute, call)
            return


_SMALL_CALLS = {}  # (op name, default dtype, each argument's signature) -> (lazy.SmallCall, compute dtype)
_SMALL_CALLS_MAX = 4096


def _compute_widened(entry, args, compute, out_dtype, shape, strides):
    """compute_now for a narrow dtype: the kernel of its wider type (dtype.kernel) on the inputs cast up, the
    result stored back in the narrow type (half types round once, integers wrap as torch's do)."""
    wide = compute.kernel
    # every operand is first of the common dtype, as torch casts them (an int32 or a float32 0-d tensor rounds
    # to half before a half op), except the CPU-scalar operand that torch's mul, div and lerp kernels read at its
    # own value in float (half * 70000.0 is not half * inf)
    keep = OPMATH_SCALAR.get(entry.name) if compute.is_floating_point else None
    args = [a if nm in entry.bool_inputs else
            _in_float(a, wide) if nm == keep and (not isinstance(a, TensorBase) or not a._shape and a.device is CPU)
            else dtypes.wrap_scalar(a, compute) if not isinstance(a, TensorBase) else
            a if a._dtype is compute else TensorBase._make(dispatch.numpy_op(dtypes.cast, a._data, compute), compute)
            for a, nm in zip(args, entry.inputs)]
    values = compute_now(entry, args, wide, dtypes.bool_ if out_dtype is dtypes.bool_ else wide, shape, strides)
    return dispatch.numpy_op(_stored_as, values, out_dtype.np)


# the operand torch's kernels for half types read at its own value when it is a CPU scalar (binary_op_scalar's
# original_scalar_value, and the activations' float parameters): mul's and div's second (every rounding mode),
# lerp's Number weight, leaky_relu's slope, elu's and celu's alpha
OPMATH_SCALAR = {"mul": "b", "div": "b", "floor_divide": "b", "lerp": "w", "leaky_relu": "slope",
                 "leaky_relu_result": "slope", "elu": "alpha", "elu_result": "alpha", "celu": "alpha",
                 "celu_result": "alpha"}


def _in_float(a, wide):
    """A CPU-scalar operand as torch's opmath reads it: its value in the kernel's float type."""
    if not isinstance(a, TensorBase):
        return a if isinstance(a, bool) else float(np.float32(a))
    return TensorBase._make(dispatch.numpy_op(dtypes.cast, a._data, wide), wide)


def _stored_as(values, np_dtype):
    return values.astype(np_dtype, order="K", copy=False)


def _records_integer_result(entry, result):
    """An integer tensor requires grad only after an in-place write of a value that does. torch then refuses
    to give an out-of-place integer result a grad_fn, records an in-place one, and records nothing for an op
    without a derivative (floor_divide)."""
    if entry.node == NOT_IMPLEMENTED_NODE:
        return False
    if not STATE.in_place:
        check_differentiable((result,))
    return True


@functools.lru_cache(maxsize=None)
def node_class(name):
    entry = ELEMENTWISE[name]
    # a C++-style name (torch::autograd::NotImplemented) names the class by its last part and is what
    # name() returns, as op_node_class does
    attrs = {"name": lambda self, _full=entry.node: _full} if "::" in entry.node else {}
    return type(entry.node.split("::")[-1], (ElementwiseBackward,), attrs)


class ElementwiseBackward(Node):
    """Backward of one op-table entry: one generated kernel computes every needed input gradient in a
    single pass; with create_graph the same derivative expressions run as differentiable tensor ops."""

    def __init__(self, entry, args, result, compute, call=None):
        # (Node.__init__, inlined: a node is made on every recorded op)
        self._seq = next_sequence()
        self._saved = saved = {}
        if ANOMALY.enabled:
            self.metadata["traceback_"] = user_stack()
        self.entry, self.compute = entry, compute
        pattern = []  # each argument's role (see BackwardPlan.pattern)
        for a in args:
            if not isinstance(a, TensorBase):
                pattern.append(-2)
            elif not a._requires_grad:
                pattern.append(-1)
            else:
                i = 0
                while args[i] is not a:
                    i += 1
                pattern.append(i)
        self.plan = plan = _plan(entry.name, tuple(pattern))
        # Python scalars show as (None, 0) edges; exponents and clamp bounds are not inputs at all
        # (loops, not comprehensions, which cost a call each on Python 3.11)
        edges = []
        for i in plan.edge_args:
            if i < 0:
                edges.append((None, 0))
                continue
            a = args[i]
            fn = a._grad_fn
            # (edge_of's usual case inlined: a non-view with a grad_fn; the argument requires grad, see pattern)
            edges.append((fn, a._output_nr) if fn is not None and a._base is None else edge_of(a))
        self.next_functions = tuple(edges)
        # the inputs' shapes and dtypes, which a SmallCall's signature fixes: worked out once per plan there
        meta = call.node_meta.get(plan.pattern) if call is not None else None
        if meta is None:
            meta = {}
            for nm, i in plan.meta_args:
                a = args[i]
                arr = a._arr  # (TensorBase._shape's array case inlined)
                meta[nm] = (arr.shape if arr is not None else a._shape, a._dtype)
            if call is not None:
                call.node_meta[plan.pattern] = meta
        self.meta = meta  # (read only: nodes of one signature share it)
        if call is not None:
            self.out_shape, self.out_numel = call.shape, call.n
        else:
            arr = result._arr
            self.out_shape = arr.shape if arr is not None else result._shape
            self.out_numel = math.prod(self.out_shape)
        for attr, i in plan.save_args:  # Node.save, inlined (an exponent is a plain value)
            value = result if i < 0 else args[i]
            saved[attr] = SavedTensor(value, self, i < 0) if isinstance(value, TensorBase) else value
        if plan.saves_result:
            self.save("result", result, is_output=True)
        result._grad_fn, result._requires_grad, result._output_nr = self, True, 0
        if plan.not_implemented_node:
            self._seq = LAST  # as torch's error nodes: see node.LAST
        if entry.backward_refuses:
            for nm, rules in entry.backward_refuses.items():
                a = args[entry.inputs.index(nm)]
                if isinstance(a, TensorBase) and a._dtype.name in rules:
                    self.refusal = rules[a._dtype.name]
        for nm in entry.integer_arithmetic:
            a = args[entry.inputs.index(nm)]
            if isinstance(a, TensorBase) and not a._dtype.is_floating_point:
                self.by_tensor_ops = True

    refusal = None  # (exception, message) the backward raises: see Elementwise.backward_refuses
    by_tensor_ops = False  # the derivatives run as tensor ops even without create_graph: Elementwise.integer_arithmetic

    def _refusal_applies(self):
        """Whether a gradient the refusal blocks is wanted (Elementwise.refusal_blocks; by default any)."""
        blocks = self.entry.refusal_blocks
        differentiable = self.plan.differentiable
        return any(edge is not None and (not blocks or differentiable[i] in blocks)
                   for i, (edge, _) in enumerate(self.next_functions))
    in_place = False  # made by the op's in-place form: torch's error node names aten::<op>_

    def apply_without_gradients(self, grads):
        self._refuse_if_not_implemented()  # torch's error node raises whatever reaches it
        return super().apply_without_gradients(grads)

    def _refuse_if_not_implemented(self):
        # torch's error node (NotImplemented) raises whenever it runs; a named node only for a needed input
        if self.plan.not_implemented or self.plan.not_implemented_node:
            raise RuntimeError(f"derivative for aten::{self.entry.aten or self.entry.name}{'_' * self.in_place} is not "
                               "implemented")

    def apply(self, grads):
        plan = self.plan
        if plan.not_implemented or plan.not_implemented_node:
            self._refuse_if_not_implemented()
        g = grads[0]
        saved, values = self._saved, []
        # check_saved_versions, which raises for the first modified one in torch's order, called only when one
        # was modified (what the node saved is what it reads, and its result when saves_result)
        if plan.saves_result:
            check_saved_versions(self)
        else:
            for attr in plan.saved_attrs:
                v = saved[attr]
                if v.__class__ is SavedTensor and v.vc[0] != v.version:
                    check_saved_versions(self)
                    break
        for attr in plan.saved_attrs:  # (Node.saved, inlined)
            v = saved[attr]
            values.append(v.unpack(self) if v.__class__ is SavedTensor else v)
        if plan.saves_result:
            self.saved("result")  # unpacked as torch does (its saved-tensor hooks see it)
        # torch's formula fails after unpacking what the node saved, when a gradient it computes is wanted
        if self.refusal is not None and self._refusal_applies():
            raise self.refusal[0](self.refusal[1].replace("{default}", dtypes.get_default_dtype().word))
        if STATE.grad_enabled or self.by_tensor_ops:
            results = self._tensor_mode(g, values)
        else:
            if not plan.zero and not self.compute.is_narrow and lazy.computes_at_once(self.out_numel) and \
                    tape.profiler is None and g._arr.__class__ is np.ndarray:
                return self._small_gradients(g, values)
            results = self._kernel_mode(g, values)
        out = []
        for nm in plan.differentiable:
            r = results.get(nm)
            if r is not None:
                shape, dtype = self.meta[nm]
                if r._shape != shape:
                    r = r._sum_to(shape)
                if r._dtype is not dtype:
                    r = r.to(dtype)
            out.append(r)
        return out

    def _small_gradients(self, g, values):
        """apply's result for a small gradient in host memory, outside a trace and a profile: what _kernel_results
        computes (the backward kernel called at once by _small_kernel_flats, g itself where the derivative is g),
        each gradient taking its input's shape and dtype and placed at its edge, without the general path's
        dictionary and layers. Not for a half type (its gradients round through _kernel_results) or a zero
        derivative."""
        plan, shape, compute = self.plan, self.out_shape, self.compute
        gradients = []
        if plan.exprs:
            arrays = [g._arr]
            for v in values:  # (a saved tensor's array as it is; _data only to compute a pending one)
                arrays.append((v._arr if v._arr is not None else v._data) if isinstance(v, TensorBase) else v)
            one_dim = len(shape) == 1
            for flat in _small_kernel_flats(plan, arrays, shape, self.out_numel, compute.np):
                gradients.append(TensorBase._make(flat if one_dim else flat.reshape(shape), compute))
        for _ in plan.passed:
            gradients.append(g if g._dtype is compute else g.to(compute))
        out = [None] * len(plan.differentiable)
        meta = self.meta
        for (nm, i), r in zip(plan.target_edges, gradients):  # (the kernel's targets first, then the passed)
            in_shape, dtype = meta[nm]
            if in_shape != shape:
                r = r._sum_to(in_shape)
            if dtype is not compute:
                r = r.to(dtype)
            out[i] = r
        return out

    def _kernel_mode(self, g, values):
        plan = self.plan
        pending = self._pending_targets(g) if plan.exprs and STATE.fusion and \
            lazy.fuses(self.out_numel) else None  # (a small gradient computes at once)
        if pending:
            return self._partly_pending(g, values, pending)
        return self._kernel_results(plan, g, values)

    def _pending_targets(self, g):
        """The gradients to leave pending: those going, in this node's dtype and shape, to a node that reads a
        pending gradient inside its own kernel (softmax's backward: the gradient then never goes to memory),
        and then those going to a leaf, which that kernel may compute too (lazy.add_rider)."""
        plan, compute = self.plan, self.compute
        if g._dtype is not compute or g.is_cuda:  # (the row kernels are the CPU's)
            return None
        found, to_leaves = [], []
        for nm, edge in plan.target_edges[:len(plan.expr_targets)]:  # (the targets' edges come first)
            child = self.next_functions[edge][0]
            if child is not None and self.meta[nm] == (self.out_shape, compute):
                if child.takes_pending_grad:
                    found.append(nm)
                elif child.__class__ is AccumulateGrad and STATE.riders is not None:
                    to_leaves.append(nm)
        return found + to_leaves if found else None

    def _partly_pending(self, g, values, pending):
        """Gradients `pending` as fused expressions of g and the saved values (the derivative's tensor ops, in
        no-grad mode: the lazy layer defers them), the others by the kernel of a plan without them."""
        plan = self.plan
        # the rest first: the plan of the same op with the pending gradients' inputs needing none (its kernel
        # reads g's and the saved arrays, which would compute an expression already pending on them)
        groups = {plan.pattern[self.entry.inputs.index(nm)] for nm in pending}
        rest = _plan(self.entry.name, tuple(-1 if p in groups else p for p in plan.pattern))
        unpacked = dict(zip(plan.saved_attrs, values))  # (unpacked once: saved-tensor hooks see one unpack)
        results = self._kernel_results(rest, g, [unpacked[attr] for attr in rest.saved_attrs])
        exprs = dict(zip(plan.expr_targets, (expr for _, expr in plan.exprs)))
        namespace = _namespace(g, plan.used, values)
        results.update({nm: _derivative(exprs[nm], namespace, g) for nm in pending})
        edges = dict(plan.target_edges)
        for nm in pending:
            if self.next_functions[edges[nm]][0].__class__ is AccumulateGrad:
                lazy.add_rider(results[nm])
        return results

    def _kernel_results(self, plan, g, values):
        compute, shape, n = self.compute, self.out_shape, self.out_numel
        np_dtype = compute.kernel.np
        results = {}
        for nm in plan.zero:
            results[nm] = _zeros_like(g, shape, compute)
        for nm in plan.passed:  # the derivative is g itself: no pass over memory
            results[nm] = g if g._dtype is compute else g.to(compute)
        if plan.exprs:
            arrays = [g._data]
            for v in values:
                arrays.append(v._data if isinstance(v, TensorBase) else v)
            flats = _small_kernel_flats(plan, arrays, shape, n, np_dtype) if lazy.computes_at_once(n) else \
                tape.call_into("outs", _kernel_flats, plan, arrays, shape, n, np_dtype)
            for nm, flat in zip(plan.expr_targets, flats):  # (a half type's gradients rounded once, as torch's)
                flat = flat if compute.kernel is compute else dispatch.numpy_op(_stored_as, flat, compute.np)
                results[nm] = TensorBase._make(flat if len(shape) == 1 else flat.reshape(shape), compute)
        return results

    def _tensor_mode(self, g, values):
        if self.entry.backward_aten:  # the gradients, recorded by a node that refuses to be differentiated
            with no_grad():
                results = self._kernel_mode(g, values)
            raiser = _refusing_backward(self.entry.backward_aten)
            inputs = [g, *(v for v in values if isinstance(v, TensorBase))]
            for r in results.values():
                record(NOT_IMPLEMENTED_NODE, raiser, inputs, [r])
            return results
        namespace = _namespace(g, self.plan.used, values)
        results = {}
        for nm in self.plan.needed:
            expr = self.entry.grads[nm]
            results[nm] = creation.zeros_like(g) if expr == "zeros" else _derivative(expr, namespace, g)
        return results


@functools.lru_cache(maxsize=None)
def _refusing_backward(aten):
    def refuse(node, *grads):
        raise RuntimeError(f"derivative for aten::{aten} is not implemented")
    return refuse


def _namespace(g, used, values):
    """The names a derivative expression reads: the tensor-op vocabulary, g and the node's saved values."""
    return dict(EXPRESSION_FUNCS, g=g, **dict(zip(used, values)))


def _derivative(expr, namespace, g):
    """Derivative `expr` evaluated as tensor ops (differentiable with create_graph, pending in no-grad mode with
    fusion on); a number comes out as a tensor of g's shape. (isinstance, not hasattr(r, "_data"), which would
    compute a pending result.)"""
    r = eval(_compiled(expr), {"__builtins__": {}}, namespace)
    return r if isinstance(r, TensorBase) else creation.full_like(g, r)


def _kernel_flats(plan, arrays, shape, n, np_dtype, outs=None):
    """The backward kernel on arrays (g's, then the saved values'): one recorded call for numgrad.compile,
    which reads a one-element input again at each replay."""
    kinds = [np_dtype] + [BOOL if is_bool else np_dtype for is_bool in plan.bool_used]
    args = [operand_array(a, shape, n, kind) for a, kind in zip(arrays, kinds)]
    return dispatch.run_elementwise(plan.kernel_name, plan.kernel_inputs, plan.exprs, args,
                                    [np_dtype] * len(plan.exprs), n, KERNEL_DTYPE[np_dtype], outs)


def _small_kernel_flats(plan, arrays, shape, n, np_dtype):
    """_kernel_flats for a small gradient outside a trace, on host arrays: the kernel called at once (a
    profile times it through dispatch.run_small_elementwise)."""
    args, is_array = [], []
    one_dim = len(shape) == 1
    for a, is_bool in zip(arrays, plan.operand_is_bool):
        if a.__class__ is np.ndarray:
            kind = BOOL if is_bool else np_dtype
            # (operand_array's usual cases inlined: an array of the result's shape and dtype, in C order; one
            # value expanded, a full sum's gradient, read as a scalar)
            if a.shape == shape and (a.dtype is kind or a.dtype == kind) and a.flags.c_contiguous:
                if not one_dim:
                    a = a.reshape(-1)
            elif a.size and not any(a.strides):
                a = kind.type(a.flat[0])
            else:
                a = operand_array(a, shape, n, kind)
        elif not isinstance(a, (np.generic, int, float)):
            return _kernel_flats(plan, arrays, shape, n, np_dtype)
        else:
            a = (BOOL if is_bool else np_dtype).type(a)
        args.append(a)
        is_array.append(a.__class__ is np.ndarray)
    if tape.profiler is not None:
        return dispatch.run_small_elementwise(plan.kernel_name, plan.kernel_inputs, plan.exprs, args,
                                              [np_dtype] * len(plan.exprs), n, KERNEL_DTYPE[np_dtype])
    kernel = dispatch.small_elementwise_kernel(plan.kernel_name, plan.kernel_inputs, tuple(is_array), plan.exprs,
                                               KERNEL_DTYPE[np_dtype])
    outs = []
    for _ in plan.exprs:
        outs.append(np.empty(n, np_dtype))
    kernel(0, n, *args, *outs)
    return outs


def _prepare_kernel_flats(result, plan, arrays, shape, n, np_dtype, outs=None):
    """A replay of _kernel_flats with the kernel's operands bound once (the arrays' own memory), or None."""
    kinds = [np_dtype] + [BOOL if is_bool else np_dtype for is_bool in plan.bool_used]
    bound = lazy.bound_operands(arrays, kinds, shape, n)
    if bound is None:
        return None
    return dispatch.bind_elementwise(plan.kernel_name, plan.kernel_inputs, plan.exprs, *bound, n,
                                     KERNEL_DTYPE[np_dtype], result)


_kernel_flats.prepare = _prepare_kernel_flats


def _zeros_like(g, shape, dtype):
    """Zeros of `shape` on `g`'s device."""
    return TensorBase._make(dispatch.zeros(shape, dtype.np, g._data), dtype)


class BackwardPlan(typing.NamedTuple):
    """What one entry's backward does for one pattern of arguments, worked out once."""
    pattern: tuple  # per argument: -2 not a tensor; -1 a tensor needing no gradient; i >= 0 needs one, first seen
    #                 as args[i] (x * x: (0, 0))
    differentiable: tuple  # the inputs that are edges (scalar-only inputs are not)
    needed: tuple  # the inputs that get a gradient
    used: tuple  # what the derivatives read (inputs, `out`): what the node saves
    saved_attrs: tuple  # torch's names for those: self, other, result, exponent, ...
    bool_used: tuple  # which of them are read as bool
    exprs: tuple  # kernel outputs (grad_<name>, expression); inputs that are one tensor (x * x) share one
    expr_targets: tuple  # the input each kernel output is the gradient of
    passed: tuple  # inputs whose gradient is g itself
    zero: tuple  # inputs whose gradient is zeros
    not_implemented: bool  # torch defines no derivative (backward raises)
    kernel_name: str
    kernel_inputs: tuple
    saves_result: bool  # `out` is not read but saved all the same: torch saves an op's result whenever some
    #                     derivative reads it, so writing it in place makes the backward raise
    # worked out from the above once, so that recording a node only indexes `args`:
    edge_args: tuple  # per next_functions entry, the argument giving the edge (-1: none, a (None, 0) edge)
    meta_args: tuple  # (input name, argument index) of each needed input, whose shape and dtype backward uses
    save_args: tuple  # (torch's saved name, argument index; -1: the result) of each saved value
    target_edges: tuple  # for expr_targets, passed and zero in turn: (name, its index in differentiable)
    operand_is_bool: tuple  # per kernel operand (g, then the saved values): whether it is read as bool
    not_implemented_node: bool  # the entry's node is torch's error node (NotImplemented)


# torch's names for what a node saves: a -> _saved_self, b -> _saved_other, out -> _saved_result
_SAVED_ATTR = {name: {nm: e.saved_names.get(nm) or {"a": "self", "b": "other"}.get(nm, nm) for nm in e.inputs}
               | {"out": "result"} for name, e in ELEMENTWISE.items()}


@functools.lru_cache(maxsize=None)
def _plan(name, pattern):
    entry = ELEMENTWISE[name]
    # torch's next_functions: neither scalars nor a bool condition (where's, masked_fill's mask) are edges
    differentiable = tuple(nm for nm in entry.inputs if nm not in entry.scalar_only and nm not in entry.bool_inputs)
    needed = tuple(nm for nm, p in zip(entry.inputs, pattern) if p >= 0 and nm in entry.grads and nm in differentiable)
    groups = {}
    for nm in needed:
        groups.setdefault(pattern[entry.inputs.index(nm)], []).append(nm)
    exprs, targets, passed, zero = [], [], [], []
    for names in groups.values():
        terms = [entry.grads[nm] for nm in names if entry.grads[nm] != "zeros"]
        if not terms:
            zero.append(names[0])
        elif terms == ["g"]:
            passed.append(names[0])
        else:
            exprs.append((f"grad_{names[0]}", " + ".join(f"({t})" for t in terms)))
            targets.append(names[0])
    used = _used_names(name, needed)
    saved_attrs = tuple(_SAVED_ATTR[name][nm] for nm in used)
    edge_args = tuple(i if p >= 0 else -1 for i, (p, nm) in enumerate(zip(pattern, entry.inputs))
                      if nm in differentiable)
    meta_args = tuple((nm, i) for i, nm in enumerate(entry.inputs) if nm in needed)
    save_args = tuple((attr, -1 if nm == "out" else entry.inputs.index(nm)) for nm, attr in zip(used, saved_attrs))
    return BackwardPlan(pattern, differentiable, needed, used, saved_attrs,
                        tuple(nm in entry.bool_inputs for nm in used), tuple(exprs), tuple(targets),
                        tuple(passed), tuple(zero), any(entry.grads[nm] == NOT_IMPLEMENTED for nm in needed),
                        name + "_backward", ("g", *used), "out" not in used and "out" in _used_names(name, tuple(
                            nm for nm in entry.grads if entry.grads[nm] != NOT_IMPLEMENTED)),
                        edge_args, meta_args, save_args,
                        tuple((nm, differentiable.index(nm)) for nm in (*targets, *passed, *zero)),
                        (False, *(nm in entry.bool_inputs for nm in used)), entry.node == NOT_IMPLEMENTED_NODE)


class _FloorQuotients(ast.NodeTransformer):
    """`a // b` in a derivative is torch's div(rounding_mode="floor"), whose own derivative is zero (not
    floor_divide's, which raises): it becomes a call computing the quotient without recording it."""

    def visit_BinOp(self, node):
        node = self.generic_visit(node)
        if isinstance(node.op, ast.FloorDiv):
            return ast.copy_location(ast.Call(ast.Name("floor_quotient", ast.Load()), [node.left, node.right], []),
                                     node)
        return node


@functools.lru_cache(maxsize=None)
def _compiled(expr):
    tree = ast.fix_missing_locations(_FloorQuotients().visit(ast.parse(expr, mode="eval")))
    return compile(tree, "<derivative>", "eval")


def _floor_quotient(a, b):
    if not isinstance(a, TensorBase) and not isinstance(b, TensorBase):
        return a // b
    with no_grad():
        return apply("floor_divide", a, b)


def _trunc_quotient(a, b):
    """trunc_div in a derivative: torch's div(rounding_mode="trunc"), a constant (its derivative is zero)."""
    if not isinstance(a, TensorBase) and not isinstance(b, TensorBase):
        q = a / b
        return float(math.trunc(q)) if math.isfinite(q) else q
    with no_grad():
        q = apply("div", a, b)
        return TensorBase._make(dispatch.asarray(np.trunc(q._data), q._data.dtype), q._dtype)


# ---- the derivative vocabulary on tensors ----------------------------------------------------------

def _on_tensors_or_numbers(fn, scalar_fn):
    """A vocabulary function for derivative expressions: a Python-scalar operand (pow's base, say) gets
    the math function, tensors the differentiable op."""
    def call(*args):
        if any(isinstance(a, TensorBase) for a in args):
            return fn(*args)
        return scalar_fn(*args)
    return call


def _scalar_math():
    """What each function of the kernels' vocabulary (kernels/lower.py) means on a Python number."""
    funcs = {name: getattr(math, name) for name in lower.MATH}
    funcs.update(log=lambda v: math.log(v) if v > 0 else (float("-inf") if v == 0 else float("nan")), abs=abs,
                 sign=lambda v: (v > 0) - (v < 0), sigmoid=lambda v: 1 / (1 + math.exp(-v)), isnan=math.isnan,
                 maximum=max, minimum=min, remainder=lambda v, w: v % w, fmod=math.fmod,
                 erfinv=scalar_rules.erfinv)
    return funcs


def _tensor_op(name):
    return lambda *args: apply(name, *args)


def _where(condition, input, other):
    if not isinstance(condition, TensorBase):  # a Python bool picks a side whole
        return input if condition else other
    return apply("where", condition, input, other)


# What the op table's derivative expressions mean when they run on tensors (create_graph=True).
EXPRESSION_FUNCS = {name: _on_tensors_or_numbers(_tensor_op(name), scalar) for name, scalar in _scalar_math().items()}
EXPRESSION_FUNCS["where"] = _where
EXPRESSION_FUNCS["gelu_erf"] = EXPRESSION_FUNCS["erf"]  # (tensor ops: the erf op, as torch's double backward)
EXPRESSION_FUNCS["floor_quotient"] = _floor_quotient
EXPRESSION_FUNCS["trunc_div"] = _trunc_quotient
EXPRESSION_FUNCS["nan_of"] = lambda x: creation.full_like(x, math.nan) if isinstance(x, TensorBase) else math.nan
# powers go through `**`, which picks pow, pow_tensor or rpow by which operands are tensors
EXPRESSION_FUNCS["power"] = EXPRESSION_FUNCS["scalar_power"] = lambda a, b: a ** b

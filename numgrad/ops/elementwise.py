"""Applies op-table elementwise entries: promotion, broadcasting, the generated kernel, the backward node."""
import ast
import functools
import math
import typing

import numpy as np

from .. import dtypes, lazy, storage
from ..autograd.grad_mode import STATE
from ..autograd.node import Node, edge_of
from ..kernels import cpu
from ..tensor import Tensor, check_same_device
from .table import ELEMENTWISE, NOT_IMPLEMENTED


def broadcast_shapes(*shapes):
    ndim = max((len(s) for s in shapes), default=0)
    out = [1] * ndim
    for s in shapes:
        for i, d in enumerate(s, ndim - len(s)):
            if out[i] == 1:
                out[i] = d
            elif d != 1 and d != out[i]:
                raise RuntimeError(_mismatch(shapes, i, ndim))
    return tuple(out)


def _mismatch(shapes, i, ndim):
    a, b = shapes[0], shapes[1] if len(shapes) > 1 else shapes[0]
    da = a[i - (ndim - len(a))] if i >= ndim - len(a) else 1
    db = b[i - (ndim - len(b))] if i >= ndim - len(b) else 1
    return (f"The size of tensor a ({da}) must match the size of tensor b ({db}) at non-singleton "
            f"dimension {i}")


def operand(value, shape, n, np_dtype):
    """A kernel argument: a scalar for Python numbers and one-element tensors, else a flat contiguous
    array of the broadcast shape (broadcast operands are materialised)."""
    if value.__class__ is not Tensor and not isinstance(value, Tensor):
        return np_dtype.type(value)
    arr = value._data
    if arr.__class__ is not np.ndarray:  # GPU memory: broadcast and cast on the device, never read here
        if arr.shape != shape:
            arr = arr.broadcast_to(shape)
        return arr.contiguous(np_dtype).flat_buffer()
    if arr.size == 1 or (arr.size and not any(arr.strides)):  # one value, possibly expanded
        return np_dtype.type(arr.flat[0])
    if arr.dtype != np_dtype:
        arr = arr.astype(np_dtype)
    if arr.shape != shape:
        arr = np.broadcast_to(arr, shape)
    return arr.ravel()


_KERNEL_DTYPE = {np.dtype(np.bool_): "bool_", np.dtype(np.int64): "int64", np.dtype(np.float32): "float32",
                 np.dtype(np.float64): "float64"}
_BOOL = np.dtype(np.bool_)


def _names_in(expr):
    return {n.id for n in ast.walk(ast.parse(expr, mode="eval")) if isinstance(n, ast.Name)}


@functools.lru_cache(maxsize=None)
def _used_names(name, needed):
    """The inputs (and `out`) that the derivatives of the `needed` inputs read: what backward saves."""
    entry = ELEMENTWISE[name]
    used = set().union(*(_names_in(entry.grads[nm]) for nm in needed if entry.grads[nm] != "zeros"))
    return tuple(nm for nm in (*entry.inputs, "out") if nm in used)


def _check_bool_arithmetic(entry, compute, args):
    if entry.name in ("sub", "rsub") and any(_is_bool(a) for a in args):
        if compute is dtypes.bool_:
            raise RuntimeError("Subtraction, the `-` operator, with two bool tensors is not supported. "
                               "Use the `^` or `logical_xor()` operator instead.")
        raise RuntimeError("Subtraction, the `-` operator, with a bool tensor is not supported. If you are trying "
                           "to invert a mask, use the `~` or `logical_not()` operator instead.")
    if compute is dtypes.bool_ and entry.name == "neg":
        raise RuntimeError("Negation, the `-` operator, on a bool tensor is not supported. "
                           "If you are trying to invert a mask, use the `~` or `logical_not()` operator "
                           "instead.")


def _is_bool(a):
    return a._dtype is dtypes.bool_ if isinstance(a, Tensor) else isinstance(a, (bool, np.bool_))


def _promote(entry, args):
    """The dtype the kernel computes in. Fast path: tensors of one dtype, with Python scalars of a
    category no higher than theirs (the common `x * x`, `x + 2`)."""
    first = None
    for a, nm in zip(args, entry.inputs):
        if nm in entry.bool_inputs:
            continue
        if isinstance(a, Tensor):
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
            isinstance(a, Tensor) or isinstance(a, bool) or (isinstance(a, int) and first is dtypes.int64)
            for a in args)):
        compute = first
    else:
        values = [a for a, n in zip(args, entry.inputs) if n not in entry.bool_inputs]
        compute = dtypes.result_type([(t._dtype, len(t._shape)) for t in values if isinstance(t, Tensor)],
                                     [s for s in values if not isinstance(s, Tensor)])
    refusal = entry.refuses.get(compute.name)
    if refusal:
        raise refusal[0](refusal[1])
    if entry.kind == "float" and not compute.is_floating_point:
        compute = dtypes.get_default_dtype()
    if entry.name in ("sub", "rsub", "neg"):
        _check_bool_arithmetic(entry, compute, args)
    return compute


def apply(name, *args):
    """Runs elementwise op `name` on tensors and Python scalars, recording its node when needed."""
    entry = ELEMENTWISE[name]
    tensors = [a for a in args if isinstance(a, Tensor)]
    compute = _promote(entry, args)
    out_dtype = dtypes.bool_ if entry.kind == "compare" else compute
    shape = tensors[0]._shape
    for t in tensors:
        if t._shape != shape:
            shape = broadcast_shapes(*(t._shape for t in tensors))
            break
    device = check_same_device(*tensors, cpu_scalars=True)
    n = math.prod(shape)
    result = lazy.defer(Tensor, entry, args, compute, out_dtype, shape, device) if lazy.ENABLED and n else None
    if result is None:
        result = Tensor._make(compute_now(entry, args, compute, out_dtype, shape), out_dtype)
    if entry.grads and STATE.grad_enabled:
        for t in tensors:
            if t._requires_grad:
                node_class(name)(entry, args, result, compute)
                break
    return result


def run_kernel(name, inputs, outputs, args, out_dtypes, n, dtype_name, outs=None):
    """cpu.run_elementwise, or its CUDA twin when an argument lives on the GPU."""
    for a in args:
        if a.__class__ is not np.ndarray and not isinstance(a, (np.generic, int, float)):
            from ..kernels import cuda
            return cuda.run_elementwise(name, inputs, outputs, args, out_dtypes, n, dtype_name, outs)
    return cpu.run_elementwise(name, inputs, outputs, args, out_dtypes, n, dtype_name, outs)


def compute_now(entry, args, compute, out_dtype, shape):
    """The op's values as an array, by its own (unfused) kernel."""
    n = math.prod(shape)
    np_dtype = compute.np
    kargs = [operand(a, shape, n, _BOOL if nm in entry.bool_inputs else np_dtype) for a, nm in zip(args, entry.inputs)]
    (flat,) = run_kernel(entry.name, entry.inputs, entry.forward_outputs, kargs, (out_dtype.np,), n,
                         _KERNEL_DTYPE[np_dtype])
    return flat.reshape(shape)


@functools.lru_cache(maxsize=None)
def node_class(name):
    entry = ELEMENTWISE[name]
    return type(entry.node, (ElementwiseBackward,), {})


class ElementwiseBackward(Node):
    """Backward of one op-table entry: one generated kernel computes every needed input gradient in a
    single pass; with create_graph the same derivative expressions run as differentiable tensor ops."""

    def __init__(self, entry, args, result, compute):
        super().__init__()
        self.entry, self.compute = entry, compute
        self.plan = plan = _plan(entry.name, tuple(_role(a, args) for a in args))
        # Python scalars show as (None, 0) edges; exponents and clamp bounds are not inputs at all
        self.next_functions = tuple(edge_of(a) if p >= 0 else (None, 0)
                                    for a, p, nm in zip(args, plan.pattern, entry.inputs) if nm not in entry.scalar_only)
        self.meta = {nm: (args[i]._shape, args[i]._dtype) for i, nm in enumerate(entry.inputs) if nm in plan.needed}
        self.out_shape = result._shape
        for nm, attr in zip(plan.used, plan.saved_attrs):
            self.save(attr, result if nm == "out" else args[entry.inputs.index(nm)], is_output=(nm == "out"))
        result._grad_fn, result._requires_grad, result._output_nr = self, True, 0

    def apply(self, grads):
        plan = self.plan
        if plan.not_implemented:
            raise RuntimeError(f"derivative for aten::{self.entry.name} is not implemented")
        g = grads[0]
        values = [self.saved(attr) for attr in plan.saved_attrs]
        creating_graph = STATE.grad_enabled
        results = self._tensor_mode(g, values) if creating_graph else self._kernel_mode(g, values)
        out = []
        for nm in plan.differentiable:
            r = results.get(nm)
            if r is not None:
                shape, dtype = self.meta[nm]
                if r._data.shape != shape:
                    from .reduction import sum_to
                    r = sum_to(r, shape)
                if r._dtype is not dtype:
                    r = r.to(dtype)
                if r is not g and not creating_graph:
                    r._fresh = True  # made here and held by nobody else: AccumulateGrad may keep it
            out.append(r)
        return out

    def _kernel_mode(self, g, values):
        plan, compute, shape = self.plan, self.compute, self.out_shape
        np_dtype, n = compute.np, math.prod(shape)
        results = {nm: _zeros_like(g, shape, compute) for nm in plan.zero}
        for nm in plan.passed:  # the derivative is g itself: no pass over memory
            results[nm] = g if g._dtype is compute else g.to(compute)
        if plan.exprs:
            args = [operand(g, shape, n, np_dtype)] + [operand(v, shape, n, _BOOL if is_bool else np_dtype)
                                                       for v, is_bool in zip(values, plan.bool_used)]
            flats = run_kernel(plan.kernel_name, plan.kernel_inputs, plan.exprs, args,
                               [np_dtype] * len(plan.exprs), n, _KERNEL_DTYPE[np_dtype])
            for nm, flat in zip(plan.expr_targets, flats):
                results[nm] = Tensor._make(flat.reshape(shape), compute)
        return results

    def _tensor_mode(self, g, values):
        from .. import functional
        namespace = dict(functional.EXPRESSION_FUNCS, g=g, **dict(zip(self.plan.used, values)))
        results = {}
        for nm in self.plan.needed:
            expr = self.entry.grads[nm]
            if expr == "zeros":
                results[nm] = functional.zeros_like(g)
            else:
                r = eval(_compiled(expr), {"__builtins__": {}}, namespace)
                results[nm] = r if hasattr(r, "_data") else functional.full_like(g, r)
        return results


def _zeros_like(g, shape, dtype):
    """Zeros of `shape` on `g`'s device."""
    return Tensor._make(storage.zeros(shape, dtype.np, g._data), dtype)


def _role(a, args):
    """-2: not a tensor; -1: a tensor that needs no gradient; i >= 0: needs one, first seen as args[i]."""
    if a.__class__ is not Tensor and not isinstance(a, Tensor):
        return -2
    if not a._requires_grad:
        return -1
    for i, b in enumerate(args):
        if b is a:
            return i


class BackwardPlan(typing.NamedTuple):
    """What one entry's backward does for one pattern of arguments (see _role), worked out once."""
    pattern: tuple
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


# torch's names for what a node saves: a -> _saved_self, b -> _saved_other, out -> _saved_result
_SAVED_ATTR = {name: {nm: e.saved_names.get(nm) or {"a": "self", "b": "other"}.get(nm, nm) for nm in e.inputs}
               | {"out": "result"} for name, e in ELEMENTWISE.items()}


@functools.lru_cache(maxsize=None)
def _plan(name, pattern):
    entry = ELEMENTWISE[name]
    differentiable = tuple(nm for nm in entry.inputs if nm not in entry.scalar_only)
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
    return BackwardPlan(pattern, differentiable, needed, used, tuple(_SAVED_ATTR[name][nm] for nm in used),
                        tuple(nm in entry.bool_inputs for nm in used), tuple(exprs), tuple(targets),
                        tuple(passed), tuple(zero), any(entry.grads[nm] == NOT_IMPLEMENTED for nm in needed),
                        name + "_backward", ("g", *used))


@functools.lru_cache(maxsize=None)
def _compiled(expr):
    return compile(expr, "<derivative>", "eval")

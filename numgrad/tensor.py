"""Tensor, the class users see: TensorBase plus every method and operator, each calling the ops layer.

Defined above the ops (as torch.Tensor sits on torch._C.TensorBase), so that ops import only TensorBase
and still make every result a Tensor (TensorBase._make uses the class declared with result_class=True)."""
import math
import weakref

import numpy as np

from ._core import dtypes
from ._core.shapes import broadcast_shapes, infer_size, wrap_dim
from ._core.messages import MULTI_OUTPUT_VIEW_NO_GRAD, PARTIAL_OVERLAP
from ._core.state import STATE
from .autograd import functional as autograd_functional
from .kernels import dispatch
from .lazy import write_pending_into as lazy_write_pending_into
from .node import SavedTensor, record
from .ops import building, creation, device as device_ops, functional as F, indexing, join, linalg, pointwise, \
    reduction, shape
from .ops import einsum, index_reduce as index_reduce_ops, pointwise_more, random as random_ops, reshaping, scan, \
    scatter as scatter_ops, sorting, statistics
from .ops.elementwise import apply
from .ops.shape import _shape_arg as shape_arg
from .spec.table import ELEMENTWISE
from .tensor_base import TensorBase
from .utils import dlpack


def _table_methods():
    """Methods named after the functional API, the tensor being the first argument: every published op-table
    entry (and its in-place form, unless it is a comparison), then the functions written by hand."""
    published = [e for e in ELEMENTWISE.values() if e.published]
    names = [e.name for e in published] + [
        "square", "floor", "ceil", "round", "trunc", "pow", "clamp", "clip", "clamp_min", "clamp_max", "equal",
        "allclose", "isclose", "all", "any", "sum", "mean", "prod", "max", "min", "amax", "amin", "argmax",
        "argmin", "norm", "var", "std", "logsumexp", "softmax", "log_softmax", "nonzero", "subtract",
        "multiply", "divide", "true_divide", "negative", "absolute", "greater", "less", "greater_equal",
        "less_equal", "not_equal"]
    methods = {name: getattr(F, name) for name in names}
    for name in ("all", "any", "sum", "mean", "prod", "max", "min", "amax", "amin", "argmax", "argmin", "norm", "var",
                 "std", "logsumexp", "softmax", "log_softmax"):
        methods[name] = F.method_form(name)
    for name in ("maximum", "minimum", "logical_and", "logical_or", "logical_xor"):
        methods[name] = _two_tensors(name)
    for name in ("reshape", "view", "flatten", "unflatten", "squeeze", "unsqueeze", "permute", "transpose",
                 "expand", "expand_as", "clone", "contiguous"):
        methods[name] = getattr(shape, name)
    # in-place forms: compute out of place, then write into self (version bump, grad_fn rebase)
    # (torch has no maximum_ or minimum_)
    inplace = [e.name for e in published if e.kind != "compare" and e.name not in ("maximum", "minimum")] + [
        "logical_not", "pow", "clamp", "clip", "clamp_min", "clamp_max", "square", "floor", "ceil", "round", "trunc",
        "negative", "absolute"]
    for name in inplace:
        methods[name + "_"] = _named_in_place(_inplace(getattr(F, name), c_names=name.startswith(("clamp", "clip")),
                                                       differentiable=name != "logical_not"))
    for name in ("clamp", "clip", "clamp_", "clip_"):  # torch's binding refuses mixed bounds before anything
        methods[name] = _clamp_method(name, methods[name])
    methods["pow_"] = _pow_method(methods["pow_"])
    for name in ("copysign", "logaddexp", "logaddexp2", "hypot", "xlogy", "lerp", "logit", "nan_to_num", "hardshrink",
                 "prelu", *(n for n in pointwise.__all__ if n.startswith("bitwise"))):
        methods[name] = getattr(pointwise, name)
    for name in ("logaddexp", "logaddexp2", "hypot"):  # Tensors only: torch's parser counts `other` as argument 1
        methods[name] = _two_tensors_first(name, getattr(pointwise, name))
    for name in ("copysign", "hypot", "xlogy", "lerp", "logit", "nan_to_num"):
        methods[name + "_"] = _inplace(getattr(pointwise, name))
    for name in ("addcmul", "addcdiv", "heaviside", "float_power", "gcd", "lcm"):
        methods[name] = getattr(pointwise_more, name)
        methods[name + "_"] = _inplace(getattr(pointwise_more, name), differentiable=name not in ("gcd", "lcm"))
    methods["float_power_"] = _inplace(pointwise_more.float_power_)
    for name in ("gcd", "lcm", "gcd_", "lcm_"):  # (as methods, `other` is argument 1 in torch's TypeError)
        methods[name] = _two_tensors_first(name, methods[name])
    for name in ("heaviside", "heaviside_"):
        methods[name] = pointwise_more.values_first(name, methods[name])
    for name in ("nansum", "nanmean", "aminmax", "count_nonzero", "bincount", "cov", "corrcoef", "renorm"):
        methods[name] = getattr(statistics, name)
    methods["renorm_"] = _inplace(statistics.renorm, elementwise=False)
    methods["hypot_"] = _two_tensors_first("hypot_", methods["hypot_"])
    for name in pointwise.__all__:
        if name.startswith("bitwise"):
            methods[name + "_"] = _inplace(getattr(pointwise, name), differentiable=False)
    # comparisons write their result in self's dtype; the logical ones record nothing (self keeps its history)
    for name in ("eq", "ne", "lt", "le", "gt", "ge"):
        methods[name + "_"] = _inplace(F.compared_in_place(name))
    for name in ("logical_and", "logical_or", "logical_xor"):
        methods[name + "_"] = _two_tensors_first(name + "_", _inplace(getattr(F, name), differentiable=False))
    for alias, name in (("greater", "gt"), ("greater_equal", "ge"), ("less", "lt"), ("less_equal", "le"),
                        ("not_equal", "ne"), ("subtract", "sub"), ("multiply", "mul"), ("divide", "div"),
                        ("true_divide", "div")):
        methods[alias + "_"] = methods[name + "_"]
    return methods


def _pow_method(fn):
    """pow_: torch refuses a negative integer exponent of an integer tensor before it judges the result type."""
    def op(self, exponent):
        if not self._dtype.is_floating_point and isinstance(exponent, int) and not isinstance(exponent, bool) \
                and exponent < 0:
            raise RuntimeError("Integers to negative integer powers are not allowed.")
        return fn(self, exponent)
    op.__name__ = "pow_"
    return op


def _named_in_place(fn):
    """An in-place table op whose derivative torch does not implement: its error names the in-place op."""
    def op(self, *args, **kwargs):
        root = self._base
        before = root._grad_fn if root is not None else None
        own_before = self._grad_fn
        out = fn(self, *args, **kwargs)
        node = self._grad_fn if self._grad_fn is not own_before else None  # an op recording nothing (logical_not_)
        if root is not None and root._grad_fn is not before and root._grad_fn is not None:  # keeps the old node
            node = root._grad_fn.next_functions[1][0]  # a write through a view: the op's node is CopySlices' input
        if node is not None and getattr(getattr(node, "plan", None), "not_implemented", False):
            node.in_place = True
        return out
    op.__name__ = fn.__name__
    return op


def _scatter_method(fn):
    """scatter_/scatter_add_: torch checks dtypes and shapes before the memory of self, index and src (fn's
    checks of its target), so Tensor._inplace's overlap check, which comes first, is not used."""
    def op(self, *args, **kwargs):
        self._check_inplace(True, (*args, *kwargs.values()))
        return self._write(_computed_in_place(fn, self, args, kwargs))
    op.__name__ = fn.__name__.replace("_inplace", "_")
    return op


def _clamp_method(name, fn):
    def op(self, min=None, max=None):
        return fn(self, *F.clamp_bounds(name, min, max, method=True))
    op.__name__ = name
    return op


def _two_tensors(name):
    """The method form of an op taking two Tensors only: `other` is argument 1 in torch's TypeError."""
    return _two_tensors_first(name, getattr(F, name))


def _two_tensors_first(name, fn):
    """fn(self, other) after torch's argument parser's check that `other` is a Tensor (before all else)."""
    def op(self, other):
        F.tensors_only(name, self, other, method=True)
        return fn(self, other)
    op.__name__ = name
    return op


def _check_cast(result, target, c_names=False):
    """torch's refusal to write a result into a tensor of a lower dtype category. TensorIterator names the
    dtypes as ScalarType ("Long"); clamp with number bounds checks on its own and names the destination as
    C++ does ("long int", "bool")."""
    _check_cast_dtype(result._dtype, target, c_names)


def _check_cast_dtype(dtype, target, c_names=False):
    if not dtypes.can_cast(dtype, target._dtype):
        to = target._dtype.c_name if c_names else target._dtype.word
        raise RuntimeError(f"result type {dtype.word} can't be cast to the desired output type {to}")


def _inplace(fn, c_names=False, differentiable=True, elementwise=True, overlap=True):
    """fn written into self, with torch's checks first; `overlap=False`: no memory-overlap check (torch's
    threshold_, idempotent, skips it)."""
    def op(self, *args, **kwargs):
        operands = (*args, *kwargs.values())
        self._check_inplace(differentiable, operands)
        tensors = [a._shape for a in operands if isinstance(a, TensorBase)]
        result = None
        if c_names and not tensors:  # clamp with number bounds checks its result type first
            result = _computed_in_place(fn, self, args, kwargs)
            _check_cast(result, self, c_names=True)
        # then memory overlap, the output's shape and the result type, as TensorIterator builds, before the
        # op's own checks such as alpha's (sub's, neg's and relu's bool checks come before all of them)
        bool_refused_first = (fn.__name__ in ("sub", "subtract") and any(
            (a._dtype is dtypes.bool_) if isinstance(a, TensorBase) else isinstance(a, (bool, np.bool_))
            for a in (self, *args))) or (fn.__name__ in ("neg", "negative", "relu") and self._dtype is dtypes.bool_)
        if not bool_refused_first and overlap:
            self._check_overlap(args)
        if tensors and elementwise and not bool_refused_first:
            full = broadcast_shapes(self._shape, *tensors)
            if full != self._shape:
                raise RuntimeError(f"output with shape {list(self._shape)} doesn't match the broadcast shape "
                                   f"{list(full)}")
        if elementwise and args and isinstance(args[0], _OPERANDS) and not bool_refused_first and result is None:
            values = (self, args[0])  # the promoted result must cast into self: before alpha, division by zero
            result_dtype = dtypes.result_type([(v._dtype, len(v._shape)) for v in values if isinstance(v, TensorBase)],
                                              [v for v in values if not isinstance(v, TensorBase)])
            entry = ELEMENTWISE.get(fn.__name__)
            if entry is not None and entry.kind == "float" and not result_dtype.is_floating_point:
                result_dtype = dtypes.get_default_dtype()  # div and the like compute integers as floats
            if entry is not None and entry.kind == "compare":
                result_dtype = dtypes.bool_  # a comparison's bool casts into any dtype
            _check_cast_dtype(result_dtype, self)
        if result is None:
            result = _computed_in_place(fn, self, args, kwargs)
        return self._write(result, differentiable)
    op.__name__ = fn.__name__ + "_"
    return op


def _computed_in_place(fn, self, args, kwargs):
    """fn's result for an in-place op (see elementwise._records_integer_result)."""
    if not self._requires_grad or self._dtype.is_floating_point:
        return fn(self, *args, **kwargs)
    STATE.in_place = True
    try:
        return fn(self, *args, **kwargs)
    finally:
        STATE.in_place = False


_OPERANDS = (TensorBase, int, float, np.number, np.bool_)


def _operator(fn):
    """Binary operator `fn`, leaving operands other than tensors and numbers to Python (see Tensor)."""
    def op(self, other):
        return fn(self, other) if isinstance(other, _OPERANDS) else NotImplemented
    op.__name__ = getattr(fn, "__name__", "op")
    return op


def _reflected(fn):
    return lambda self, other: fn(other, self)


def _bitwise(logical, bitwise_int, kernel):
    """`&`, `|`, `^` as torch: the dtype by torch's promotion; bool is the logical op, integers the bitwise one,
    and a floating result type is refused with torch's NotImplementedError (there is no float bitwise kernel)."""
    def op(self, other):
        if not isinstance(other, (TensorBase, bool, int, float, np.bool_, np.integer, np.floating)):
            return NotImplemented
        is_tensor = isinstance(other, TensorBase)
        for t in (self, other):  # torch records a NotImplemented node for inputs requiring grad, which reads their
            if isinstance(t, TensorBase) and t._requires_grad:  # grad_fn (a stale unbind output raises) first
                t.grad_fn
        if is_tensor:  # shapes first, as torch's TensorIterator
            broadcast_shapes(self._shape, other._shape)
        result = dtypes.result_type([(t._dtype, len(t._shape)) for t in (self, other) if isinstance(t, TensorBase)],
                                    [] if is_tensor else [other])
        if result.is_floating_point:
            raise NotImplementedError(f'"{kernel}" not implemented for \'{result.word}\'')
        if result is dtypes.bool_:  # a Python bool as a tensor: the logical ops take tensors only
            return getattr(F, logical)(self, other if is_tensor else creation.tensor(bool(other)))
        other_data = other._data if is_tensor else dtypes.wrap_scalar(other, result)
        return Tensor._make(np.asarray(bitwise_int(self._data.astype(np.int64), other_data)).astype(result.np),
                            result)
    return op


def _new(factory):
    """Tensor.new_zeros and friends: a factory defaulting to this tensor's dtype."""
    def make(self, *args, dtype=None, requires_grad=False, device=None):
        return factory(*args, dtype=dtype or self.dtype, requires_grad=requires_grad, device=device or self.device)
    return make


class Tensor(TensorBase, result_class=True):
    __slots__ = ()
    locals().update(_table_methods())

    def __new__(cls, *args, **kwargs):
        if len(args) == 1 and not isinstance(args[0], int):
            return creation.tensor(args[0], dtype=dtypes.get_default_dtype())
        return creation.empty(*args, **kwargs)

    # ---- views, indexing, joins, products -------------------------------------------------------
    t = shape.t_
    T = property(shape.T)
    mT = property(lambda self: shape.matrix_transpose(self))
    swapaxes = swapdims = shape.transpose
    __getitem__ = indexing.getitem
    __setitem__ = indexing.setitem
    index_put, index_put_ = indexing.index_put, indexing.index_put_
    masked_fill, masked_fill_ = indexing.masked_fill, indexing.masked_fill_
    index_select, narrow, select = indexing.index_select, indexing.narrow, indexing.select
    take_along_dim, gather = indexing.take_along_dim, indexing.gather
    scatter, scatter_ = indexing.scatter, _scatter_method(indexing.scatter_inplace)
    scatter_add, scatter_add_ = indexing.scatter_add, _scatter_method(indexing.scatter_add_inplace)
    split_with_sizes, chunk, unbind = join.split_with_sizes, join.chunk, join.unbind

    def split(self, split_size, dim=0):  # torch's method names it split_size (the function split_size_or_sections)
        return join.split(self, split_size, dim)
    # ---- contractions, scans, rearrangements (ops/einsum.py, ops/scan.py, ops/reshaping.py) -------------
    kron = einsum.kron
    cumsum, cumprod, cummax, cummin = scan.cumsum, scan.cumprod, scan.cummax, scan.cummin
    logcumsumexp, diff, cross = scan.logcumsumexp, scan.diff, scan.cross
    tril, triu, roll, fliplr, flipud, rot90 = (reshaping.tril, reshaping.triu, reshaping.roll, reshaping.fliplr,
                                               reshaping.flipud, reshaping.rot90)
    repeat, tile, repeat_interleave = reshaping.repeat, reshaping.tile, reshaping.repeat_interleave
    diagonal, diag, diag_embed, trace = reshaping.diagonal, reshaping.diag, reshaping.diag_embed, reshaping.trace
    view_as, movedim, moveaxis, tensor_split = reshaping.view_as, reshaping.movedim, reshaping.movedim, \
        reshaping.tensor_split

    sort, argsort, msort, topk, kthvalue = (sorting.sort_method, sorting.argsort_method, sorting.msort, sorting.topk,
                                            sorting.kthvalue)
    median, nanmedian, mode, histc = sorting.median, sorting.nanmedian, sorting.mode, sorting.histc
    multinomial = random_ops.multinomial
    unique, unique_consecutive = sorting.unique, sorting.unique_consecutive

    scatter_reduce, index_add, index_copy, index_fill = (scatter_ops.scatter_reduce, scatter_ops.index_add,
                                                         scatter_ops.index_copy, scatter_ops.index_fill)
    masked_scatter, take = scatter_ops.masked_scatter, scatter_ops.take
    scatter_reduce_, index_add_ = _scatter_method(scatter_ops.scatter_reduce), _scatter_method(scatter_ops.index_add)
    index_copy_, index_fill_ = _scatter_method(scatter_ops.index_copy), _scatter_method(scatter_ops.index_fill)
    masked_scatter_ = _scatter_method(scatter_ops.masked_scatter)
    index_reduce = index_reduce_ops.index_reduce

    def index_reduce_(self, dim, index, source, reduce, *, include_self=True):
        self._check_inplace(True, (index, source))
        wrap_dim(dim, len(self._shape))
        # any memory shared with self (itself too) is refused first, unless torch's dim check of a 0-d self and
        # source (which take one index only) comes before it
        if self._shape or getattr(source, "_shape", None) or index.numel() == 1:
            self._check_overlap((index, source), full=True)
            if source is self:  # (a pending self has no memory yet for _check_overlap to compare)
                raise RuntimeError(PARTIAL_OVERLAP)
        return self._write(_computed_in_place(index_reduce_ops.index_reduce, self, (dim, index, source, reduce),
                                              {"include_self": include_self}))

    def flip(self, *dims, **kwargs):  # the method takes the dims spread out too
        if "dims" in kwargs:
            return reshaping.flip(self, kwargs["dims"])
        return reshaping.flip(self, dims[0] if len(dims) == 1 and isinstance(dims[0], (tuple, list)) else dims)

    argwhere = building.argwhere
    fill_diagonal_ = building.fill_diagonal_

    def cumsum_(self, dim, *, dtype=None):
        return self.copy_(scan.cumsum(self, dim, dtype=dtype))

    def cumprod_(self, dim, *, dtype=None):
        return self.copy_(scan.cumprod(self, dim, dtype=dtype))

    def tril_(self, diagonal=0):
        return self.copy_(reshaping.tril(self, diagonal))

    def triu_(self, diagonal=0):
        return self.copy_(reshaping.triu(self, diagonal))

    matmul, mm, bmm, mv, dot = linalg.matmul, linalg.mm, linalg.bmm, linalg.mv, linalg.dot
    outer = ger = linalg.outer

    def __matmul__(self, other):
        return linalg.matmul(self, other) if isinstance(other, TensorBase) else NotImplemented

    def __rmatmul__(self, other):
        return linalg.matmul(other, self) if isinstance(other, TensorBase) else NotImplemented

    def where(self, condition, other):
        return F.where(condition, self, other)

    def sum_to_size(self, *size):
        if not size:
            raise TypeError('sum_to_size() missing 1 required positional arguments: "size"')
        shape = shape_arg(size)
        if not shape:  # at::sum_to returns sum() for an empty shape, a new tensor of sum's dtype (int64 for bool)
            return reduction.sum(self)
        if len(shape) > len(self._shape) or any(s not in (1, d) for s, d in zip(shape[::-1], self._shape[::-1])):
            raise RuntimeError(f"size {{{list(shape)}}} is not expandable to size {{{list(self._shape)}}}.")
        return reduction.sum_to(self, shape)

    def _refresh_view_history(self):
        shape.regenerate_view(self)

    def _sum_to(self, shape):
        """A broadcast gradient summed back to `shape`: the ops' backward formulas reach reduction.sum_to
        through this method, since reduction sits above them in the ops layer."""
        return reduction.sum_to(self, shape)

    # ---- operators: they call the op table directly, `self` being a tensor already ----------------
    # An operand that is neither a tensor nor a number leaves the operator to Python (NotImplemented), as
    # torch's operators do: `t == None` is False, `t + None` raises Python's own TypeError.
    def __add__(self, other):
        return apply("add", self, other) if isinstance(other, _OPERANDS) else NotImplemented

    __radd__ = __add__

    def __sub__(self, other):
        return apply("sub", self, other) if isinstance(other, _OPERANDS) else NotImplemented

    def __rsub__(self, other):
        return apply("rsub", self, other) if isinstance(other, _OPERANDS) else NotImplemented

    def __mul__(self, other):
        return apply("mul", self, other) if isinstance(other, _OPERANDS) else NotImplemented

    __rmul__ = __mul__
    __truediv__ = _operator(F.div)
    __rtruediv__ = _operator(F._rdiv)
    __pow__ = _operator(F.pow)
    __rpow__ = _operator(_reflected(F.pow))
    __neg__ = F.neg
    __abs__ = F.abs
    __eq__ = _operator(F.eq)
    __ne__ = _operator(F.ne)
    __lt__ = _operator(F.lt)
    __le__ = _operator(F.le)
    __gt__ = _operator(F.gt)
    __ge__ = _operator(F.ge)
    __floordiv__ = _operator(F.floor_divide)
    __rfloordiv__ = _operator(_reflected(F.floor_divide))
    __mod__ = _operator(F.remainder)
    __rmod__ = _operator(_reflected(F.remainder))
    __and__ = __rand__ = _bitwise("logical_and", np.bitwise_and, "bitwise_and_cpu")
    __or__ = __ror__ = _bitwise("logical_or", np.bitwise_or, "bitwise_or_cpu")
    __xor__ = __rxor__ = _bitwise("logical_xor", np.bitwise_xor, "bitwise_xor_cpu")
    __lshift__ = _operator(pointwise.bitwise_left_shift)
    __rlshift__ = _operator(_reflected(pointwise.bitwise_left_shift))
    __rshift__ = _operator(pointwise.bitwise_right_shift)
    __rrshift__ = _operator(_reflected(pointwise.bitwise_right_shift))
    __ilshift__ = _operator(lambda self, other: self.bitwise_left_shift_(other))
    __irshift__ = _operator(lambda self, other: self.bitwise_right_shift_(other))

    def __pos__(self):
        return self

    def __hash__(self):
        return id(self)

    def __contains__(self, element):
        """`element in t`, as torch: (element == t).any(); a number or a tensor."""
        if not isinstance(element, (TensorBase, int, float, bool)):
            raise RuntimeError(f"Tensor.__contains__ only supports Tensor or scalar, but you passed in a "
                               f"{type(element)}.")
        return bool(F.any(F.eq(self, element)))

    def __invert__(self):
        if self.dtype is dtypes.bool_:
            return F.logical_not(self)
        if self.dtype.is_floating_point:
            raise TypeError("~ (operator.invert) is only implemented on integer and Boolean-type tensors")
        return Tensor._make(np.asarray(np.invert(self._data)), self.dtype)  # a 0-d input gives a NumPy scalar

    __iadd__ = _operator(lambda self, other: self.add_(other))
    __isub__ = _operator(lambda self, other: self.sub_(other))
    __imul__ = _operator(lambda self, other: self.mul_(other))
    __itruediv__ = _operator(lambda self, other: self.div_(other))
    __ipow__ = _operator(lambda self, other: self.pow_(other))
    __ifloordiv__ = _operator(lambda self, other: self.floor_divide_(other))
    __imod__ = _operator(lambda self, other: self.remainder_(other))

    # ---- autograd ---------------------------------------------------------------------------------
    def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
        autograd_functional.backward(self, gradient, retain_graph, create_graph, inputs=inputs)

    # ---- fills and copies: differentiable writes named as torch names them -------------------------
    def fill_(self, value):
        self._check_inplace()  # autograd's refusals come before fill_'s own checks, as torch's
        scalar = not isinstance(value, TensorBase)
        if not scalar and value._data.ndim != 0:
            raise RuntimeError(f"fill_ only supports 0-dimension value tensor but got tensor with "
                               f"{value._data.ndim} dimensions.")
        if not scalar:  # torch fills from a tensor by copy_, which refuses an expanded self (a number does not)
            self._check_overlap()
        return self._fill_from(value, "FillBackward2" if scalar else "FillBackward3")

    def zero_(self):
        return self._fill_from(0, "ZeroBackward0")

    def copy_(self, src, non_blocking=False):
        # autograd's refusals come before the copy's own checks; torch's copy_ asks them only of a
        # differentiable self (requires_grad &= isDifferentiableType(self))
        self._check_inplace(autograd=self._dtype.is_floating_point, inputs=(src,))
        self._check_overlap((src,), copy=True)
        if isinstance(src, TensorBase):  # src broadcasts to self: torch's message names self a, src b
            broadcast_shapes(self._shape, src._shape)
        return self._fill_from(src, "torch::autograd::CopyBackwards")

    def _fill_from(self, source, name):
        """Overwrites self with a broadcast `source` (fill_, zero_, copy_), as a differentiable op; the old
        values get no gradient, a tensor source gets the gradient summed to its shape."""
        copy = name == "torch::autograd::CopyBackwards"
        self._check_inplace(autograd=self._dtype.is_floating_point or not copy, inputs=(source,))
        src = source if isinstance(source, TensorBase) else None
        if src is None:
            source = dtypes.check_scalar_fits(source, self._dtype, one_element=math.prod(self._shape) == 1)
        if src is not None and src._data.shape != self._data.shape:  # torch's broadcast messages, not NumPy's
            full = infer_size(self._data.shape, src._data.shape)
            if full != self._data.shape:
                raise RuntimeError(f"output with shape {list(self._data.shape)} doesn't match the broadcast shape "
                                   f"{list(full)}")
        value = np.broadcast_to(source._data if src is not None else np.asarray(source), self._data.shape)
        with np.errstate(invalid="ignore"):  # (NaN or inf into an integer tensor: torch casts silently)
            out = Tensor._make(value.astype(self._dtype.np), self._dtype)
        differentiable_src = src if src is not None and src._dtype.is_floating_point else None
        inputs = [self] if name in ("ZeroBackward0", "FillBackward2") else [self, differentiable_src]
        if not self._dtype.is_floating_point and copy:
            inputs = []  # torch's copy_ records only into a differentiable dtype; fill_ and zero_ record into any
        record(name, _fill_backward, inputs, [out], {"src_shape": src._data.shape if src is not None else ()},
               inplace=True)
        return self._write(out)

    # ---- dtype and device conversion ---------------------------------------------------------------
    def to(self, *args, dtype=None, device=None, copy=False, non_blocking=False):
        for a in args:
            if isinstance(a, TensorBase):
                dtype, device = a.dtype, a.device
            elif isinstance(a, dtypes.dtype):
                dtype = a
            else:
                device = a
        out = self
        if device is not None:
            out = device_ops.to_device(out, device)
        if dtype is not None:
            out = shape.to_dtype(out, dtypes.to_dtype(dtype), copy and out is self)
        return shape.clone(out) if copy and out is self else out

    def float(self):
        return self.to(dtypes.float32)

    def double(self):
        return self.to(dtypes.float64)

    def long(self):
        return self.to(dtypes.int64)

    def int(self):
        return self.to(dtypes.int32)

    def short(self):
        return self.to(dtypes.int16)

    def char(self):
        return self.to(dtypes.int8)

    def byte(self):
        return self.to(dtypes.uint8)

    def half(self):
        return self.to(dtypes.float16)

    def bfloat16(self):
        return self.to(dtypes.bfloat16)

    def bool(self):
        return self.to(dtypes.bool_)

    def type_as(self, other):
        return self.to(other.dtype)

    def cpu(self, memory_format=None):
        return self.to("cpu")

    def cuda(self, device=None, non_blocking=False, memory_format=None):
        return self.to("cuda" if device is None else device)

    new_tensor = _new(creation.tensor)
    new_zeros = new_empty = _new(creation.zeros)
    new_ones = _new(creation.ones)
    new_full = _new(creation.full)

    # ---- exchange with other libraries ------------------------------------------------------------
    __dlpack__ = dlpack.__dlpack__
    __dlpack_device__ = dlpack.__dlpack_device__

    # ---- pickling ----------------------------------------------------------------------------------
    def __reduce_ex__(self, protocol):
        if self.is_cuda:
            return (_rebuild, (self._host, self._dtype.name, self._requires_grad, str(self.device)))
        return (_rebuild, (self._data, self._dtype.name, self._requires_grad))

    # ---- in-place machinery ------------------------------------------------------------------------
    def _write(self, result, differentiable=True):
        """Makes `self` hold `result` in place: same storage (views see it), version bumped, and the
        grad_fn rebased onto the op that produced `result`."""
        self._check_inplace(differentiable)
        if result._data.shape != self._data.shape:  # torch checks the shape before the dtype
            raise RuntimeError(f"output with shape {list(self._data.shape)} doesn't match the broadcast shape "
                               f"{list(result._data.shape)}")
        _check_cast(result, self)
        if STATE.forward_ad is not None:
            STATE.forward_ad.written(self, result)
        node = result._grad_fn
        if node is not None and self._multi_output == "no grad":
            raise RuntimeError(MULTI_OUTPUT_VIEW_NO_GRAD)
        if node is None and lazy_write_pending_into(result, self):
            self._vc[0] += 1  # an optimizer step, say: computed straight into the storage, no copy
            return self
        if node is not None:
            _keep_saved_originals(node, self)
        dispatch.copy_into(self._data, result._data)  # copy_ from the GPU: an explicit copy, as torch's
        self._vc[0] += 1
        if node is None:
            return self
        old, old_nr = self._grad_fn, self._output_nr
        if self._base is not None:
            shape.rebase_view(self, result)
        else:
            self._grad_fn, self._output_nr, self._requires_grad = node, result._output_nr, True
        self._move_retained(old, old_nr)
        saved = node._saved.get("result")
        if saved is not None and hasattr(saved, "vc"):  # the saved output is now `self`
            saved.data, saved.vc, saved.version = self._data, self._vc, self._vc[0]
            if self._base is not None and self._grad_fn is not node:
                # torch's error then names the view's regenerated grad_fn (AsStrided) while that lives: it holds
                # it weakly, and the view owns it until it dies or takes another (see SavedTensor.unpack)
                saved.producer = (weakref.ref(self), weakref.ref(self._grad_fn))
        return self


def _fill_backward(node, g):
    # zeros_like(grad) as torch's Fill/Zero/CopyBackwards: g * 0 would turn an inf or NaN gradient into NaN
    grad_self = g.new_zeros(g.shape) if node.next_functions[0][0] is not None else None
    if len(node.next_functions) == 1 or node.next_functions[1][0] is None:
        return (grad_self,) + (None,) * (len(node.next_functions) - 1)
    return grad_self, reduction.sum_to(g, node.saved("src_shape")).to(node.input_meta[1][1])


def _keep_saved_originals(node, target):
    """The op being written into `target` may have saved `target` as its `self` (mul_ saves self for the
    other input's gradient): give it a clone of the values about to be overwritten, as torch's in-place ops
    do. Only `self`: another saved input sharing target's memory (a.mul_(a)) keeps its version, so backward
    raises torch's "modified by an inplace operation" error, as torch's does."""
    saved = node._saved.get("self")
    if isinstance(saved, SavedTensor) and saved.tensor is not None and saved.vc is target._vc:
        saved.tensor = shape.clone(saved.tensor)
        saved.vc, saved.version = saved.tensor._vc, saved.tensor._vc[0]


def _rebuild(data, dtype_name, requires_grad, device_name="cpu"):
    if device_name != "cpu":
        data = dispatch.from_host(data)
    return Tensor._make(data, dtypes._by_name(dtype_name), requires_grad)

"""Reductions from the op table (sum, prod, max, min and their index forms) and the ones composed from
them (mean, amax, norm, var, std, logsumexp, softmax, log_softmax), each with torch's node."""
import builtins
import math
import collections

import numpy as np

from .._core import dtypes
from .._core.warn import warn
from .. import lazy
from ..kernels import dispatch, tape
from .._core.grad_mode import no_grad
from .._core.state import STATE
from ..node import record
from ..tensor_base import TensorBase
from .._core.shapes import wrap_dim
from .elementwise import apply
from .creation import zeros_like as creation_zeros_like
from .indexing import scatter_into_zeros
from ..spec.table import REDUCTIONS

def _return_type(name):
    """torch.return_types.max / .min: a (values, indices) named tuple printed as torch prints it."""
    cls = collections.namedtuple(name, ["values", "indices"], module="torch.return_types")
    cls.__repr__ = lambda self: f"torch.return_types.{name}(\nvalues={self.values!r},\nindices={self.indices!r})"
    return cls


RETURN_TYPES = {"max": _return_type("max"), "min": _return_type("min")}

# torch's binding refusing a list of dims where its signatures take one int (function form, as torch.<op>)
_ONE_DIM_SIGNATURES = {
    "prod": " * (Tensor input, *, torch.dtype dtype = None)\n"
            " * (Tensor input, int dim, bool keepdim = False, *, torch.dtype dtype = None, Tensor out = None)\n",
    "max": " * (Tensor input, *, Tensor out = None)\n * (Tensor input, Tensor other, *, Tensor out = None)\n"
           " * (Tensor input, int dim, bool keepdim = False, *, tuple of Tensors out = None)\n",
}
_ONE_DIM_SIGNATURES["min"] = _ONE_DIM_SIGNATURES["max"]


def _one_dim(op, dim):
    """A reduction over one dim (prod, max, argmax, softmax, ...) refuses a tuple of dims, in torch's words."""
    if isinstance(dim, (tuple, list)):
        if op in _ONE_DIM_SIGNATURES:
            raise TypeError(f"{op}() received an invalid combination of arguments - got (Tensor, "
                            f"{type(dim).__name__}), but expected one of:\n{_ONE_DIM_SIGNATURES[op]}")
        raise TypeError(f"{op}(): argument 'dim' (position 2) must be int, not {type(dim).__name__}")


def _axes(t, dim):
    nd = len(t._shape)
    if dim is None or (isinstance(dim, (tuple, list)) and len(dim) == 0):
        return tuple(range(nd))
    dims = dim if isinstance(dim, (tuple, list)) else (dim,)
    wrapped = [wrap_dim(d, nd) for d in dims]  # every dim's range first, then repeats (sum's order)
    _check_distinct(wrapped, nd)  # a 0-d tensor's dims 0 and -1 are the same dim too
    if nd == 0:  # dim 0 or -1 of a 0-d tensor: nothing to reduce
        return ()
    return tuple(sorted(wrapped))


def _check_distinct(dims, nd):
    """torch's dim_list_to_bitset: each dim wrapped in the order given, the first one met a second time
    refused (var and std call it on the dims as given: a repeat before a later dim out of range)."""
    seen = set()
    for d in (wrap_dim(d, nd) for d in dims):
        if d in seen:
            raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
        seen.add(d)


def _kept_shape(shape, axes, keepdim):
    if keepdim:
        return tuple(1 if i in axes else s for i, s in enumerate(shape))
    return tuple(s for i, s in enumerate(shape) if i not in axes)


def _fold(name, data, axes, acc_dtype, want_index=False):
    """Runs the table's reduction kernel; returns (values, flat positions) shaped like the kept dims."""
    kept = _kept_shape(data.shape, axes, False)
    if not axes:  # a 0-d tensor or nothing to reduce
        return data.astype(acc_dtype).reshape(kept), dispatch.zeros(kept, np.int64, data)
    return dispatch.reduce(name, REDUCTIONS[name], data, axes, acc_dtype, kept, want_index)


def _result(data, dtype):
    if dtype.is_narrow and data.dtype == np.float64:  # a half type from double: through float, as torch
        data = dispatch.asarray(data, np.float32)
    return TensorBase._make(dispatch.c_order(dispatch.asarray(data, dtype.np)), dtype)  # torch's: contiguous


def _expand_back(node, g, keepdim_key="keepdim"):
    """The gradient of a reduction, reshaped with the reduced dims kept and expanded to the input."""
    shape = node.input_shape(0)
    axes = node.saved("axes")
    if not STATE.grad_enabled and g._data.ndim == 0:  # a full reduction: a stride-0 view, no shape ops
        return TensorBase._make(dispatch.expand_scalar(g._data, shape), g._dtype)
    if not node.saved(keepdim_key):
        g = g.reshape(_kept_shape(shape, axes, True))
    return g.expand(*shape)


def _as_input_dtype(node, grad):
    """sum(dtype=...) / mean(dtype=...) compute in another dtype; the gradient returns in the input's."""
    dtype = node.input_meta[0][1]
    return grad if grad._dtype is dtype else grad.to(dtype)


def _sum_backward(node, g):
    return (_as_input_dtype(node, _expand_back(node, g)),)


_FLOAT_SUM_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))

# sum(t) and sum(t, dim=None) are different overloads in torch (SumBackward0 / SumBackward1, MeanBackward0
# / MeanBackward1): a dim left out is this marker, a dim given as None is None
_NO_DIM = type("NoDim", (), {"__repr__": lambda self: "None"})()


def sum(t, dim=_NO_DIM, keepdim=False, dtype=None):
    # the usual loss `z.sum()` of a small float tensor: what the path below computes for it (_float_sum's fold),
    # without its shape work
    if dim is _NO_DIM and dtype is None:
        arr = t._arr
        if arr.__class__ is np.ndarray and arr.ndim and arr.dtype in _FLOAT_SUM_DTYPES and \
                lazy.computes_at_once(arr.size) and arr.size:
            axes = tuple(range(arr.ndim))
            out = TensorBase._make(_float_sum(arr, axes, t._dtype, ()), t._dtype)
            record("SumBackward0", _sum_backward, [t], [out], {"axes": axes, "keepdim": False, "dim": None,
                                                                "self_sym_sizes": t._shape})
            return out
    named = dim is not _NO_DIM
    dim = None if not named else dim
    axes = _axes(t, dim)
    out_dtype = dtype or (t._dtype if t._dtype.is_floating_point else dtypes.int64)
    shape = t._shape
    if 0 in shape and any(shape[a] == 0 for a in axes):
        values = dispatch.zeros(_kept_shape(shape, axes, False), out_dtype.np, t._data)
    elif axes and STATE.fusion and 0 not in shape and not lazy.is_small_and_computed(t) and\
            axes == tuple(range(axes[0], len(shape))) and\
            out_dtype.is_floating_point == t._dtype.is_floating_point and _fold_leaf(t):
        # trailing dims: one pass with several accumulators; a pending elementwise region is summed
        # inside that pass, never stored (bool and int64 sum into int64, floats into float64)
        acc = "float64" if out_dtype.is_floating_point else "int64"
        values = dispatch.asarray(lazy.fold_region(t, axes[0], "sum", acc)).reshape(_kept_shape(shape, axes, False))
    elif out_dtype.is_floating_point and t._dtype.is_floating_point and axes:  # float32 sums accumulate in double
        values = _float_sum(t._data, axes, out_dtype, _kept_shape(shape, axes, keepdim))
    else:
        acc = np.float64 if out_dtype.is_floating_point else np.int64
        values, _ = _fold("sum", t._data, axes, acc)  # bool and int64 fold into an int64 accumulator
        if out_dtype.is_floating_point:  # the fold starts from the first element, torch's sum from +0.0:
            values = dispatch.numpy_op(np.add, values, 0.0)  # a sum of -0.0s is +0.0 (x + 0.0 changes no other value)
    kept = _kept_shape(shape, axes, keepdim)
    # (a reshape to the same shape would make the result a view: the engine copies a view it could keep as .grad)
    out = _result(values if values.shape == kept else values.reshape(kept), out_dtype)
    name = "SumBackward1" if named else "SumBackward0"
    record(name, _sum_backward, [t], [out], {"axes": axes, "keepdim": keepdim, "dim": dim,
                                              "self_sym_sizes": shape})
    return out


def _float_sum(data, axes, out_dtype, kept):
    """The values of a float sum over `axes` that are not one trailing run: the op table's fold, each kept
    position's run of reduced elements in order, accumulated in float64 (a small array's at once)."""
    return (dispatch.small_float_sum if data.__class__ is np.ndarray and lazy.computes_at_once(data.size) else
            dispatch.float_sum)(REDUCTIONS["sum"], data, axes, out_dtype.np, kept)


def sums_unrecorded(t, dim):
    """The sums of a 2-d float tensor along `dim`, recording nothing, by sum's float fold (and so to the bit its
    values): a first-order backward's bias gradient, Linear's along dim 0 of its gradient, a convolution's along
    dim 1 of the (channels, rest) copy it holds (the fold of a sum over dims that are not trailing, without that
    sum's copy)."""
    data = t._data
    return TensorBase._make(_float_sum(data, (dim,), t._dtype, (data.shape[1 - dim],)), t._dtype)


def sum_to(t, shape):
    """Sums a broadcast gradient back to `shape` (leading dims and dims that were 1)."""
    shape = tuple(shape)
    if t._data.shape == shape:
        return t
    lead = t._data.ndim - len(shape)
    axes = tuple(range(lead)) + tuple(lead + i for i, s in enumerate(shape) if s == 1 and t._data.shape[lead + i] != 1)
    r = sum(t, axes, keepdim=True) if axes else t
    return r.reshape(shape) if r._data.shape != shape else r


def _mean_backward(node, g):
    return (_as_input_dtype(node, _expand_back(node, g) / node.saved("count")),)


def mean(t, dim=_NO_DIM, keepdim=False, dtype=None):
    named = dim is not _NO_DIM
    dim = None if not named else dim
    if not (dtype or t._dtype).is_floating_point:
        raise RuntimeError("mean(): could not infer output dtype. Input dtype must be either a floating point "
                           f"or complex dtype. Got: {t._dtype.word}")
    axes = _axes(t, dim)
    count = int(np.prod([t._shape[a] for a in axes]))
    out_dtype = dtype or t._dtype
    with no_grad():  # a half type's mean is float's, rounded once (torch's)
        s = sum(t.to(out_dtype.kernel), dim, keepdim)
    out = _result(dispatch.numpy_op(np.divide, s._data, s._data.dtype.type(count)) if count else
                  dispatch.full(s._data.shape, np.nan, s._data.dtype, s._data), out_dtype)
    record("MeanBackward1" if named else "MeanBackward0", _mean_backward, [t], [out],
           {"axes": axes, "keepdim": keepdim, "count": count, "dim": dim, "self_sym_sizes": t._shape})
    return out


@np.errstate(all="ignore")  # IEEE results (inf, NaN) without NumPy's warnings: torch is silent
def _prod_backward(node, g):
    a, out = node.saved("self"), node.saved("result")
    g = _expand_back(node, g)
    if a._data.ndim == 0:  # the product of one element is itself: torch passes the gradient (NaN and inf too)
        return (g,)
    out = _expand_back(node, out)
    tape.graph_break("prod's backward looks for zeros in its input")
    if not (a._data == 0).any():
        return (_as_input_dtype(node, g * (out / a)),)
    if node.saved("dim") is None and int(dispatch.to_host(a._data == 0).sum()) > 1:
        return (creation_zeros_like(node.saved("input")),)  # torch: every other product holds a zero
    # with zeros: the product of the other elements, by exclusive prefix and suffix products
    axes = node.saved("axes")
    keep = [d for d in range(a._data.ndim) if d not in axes]
    moved = np.ascontiguousarray(a._data.transpose(keep + list(axes)))
    rows = moved.reshape(-1, int(np.prod([a._data.shape[d] for d in axes])))
    ones = np.ones((rows.shape[0], 1), rows.dtype)
    # torch's cumprod accumulates float32 in double (1.25 * 3e38 * 0 is 0, not inf * 0), then rounds
    acc = np.float64 if rows.dtype == np.float32 else rows.dtype
    prefix = np.cumprod(np.concatenate([ones, rows[:, :-1]], axis=1), axis=1, dtype=acc).astype(rows.dtype)
    suffix = np.cumprod(np.concatenate([ones, rows[:, :0:-1]], axis=1), axis=1, dtype=acc)[:, ::-1].astype(rows.dtype)
    others = (prefix * suffix).reshape(moved.shape).transpose(np.argsort(keep + list(axes)))
    return (_as_input_dtype(node, g * _result(others, a._dtype)),)


def prod(t, dim=None, keepdim=False, dtype=None):
    _one_dim("prod", dim)
    axes = _axes(t, dim)
    out_dtype = dtype or (t._dtype if t._dtype.is_floating_point else dtypes.int64)
    src = t._data.astype(out_dtype.np)
    saved_self = t if dtype is None else TensorBase._make(src, out_dtype)  # the product's own values
    if any(t._data.shape[a] == 0 for a in axes):
        values = dispatch.full(_kept_shape(t._data.shape, axes, False), 1, out_dtype.np, t._data)
    else:
        values, _ = _fold("prod", src, axes, out_dtype.np)
    out = _result(values.reshape(_kept_shape(t._data.shape, axes, keepdim)), out_dtype)
    record("ProdBackward0" if dim is None else "ProdBackward1", _prod_backward, [t], [out],
           {"self": saved_self, "input": t, "axes": axes, "keepdim": keepdim, "dim": dim}, {"result": 0})
    return out


def _fold_leaf(t):
    """Whether the fused fold takes `t`: lazy.tensor_value widens a narrow dtype's host array only, so a GPU one
    folds through dispatch.reduce (which widens it, the same sums)."""
    return not (t._dtype.is_narrow and t.is_cuda)


def _check_nonempty(t, axes, op, whole, given=None):
    """torch's errors for selecting from nothing, worded for the op the user called; amax and amin name a
    dim as it was `given`, max, min, argmax and argmin the wrapped one."""
    if whole and 0 in t._shape:
        if op in ("argmax", "argmin"):
            raise IndexError(f"{op}(): Expected reduction dim to be specified for input.numel() == 0.")
        raise RuntimeError(f"{op}(): Expected reduction dim to be specified for input.numel() == 0. "
                           "Specify the reduction dim with the 'dim' argument.")
    if not t._shape:  # a 0-d tensor holds one value
        return
    for a in (given if given is not None else axes):
        if t._shape[wrap_dim(a, len(t._shape))] == 0:
            raise IndexError(f"{op}(): Expected reduction dim {a} to have non-zero size.")


def _select(name, t, axes, op, whole, want_index=False, given=None):
    """max/min folds (the table's selecting reductions) for max, min, amax, amin, argmax, argmin."""
    _check_nonempty(t, axes, op, whole, given)
    shape = t._shape
    # trailing dims: the vectorised fused fold (not over an empty tensor: a fused program needs an element)
    if not want_index and axes and t._dtype.is_floating_point and STATE.fusion and 0 not in shape and\
            axes == tuple(range(axes[0], len(shape))) and _fold_leaf(t):
        values = lazy.fold_region(t, axes[0], name, lazy.KERNEL_DTYPE[t._dtype.kernel.np])
        return dispatch.asarray(values, t._dtype.np).reshape(_kept_shape(shape, axes, False)), None
    return _fold(name, t._data, axes, t._dtype.np, want_index)


def _evenly_backward(node, g):
    """max/min/amax/amin: the gradient is split evenly among the elements equal to the result."""
    a, out, axes = node.saved("self"), node.saved("result"), node.saved("axes")
    whole_max = node.name() in ("MaxBackward1", "MinBackward1")
    mask = a == _expand_back(node, out)
    if whole_max:  # torch's evenly_distribute_backward: a NaN result gives the gradient to the NaNs (no
        mask = mask | (a.isnan() & out.isnan())  # value read into Python: a compiled step replays this)
    count = sum(mask, axes, keepdim=True)
    if not node.saved("keepdim"):
        g = g.reshape(count.shape)
    share = (g / count).expand(*a.shape)  # computed at the reduced shape: the full-size work is one op
    # max()/min() fill the selected places; amax/amin multiply by the mask, as torch does, so a row
    # whose result no element equals (a NaN) gets 0 * (g / 0) = NaN
    return (apply("where", mask, share, 0.0) if whole_max else mask * share,)


def amax(t, dim=(), keepdim=False, _name="amax", _node="AmaxBackward0"):
    whole = dim is None or dim == () or dim == []
    given = None if whole or _name in ("max", "min") else (dim if isinstance(dim, (tuple, list)) else (dim,))
    if given is not None and 0 in t._shape:  # torch refuses an empty dim before it looks for repeats
        _check_nonempty(t, (), _name, False, given)
    axes = _axes(t, dim)
    values, _ = _select(_name if _name in ("max", "min") else _name[1:], t, axes, _name, whole, given=given)
    out = _result(values.reshape(_kept_shape(t._data.shape, axes, keepdim)), t._dtype)
    # an integer input requires grad only after an in-place write of a value that does: record refuses it
    record(_node, _evenly_backward, [t], [out], {"self": t, "axes": axes, "keepdim": keepdim, "dim": dim},
           {"result": 0})
    return out


def amin(t, dim=(), keepdim=False):
    return amax(t, dim, keepdim, _name="amin", _node="AminBackward0")


def _indices_backward(node, g):
    dim, keepdim, idx = node.saved("dim"), node.saved("keepdim"), node.saved("indices")
    if node.input_shape(0) == ():  # max of a 0-d tensor along dim 0 is the tensor itself
        return (g.reshape(()),)
    if not keepdim:
        g, idx = g.unsqueeze(dim), idx.unsqueeze(dim)
    return (scatter_into_zeros(node.input_shape(0), dim, idx, g),)


def _max_min(name, t, dim, keepdim):
    if dim is None:
        return amax(t, None, False, _name=name, _node="MaxBackward1" if name == "max" else "MinBackward1")
    _one_dim(name, dim)
    d = wrap_dim(dim, t._data.ndim)
    values, idx = _select(name, t, (d,) if t._data.ndim else (), name, False, want_index=True)
    kept = _kept_shape(t._data.shape, (d,) if t._data.ndim else (), keepdim)
    values, indices = _result(values.reshape(kept), t._dtype), _result(idx.reshape(kept), dtypes.int64)
    record("MaxBackward0" if name == "max" else "MinBackward0", _indices_backward, [t], [values],
           {"dim": d, "keepdim": keepdim, "indices": indices, "self_sym_sizes": t._data.shape})
    return RETURN_TYPES[name](values, indices)


def max(t, dim=None, keepdim=False):
    if isinstance(dim, TensorBase):
        return apply("maximum", t, dim)
    return _max_min("max", t, dim, keepdim)


def min(t, dim=None, keepdim=False):
    if isinstance(dim, TensorBase):
        return apply("minimum", t, dim)
    return _max_min("min", t, dim, keepdim)


def argmax(t, dim=None, keepdim=False, _name="max"):
    op = "arg" + _name
    _one_dim(op, dim)  # the binding's type check, then bool, then the dim's range, as torch
    if t._dtype is dtypes.bool_:
        raise RuntimeError(f"{op}(): does not support bool input")
    if dim is None:
        flat = TensorBase._make(t._data.reshape(-1), t._dtype)
        _, idx = _select(_name, flat, (0,), op, True, want_index=True)
        out = _result(idx.reshape(()), dtypes.int64)
        return out.reshape([1] * t._data.ndim) if keepdim else out
    d = wrap_dim(dim, t._data.ndim)
    axes = (d,) if t._data.ndim else ()
    _, idx = _select(_name, t, axes, op, False, want_index=True)
    return _result(idx.reshape(_kept_shape(t._data.shape, axes, keepdim)), dtypes.int64)


def argmin(t, dim=None, keepdim=False):
    return argmax(t, dim, keepdim, _name="min")


# ---- composites with a node of their own ----------------------------------------------------------

def _norm_backward(node, g):
    a, out, p = node.saved("self"), node.saved("result"), node.saved("ord")
    g, out = _expand_back(node, g), _expand_back(node, out)
    # torch's linalg_vector_norm_backward, branch by branch and in its order of operations
    zero = out == 0
    safe = apply("where", zero, 1.0, out)  # no 0/0 at a zero norm, in this backward or in its own
    if p == 2:
        return (g * apply("where", zero, 0.0, a / safe),)
    if p == 1:
        return (a.sign() * g,)
    if p == float("inf") or p == float("-inf"):
        # the elements equal to the norm share the gradient; a NaN counts as one (sign(NaN) is 0)
        abs_a = a.abs()
        mask = ((abs_a == out) | abs_a.isnan()).to(g.dtype)
        return (a.sign() * ((g / sum(mask, node.saved("axes"), keepdim=True)) * mask),)
    if p == 0:  # a count of nonzeros: torch sends no gradient at all
        return (None,)
    if p < 1:  # |a|**(p-1) is infinite at 0: torch puts 0 there, and divides by the norm unmasked
        scaled = apply("where", a == 0, 0.0, a.sign() * a.abs() ** (p - 1))
        return (scaled * g / out ** (p - 1),)
    scaled = a.sign() * a.abs() ** (p - 1) if p < 2 else a * a.abs() ** (p - 2)
    return (scaled * apply("where", zero, 0.0, g / safe ** (p - 1)),)


def _check_empty_norm(t, p, dim, axes):
    """linalg.vector_norm's checks for an empty input: a negative or infinite order has no identity (the
    missing space before `because` is torch's)."""
    if not (p < 0 or p == float("inf")):
        return
    if dim is None or dim == () or dim == []:
        raise RuntimeError(f"linalg.vector_norm cannot compute the {p:g} norm on an empty tensor because the "
                           "operation does not have an identity")
    for d in (dim if isinstance(dim, (tuple, list)) else (dim,)):  # each dim reduced, as the user wrote it
        if t._shape[wrap_dim(d, len(t._shape))] == 0:
            raise RuntimeError(f"linalg.vector_norm cannot compute the {p:g} norm on the dimension {d}because "
                               "this dimension is empty and the operation does not have an identity")


def norm(t, p="fro", dim=None, keepdim=False, dtype=None, *, _node="LinalgVectorNormBackward0"):
    """torch.norm (linalg.vector_norm's node); `_node` names the node of C++ callers of at::norm (NormBackward1)."""
    if p is not None and not isinstance(p, (int, float, str)):  # torch's binding, before any other check
        raise TypeError(f"linalg_vector_norm(): argument 'ord' (position 2) must be Number, not {type(p).__name__}")
    if isinstance(dim, bool):  # a bool is an int to Python, not a dim to torch
        raise TypeError("linalg_vector_norm(): argument 'dim' (position 3) must be tuple of ints, but found element "
                        "of type bool at pos 0")
    if (p is None or p == "fro") and isinstance(dim, (tuple, list)) and len(dim) > 2:
        if not t._dtype.is_floating_point:  # matrix_norm checks the dtype before the dims
            raise RuntimeError(f"linalg.matrix_norm: Expected a floating point or complex tensor as input. Got "
                               f"{t._dtype.word}")
        raise RuntimeError(f"linalg.matrix_norm: dim must be a 2-tuple. Got {' '.join(str(d) for d in dim)}")
    if p is None or p == "fro":
        p = 2
    if not t._dtype.is_floating_point:
        raise RuntimeError(f"linalg.vector_norm: Expected a floating point or complex tensor as input. Got "
                           f"{t._dtype.word}")
    if dtype is not None:  # computed (and differentiated) in dtype, as torch's
        t = t.to(dtype)
    axes = _axes(t, dim)
    if 0 in t._shape:
        _check_empty_norm(t, p, dim, axes)
    with no_grad():
        x = t.abs()
        if t._dtype.is_narrow:  # a half type's norm in float, rounded once (torch's opmath)
            x = x.to(dtypes.float32)
        # each result of one element: torch's norm is that element's abs for every order but 0, so neither
        # its square nor its power overflows ([1e30].norm() is 1e30, [1e30, 1e30].norm() inf in float32)
        if p == float("inf") or (p != 0 and math.prod(t._shape[a] for a in axes) == 1):
            out = amax(x, axes, keepdim)
        elif p == float("-inf"):
            out = amin(x, axes, keepdim)
        elif p == 0:
            out = sum((x != 0).to(t.dtype), axes, keepdim)
        elif p == 1:
            out = sum(x, axes, keepdim)
        elif p == 2:
            out = sum(x * x, axes, keepdim).sqrt()
        else:
            out = sum(x ** p, axes, keepdim) ** (1.0 / p)
    out = _result(out._data, t._dtype)
    record(_node, _norm_backward, [t], [out],
           {"self": t, "ord": p, "axes": axes, "keepdim": keepdim, "dim": dim}, {"result": 0})
    return out


def _correction(unbiased, correction):
    if correction is not None:
        return correction
    return 1 if unbiased in (None, True) else 0


def _var_parts(t, dim, correction, keepdim, op):
    if not t._dtype.is_floating_point:
        raise RuntimeError("std and var only support floating point and complex dtypes")
    if isinstance(dim, (tuple, list)):
        _check_distinct(dim, len(t._shape))
    axes = _axes(t, dim)
    n = int(np.prod([t._data.shape[a] for a in axes]))
    if n - correction <= 0:
        warn(f"{op}(): degrees of freedom is <= 0. Correction should be strictly less than the reduction "
             "factor (input numel divided by output numel). (Triggered internally at "
             "/__w/pytorch/pytorch/aten/src/ATen/native/ReduceOps.cpp:1861.)")
    with no_grad():
        # float32 in double, as torch accumulates: the squares of values near 1e30 do not overflow a std
        x = t.to(dtypes.float64) if t._dtype is dtypes.float32 else t
        if math.prod(t._shape) == n:  # one result: torch's two passes, about the mean in the input's dtype
            centre = mean(t, axes, keepdim=True).to(x._dtype)
        else:  # torch's Welford, whose mean is exact for equal values (a var of 0, not a rounding residue):
            centre = mean(x, axes, keepdim=True)  # one refining pass does as well
            centre = centre + mean(x - centre, axes, keepdim=True)
        centred = x - centre
        var = sum(centred * centred, axes, keepdim) / builtins.max(n - correction, 0)
    return axes, n, var


def _var_grad(node, g):
    """torch's var_backward for a gradient `g` at the input's shape: (2 / dof) * g * (a - mean). A whole-tensor
    var (no dim, or a 0-d input) with no degrees of freedom left (correction >= n) gives g * inf, NaN where an
    element equals the mean; with dims torch keeps the formula, 2 / dof negative or infinite."""
    a, n, c = node.saved("self"), node.saved("n"), node.saved("correction")
    centre = mean(a, node.saved("axes"), keepdim=True)
    dof = n - c
    if dof <= 0 and (node.saved("dim") is None or not a._shape):
        return g * apply("where", a == centre, float("nan"), float("inf")).to(g._dtype)  # (a half g stays half)
    return (2.0 / dof if dof else float("inf")) * g * (a - centre)


def _var_backward(node, g):
    return (_var_grad(node, _expand_back(node, g)),)


def _std_backward(node, g):
    """torch's std_backward: var's with g / (2 * std), 0 where the std is 0 (dividing by 1 there keeps double
    backward free of 0 * inf)."""
    out = node.saved("result")
    g, out = _expand_back(node, g), _expand_back(node, out)
    zero = out == 0
    safe = apply("where", zero, 1.0, out)
    return (_var_grad(node, apply("where", zero, 0.0, g / (safe * 2))),)


def _parse_var_args(dim, unbiased, keepdim, correction):
    if isinstance(dim, bool):  # var(unbiased) positional form
        dim, unbiased = None, dim
    return dim, _correction(unbiased, correction), keepdim


@np.errstate(all="ignore")  # IEEE results (inf, NaN) without NumPy's warnings: torch is silent
def var(t, dim=None, unbiased=None, keepdim=False, *, correction=None):
    dim, c, keepdim = _parse_var_args(dim, unbiased, keepdim, correction)
    axes, n, v = _var_parts(t, dim, c, keepdim, "var")
    out = _result(v._data.astype(t._dtype.np, copy=False), t._dtype)
    record("VarBackward0", _var_backward, [t], [out], {"self": t, "axes": axes, "keepdim": keepdim, "n": n,
                                                        "correction": c, "dim": dim})
    return out


@np.errstate(all="ignore")  # IEEE results (inf, NaN) without NumPy's warnings: torch is silent
def std(t, dim=None, unbiased=None, keepdim=False, *, correction=None):
    dim, c, keepdim = _parse_var_args(dim, unbiased, keepdim, correction)
    axes, n, v = _var_parts(t, dim, c, keepdim, "std")
    out = _result(np.sqrt(v._data).astype(t._dtype.np, copy=False), t._dtype)  # on the GPU, the op table's sqrt kernel (DeviceArray ufuncs)
    record("StdBackward0", _std_backward, [t], [out], {"self": t, "axes": axes, "keepdim": keepdim, "n": n,
                                                        "correction": c, "dim": dim}, {"result": 0})
    return out


def _logsumexp_backward(node, g):
    a, out = node.saved("self"), node.saved("result")
    return (_expand_back(node, g) * (a - _expand_back(node, out)).exp(),)


def logsumexp(t, dim=_NO_DIM, keepdim=False):
    if dim is _NO_DIM:  # torch's binding words a missing dim its own way
        raise TypeError('logsumexp() missing 1 required positional arguments: "dim"')
    axes = _axes(t, dim)
    if not t._dtype.is_floating_point:
        t = t.to(dtypes.get_default_dtype())
    with no_grad():
        if any(t._shape[a] == 0 for a in axes):  # no maximum to shift by: log(sum of nothing) = -inf
            m = creation_zeros_like(sum(t, axes, keepdim=True))
        else:
            m = amax(t, axes, keepdim=True)
        m = m.masked_fill(m.abs() == float("inf"), 0.0)  # all -inf rows give -inf, not nan
        out = (sum((t - m).exp(), axes, keepdim=True).log() + m)
        if not keepdim:
            out = out.reshape(_kept_shape(t._data.shape, axes, False))
    out = _result(out._data, t._dtype)
    record("LogsumexpBackward0", _logsumexp_backward, [t], [out],
           {"self": t, "axes": axes, "keepdim": keepdim, "dim": dim}, {"result": 0})
    return out


def _softmax_backward(node, g):
    out, d = node.saved("result"), node.saved("dim")
    if not STATE.grad_enabled and _runs_rows(out, d):
        return (TensorBase._make(_row_backward(g, out, False), out._dtype),)
    return (out * (g - sum(g * out, d, keepdim=True)),)


def _log_softmax_backward(node, g):
    out, d = node.saved("result"), node.saved("dim")
    if not STATE.grad_enabled and _runs_rows(out, d):  # (create_graph needs the tensor ops)
        return (TensorBase._make(_row_backward(g, out, True), out._dtype),)
    return (g - out.exp() * sum(g, d, keepdim=True),)


# an elementwise node before them leaves their gradient pending (ops/elementwise.py): the row kernel computes it
_softmax_backward.takes_pending_grad = _log_softmax_backward.takes_pending_grad = True


def _row_backward(g, out, log):
    if lazy.pending(g) is not None and g._dtype is out._dtype and g._shape == out._shape:
        return lazy.softmax_rows_backward(g, lazy.array_to_read(out), log)
    grad = g._data
    if g._dtype is not out._dtype:  # (a gradient of another float type: converted; no astype call otherwise)
        grad = grad.astype(out._dtype.np)
    return dispatch.row_softmax_backward(grad, out._data, log)


def _runs_rows(t, d):
    """Whether the last-dim row kernels serve `t`: a non-empty float32 or float64 host tensor, `d` its last dim
    (they return a C-order array of t's dtype). GPU tensors take reductions and a fused region."""
    shape, dtype, arr = t._shape, t._dtype, t._arr
    return len(shape) >= 1 and d == len(shape) - 1 and 0 not in shape and dtype.is_floating_point and \
        not dtype.is_narrow and (arr.__class__ is np.ndarray or not t.is_cuda)


def _softmax_dtype(t, dtype, dim, log):
    if dtype is not None:
        return t.to(dtype)
    if not t._dtype.is_floating_point and 0 not in t._shape:  # an empty input never reaches the kernel
        last = t._data.ndim == 0 or wrap_dim(dim, t._data.ndim) == t._data.ndim - 1
        kernel = ("log_" if log else "") + ("softmax_lastdim_kernel_impl" if last else "softmax_kernel_impl")
        raise NotImplementedError(f'"{kernel}" not implemented for \'{t._dtype.word}\'')
    return t


def softmax(t, dim, dtype=None, _log=False):
    op = "log_softmax" if _log else "softmax"
    _one_dim(op, dim)  # torch's binding checks the arguments' types, then the dim, then the dtype
    if dtype is not None and not isinstance(dtype, dtypes.dtype):
        raise TypeError(f"{op}(): argument 'dtype' (position 3) must be torch.dtype, not {type(dtype).__name__}")
    d = wrap_dim(dim, len(t._shape))
    if dtype is None and 0 in t._shape:  # torch returns an empty input as it is, before its dtype check
        out = _result(t.clone()._data, t._dtype)
        record("LogSoftmaxBackward0" if _log else "SoftmaxBackward0",
               _log_softmax_backward if _log else _softmax_backward, [t], [out], {"dim": d}, {"result": 0})
        return out
    t = _softmax_dtype(t, dtype, dim, _log)
    if _runs_rows(t, d):  # (float32, float64: no conversion, nothing recorded inside, no no_grad to enter)
        out = TensorBase._make(_row_values(t, _log), t._dtype)
    else:
        out = _softmax_by_ops(t, d, _log)
    record("LogSoftmaxBackward0" if _log else "SoftmaxBackward0",
           _log_softmax_backward if _log else _softmax_backward, [t], [out], {"dim": d}, {"result": 0})
    return out


def _softmax_by_ops(t, d, log):
    """softmax's values where the row kernels do not serve (half types through them, other dims, GPU tensors,
    empty inputs), computed outside autograd."""
    with no_grad():
        x = t.to(t._dtype.kernel)  # a half type in float, rounded once (torch's CPU kernel)
        if 0 in t._shape:  # nothing to normalise
            return _result(t._data.copy(), t._dtype)
        if _runs_rows(x, d):  # a half type's float copy: the row kernels, the result rounded to t's type
            return _result(_row_values(x, log), t._dtype)
        shifted = x - amax(x, d, keepdim=True)
        e = shifted.exp()
        s = sum(e, d, keepdim=True)
        out = shifted - s.log() if log else e / s
        return _result(out._data, t._dtype)


def _row_values(x, log):
    """The row kernels' softmax (or log_softmax) of `x` over its last dim, as an array; a pending input (a bias
    add) is computed in the row kernel instead of going to memory first."""
    return lazy.softmax_rows_forward(x, log) if lazy.pending(x) is not None else dispatch.row_softmax(x._data, log)


def log_softmax(t, dim, dtype=None):
    return softmax(t, dim, dtype, _log=True)

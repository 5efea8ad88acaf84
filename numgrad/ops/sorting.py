"""Sorting and order statistics on the host: sort, argsort, msort, topk, kthvalue, median, nanmedian, mode, unique,
unique_consecutive, searchsorted, bucketize, histc. Ties keep the original order (a stable sort)."""
import numpy as np

from .._core import dtypes
from .._core.shapes import wrap_dim
from .. import lazy
from ..kernels import dispatch
from ..kernels.dispatch import order as tie_order
from ..node import record
from ..tensor_base import TensorBase
from .elementwise import apply
from .functional import _type_name
from .reduction import _indices_backward, _return_type  # the gradient of values picked at indices

__all__ = ["argsort", "bucketize", "histc", "kthvalue", "median", "mode", "msort", "nanmedian", "searchsorted", "sort",
           "topk", "unique", "unique_consecutive"]

RETURN_TYPES = {name: _return_type(name) for name in ("sort", "topk", "kthvalue", "median", "nanmedian", "mode")}


def _host(op, *tensors):
    dispatch.require_host(op, *(t._data for t in tensors))
    return [t._data for t in tensors]


def _sorted_order(data, axis, descending):
    """Indices sorting `data` along `axis`, NaN as the largest value, equal values in their original order."""
    data = dispatch.numpy_floats(data)
    if not descending:
        return np.argsort(data, axis=axis, kind="stable")
    n = data.shape[axis]
    reversed_order = np.argsort(np.flip(data, axis), axis=axis, kind="stable")
    return np.flip(n - 1 - reversed_order, axis)


def _in_layout_of(arr, like):
    """`arr` laid out as `like` when that is a dense host array in another order (torch's sort keeps it)."""
    if not dispatch.is_host(like) or like.flags.c_contiguous or not lazy.is_dense_array(like):
        return arr
    out = np.empty_like(like, dtype=arr.dtype)  # (empty_like keeps a dense array's strides)
    out[...] = arr
    return out


def _values_and_indices(op, name, node, t, values, indices, d, keepdim=True):
    values, indices = TensorBase._make(values, t._dtype), TensorBase._make(indices, dtypes.int64)
    record(node, _indices_backward, [t], [values], {"dim": d, "indices": indices, "keepdim": keepdim})
    return RETURN_TYPES[name](values, indices)


_SORT_SIGNATURES = {
    ("sort", False): " * (Tensor input, *, bool stable, int dim = -1, bool descending = False, tuple of Tensors out = "
                     "None)\n * (Tensor input, int dim = -1, bool descending = False, *, tuple of Tensors out = "
                     "None)\n",
    ("argsort", False): " * (Tensor input, *, bool stable, int dim = -1, bool descending = False, Tensor out = None)\n"
                        " * (Tensor input, int dim = -1, bool descending = False)\n",
    ("sort", True): " * (*, bool stable, int dim = -1, bool descending = False)\n * (int dim = -1, bool descending = "
                    "False)\n"}
_SORT_SIGNATURES[("argsort", True)] = _SORT_SIGNATURES[("sort", True)]
_STABLE_KEYWORD = "      didn't match because some of the keywords were incorrect: stable\n"


def _sort_arguments(name, args, kwargs, method):
    """(dim, descending, stable) as torch's binding takes them: `stable` is keyword-only, and once it is given dim
    and descending must be keywords too (torch.sort(x, 0, stable=True) and x.sort(0, False, True) are refused)."""
    unknown = set(kwargs) - {"dim", "descending", "stable"}
    if unknown:
        raise TypeError(f"{name}() got an unexpected keyword argument '{sorted(unknown)[0]}'")
    n = len(args)
    if n > 2 or ("stable" in kwargs and n >= 1):
        if n >= 2 and (method or name == "argsort"):
            low, high, given = (1, 0, n) if method else (2, 1, n + 1)
            raise TypeError(f"{name}() takes from {low} to {high} positional arguments but {given} were given")
        got = ([] if method else ["Tensor"]) + [_type_name(a) for a in args] + \
            [f"{k}={_type_name(v)}" for k, v in kwargs.items()]
        reason = _STABLE_KEYWORD if (method or name == "argsort") and "stable" in kwargs else ""
        raise TypeError(f"{name}() received an invalid combination of arguments - got ({', '.join(got)}), but expected "
                        f"one of:\n{_SORT_SIGNATURES[(name, method)]}{reason}")
    for key, value in zip(("dim", "descending"), args):
        if key in kwargs:
            raise TypeError(f"{name}() got multiple values for argument '{key}'")
        kwargs[key] = value
    return kwargs.get("dim", -1), kwargs.get("descending", False), "stable" in kwargs


def _sort(input, dim, descending, stable_overload):
    """The sort itself (always stable, as torch's CPU sort is); torch.sort(..., stable=...) is another overload, whose
    node is SortBackward1 even for stable=None."""
    (data,) = _host("sort", input)
    d = wrap_dim(dim, data.ndim)
    if data.ndim == 0:
        values, order = data.copy(), np.zeros((), np.int64)
    else:
        order = dispatch.numpy_op(_sorted_order, data, d, descending)
        values = _in_layout_of(np.take_along_axis(data, order, d), data)
        order = _in_layout_of(order, data)
    node = "SortBackward1" if stable_overload else "SortBackward0"
    return _values_and_indices("sort", "sort", node, input, values, order.astype(np.int64), d)


def sort(input, *args, **kwargs):
    """torch.sort(input, dim=-1, descending=False) or torch.sort(input, *, stable, dim=-1, descending=False)."""
    return _sort(input, *_sort_arguments("sort", args, kwargs, method=False))


def sort_method(self, *args, **kwargs):
    return _sort(self, *_sort_arguments("sort", args, kwargs, method=True))


def argsort(input, *args, **kwargs):
    return _sort(input, *_sort_arguments("argsort", args, kwargs, method=False)).indices


def argsort_method(self, *args, **kwargs):
    return _sort(self, *_sort_arguments("argsort", args, kwargs, method=True)).indices


def msort(input):
    return _sort(input, 0, False, False).values


def topk(input, k, dim=-1, largest=True, sorted=True):
    (data,) = _host("topk", input)
    d = wrap_dim(dim, data.ndim)
    size = data.shape[d] if data.ndim else 1
    if not 0 <= k <= size:
        raise RuntimeError("selected index k out of range")
    if input._dtype is dtypes.bool_:
        raise RuntimeError("topk does not support bool dtypes on CPU")
    if data.ndim == 0:
        values, order = data.copy(), np.zeros((), np.int64)
    else:
        order = tie_order.topk_positions(data, d, k, largest, sorted)  # ties resolved as torch's kernel does
        values = np.take_along_axis(data, order, d)
    return _values_and_indices("topk", "topk", "TopkBackward0", input, values, order.astype(np.int64), d)


def _pick(op, name, node, input, dim, keepdim, position):
    """values and indices at the sorted position position(sorted row, its length) of each row along dim."""
    (data,) = _host(op, input)
    d = wrap_dim(dim, data.ndim)
    if data.ndim == 0:
        values, where = data.copy(), np.zeros((), np.int64)
    else:
        if data.shape[d] == 0:
            raise IndexError(f"{op}(): Expected reduction dim {d} to have non-zero size.")
        order = _sorted_order(data, d, False)
        ranked = np.take_along_axis(data, order, d)
        pos = np.expand_dims(position(np.moveaxis(ranked, d, -1)), d)
        where, values = np.take_along_axis(order, pos, d), np.take_along_axis(ranked, pos, d)
        if not keepdim:
            where, values = where.squeeze(d), values.squeeze(d)
    return _values_and_indices(op, name, node, input, values, where.astype(np.int64), d, keepdim)


def kthvalue(input, k, dim=-1, keepdim=False):
    d = wrap_dim(dim, len(input._shape))  # the dim's range first, then an empty dim
    if input._shape and input._shape[d] == 0:
        raise IndexError(f"kthvalue(): Expected reduction dim {d} to have non-zero size.")
    size = input._shape[d] if input._shape else 1
    if not 1 <= k <= size:
        raise RuntimeError(f"kthvalue(): selected number k out of range for dimension {d}")
    if input._dtype is dtypes.bool_ and input._shape:
        raise NotImplementedError("\"kthvalue_cpu\" not implemented for 'Bool'")
    (data,) = _host("kthvalue", input)
    d = wrap_dim(dim, data.ndim)
    if data.ndim == 0:
        values, where = data.copy(), np.zeros((), np.int64)
    else:
        where = np.expand_dims(tie_order.kthvalue_positions(data, d, k), d)  # torch's quick_select's pick
        values = np.take_along_axis(data, where, d)
        if not keepdim:
            where, values = where.squeeze(d), values.squeeze(d)
    return _values_and_indices("kthvalue", "kthvalue", "KthvalueBackward0", input, values, where, d, keepdim)


def _lower_median(rows, skip_nan):
    """The lower median's sorted position in each row (NaNs sort last): the first NaN when not skipped."""
    nans = np.isnan(dispatch.numpy_floats(rows)).sum(-1) if dispatch.is_float(rows.dtype) else \
        np.zeros(rows.shape[:-1], np.int64)
    n = rows.shape[-1]
    if skip_nan:
        return np.maximum((n - nans - 1) // 2, 0)
    return np.where(nans > 0, n - nans, (n - 1) // 2)


def _evenly_backward(node, g):
    x, out = node.saved("self"), node.saved("result")
    mask = apply("where", out.isnan(), x.isnan(), x == out) if out._dtype.is_floating_point else x == out
    return (apply("where", mask, g / mask.sum(), 0.0),)


def _median(op, input, dim, keepdim, skip_nan):
    if input._dtype is dtypes.bool_:
        kernel = "median_cpu" if dim is None else "median_out"
        raise NotImplementedError(f"\"{kernel}\" not implemented for 'Bool'")
    if dim is None:
        (data,) = _host(op, input)
        flat = data.reshape(-1)
        if flat.size == 0:  # NaN, which an integer result holds as its lowest value (torch's cast)
            value = np.asarray(np.nan if dispatch.is_float(data.dtype) else np.iinfo(data.dtype).min, data.dtype)
        else:
            ranked = np.sort(dispatch.numpy_floats(flat), kind="stable").astype(data.dtype)
            value = ranked[_lower_median(ranked, skip_nan)]
        out = TensorBase._make(np.asarray(value, data.dtype), input._dtype)
        record("NanmedianBackward0" if skip_nan else "MedianBackward0", _evenly_backward, [input], [out],
               {"self": input}, {"result": 0})
        return out
    return _pick(op, op, "NanmedianBackward1" if skip_nan else "MedianBackward1", input, dim, keepdim,
                 lambda rows: _lower_median(rows, skip_nan))


def median(input, dim=None, keepdim=False):
    return _median("median", input, dim, keepdim, False)


def nanmedian(input, dim=None, keepdim=False):
    return _median("nanmedian", input, dim, keepdim, True)


def mode(input, dim=-1, keepdim=False):
    (data,) = _host("mode", input)
    d = wrap_dim(dim, data.ndim)
    if data.ndim == 0:
        values, where = data.copy(), np.zeros((), np.int64)
    else:
        if data.shape[d] == 0:
            raise IndexError(f"mode(): Expected reduction dim {d} to have non-zero size.")
        where = np.expand_dims(tie_order.mode_positions(data, d), d)  # the index torch's kernel reports
        values, where = np.take_along_axis(data, where, d).squeeze(d), where.squeeze(d)
        if keepdim:
            values, where = np.expand_dims(values, d), np.expand_dims(where, d)
    return _values_and_indices("mode", "mode", "ModeBackward0", input, values, where, d, keepdim)


# ---- unique ------------------------------------------------------------------------------------------

def _not_implemented(name):
    def backward(node, *grads):
        raise NotImplementedError(f"the derivative for '{name}' is not implemented.")
    return backward


_UNIQUE2, _UNIQUE_DIM, _UNIQUE_CONSECUTIVE = (_not_implemented(n) for n in ("_unique2", "unique_dim",
                                                                               "unique_consecutive"))


def _unique_result(input, node, backward, out, inverse, counts, return_inverse, return_counts):
    values = TensorBase._make(out, input._dtype)
    record(node, backward, [input], [values])
    extra = ([TensorBase._make(inverse.astype(np.int64), dtypes.int64)] if return_inverse else []) + \
        ([TensorBase._make(counts.astype(np.int64), dtypes.int64)] if return_counts else [])
    return (values, *extra) if extra else values


def unique(input, sorted=True, return_inverse=False, return_counts=False, dim=None):
    (data,) = _host("unique", input)
    if dim is None:
        out, inverse, counts = np.unique(dispatch.numpy_floats(data.reshape(-1)), return_inverse=True,
                                         return_counts=True, equal_nan=False)
        out = out.astype(data.dtype)
        return _unique_result(input, "Unique2Backward0", _UNIQUE2, out, inverse.reshape(data.shape), counts,
                              return_inverse, return_counts)
    d = wrap_dim(dim, data.ndim)
    out, inverse, counts = np.unique(dispatch.numpy_floats(data), return_inverse=True, return_counts=True, axis=d,
                                     equal_nan=False)
    out = out.astype(data.dtype)
    return _unique_result(input, "UniqueDimBackward0", _UNIQUE_DIM, out, inverse.reshape(-1), counts,
                          return_inverse, return_counts)


def unique_consecutive(input, return_inverse=False, return_counts=False, dim=None):
    (data,) = _host("unique_consecutive", input)
    if dim is None:
        rows, d = data.reshape(-1, 1), 0
    else:
        d = wrap_dim(dim, data.ndim)
        rows = np.moveaxis(data, d, 0).reshape(data.shape[d] if data.ndim else 1, -1)
    new_run = np.ones(len(rows), bool)
    if len(rows) > 1:
        new_run[1:] = (rows[1:] != rows[:-1]).any(axis=1)
    starts = np.flatnonzero(new_run)
    counts = np.diff(np.append(starts, len(rows)))
    inverse = np.cumsum(new_run) - 1
    if dim is None:
        out = data.reshape(-1)[starts]
        inverse = inverse.reshape(data.shape)
    else:
        out = np.take(data, starts, axis=d)
    return _unique_result(input, "UniqueConsecutiveBackward0", _UNIQUE_CONSECUTIVE, out, inverse, counts,
                          return_inverse, return_counts)


# ---- searchsorted, bucketize, histc --------------------------------------------------------------------

def _as_values(value):
    """A Python number searched for: a 0-d tensor (int64 or the default float dtype)."""
    if isinstance(value, TensorBase):
        return value
    dtype = dtypes.int64 if isinstance(value, int) else dtypes.get_default_dtype()
    return TensorBase._make(np.asarray(value, dtype.np), dtype)


def searchsorted(sorted_sequence, input, *, out_int32=False, right=False, side=None, sorter=None):
    if side is not None and side not in ("left", "right"):
        raise RuntimeError(f"torch.searchsorted(): side can only be 'left' or 'right' but got {side}")
    if side is not None and (side == "right") != right and right:
        raise RuntimeError(f"torch.searchsorted(): side and right can't be set to opposites, got side of {side} "
                           f"while right was {right}")
    right = right or side == "right"
    if sorted_sequence._dtype is dtypes.bool_:
        raise NotImplementedError("\"searchsorted_out_cpu\" not implemented for 'Bool'")
    values = _as_values(input)
    boundaries, data = _host("searchsorted", sorted_sequence, values)
    if boundaries.ndim != 1 and boundaries.shape[:-1] != data.shape[:-1]:
        raise RuntimeError("torch.searchsorted(): boundaries tensor should be 1 dimension or the first N-1 dimensions "
                           "of boundaries tensor and input value tensor must match, but we got boundaries tensor "
                           f"{list(boundaries.shape)} and input value tensor {list(data.shape)}")
    if sorter is not None:
        boundaries = np.take_along_axis(boundaries, _host("searchsorted", sorter)[0], -1)
    side_name = "right" if right else "left"
    if boundaries.ndim == 1:
        out = np.searchsorted(boundaries, data, side=side_name)
    else:
        out = np.empty(data.shape, np.int64)
        for i in np.ndindex(data.shape[:-1]):
            out[i] = np.searchsorted(boundaries[i], data[i], side=side_name)
    dtype = getattr(dtypes, "int32", None) if out_int32 else dtypes.int64
    if dtype is None:
        raise NotImplementedError("numgrad: out_int32=True needs the int32 dtype, which this build does not have")
    return TensorBase._make(np.asarray(out, dtype.np), dtype)


def bucketize(input, boundaries, *, out_int32=False, right=False):
    if len(boundaries._shape) != 1:
        raise RuntimeError(f"boundaries tensor must be 1 dimension, but got dim({len(boundaries._shape)})")
    return searchsorted(boundaries, input, out_int32=out_int32, right=right)


def _nan_text(v):
    return "-nan" if np.isnan(v) else f"{v:g}"


@np.errstate(all="ignore")
def _histogram(data, bins, lo, hi):
    """torch's histc: bins of equal width over [lo, hi] in the input's dtype, the last one closed."""
    edges = np.linspace(lo, hi, bins + 1).astype(data.dtype)
    x = data[(data >= lo) & (data <= hi)]
    pos = ((x - data.dtype.type(lo)) / (data.dtype.type(hi) - data.dtype.type(lo)) * bins).astype(np.int64)
    pos = np.clip(pos, 0, bins - 1)
    pos = np.where((pos < bins - 1) & (x >= edges[np.minimum(pos + 1, bins)]), pos + 1, pos)  # rounding, as torch
    pos = np.where((pos > 0) & (x < edges[pos]), pos - 1, pos)
    return np.bincount(pos, minlength=bins).astype(data.dtype)


def histc(input, bins=100, min=0, max=0):
    (data,) = _host("histc", input)
    if not input._dtype.is_floating_point:  # (torch makes a bool input's bin edges first)
        kernel = "linspace_cpu" if input._dtype is dtypes.bool_ else "histogram_cpu"
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{input._dtype.word}'")
    if bins <= 0:
        raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {bins} for dimension 0")
    lo, hi = float(min), float(max)
    if lo == hi and data.size:
        lo, hi = float(np.min(data)), float(np.max(data))
    if lo == hi:
        lo, hi = lo - 1, hi + 1
    if lo > hi:
        raise RuntimeError("torch.histc: max must be larger than min")
    if not (np.isfinite(lo) and np.isfinite(hi)):
        raise RuntimeError(f"torch.histc: range of [{_nan_text(lo)}, {_nan_text(hi)}] is not finite")
    return TensorBase._make(dispatch.numpy_op(_histogram, data, bins, lo, hi), input._dtype)

"""Scatter and select ops with torch's nodes: scatter_reduce, index_add, index_copy, index_fill, masked_scatter,
take (host arrays; their backward formulas are tensor ops, so double backward works)."""
import numpy as np

from .._core import dtypes
from .._core.shapes import broadcast_shapes, wrap_dim
from ..kernels import dispatch
from ..node import record
from ..tensor_base import TensorBase, check_same_device
from . import creation, shape
from .elementwise import apply
from .join import cat
from .indexing import (_check_index, _check_index_bounds, _leading, _one_d, gather, index_select, masked_fill, scatter,
                       scatter_add)

__all__ = ["index_add", "index_copy", "index_fill", "masked_scatter", "scatter_reduce", "take"]

_REDUCE_UFUNCS = {"sum": np.add, "prod": np.multiply, "mean": np.add, "amax": np.maximum, "amin": np.minimum}


def _identity(reduce, np_dtype):
    if reduce in ("sum", "mean"):
        return 0
    if reduce == "prod":
        return 1
    if np_dtype.kind == "b":
        lowest, highest = False, True
    elif dispatch.is_float(np_dtype):
        lowest, highest = -np.inf, np.inf
    else:
        lowest, highest = np.iinfo(np_dtype).min, np.iinfo(np_dtype).max
    return lowest if reduce == "amax" else highest


def _along(index, dim):
    """The index tuple sending index[p] to p with dim `dim` replaced by index[p]."""
    where = list(np.indices(index.shape, sparse=True))
    where[dim] = index
    return tuple(where)


@np.errstate(all="ignore")
def _scatter_reduce_array(data, index, dim, src, reduce, include_self):
    out, where = data.copy(), _along(index, dim)
    if not include_self:
        out[where] = _identity(reduce, data.dtype)
    _REDUCE_UFUNCS[reduce].at(out, where, src)
    if reduce == "mean":
        count = np.full(data.shape, 1 if include_self else 0, np.int64)
        np.add.at(count, where, 1)
        count = np.maximum(count, 1)
        out = out / count if dispatch.is_float(data.dtype) else np.floor_divide(out, count)
    return out.astype(data.dtype)


def scatter_reduce(input, dim, index, src, reduce, *, include_self=True):
    if reduce not in _REDUCE_UFUNCS:
        raise RuntimeError(f"reduce argument must be either sum, prod, mean, amax or amin, got {reduce}")
    d = wrap_dim(dim, len(input._shape))
    if reduce == "mean" and input._dtype is dtypes.bool_:  # the kernel's refusal, or its division's without one
        kernel = "scatter_gather_tensor_cpu_reduce_mean" if index.numel() else "div_floor_cpu"
        raise NotImplementedError(f"\"{kernel}\" not implemented for 'Bool'")
    t1, index1, src1 = _one_d(input), _one_d(index), _one_d(src)
    _check_index("scatter", t1, d, index1, src1)
    _check_index_bounds("scatter", t1, d, index1, src1)
    dispatch.require_host("scatter_reduce", input._data, index._data, src._data)
    values = _leading(src1._data, index1._data.shape)
    data = dispatch.numpy_op(_scatter_reduce_array, t1._data, index1._data, d, values, reduce, include_self)
    out = TensorBase._make(data.reshape(input._shape), input._dtype)
    record("ScatterReduceBackward0", _scatter_reduce_backward, [input, src], [out],
           {"self": input, "src": src, "index": index, "dim": d, "reduce": reduce, "include_self": include_self},
           {"result": 0})
    return out


def _scatter_reduce_backward(node, g):
    """torch's scatter_reduce_backward, per reduction."""
    x, src, index, d = node.saved("self"), node.saved("src"), node.saved("index"), node.saved("dim")
    reduce, include_self, out = node.saved("reduce"), node.saved("include_self"), node.saved("result")
    if reduce == "sum":
        grad_self, grad_src = g, gather(g, d, index)
    elif reduce == "prod":
        masked_self = masked_fill(x, x == 0, 1)
        grad_self = g * scatter_reduce(masked_self, d, index, src, "prod", include_self=include_self) / masked_self
        src_zero = src == 0
        zeros_at = gather(scatter_add(creation.zeros_like(x), d, index, src_zero.to(x.dtype)), d, index)
        single_zero = src_zero & (zeros_at == 1)
        masked_src_result = scatter_reduce(x, d, index, masked_fill(src, single_zero, 1), "prod",
                                           include_self=include_self)
        grad_src = apply("where", single_zero, gather(g * masked_src_result, d, index),
                         gather(g * out, d, index) / masked_fill(src, src_zero, 1))
    elif reduce == "mean":
        count = (creation.ones_like(g) if include_self else creation.zeros_like(g))
        count = scatter_add(count, d, index, creation.ones_like(src))
        count = masked_fill(count, count == 0, 1)
        grad_self, grad_src = g / count, gather(g, d, index) / gather(count, d, index)
    else:  # amax, amin: shared evenly among the elements equal to the result
        value = gather(out, d, index)
        self_is_result, src_is_result = (x == out).to(x.dtype), (src == value).to(x.dtype)
        share = g / scatter_add(self_is_result, d, index, src_is_result)
        grad_self, grad_src = self_is_result * share, src_is_result * gather(share, d, index)
    if not include_self:
        grad_self = scatter(grad_self, d, index, value=0)
    shape_, got = node.input_shape(1), tuple(grad_src.shape)
    if got != shape_:  # src larger than index: torch's engine takes an index-shaped gradient only if it expands
        if len(shape_) > len(got) or any(s not in (1, n) for s, n in zip(shape_[::-1], got[::-1])):
            raise RuntimeError(f"Function {node.name()} returned an invalid gradient at index 1 - got {list(got)} but "
                               f"expected shape compatible with {list(shape_)}")
        grad_src = grad_src._sum_to(shape_)
    return grad_self, grad_src


# ---- index_add / index_copy / index_fill ----------------------------------------------------------------

def _check_vector_index(op, index):
    if not isinstance(index, TensorBase) or index._dtype is not dtypes.int64:
        word = index._dtype.word if isinstance(index, TensorBase) else type(index).__name__
        raise RuntimeError(f"{op}(): Expected dtype int32/int64 for index but got: {word}")
    if len(index._shape) > 1:
        raise IndexError(f"{op}(): Index is supposed to be a vector, but got dim: {len(index._shape)} with type: "
                         f"{index._dtype.word} and size: {list(index._shape)}")


def _check_source(op, input, d, index, source):
    if source._dtype is not input._dtype and op == "index_copy_":
        raise RuntimeError(f"{op}(): self and source expected to have the same dtype, but got (self) "
                           f"{input._dtype.word} and (source) {source._dtype.word}")
    if source._dtype is not input._dtype:
        raise RuntimeError(f"{op}(): self ({input._dtype.word}) and source ({source._dtype.word}) must have the same "
                           "scalar type")
    n = index.numel()
    got = source._shape[d] if source._shape else 1
    if not source._shape and input._shape and d > 0:
        raise RuntimeError(f"{op}(): Indexing dim {d} is out of bounds of the source tensor with dim 0")
    if n != got:
        raise RuntimeError(f"{op}(): Number of indices ({n}) should be equal to source.size(dim): ({got}), for dim: "
                           f"{d}")
    if len(source._shape) == len(input._shape) and any(
            a != b for k, (a, b) in enumerate(zip(input._shape, source._shape)) if k != d):
        raise RuntimeError("source tensor shape must match self tensor shape, excluding the specified dimension. Got "
                           f"self.shape = {list(input._shape)} source.shape = {list(source._shape)}")


def _out_of_range(index, size, negative=True):
    """The first value of `index` outside [-size, size) (or [0, size) without `negative`), or None."""
    bad = index._data[(index._data < (-size if negative else 0)) | (index._data >= size)]
    return bad.flat[0] if bad.size else None


@np.errstate(all="ignore")
def _index_write(data, d, index, source, mode):
    out = data.copy(order="K" if mode == "fill" else "C")  # torch's index_fill keeps self's layout
    where = (slice(None),) * d + (index,)
    if mode == "add":
        np.add.at(out, where, source)
    else:
        out[where] = source
    return out


def _index_op(op, input, dim, index, source, mode, alpha=1):
    _check_vector_index(op, index)
    if not input._shape and not index.numel() and op != "index_fill_":
        raise IndexError(f"Dimension specified as {wrap_dim(dim, 0)} but tensor has no dimensions")
    d = wrap_dim(dim, len(input._shape))
    check_same_device(input, index, source if isinstance(source, TensorBase) else None)
    dispatch.require_host(op[:-1], input._data, index._data)
    size = input._shape[d] if input._shape else 1
    if isinstance(source, TensorBase):
        _check_source(op, input, d, index, source)
    bad = _out_of_range(index, size, negative=op == "index_fill_")
    if bad is not None:
        message = f"index {bad} is out of bounds for dimension {d} with size {size}"
        if op == "index_copy_":
            raise IndexError(f"{op}(): {message}")
        raise (RuntimeError if op == "index_add_" else IndexError)(message)
    data = input._data.reshape(-1) if not input._shape else input._data
    region = data.shape[:d] + (index.numel(),) + data.shape[d + 1:]
    values = np.broadcast_to(source._data, region) if isinstance(source, TensorBase) else \
        np.asarray(source).astype(data.dtype)
    if alpha != 1:
        values = (values * alpha).astype(data.dtype)
    out = dispatch.numpy_op(_index_write, data, d, index._data.reshape(-1), values, mode)
    return TensorBase._make(out.reshape(input._shape), input._dtype), d


def _index_add_backward(node, g):
    d, index, alpha = node.saved("dim"), node.saved("index"), node.saved("alpha")
    grad_source = None
    if node.next_functions[1][0] is not None:
        grad_source = index_select(g, d, index) if g._shape else g.reshape(1)
        grad_source = grad_source.reshape(node.input_shape(1))
        grad_source = grad_source * alpha if alpha != 1 else grad_source
    return g, grad_source


def index_add(input, dim, index, source, *, alpha=1):
    out, d = _index_op("index_add_", input, dim, index, source, "add", alpha)
    record("IndexAddBackward0", _index_add_backward, [input, source], [out], {"dim": d, "index": index,
                                                                             "alpha": alpha})
    return out


def _index_copy_backward(node, g):
    d, index = node.saved("dim"), node.saved("index")
    grad_self = index_fill(g, d, index, 0) if node.next_functions[0][0] is not None else None
    grad_source = None
    if node.next_functions[1][0] is not None:
        grad_source = (index_select(g, d, index) if g._shape else g.reshape(1)).reshape(node.input_shape(1))
    return grad_self, grad_source


def index_copy(input, dim, index, source):
    _check_vector_index("index_copy_", index)
    d = wrap_dim(dim, len(input._shape))
    if not source._shape and index.numel() != 1:
        raise IndexError(f"index_copy_(): When source is scalar, index should have one element (got {index.numel()})")
    if not source._shape and input._shape:
        sizes = " ".join(str(n) for k, n in enumerate(input._shape) if k != d)
        raise RuntimeError(f"index_copy_(): Source/destination tensor must have same slice shapes. Destination slice "
                           f"shape: {sizes} at dimension {d} and source slice shape:  at dimension 0.")
    got = source._shape[d] if source._shape else 1
    if index.numel() != got:
        raise IndexError(f"index_copy_(): Number of indices ({index.numel()}) should be equal to source.size(dim) "
                         f"({got})")
    out, d = _index_op("index_copy_", input, dim, index, source, "copy")
    record("IndexCopyBackward0", _index_copy_backward, [input, source], [out], {"dim": d, "index": index})
    return out


def _index_fill_backward(node, g):
    d, index = node.saved("dim"), node.saved("index")
    grad_self = index_fill(g, d, index, 0) if node.next_functions[0][0] is not None else None
    grad_value = None
    if node.input_meta[1] is not None and node.next_functions[1][0] is not None:
        grad_value = (index_select(g, d, index) if g._shape else g).sum()
    return grad_self, grad_value


def index_fill(input, dim, index, value):
    is_tensor = isinstance(value, TensorBase)
    if is_tensor and len(value._shape):
        raise RuntimeError("index_fill_ only supports a 0-dimensional value tensor, but got tensor with "
                           f"{len(value._shape)} dimension(s).")
    number = value.item() if is_tensor else value
    wrap_dim(dim, len(input._shape))  # the dim's range before the value's
    dtypes.check_scalar_fits(number, input._dtype)
    out, d = _index_op("index_fill_", input, dim, index, number, "fill")
    record("IndexFillBackward1" if is_tensor else "IndexFillBackward0", _index_fill_backward,
           [input, value if is_tensor else None], [out], {"dim": d, "index": index})
    return out


# ---- masked_scatter / take -------------------------------------------------------------------------------

def _masked_scatter_array(data, mask, source):
    out = data.copy()
    chosen = np.broadcast_to(mask, data.shape)
    out[chosen] = source.reshape(-1)[:int(chosen.sum())]
    return out


def _masked_scatter_backward(node, g):
    mask = node.saved("mask")
    grad_self = masked_fill(g, mask, 0) if node.next_functions[0][0] is not None else None
    grad_source = None
    if node.next_functions[1][0] is not None:  # the masked elements, in order, then zeros for the unused source
        picked = g[shape.expand(mask, *g.shape)] if g._shape else g.reshape(1)[mask.reshape(1)]
        rest = creation.zeros(int(np.prod(node.input_shape(1))) - picked.numel(), dtype=g.dtype, device=g.device)
        grad_source = cat([picked, rest]).reshape(node.input_shape(1))
    return grad_self, grad_source


def masked_scatter(input, mask, source):
    if mask._dtype is not dtypes.bool_:
        raise RuntimeError(f"masked_scatter_ only supports boolean masks, but got mask with dtype {mask._dtype.word}")
    if source._dtype is not input._dtype:
        raise RuntimeError(f"masked_scatter: expected self and source to have same dtypes but got{input._dtype.word} "
                           f"and {source._dtype.word}")
    full = broadcast_shapes(input._shape, mask._shape)
    check_same_device(input, mask, source)
    dispatch.require_host("masked_scatter", input._data, mask._data, source._data)
    if int(np.broadcast_to(mask._data, full).sum()) > source.numel():
        raise RuntimeError("Number of elements of source < number of ones in mask")
    data = dispatch.numpy_op(_masked_scatter_array, np.broadcast_to(input._data, full), mask._data, source._data)
    out = TensorBase._make(data, input._dtype)
    record("MaskedScatterBackward0", _masked_scatter_backward, [input, source], [out], {"mask": mask})
    return out


def _take_backward(node, g):
    index, size = node.saved("index"), int(np.prod(node.input_shape(0)))
    flat = index.reshape(-1)
    flat = apply("where", flat < 0, flat + size, flat)
    grad = scatter_add(creation.zeros(size, dtype=g.dtype, device=g.device), 0, flat, g.reshape(-1))
    return (grad.reshape(node.input_shape(0)),)


def take(input, index):
    if index._dtype is not dtypes.int64:
        raise RuntimeError(f"take(): Expected a long tensor for index, but got {index._dtype.word}")
    size = input.numel()
    dispatch.require_host("take", input._data, index._data)
    if not size and index.numel():
        raise IndexError("take(): tried to take from an empty tensor")
    bad = _out_of_range(index, size)
    if bad is not None:
        raise IndexError(f"out of range: tried to access index {bad} on a tensor of {size} elements.")
    data = dispatch.numpy_op(np.take, input._data.reshape(-1), index._data)
    out = TensorBase._make(np.asarray(data).reshape(index._shape), input._dtype)
    record("TakeBackward0", _take_backward, [input], [out], {"index": index})
    return out

"""Rearranging ops with torch's nodes: tril/triu, roll, flip, rot90, repeat, tile, repeat_interleave, diagonal,
diag, diag_embed, trace, meshgrid, movedim, tensor_split; composed from device-neutral ops where they can be."""
import math
import operator

import numpy as np

from .._core import dtypes
from .._core.grad_mode import no_grad
from .._core.shapes import wrap_dim
from .._core.warn import warn_once
from .. import lazy
from ..kernels import dispatch
from ..kernels.dispatch import views
from ..node import record
from ..tensor_base import TensorBase
from . import creation, reduction, shape
from .elementwise import apply
from .indexing import _index, index_select
from .join import cat

__all__ = ["diag", "diag_embed", "diagonal", "flip", "fliplr", "flipud", "is_tensor", "meshgrid", "moveaxis",
           "movedim", "numel", "repeat_interleave", "roll", "rot90", "tensor_split", "tile", "trace", "tril",
           "triu", "unflatten"]


def _composed(name, backward, inputs, compute, saved=None):
    """compute() run without history (from ops that work on either device), as one node named `name`."""
    with no_grad():
        out = compute()
    if out._base is not None or out is inputs[0]:  # a fresh tensor of its own, not a view made on the way
        out = TensorBase._make(out._data, out._dtype)
    record(name, backward, inputs, [out], saved)
    return out


def _zero_of(t):
    return False if t._dtype is dtypes.bool_ else (0.0 if t._dtype.is_floating_point else 0)


# ---- tril / triu -------------------------------------------------------------------------------------

def _triangle(op, t, k, lower):
    if len(t._shape) < 2:
        raise RuntimeError(f"{op}: input tensor must have at least 2 dimensions")
    k = operator.index(k)
    rows, cols = t._shape[-2:]
    keep = np.tri(rows, cols, k, dtype=bool) if lower else ~np.tri(rows, cols, k - 1, dtype=bool)
    mask = TensorBase._make(dispatch.place(keep, t.device), dtypes.bool_)
    backward = _tril_backward if lower else _triu_backward
    return _composed("TrilBackward0" if lower else "TriuBackward0", backward, [t],
                     lambda: apply("where", mask, t, _zero_of(t)), {"diagonal": k})


def _tril_backward(node, g):
    return (tril(g, node.saved("diagonal")),)


def _triu_backward(node, g):
    return (triu(g, node.saved("diagonal")),)


def tril(input, diagonal=0):
    return _triangle("tril", input, diagonal, True)


def triu(input, diagonal=0):
    return _triangle("triu", input, diagonal, False)


# ---- roll / flip / rot90 -----------------------------------------------------------------------------

def _ints(value):
    return tuple(operator.index(v) for v in value) if isinstance(value, (tuple, list)) else (operator.index(value),)


def _roll_backward(node, g):
    return (roll(g, tuple(-s for s in node.saved("shifts")), node.saved("dims")),)


def roll(input, shifts, dims=None):
    shifts = _ints(shifts)
    dims = () if dims is None else _ints(dims)
    if not shifts:
        raise RuntimeError("`shifts` required")
    if dims and len(shifts) != len(dims) or not dims and len(shifts) != 1:
        raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts)}, dims:{len(dims)}")
    if input.numel() == 0:  # nothing to move: torch copies before it looks at the dims
        return _composed("RollBackward0", _roll_backward, [input], lambda: shape.clone(input),
                         {"shifts": shifts, "dims": dims if dims else None})
    if dims and not input._shape:  # torch's roll takes no dim of a 0-d tensor
        raise IndexError(f"Dimension specified as {dims[0]} but tensor has no dimensions")
    wrapped = [wrap_dim(d, len(input._shape)) for d in dims]

    def compute():
        if not dims:
            flat = shape.flatten(input)
            out = _rolled(flat, 0, shifts[0])
            return shape.reshape(shape.clone(out) if out is flat else out, *input._shape)  # torch never aliases
        out = input
        for d, s in zip(wrapped, shifts):
            out = _rolled(out, d, s)
        return shape.clone(out) if out is input else out
    return _composed("RollBackward0", _roll_backward, [input], compute,
                     {"shifts": shifts, "dims": dims if dims else None})


def _rolled(t, d, s):
    n = t._shape[d]
    s = s % n if n else 0
    if not s:
        return t
    return cat([_index_slice(t, d, n - s, n), _index_slice(t, d, 0, n - s)], d)


def _index_slice(t, d, start, stop):
    return _index(t, (slice(None),) * d + (slice(start, stop), Ellipsis), None, "SliceBackward0")


def _flip_backward(node, g):
    return (flip(g, node.saved("dims")),)


def flip(input, dims):
    if not isinstance(dims, (tuple, list)):
        raise TypeError(f"flip(): argument 'dims' (position 2) must be tuple of ints, not {type(dims).__name__}")
    nd = len(input._shape)
    wrapped = [wrap_dim(d, nd) for d in _ints(dims)]
    reduction._check_distinct(wrapped, nd)

    def compute():
        out = input
        for d in wrapped if nd else ():
            n = out._shape[d]
            out = index_select(out, d, creation.arange(n - 1, -1, -1, device=input.device))
        return shape.clone(out, "K") if out is input else shape.clone(_as_strided_like(out, input), "K")
    return _composed("FlipBackward0", _flip_backward, [input], compute, {"dims": tuple(wrapped)})


def _as_strided_like(out, t):
    """`out` (C order) seen with the memory order of dense `t`, so that a "K" clone copies it into t's layout, as
    torch's flip lays out its result; other layouts as they are."""
    data = t._data
    if not dispatch.is_host(data) or data.flags.c_contiguous or not lazy.is_dense_array(data):
        return out
    like = np.empty_like(data, dtype=out._data.dtype)
    like[...] = out._data
    return TensorBase._make(like, out._dtype)


def fliplr(input):
    if len(input._shape) < 2:
        raise RuntimeError("Input must be >= 2-d.")
    return flip(input, (1,))


def flipud(input):
    if len(input._shape) < 1:
        raise RuntimeError("Input must be >= 1-d.")
    return flip(input, (0,))


def _rot90_backward(node, g):
    return (rot90(g, -node.saved("k"), node.saved("dims")),)


def rot90(input, k=1, dims=(0, 1)):
    dims, nd = _ints(dims), len(input._shape)
    if len(dims) != 2:
        raise RuntimeError(f"expected total rotation dims == 2, but got dims = {len(dims)}")
    if nd < 2:
        raise RuntimeError(f"expected total dims >= 2, but got total dims = {nd}")
    wrapped = tuple(wrap_dim(d, nd) for d in dims)  # a dim out of range first, then the dims as given
    if dims[0] == dims[1] or abs(dims[0] - dims[1]) == nd:
        raise RuntimeError(f"expected rotation dims to be different, but got dim0 = {dims[0]} and dim1 = {dims[1]}")
    dims = wrapped
    k = operator.index(k) % 4

    def compute():
        if k == 1:
            return shape.transpose(flip(input, (dims[1],)), dims[0], dims[1])
        if k == 2:
            return flip(input, dims)
        if k == 3:
            return shape.transpose(flip(input, (dims[0],)), dims[0], dims[1])
        return shape.clone(input)
    return _composed("Rot90Backward0", _rot90_backward, [input], compute, {"k": k, "dims": dims})


# ---- repeat / tile / repeat_interleave ---------------------------------------------------------------

def _repeat_backward(node, g):
    """torch's repeat_backward: zeros when a repeat is 0; the added leading dims summed away; each repeated dim
    split into (repeat, size) by one reshape, then the repeats summed."""
    reps, input_shape = node.saved("repeats"), node.input_shape(0)
    if 0 in reps:
        return (creation.zeros(*input_shape, dtype=g.dtype, device=g.device),)
    lead = len(g._shape) - len(input_shape)
    for _ in range(lead):
        g = reduction.sum(g, 0)
    grad_size, sum_dims = [], []
    for n, r in zip(input_shape, reps[lead:]):
        if r != 1:
            grad_size.append(r)
            sum_dims.append(len(grad_size) - 1)
        grad_size.append(n)
    if sum_dims:
        g = reduction.sum(shape.reshape(g, *grad_size), sum_dims)
    return (g,)


def repeat(input, *sizes):
    reps = shape._shape_arg(sizes)
    if len(reps) < len(input._shape):
        raise RuntimeError("Number of dimensions of repeat dims can not be smaller than number of dimensions of tensor")
    padded = (1,) * (len(reps) - len(input._shape)) + tuple(input._shape)
    target = [r * s for r, s in zip(reps, padded)]
    if any(n < 0 for n in target):
        raise RuntimeError(f"Trying to create tensor with negative dimension {next(n for n in target if n < 0)}: "
                           f"{target}")

    def compute():
        inter = [n for s in padded for n in (1, s)]
        expanded = [n for pair in zip(reps, padded) for n in pair]
        return shape.clone(shape.reshape(shape.expand(shape.reshape(input, *inter), *expanded), *target), "C")
    return _composed("RepeatBackward0", _repeat_backward, [input], compute, {"repeats": reps, "padded": padded})


def tile(input, *dims, **kwargs):
    reps = shape._shape_arg((kwargs["dims"],) if "dims" in kwargs else dims)
    reps = (1,) * (len(input._shape) - len(reps)) + reps
    return repeat(input, *reps)


def repeat_interleave(input, repeats=None, dim=None, *, output_size=None):
    if repeats is None:  # repeat_interleave(repeats): the indices each repeated repeats[i] times
        return _repeat_indices(input)
    if dim is None:
        input, d = shape.flatten(input), 0
    else:
        d = wrap_dim(dim, len(input._shape))
    if isinstance(repeats, TensorBase):
        if len(repeats._shape) == 0 or repeats._shape == (1,):
            repeats = shape.expand(shape.reshape(repeats, 1), input._shape[d])
        elif len(repeats._shape) == 1 and repeats._shape[0] != input._shape[d]:
            raise RuntimeError(f"repeats must have the same size as input along dim, but got repeats.size(0) = "
                               f"{repeats._shape[0]} and input.size({d}) = {input._shape[d]}")
        indices = _repeat_indices(repeats)
        if output_size is not None and output_size != indices.numel():
            raise RuntimeError("allocated size does not match required size")
        return index_select(input, d, indices)
    repeats = operator.index(repeats)
    if repeats < 0:
        raise RuntimeError("Repeats must be non-negative")
    if output_size is not None and output_size != input._shape[d] * repeats:
        raise RuntimeError(f"repeat_interleave: Invalid output_size, expected {input._shape[d] * repeats} but got "
                           f"{output_size}")
    sizes = list(input._shape)
    out = shape.expand(shape.unsqueeze(input, d + 1), *sizes[:d + 1], repeats, *sizes[d + 1:])
    sizes[d] *= repeats
    return shape.view(shape.clone(out, "C"), *sizes)


def _repeat_indices(repeats):
    if len(repeats._shape) != 1:
        raise RuntimeError("repeat_interleave only accept 1D vector as repeat")
    if repeats._dtype is not dtypes.int64:
        raise NotImplementedError(f"\"repeat_interleave_cpu\" not implemented for '{repeats._dtype.word}'")
    counts = dispatch.to_host(repeats._data)
    if (counts < 0).any():
        raise RuntimeError("repeats can not be negative")
    data = np.repeat(np.arange(len(counts), dtype=np.int64), counts)
    return TensorBase._make(dispatch.place(data, repeats.device), dtypes.int64)


# ---- diagonals ---------------------------------------------------------------------------------------

def _diagonal_geometry(shape_, offset, d1, d2):
    """(the start as slices, the diagonal's length) of diagonal(offset, d1, d2) over `shape_`."""
    s1, s2 = shape_[d1], shape_[d2]
    n = max(min(s1, s2 - offset), 0) if offset >= 0 else max(min(s1 + offset, s2), 0)
    start = [slice(None)] * len(shape_)
    if n:
        start[d2 if offset >= 0 else d1] = slice(abs(offset), None)
    return tuple(start), n


def _diagonal_dims(nd, offset, dim1, dim2):
    d1, d2 = wrap_dim(dim1, nd), wrap_dim(dim2, nd)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    return operator.index(offset), d1, d2


def _diagonal_view(data, offset, d1, d2):
    start, n = _diagonal_geometry(data.shape, offset, d1, d2)
    kept = [k for k in range(data.ndim) if k not in (d1, d2)]
    new_shape = [data.shape[k] for k in kept] + [n]
    strides = [data.strides[k] for k in kept] + [data.strides[d1] + data.strides[d2]]
    return views.restrided(data, start, new_shape, strides)


def _diagonal_backward(node, g):
    return (_diagonal_scatter(g, node.input_shape(0), *node.saved("geometry")),)


def diagonal(input, offset=0, dim1=0, dim2=1):
    offset, d1, d2 = _diagonal_dims(len(input._shape), offset, dim1, dim2)
    out = shape.view_of(input, _diagonal_view(input._data, offset, d1, d2))
    record("DiagonalBackward0", _diagonal_backward, [input], [out], {"geometry": (offset, d1, d2)})
    return out


def _scatter_backward(node, g):
    offset, d1, d2 = node.saved("geometry")
    return (diagonal(g, offset, d1, d2),)


def _diagonal_scatter(g, full_shape, offset, d1, d2, name="DiagonalBackwardBackward0"):
    """Zeros of `full_shape` holding g on the diagonal (offset, d1, d2): diagonal's backward, diag_embed."""
    data = dispatch.zeros(tuple(full_shape), g._dtype.np, g._data)
    dispatch.copy_into(_diagonal_view(data, offset, d1, d2), g._data)
    out = TensorBase._make(data, g._dtype)
    record(name, _scatter_backward, [g], [out], {"geometry": (offset, d1, d2)})
    return out


def diag_embed(input, offset=0, dim1=-2, dim2=-1):
    nd = len(input._shape) + 1
    offset, d1, d2 = _diagonal_dims(nd, offset, dim1, dim2)
    n = (input._shape[-1] if input._shape else 1) + abs(offset)
    rest = iter(input._shape[:-1])
    full = [n if k in (d1, d2) else next(rest) for k in range(nd)]
    return _diagonal_scatter(input.reshape(1) if not input._shape else input, full, offset, d1, d2,
                             "DiagEmbedBackward0")


def diag(input, diagonal=0):
    nd = len(input._shape)
    if nd == 1:
        return diag_embed(input, diagonal, 0, 1)
    if nd != 2:
        raise RuntimeError(f"diag(): Supports 1D or 2D tensors. Got {nd}D")
    offset, d1, d2 = _diagonal_dims(2, diagonal, 0, 1)
    out = TensorBase._make(dispatch.contiguous(_diagonal_view(input._data, offset, d1, d2)).copy(), input._dtype)
    record("DiagonalBackward0_copy", _diagonal_backward, [input], [out], {"geometry": (offset, d1, d2)})
    return out


def _trace_backward(node, g):
    rows, cols = node.input_shape(0)
    return (_diagonal_scatter(shape.expand(g, min(rows, cols)), (rows, cols), 0, 0, 1),)


def trace(input):
    if input._dtype is dtypes.bool_:
        raise NotImplementedError("\"trace\" not implemented for 'Bool'")
    if len(input._shape) != 2:
        raise RuntimeError(f"trace: expected a matrix, but got tensor with dim {len(input._shape)}")
    return _composed("TraceBackward0", _trace_backward, [input], lambda: reduction.sum(diagonal(input)))


# ---- grids, moves and splits -------------------------------------------------------------------------

MESHGRID_INDEXING = ("torch.meshgrid: in an upcoming release, it will be required to pass the indexing argument. "
                     "(Triggered internally at /__w/pytorch/pytorch/aten/src/ATen/native/TensorShape.cpp:4215.)")


def meshgrid(*tensors, indexing=None):
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    if indexing is None:
        warn_once(MESHGRID_INDEXING)
        indexing = "ij"
    if not tensors:
        raise RuntimeError("meshgrid expects a non-empty TensorList")
    for t in tensors[1:]:
        if t._dtype is not tensors[0]._dtype:
            raise RuntimeError("meshgrid expects all tensors to have the same dtype")
        if t.device != tensors[0].device:
            raise RuntimeError("meshgrid expects all tensors to have the same device")
    if indexing not in ("ij", "xy"):
        raise RuntimeError(f'torch.meshgrid: indexing must be one of "xy" or "ij", but received: {indexing}')
    for t in tensors:
        if len(t._shape) > 1:
            raise RuntimeError("torch.meshgrid: Expected 0D or 1D tensor in the tensor list but got: " + str(t))
    swap = indexing == "xy" and len(tensors) >= 2
    order = [1, 0] + list(range(2, len(tensors))) if swap else list(range(len(tensors)))
    ordered = [tensors[i] for i in order]
    grid = [math.prod(t._shape) for t in ordered]
    outs = []
    for i, t in enumerate(ordered):
        view_shape = [1] * len(ordered)
        view_shape[i] = -1
        outs.append(shape.expand(shape.view(t, *view_shape), *grid))
    if swap:  # 'xy': the grid of the first two swapped, their grids swapped back (shape (len(y), len(x), ...))
        outs[0], outs[1] = outs[1], outs[0]
    return tuple(outs)


def view_as(input, other):
    return shape.view(input, *other.shape)


def movedim(input, source, destination):
    nd = len(input._shape)
    src, dst = _ints(source), _ints(destination)
    if len(src) != len(dst):
        raise RuntimeError(f"movedim: Invalid source or destination dims: source ({list(src)} dims) should contain "
                           f"the same number of dims as destination ({list(dst)} dims)")
    src_w, dst_w = [wrap_dim(d, nd) for d in src], [wrap_dim(d, nd) for d in dst]
    for name, given, wrapped in (("source", src, src_w), ("destination", dst, dst_w)):
        if len(set(wrapped)) != len(wrapped):
            raise RuntimeError(f"movedim: repeated dim in `{name}` ({list(given)})")
    if nd == 0:  # the tensor itself, as an alias
        out = shape.view_of(input, input._data.view())
        record("AliasBackward0", _alias_backward, [input], [out])
        return out
    order = [-1] * nd
    for s, d in zip(src_w, dst_w):
        order[d] = s
    rest = iter(k for k in range(nd) if k not in src_w)
    order = [o if o != -1 else next(rest) for o in order]
    return shape.permute(input, *order)


moveaxis = movedim


def _alias_backward(node, g):
    return (g,)


def unflatten(input, dim, sizes):
    return shape.unflatten(input, dim, sizes)


def tensor_split(input, indices_or_sections=None, dim=0, *, sections=None, indices=None,
                 tensor_indices_or_sections=None):
    given = [v for v in (indices_or_sections, sections, indices, tensor_indices_or_sections) if v is not None]
    if len(given) != 1:
        raise TypeError("tensor_split() missing required argument 'indices_or_sections'" if not given else
                        "tensor_split() got multiple values for argument 'indices_or_sections'")
    indices_or_sections = given[0]
    if len(input._shape) == 0:
        raise RuntimeError("tensor_split expected at least a 1-dimensional tensor, but got a tensor with 0 dims")
    d = wrap_dim(dim, len(input._shape))
    n = input._shape[d]
    spec = indices_or_sections
    if isinstance(spec, TensorBase):
        if spec._dtype is not dtypes.int64:
            raise RuntimeError(f"tensor_split expected tensor_indices_or_sections to have dtype of long, but got "
                               f"{spec._dtype.word}")
        if len(spec._shape) > 1:
            raise RuntimeError(f"tensor_split expected tensor_indices_or_sections to be a zero-dimensional or "
                               f"one-dimensional tensor, but got a tensor with {len(spec._shape)} dims")
        spec = spec.item() if len(spec._shape) == 0 else spec.tolist()
    if isinstance(spec, (list, tuple)):
        bounds = [operator.index(i) for i in spec]
        starts, stops = [0] + bounds, bounds + [n]
    else:
        sections = operator.index(spec)
        if sections <= 0:
            raise RuntimeError(f"number of sections must be larger than 0, got {sections}")
        size, extra = divmod(n, sections)
        stops = list(np.cumsum([size + (i < extra) for i in range(sections)]))
        starts = [0] + stops[:-1]
    return tuple(_index_slice(input, d, int(a), int(b)) for a, b in zip(starts, stops))


def is_tensor(obj):
    return isinstance(obj, TensorBase)


def numel(input):
    return math.prod(input._shape)


def one_hot(tensor, num_classes=-1):
    """nn.functional.one_hot: int64 rows with a 1 at each class index (num_classes=-1: the largest index + 1)."""
    if tensor._dtype is not dtypes.int64:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    if tensor.numel() == 0:
        if num_classes <= 0:
            raise RuntimeError("Can not infer total number of classes from empty tensor.")
        return creation.zeros(*tensor._shape, num_classes, dtype=dtypes.int64, device=tensor.device)
    if reduction.amin(tensor).item() < 0:
        raise RuntimeError("Class values must be non-negative.")
    largest = reduction.amax(tensor).item()
    if num_classes == -1:
        num_classes = largest + 1
    elif largest >= num_classes:
        raise RuntimeError("Class values must be smaller than num_classes.")
    classes = creation.arange(num_classes, device=tensor.device)
    return apply("eq", shape.unsqueeze(tensor, -1), classes).to(dtypes.int64)

"""Indexing ops with backward: getitem/setitem as torch indexes, masked_fill, index_select, gather, scatter."""
import functools
import math
import operator

import numpy as np

from .._core import dtypes
from .._core.warn import warn
from .._core.grad_mode import no_grad
from .._core.messages import PARTIAL_OVERLAP
from .._core.shapes import broadcast_shapes, wrap_dim
from ..lazy import contiguous_strides, dim_order, memory_order, result_strides, shaped
from ..kernels import dispatch
from ..kernels.dispatch import indexing as device_index
from ..kernels.dispatch import internal_overlap
from ..node import needs_grad, record
from ..tensor_base import TensorBase, check_same_device
from . import elementwise
from .shape import expand, view_of, zeros_where_not

__all__ = ["gather", "index_put", "index_select", "masked_fill", "narrow", "scatter", "scatter_add", "select",
           "take_along_dim"]

SEQUENCE_INDEX = (
    "Using a non-tuple sequence for multidimensional indexing is deprecated and will be changed in pytorch 2.9; "
    "use x[tuple(seq)] instead of x[seq]. In pytorch 2.9 this will be interpreted as tensor index, "
    "x[torch.tensor(seq)], which will result either in an error or a different result")
ZERO_DIM_INDEX = ("invalid index of a 0-dim tensor. Use `tensor.item()` in Python or `tensor.item<T>()` in C++ to "
                  "convert a 0-dim tensor to a number")


# ---- parsing an index into (basic, advanced) -----------------------------------------------------

def _as_tuple(key):
    if isinstance(key, tuple):
        return key
    # torch reads a short list holding sequences, slices, None or ... as a tuple (with a deprecation warning)
    if isinstance(key, list) and len(key) < 32 and any(
            k is None or k is Ellipsis or isinstance(k, (TensorBase, list, tuple, range, np.ndarray, slice))
            for k in key):
        warn(SEQUENCE_INDEX)
        return tuple(key)
    return (key,)


def _classify(item):
    """One index element as (kind, value): int, slice, none, ellipsis, bool (0-d), mask or array."""
    if item is None:
        return "none", None
    if item is Ellipsis:
        return "ellipsis", None
    if isinstance(item, (bool, np.bool_)):
        return "bool", bool(item)
    if isinstance(item, (int, np.integer)):
        return "int", int(item)
    if isinstance(item, slice):
        return "slice", slice(*(None if v is None else operator.index(v) for v in (item.start, item.stop, item.step)))
    if isinstance(item, (TensorBase, np.ndarray)):
        arr = item._data if isinstance(item, TensorBase) else item
        if arr.dtype.kind not in "biu":  # refused by make_info (_make_info), after a write's overlap checks
            return "array", arr
        if isinstance(item, TensorBase) and item._dtype in (dtypes.int8, dtypes.int16):
            raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
        if isinstance(item, TensorBase) and item._dtype is dtypes.uint8:  # torch's old masks
            warn("indexing with dtype torch.uint8 is now deprecated, please use a dtype torch.bool instead. "
                 "(Triggered internally at /__w/pytorch/pytorch/aten/src/ATen/native/IndexingUtils.h:37.)")
            arr = dispatch.asarray(arr, np.bool_)
    elif isinstance(item, range):
        arr = np.arange(item.start, item.stop, item.step)
    elif isinstance(item, (list, tuple)):
        arr = np.asarray(item)
        if arr.dtype.kind not in "biu":  # torch truncates float lists; an empty list is an empty long index
            arr = arr.astype(np.int64)
    elif isinstance(item, str):
        raise TypeError("new(): invalid data type 'str'")
    else:
        raise IndexError("only integers, slices (`:`), ellipsis (`...`), None and long or byte Variables are valid "
                         f"indices (got {type(item).__name__})")
    if arr.dtype.kind == "b":
        return ("bool", bool(device_index.host_scalar(arr))) if arr.ndim == 0 else ("mask", arr)
    return ("int", int(device_index.host_scalar(arr))) if arr.ndim == 0 else ("array", arr.astype(np.int64, copy=False))


def _parse(t, key):
    """Splits a torch index into a numpy basic index (a view) and an advanced index applied to that view,
    as torch does: ints, slices and None first, then the tensor indices. Returns (basic, adv or None, the name
    of the last view op torch applies for the basic part, the index tensors as given). The advanced index is
    not validated yet: torch checks it (make_info, then its kernel's bounds) after the write's own checks."""
    items = _as_tuple(key)
    parts = [_classify(k) for k in items]
    shape, ndim = t._data.shape, t._data.ndim
    if any(device_index.on_other_device(t._data, v) for kind, v in parts if kind in ("mask", "array")):
        raise IndexError(f"indices should be either on cpu or on the same device as the indexed tensor ({t.device})")
    if ndim == 0 and any(kind == "int" for kind, _ in parts):
        raise IndexError(ZERO_DIM_INDEX)
    consumed = sum(v.ndim if kind == "mask" else 1 for kind, v in parts if kind in ("int", "slice", "array", "mask"))
    if consumed > ndim:
        raise IndexError(f"too many indices for tensor of dimension {ndim}")
    name = "AliasBackward0"  # torch names the view by the last op it applies; full slices are skipped
    basic, adv, dim, seen_ellipsis = [], [], 0, False
    for position, (kind, v) in enumerate(parts):
        if kind == "ellipsis":
            fill = 0 if seen_ellipsis else ndim - consumed  # later ellipses expand to nothing in torch
            basic += [slice(None)] * fill
            adv += [slice(None)] * fill
            dim, seen_ellipsis = dim + fill, True
        elif kind == "int":
            if not -shape[dim] <= v < shape[dim]:  # torch names the index's position in the key as the dimension
                raise IndexError(f"index {v} is out of bounds for dimension {position} with size {shape[dim]}")
            basic.append(v)
            dim, name = dim + 1, "SelectBackward0"
        elif kind == "slice":
            if v.step == 0:
                raise ValueError("slice step cannot be zero")
            if v.step is not None and v.step < 0:
                raise ValueError("step must be greater than zero")
            if v.start not in (None, 0) or (v.stop is not None and v.stop < shape[dim]) or v.step not in (None, 1):
                name = "SliceBackward0"
            basic.append(v)
            adv.append(slice(None))
            dim += 1
        elif kind in ("none", "bool"):  # a bool is a new axis of size 1, masked by itself
            basic.append(None)
            adv.append(slice(None) if kind == "none" else np.array([v]))
            name = "UnsqueezeBackward0"
        else:
            k = v.ndim if kind == "mask" else 1
            basic += [slice(None)] * k
            adv.append(v)
            dim += k
    basic.append(Ellipsis)  # keeps a full integer index a 0-d array rather than a numpy scalar
    tensors = [k for k, (kind, _) in zip(items, parts) if kind in ("mask", "array") and isinstance(k, TensorBase)]
    if not any(device_index.is_index_array(a) for a in adv):
        return tuple(basic), None, name, tensors
    return tuple(basic), tuple(adv), name, tensors


def _make_info(shape, adv):
    """torch's make_info for an advanced index into a view of `shape`: masks checked against the dims they
    cover and turned into integer indices, the indices broadcast together, and an index that selects
    something from an empty dim refused. Returns (indices, which came from a mask); bounds are the kernel's."""
    if any(device_index.is_index_array(a) and a.dtype.kind not in "biu" for a in adv):
        raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
    out, from_mask, pos = [], [], 0
    for a in adv:
        if device_index.is_index_array(a) and a.dtype == np.bool_:
            for j, (m, s) in enumerate(zip(a.shape, shape[pos:])):
                if m != s:
                    raise IndexError(f"The shape of the mask {list(a.shape)} at index {j} does not match the shape of "
                                     f"the indexed tensor {list(shape)} at index {pos + j}")
            out += device_index.nonzero(a)
            from_mask += [True] * a.ndim
            pos += a.ndim
        else:
            out.append(a)
            from_mask.append(False)
            pos += 1
    arrays = [a for a in out if device_index.is_index_array(a)]
    try:
        replacement = np.broadcast_shapes(*(a.shape for a in arrays))
    except ValueError:
        raise IndexError("shape mismatch: indexing tensors could not be broadcast together with shapes "
                         + ", ".join(str(list(a.shape)) for a in arrays)) from None
    # no number indexes an empty dim: torch says so here, since its kernel never runs over no elements
    if 0 not in replacement and any(shape[d] == 0 for d, a in enumerate(out) if device_index.is_index_array(a)):
        raise IndexError("index is out of bounds for dimension with size 0")
    return tuple(out), from_mask


def _check_bounds(shape, out, from_mask):
    """The index kernel's bounds check (mask-made indices are in range); returns the indices, those that no
    element reads clipped into range."""
    out = list(out)
    ordinal = 0  # torch counts dimensions among the indexed ones only
    # torch's kernel checks the bounds as it runs: over no elements (an empty dim, or indices that broadcast
    # to an empty shape) it does not run
    empty = 0 in shape or any(device_index.is_index_array(a) and a.size == 0 for a in out)
    for d, (a, masked) in enumerate(zip(out, from_mask)):
        if device_index.is_index_array(a):
            skip = masked or (empty and shape[d] != 0)
            if skip and not masked and isinstance(a, np.ndarray):  # no element is read: any index in range will do
                out[d] = a = np.clip(a, -shape[d], shape[d] - 1)
            v = None if skip or shape[d] == 0 else device_index.first_out_of_bounds(a, -shape[d], shape[d] - 1)
            if v is not None:
                raise IndexError(f"index {v} is out of bounds for dimension {ordinal} with size {shape[d]}")
            ordinal += 1
    return tuple(out)


def _advanced(t, basic, adv):
    """The advanced index validated as torch's index does (make_info, then the kernel's bounds), on t's device."""
    shape = t._data[basic].shape
    out, from_mask = _make_info(shape, adv)
    return device_index.upload_indices(_check_bounds(shape, out, from_mask), t._data)


# ---- the differentiable pair: take a region, and embed a gradient back into zeros --------------------

def _basic_view(data, basic):
    """data[basic] (a view), with the strides torch gives: NumPy strides a new axis (None) by 0, torch's
    unsqueeze by the extent of the dim it precedes, and overlap checks compare strides."""
    view = data[basic]
    if not any(b is None for b in basic) or not dispatch.is_host(data):
        return view
    shape, strides, d = list(data.shape), list(data.strides), 0
    for b in basic:  # torch applies the index left to right; Ellipsis only closes it (see _parse)
        if b is None:
            strides.insert(d, shape[d] * strides[d] if d < len(shape) else data.itemsize)
            shape.insert(d, 1)
            d += 1
        elif isinstance(b, slice):
            start, stop, step = b.indices(shape[d])
            shape[d], strides[d] = len(range(start, stop, step)), strides[d] * step
            d += 1
        elif b is not Ellipsis:  # an int selects the dim away
            del shape[d], strides[d]
    return np.lib.stride_tricks.as_strided(view, view.shape, strides, writeable=view.flags.writeable)


def _index(t, basic, adv=None, name="IndexBackward0", c_order=False):
    """t[basic][adv]: a view for a basic index, else a copy laid out as torch's index kernel lays it out
    (`c_order`: in C order, as index_select's kernel allocates its result)."""
    data = _basic_view(t._data, basic)
    if adv is None:
        out = view_of(t, data)
    else:
        taken = device_index.take(data, adv)
        if not dispatch.is_host(data):  # GPU arrays are C order in numgrad
            taken = dispatch.c_order(taken)
        elif taken.size:  # the values in memory order, seen with torch's strides (NumPy may give a C-order
            # result other strides for its size-1 dims, which torch's stride() and elementwise results read)
            strides = (None if c_order else _index_strides(data, adv)) or contiguous_strides(taken.shape)
            if taken.strides != tuple(s * taken.itemsize for s in strides):
                taken = shaped(taken.transpose(memory_order(strides)).ravel(), taken.shape, strides)
        out = TensorBase._make(taken, t._dtype)
    record(name, _index_backward, [t], [out], {"basic": basic, "adv": adv})
    return out


def _index_strides(view, adv):
    """The strides torch's index kernel gives view[adv] (a non-empty result of host arrays, adv validated), None
    for C order; see _index_layout."""
    return _index_layout(view.shape, view.strides, view.itemsize, tuple(
        (d, a.shape, a.strides, a.itemsize) for d, a in enumerate(adv) if device_index.is_index_array(a)))


@functools.lru_cache(maxsize=4096)  # every advanced index asks, and a model meets few layouts
def _index_layout(shape, strides, itemsize, indices):
    """The strides torch's index kernel gives the result of indexing (shape, strides in bytes) by the index
    arrays `indices`, (dim, shape, strides, itemsize) each. Its TensorIterator allocates the result in the
    memory order of its operands (result_strides): self restrided, the indexed dims replaced by the broadcast
    index shape of stride 0 (restride_src), then each index tensor broadcast to that shape and reshaped to
    [1] * dims before + its shape + [1] * dims after (reshape_indexer); indexed dims that are not adjacent go
    to the front first (transposeToFront), as the result's dims do."""
    strides = [s // itemsize for s in strides]
    indexed = [d for d, *_ in indices]
    if indexed == list(range(indexed[0], indexed[-1] + 1)):
        before, after = range(indexed[0]), range(indexed[-1] + 1, len(shape))
    else:
        before, after = (), [d for d in range(len(shape)) if d not in indexed]
    replacement = np.broadcast_shapes(*(ishape for _, ishape, _, _ in indices))
    out_shape = tuple(shape[d] for d in before) + replacement + tuple(shape[d] for d in after)
    operands = [(out_shape, tuple(strides[d] for d in before) + (0,) * len(replacement)
                 + tuple(strides[d] for d in after))]
    index_shape = (1,) * len(before) + replacement + (1,) * len(after)
    for _, ishape, istrides, isize in indices:
        # expand_outplace, with torch's strides (broadcast_view reads only a stand-in's shape and strides)
        a = dispatch.broadcast_view(np.lib.stride_tricks.as_strided(np.empty(1, f"i{isize}"), ishape, istrides),
                                    replacement)
        operands.append((index_shape, _reshape_strides(replacement, [s // isize for s in a.strides], index_shape)))
    return result_strides(tuple(operands), out_shape, False)


def _reshape_strides(shape, strides, new_shape):
    """The strides torch's reshape gives a non-empty (shape, strides) of one or more dims seen as `new_shape`
    (computeStride: a size-1 dim takes its stride from the run of dims it falls in), or C order's when it
    has to copy."""
    new = [0] * len(new_shape)
    view_d, base, tensor_numel, view_numel = len(new_shape) - 1, strides[-1], 1, 1
    for d in range(len(shape) - 1, -1, -1):
        tensor_numel *= shape[d]
        if d == 0 or (shape[d - 1] != 1 and strides[d - 1] != tensor_numel * base):  # the end of a run of dims
            while view_d >= 0 and (view_numel < tensor_numel or new_shape[view_d] == 1):
                new[view_d] = view_numel * base
                view_numel *= new_shape[view_d]
                view_d -= 1
            if view_numel != tensor_numel:
                return contiguous_strides(new_shape)
            if d > 0:
                base, tensor_numel, view_numel = strides[d - 1], 1, 1
    return tuple(new) if view_d == -1 else contiguous_strides(new_shape)


def _index_backward(node, g):
    return (_embed(g, node.input_shape(0), node.saved("basic"), node.saved("adv")),)


def _embed(g, shape, basic, adv):
    """zeros(shape) with g added at [basic][adv] (repeated indices add up): indexing's gradient."""
    data = dispatch.zeros(shape, g._dtype.np, g._data)
    device_index.write_region(data, basic, adv, g._data, adv is not None)
    out = TensorBase._make(data, g._dtype)
    record("IndexPutBackward0" if adv is not None else "IndexBackwardBackward0", _embed_backward, [g], [out],
           {"basic": basic, "adv": adv})
    return out


def _embed_backward(node, g):
    return (_index(g, node.saved("basic"), node.saved("adv")),)


def getitem(t, key):
    basic, adv, name, _ = _parse(t, key)
    if adv is not None:
        adv, name = _advanced(t, basic, adv), "IndexBackward0"
    elif isinstance(key, slice) and name == "AliasBackward0":  # x[:] is still a slice (but x[:] = v fills)
        name = "SliceBackward0"
    return _index(t, basic, adv, name)


# ---- assignment ------------------------------------------------------------------------------------

def _is_index_tensor(k):
    return isinstance(k, (TensorBase, np.ndarray, list, tuple, range))


def _single_mask(key):
    """Whether the key's only tensor index is one bool tensor (ints, slices, None and ... beside it)."""
    tensors = [k for k in _as_tuple(key) if isinstance(k, (TensorBase, np.ndarray, list, tuple, range))]
    return len(tensors) == 1 and isinstance(tensors[0], TensorBase) and tensors[0]._dtype is dtypes.bool_


def _masked_fill_value(t, value):
    """masked_fill_'s reading of a one-element value of another dtype: its number must fit t's dtype (c10's
    overflow check, as for a Python number), then it is cast."""
    dtypes.check_scalar_fits(value.item(), t._dtype)
    with no_grad():
        return value.to(t._dtype)


def setitem(t, key, value):
    if not isinstance(value, TensorBase):  # torch makes a number a tensor of t's dtype first (valueToTensor)
        value = _check_setitem_number(t, value)
    if key is False:  # torch selects nothing and returns before any other check
        return
    # torch does a single mask with a one-element value as a masked_fill_: it casts the value, and judges
    # only partial overlap with the mask, not the value's memory (index_put_ would judge both)
    as_masked_fill = isinstance(value, TensorBase) and math.prod(value._shape) == 1 and _single_mask(key)
    source = value  # the graph's input: the value before masked_fill_'s cast (torch's index_put_ records it)
    if as_masked_fill and value._dtype is not t._dtype:
        value = _masked_fill_value(t, value)
    elif key is True and isinstance(value, TensorBase) and value._dtype is not t._dtype:
        target = (1, *t._shape)
        if value._data.ndim and tuple(value._shape) != target:  # torch expands the value as it is: its error
            with no_grad():                                      # names the value's own type
                value.reshape(_strip_ones(value._shape)).expand(*target)
        value = value.to(t._dtype)  # a bare True is a new axis, which torch copies into (copy_ casts)
    if key is True:  # a bare True is a new axis of size 1, as None is (torch copies into it, no index_put_)
        key = None
    basic, adv, view_name, tensors = _parse(t, key)
    if view_name != "AliasBackward0":
        # torch writes into the view its ints, slices and None make (CopySlices records that view's region of
        # the root): an int into an expanded tensor writes the one element all of them share
        t, basic = _index(t, basic, None, view_name), (Ellipsis,)
    if adv is not None:
        name = "IndexPutBackward0"
    else:  # the index is the whole tensor: torch copies into it, or fills it from a 0-d value of another shape
        vshape = value._data.shape if isinstance(value, TensorBase) else ()
        name = "FillBackward3" if vshape == () != t._data.shape else "torch::autograd::CopyBackwards"
    _put(t, basic, adv, value, False, name, tensors, masked_fill=as_masked_fill or (
        adv is not None and not isinstance(value, TensorBase) and _single_mask(key)), source=source)


def _check_setitem_number(t, value):
    """torch's valueToTensor: a Python or NumPy number fitting t's dtype, returned as t stores it; anything else
    is refused by type."""
    if isinstance(value, (bool, int, float, np.number, np.bool_)):
        if isinstance(value, int) and not isinstance(value, bool) and not -2 ** 63 <= value < 2 ** 63:
            raise ValueError("Overflow when unpacking long long")  # a Python int is read as a C long long
        return dtypes.check_scalar_fits(value, t._dtype, one_element=True)  # (a 0-d tensor: see its docstring)
    name = type(value).__name__ if type(value).__module__ == "builtins" else \
        f"{type(value).__module__}.{type(value).__qualname__}"
    raise TypeError(f"can't assign a {name} to a torch.{t._dtype.word}Tensor")


def index_put_(t, indices, values, accumulate=False):
    t._check_inplace(inputs=(values,))  # autograd's refusal comes before the kernel's checks
    if len(indices) > t._data.ndim:  # index_put_ counts the index tensors given (indexing counts dims)
        raise IndexError(f"too many indices for tensor of dimension {t._data.ndim} (got {len(indices)})")
    basic, adv, _, tensors = _parse(t, tuple(indices))
    # torch does a single mask with a one-element value as masked_fill_ (which casts the value), unless it adds
    masked_fill = not accumulate and math.prod(values._shape) == 1 and _single_mask(tuple(indices))
    source = values
    if masked_fill and values._dtype is not t._dtype:
        values = _masked_fill_value(t, values)
    return _put(t, basic, adv, values, accumulate, "IndexPutBackward0", tensors, masked_fill, source, direct=True)


def index_put(t, indices, values, accumulate=False):
    out = index_put_(t.clone(), indices, values, accumulate)
    out._vc[0] = 0  # torch's index_put is one op below autograd: its result is a new tensor at version 0
    return out


def _put(t, basic, adv, value, accumulate, name, tensors=(), masked_fill=False, source=None, direct=False):
    """Writes value into t[basic][adv] in place; differentiable w.r.t. both when grad mode asks for it.
    `tensors` are the index tensors as given (torch judges their memory against the region's), `masked_fill`
    says torch takes its masked_fill_ path, `source` is the value the graph records (before a cast)."""
    given = source if source is not None else value  # an unbind/split output made without grad refuses it

    def check_inplace():
        t._check_inplace(inputs=(given,))
    if adv is not None:  # index_put_ checks the in-place write first; a basic index expands the value first
        check_inplace()
    mismatch = None  # torch checks the value's shape against the indexed region before the dtypes
    if not isinstance(value, TensorBase):
        value = dtypes.check_scalar_fits(value, t._dtype)
        value = TensorBase._make(device_index.like_device(np.asarray(value, dtype=t._dtype.np), t._data), t._dtype)
    elif adv is not None and value._dtype is not t._dtype:
        mismatch = RuntimeError(f"Index put requires the source and destination dtypes match, got {t._dtype.word} "
                                f"for the destination and {value._dtype.word} for the source.")
    elif value.device != t.device:  # a 0-d value or a copy into a view moves as torch's copy_ does
        if adv is not None and value._data.ndim:
            check_same_device(t, value)
        value = value.to(t.device)
    source = source if isinstance(source, TensorBase) else value
    region = t._data[basic]
    if adv is None:
        vdata = _copy_checks(t, region, value, check_inplace)
    else:
        vdata, adv = _index_put_checks(t, basic, region, adv, value, tensors, masked_fill, mismatch, name, direct)
    with np.errstate(invalid="ignore"):  # (NaN or inf written into an integer tensor: torch casts silently)
        vdata = vdata.astype(t._data.dtype, copy=False)
    if not needs_grad(t, source) or not (t._dtype.is_floating_point or _records_on_integers(adv, masked_fill, name)):
        _checked_write(t._data, basic, adv, vdata, accumulate)
        t._vc[0] += 1
        return t
    data = t._data.copy()
    _checked_write(data, basic, adv, vdata, accumulate)
    out = TensorBase._make(data, t._dtype)
    record(name, _put_backward, [t, source], [out], {"basic": basic, "adv": adv, "accumulate": accumulate},
           inplace=True)
    if not internal_overlap(t._arr):
        return t._write(out)
    # torch's kernel writes (or adds into) the indexed elements alone: where several elements are one memory
    # location, a whole-result copy would let the last element win; the old values go back, the kernel runs
    before = t._data.copy()
    t._write(out)
    dispatch.copy_into(t._data, before)
    _checked_write(t._data, basic, adv, vdata, accumulate)
    return t


def _checked_write(data, basic, adv, vdata, accumulate):
    """device_index.write_region, with an advanced index on the host as one recorded call that checks its
    bounds again: numgrad.compile's replay of the write then refuses new indices with torch's error (the eager
    call checked them already, in torch's order, so here the check never fails)."""
    if adv is None or not dispatch.is_host(data):
        device_index.write_region(data, basic, adv, vdata, accumulate)
    else:
        dispatch.numpy_op(_bounded_write, data, basic, adv, vdata, accumulate)


def _bounded_write(data, basic, adv, vdata, accumulate):
    """The bounds check of _check_bounds over data[basic], then the write (a mask's indices are in range)."""
    adv = _check_bounds(data[basic].shape, adv, (False,) * len(adv))
    device_index.write_region(data, basic, adv, vdata, accumulate)


def _records_on_integers(adv, masked_fill, name):
    """Whether torch records the write into an integer or bool tensor of a value that requires grad: its
    index_put_ (done as masked_fill_) and fill_ record whatever self's dtype; copy_ records only floats."""
    return masked_fill if adv is not None else name == "FillBackward3"


def _copy_checks(t, region, value, check_inplace):
    """torch's copy_to into the region: a value of the region's shape is copied as it is, a 0-d one fills,
    others lose their leading 1-dims and are expanded first; then the copy's checks. Returns the data to write."""
    if value._data.shape == region.shape:
        vdata = value._data
    else:
        vdata = value._data.reshape(_strip_ones(value._data.shape))
        vdata = expand(TensorBase._make(vdata, value._dtype), *region.shape)._data
    check_inplace()
    # the copy judges overlap against the value as expanded to the region (an expanded value is not dense, so
    # its memory is not judged); a 0-d value is a fill, whose region is still judged but not against the value
    if value._data.ndim == 0 and region.ndim:
        copied = ()
    else:
        stripped = value._data if vdata is value._data else value._data.reshape(_strip_ones(value._data.shape))
        copied = (TensorBase._make(_as_torch_expands(stripped, vdata), value._dtype),)
    TensorBase._make(region, t._dtype)._check_overlap(copied, copy=True)
    return vdata


def _as_torch_expands(arr, expanded):
    """Host array `arr` seen with `expanded`'s shape through the strides torch's expand gives (a new leading dim
    of size 1 strides over its inner neighbour, where NumPy says 0): overlap compares strides, so `x[0] = x` of a
    (1, 1, n) x is the same data to torch. GPU arrays keep their own strides."""
    if not dispatch.is_host(arr) or arr.shape == expanded.shape or arr.ndim == 0:
        return expanded  # torch expands a 0-d tensor with every stride 0, as NumPy does
    shape, lead = expanded.shape, expanded.ndim - arr.ndim
    strides = [0] * len(shape)
    for i in reversed(range(len(shape))):
        d = i - lead
        size = arr.shape[d] if d >= 0 else 1
        inner = shape[i + 1] * strides[i + 1] if i + 1 < len(shape) else arr.itemsize
        strides[i] = 0 if size != shape[i] else (arr.strides[d] if d >= 0 else inner)
    return np.lib.stride_tricks.as_strided(arr, shape, strides, writeable=False)


def _unsqueezed_mask(t, adv, mask):
    """The mask as torch's canDispatchToMaskedFill hands it to masked_fill_, whose overlap check compares it with
    self: unsqueezed at the end to self's dims (each new dim of stride 1, as torch's unsqueeze)."""
    lead = next((i for i, a in enumerate(adv) if device_index.is_index_array(a)), 0)
    trail = t._data.ndim - lead - mask._data.ndim
    data = mask._data
    if trail <= 0 or not dispatch.is_host(data):
        return mask
    return TensorBase._make(np.lib.stride_tricks.as_strided(data, data.shape + (1,) * trail,
                                                            data.strides + (data.itemsize,) * trail), mask._dtype)


def _index_put_checks(t, basic, region, adv, value, tensors, masked_fill, mismatch, name, direct=False):
    """torch's _index_put_impl_ checks in its order: the expanded-self warning; on the masked_fill_ path the
    mask's shape, then partial overlap with the mask; else any overlap with the value, then with each index
    tensor, then make_info, the value's shape and dtype; the kernel's bounds last. Returns (value data
    broadcast to the indexed result, the indices to write)."""
    if internal_overlap(t._arr):
        warn("Use of index_put_ on expanded tensors is deprecated. Please clone() the tensor before "
             "performing this operation. This also applies to advanced indexing e.g. "
             "tensor[indices] = tensor (Triggered internally at "
             "/__w/pytorch/pytorch/aten/src/ATen/native/TensorAdvancedIndexing.cpp:976.)")
    if masked_fill:  # then masked_fill_ itself: its own expanded-self warning, partial overlap with the mask
        out, from_mask = _make_info(region.shape, adv)
        if internal_overlap(t._arr):
            _warn_expanded_masked_fill()
        t._check_overlap([_unsqueezed_mask(t, adv, m) for m in tensors], internal=False)
    else:
        # indexing (setitem) hands torch the value viewed without its leading 1-dims: a new tensor when any were
        # dropped; index_put_ called directly judges the value as given (self itself: full overlap, even empty)
        stripped = _strip_ones(value._data.shape)
        judged = value if stripped == value._data.shape or direct else \
            TensorBase._make(value._data.reshape(stripped), value._dtype)
        t._check_overlap((judged, *tensors), internal=False, full=True)
        out, from_mask = _make_info(region.shape, adv)
    target = _result_shape(region.shape, out)
    vdata = value._data.reshape(_strip_ones(value._data.shape))  # torch drops the value's leading 1-dims
    try:
        vdata = np.broadcast_to(vdata, target)
    except ValueError:
        raise RuntimeError(f"shape mismatch: value tensor of shape {list(vdata.shape)} cannot be broadcast to "
                           f"indexing result of shape {list(target)}") from None
    if mismatch is not None:
        raise mismatch
    return vdata, device_index.upload_indices(_check_bounds(region.shape, out, from_mask), t._data)


def _result_shape(shape, indices):
    """The shape of x[indices] for x of `shape`, from the indices' shapes alone (they may be out of bounds yet)."""
    stand_in = tuple(np.zeros(a.shape, np.intp) if device_index.is_index_array(a) else a for a in indices)
    return np.broadcast_to(np.empty((), bool), shape)[stand_in].shape


def _strip_ones(shape):
    i = 0
    while i < len(shape) and shape[i] == 1:
        i += 1
    return shape[i:]


def _put_backward(node, g):
    basic, adv = node.saved("basic"), node.saved("adv")
    grad_self = grad_value = None
    if node.next_functions[0][0] is not None:
        grad_self = g
        if not node.saved("accumulate"):  # the overwritten region no longer depends on the old values
            keep = dispatch.full(node.input_shape(0), True, np.bool_, g._data)
            device_index.write_region(keep, basic, adv, dispatch.zeros((), keep.dtype, keep), False)
            grad_self = zeros_where_not(g, keep)
    if node.next_functions[1][0] is not None:
        vshape, vdtype = node.input_meta[1]
        grad_value = _index(g, basic, adv)._sum_to(_strip_ones(vshape)).reshape(vshape).to(vdtype)
    return grad_self, grad_value


# ---- masked_fill, index_select, narrow, select -----------------------------------------------------

def _check_mask_dtype(mask):
    if mask._dtype is not dtypes.bool_:
        raise RuntimeError(f"masked_fill_ only supports boolean masks, but got mask with dtype {mask._dtype.c_name}")


def _check_value_0d(value):
    if isinstance(value, TensorBase) and value._data.ndim != 0:
        raise RuntimeError("masked_fill_ only supports a 0-dimensional value tensor, but got tensor with "
                           f"{value._data.ndim} dimension(s).")


def masked_fill(t, mask, value, inplace=False):
    _check_mask_dtype(mask)
    _check_value_0d(value)
    is_tensor = isinstance(value, TensorBase)
    # torch reads the value as a number of t's type (a 0-d tensor through .item())
    dtypes.check_scalar_fits(value.item() if is_tensor else value, t._dtype)
    shape = broadcast_shapes(mask._shape, t._shape)
    check_same_device(t, mask)
    if not (inplace or is_tensor) and t._dtype.is_floating_point:
        return elementwise.apply("masked_fill", t, mask, value)  # pending, so that it fuses (a causal mask)
    filled = dispatch.numpy_op(device_index.masked_fill, mask._data, value._data if is_tensor else value, t._data,
                               tuple(shape))  # one recorded call: numgrad.compile replays it on new values
    out = TensorBase._make(dispatch.c_order(filled), t._dtype)
    record("MaskedFillBackward1" if is_tensor else "MaskedFillBackward0", _masked_fill_backward,
           [t, value if is_tensor else None], [out], {"mask": mask}, inplace=inplace)
    return out


def _masked_fill_backward(node, g):
    mask = node.saved("mask")
    grad_self = grad_value = None
    if node.next_functions[0][0] is not None:
        grad_self = masked_fill(g, mask, 0)._sum_to(node.input_shape(0))
    if node.input_meta[1] is not None and node.next_functions[1][0] is not None:
        grad_value = masked_fill(g, ~mask, 0).sum().to(node.input_meta[1][1])
    return grad_self, grad_value


def _warn_expanded_masked_fill():
    warn("Use of masked_fill_ on expanded tensors is deprecated. Please clone() the tensor before "
         "performing this operation. This also applies to advanced indexing e.g. tensor[mask] = scalar "
         "(Triggered internally at /__w/pytorch/pytorch/aten/src/ATen/native/TensorAdvancedIndexing.cpp:2450.)")


def _masked_copy(dst, src, mask):
    """dst = src where `mask` (broadcast to dst) is true, in place."""
    np.copyto(dst, src, where=np.broadcast_to(mask, dst.shape))


def masked_fill_(t, mask, value):
    t._check_inplace()
    # masked_fill__cpu's order: the value's dims, the mask's dtype, the expanded-self warning, partial overlap
    # of self and mask, the mask broadcast to self, then masked_fill's own checks (the value's range)
    _check_value_0d(value)
    _check_mask_dtype(mask)
    expanded = internal_overlap(t._data)
    if expanded:
        _warn_expanded_masked_fill()
    if dispatch.overlap(t._data, mask._data) == "partial":
        raise RuntimeError(PARTIAL_OVERLAP)
    full = broadcast_shapes(t._shape, mask._shape)  # TensorIterator: self (the output) first
    if full != t._shape:
        raise RuntimeError(f"output with shape {list(t._shape)} doesn't match the broadcast shape {list(full)}")
    if not expanded:
        return t._write(masked_fill(t, mask, value, inplace=True))
    result = masked_fill(t, mask, value, inplace=True)  # its checks and node
    # only the masked elements are written, as torch's kernel does: where several elements are one memory
    # location, a masked one writes it (a whole-result copy would let the last element win)
    before = t._data.copy()
    if result._grad_fn is not None:
        t._write(result)
        dispatch.copy_into(t._data, before)
    else:
        t._vc[0] += 1
    if dispatch.is_host(t._data):  # a recorded call: numgrad.compile's replay repeats the write
        dispatch.numpy_op(_masked_copy, t._data, result._data, mask._data)
    else:
        where = device_index.nonzero(dispatch.contiguous(mask._data.broadcast_to(t._data.shape)))
        device_index.write_region(t._data, (Ellipsis,), where, device_index.take(result._data, where), False)
    return t


def index_select(t, dim, index):
    if not isinstance(index, TensorBase):
        raise TypeError(f"index_select(): argument 'index' (position 2) must be Tensor, not {type(index).__name__}")
    if index._dtype is not dtypes.int64 and index._dtype is not dtypes.int32:
        raise RuntimeError("index_select(): Expected dtype int32 or int64 for index")
    index = long_index(index)
    if index._data.ndim > 1:
        raise IndexError("index_select(): Index is supposed to be a vector")
    d = wrap_dim(dim, t._data.ndim)
    check_same_device(t, index)
    idx = index._data.reshape(-1)
    size = t._data.shape[d] if t._data.ndim else 1
    if t._data.ndim == 0 and idx.size != 1:
        raise RuntimeError(f"index_select(): Index to scalar can have only 1 value, got {idx.size} value(s)")
    v = device_index.first_out_of_bounds(idx, 0, size - 1)
    # torch's CPU kernels word it by path: an empty self is checked first, then dim 1 has its own kernel
    if t._data.ndim > 1 and idx.size and t._data.size == 0 and size == 0:
        raise RuntimeError("index_select(): self indexing axis dim should be positive")
    if v is not None and (d == 1 or (t._data.ndim > 1 and t._data.size == 0)):  # dim 1's kernel, or an empty self
        raise RuntimeError(f"INDICES element is out of DATA bounds, id={v} axis_dim={size}")
    if v is not None:
        raise IndexError("index out of range in self")
    if t._data.ndim == 0:  # index_select always copies, a 0-d input too
        out = TensorBase._make(t._data.copy(), t._dtype)
        record("IndexSelectBackward0", _index_backward, [t], [out], {"basic": (Ellipsis,), "adv": None})
        return out
    return _index(t, (Ellipsis,), (slice(None),) * d + (idx,), "IndexSelectBackward0", c_order=True)


def narrow(t, dim, start, length):
    if t._data.ndim == 0:
        raise RuntimeError("narrow() cannot be applied to a 0-dim tensor.")
    d = wrap_dim(dim, t._data.ndim)
    size, start, length = t._data.shape[d], operator.index(start), operator.index(length)
    if not -size <= start <= size:
        raise IndexError(f"start out of range (expected to be in range of [{-size}, {size}], but got {start})")
    start = start + size if start < 0 else start
    if length < 0:
        raise RuntimeError("narrow(): length must be non-negative.")
    if start + length > size:
        raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size ({size}).")
    return _index(t, (slice(None),) * d + (slice(start, start + length), Ellipsis), None, "SliceBackward0")


def select(t, dim, index):
    if t._data.ndim == 0:
        raise IndexError("select() cannot be applied to a 0-dim tensor.")
    d = wrap_dim(dim, t._data.ndim)
    size, index = t._data.shape[d], operator.index(index)
    if not -size <= index < size:
        raise IndexError(f"select(): index {index} out of range for tensor of size {list(t._data.shape)} at "
                         f"dimension {d}")
    return _index(t, (slice(None),) * d + (index, Ellipsis), None, "SelectBackward0")


# ---- gather / scatter --------------------------------------------------------------------------------

def _check_index(op, t, d, index, src=None, self_word="self"):
    """torch's checks of a gather/scatter index before its kernel runs: dtypes, dims, shapes."""
    check_same_device(t, index, src)
    if index._dtype is not dtypes.int64 and index._dtype is not dtypes.int32:
        raise RuntimeError(f"{'scatter' if op == 'scatter_add' else op}(): Expected dtype int32/int64 for index")
    if src is not None and src._dtype is not t._dtype:  # scatter_gather_dtype_check: before the shapes, bounds
        raise RuntimeError("scatter(): Expected self.dtype to be equal to src.dtype")  # scatter_add's too
    if index._data.ndim != t._data.ndim:
        raise RuntimeError(f"Index tensor must have the same number of dimensions as {self_word} tensor")
    ishape, shape = index._data.shape, t._data.shape
    if src is None:
        for k, (i, s) in enumerate(zip(ishape, shape)):
            if k != d and i > s:
                raise RuntimeError(f"Size does not match at dimension {k} expected index {list(ishape)} to be no "
                                   f"larger than self {list(shape)} apart from dimension {d}")
    elif any(i > s for i, s in zip(ishape, src._data.shape)) or any(
            k != d and i > s for k, (i, s) in enumerate(zip(ishape, shape))):
        raise RuntimeError(f"Expected index {list(ishape)} to be no larger than self {list(shape)} apart from "
                           f"dimension {d} and to be no larger size than src {list(src._data.shape)}")


def _check_index_bounds(op, t, d, index, src=None, bounds=True, into_self=False):
    """The kernel's check of the index's values: the first out of range it meets, in its loop order, is the one
    torch names (`into_self`: scatter_ writing self itself; without `bounds`, a backward's, on the GPU the
    forward checked them)."""
    ishape, shape = index._data.shape, t._data.shape
    size = shape[d] if shape else 1
    order = index._data
    if isinstance(order, np.ndarray) and order.ndim > 1:
        # the first index out of range torch's kernel meets (and names) is the first in its loop order
        # the kernel's operands: the output (gather's result, of the index's shape; scatter's, self itself when
        # in place, else a fresh contiguous copy of it), the source (gather's self, scatter's src), the index
        if op == "gather":
            operands = (contiguous_strides(ishape), _elements(t._data.strides, t._data))
        else:
            out = _elements(t._data.strides, t._data) if into_self else contiguous_strides(shape)
            operands = (out,) + ((_elements(src._data.strides, src._data),) if src is not None else ())
        index_strides = tuple(0 if k == d else st for k, st in enumerate(_elements(order.strides, order)))
        order = order.transpose(_kernel_loop_axes(ishape, d, operands + (index_strides,)))
    v = device_index.first_out_of_bounds(order, 0, size - 1, checked=not bounds)  # a backward's: forward checked
    if v is not None:
        raise RuntimeError(f"index {v} is out of bounds for dimension {d} with size {size}")


def _elements(strides, a):
    return tuple(st // a.itemsize for st in strides)


def _kernel_loop_axes(shape, d, operands):
    """The axes of an index of `shape`, slowest first, in the order torch's CPU scatter/gather kernel reads it:
    a TensorIterator over the index's shape with `d` squashed orders the other dims by the operands' strides
    (the output's first) and coalesces the fastest ones; for each position of the outer dims the kernel loops
    over `d`, then over that fastest coalesced dim (over `d` innermost when `d` is the last dim)."""
    ndim = len(shape)
    sizes = [1 if k == d else n for k, n in enumerate(shape)]
    strides = [list(st) for st in operands]
    perm = dim_order([(sizes, st) for st in strides], sizes)  # TensorIterator's reorder_dimensions, fastest first
    # coalesce_dimensions: the fastest group of dims runs as one inner loop
    inner, group_size = [perm[0]], sizes[perm[0]]
    group_strides = [st[perm[0]] for st in strides]
    for k in perm[1:]:
        coalesces = sizes[k] == 1 or group_size == 1 or all(gs * group_size == st[k]
                                                            for gs, st in zip(group_strides, strides))
        if not coalesces:
            break
        if group_size == 1:
            group_strides = [st[k] for st in strides]
        inner.append(k)
        group_size *= sizes[k]
    slowest_first = perm[::-1]
    if d == ndim - 1:
        return tuple(k for k in slowest_first if k != d) + (d,)
    outer = tuple(k for k in slowest_first if k not in inner and k != d)
    return outer + (d,) + tuple(k for k in slowest_first if k in inner and k != d)


def _leading(data, shape):
    return data[tuple(slice(0, s) for s in shape)]


def _gather_backward(node, g):
    return (scatter_into_zeros(node.input_shape(0), node.saved("dim"), node.saved("index"), g), None)


def gather(t, dim, index, sparse_grad=False):
    return _gather(t, dim, index, True)


def _backward_gather(g, dim, index):
    return _gather(g, dim, index, False)


def long_index(index):
    """An int32 index tensor (torch takes those too) as the int64 one the kernels read."""
    if isinstance(index, TensorBase) and index._dtype is dtypes.int32:
        return TensorBase._make(dispatch.asarray(index._data, np.int64), dtypes.int64)
    return index


def _one_d(x):
    """A 0-d tensor as one of shape (1,), sharing its memory: torch's gather and scatter read a 0-d tensor as one
    dim of size 1 (ensure_nonempty_dim / ensure_nonempty_size); others as they are."""
    if isinstance(x, TensorBase) and x._data.ndim == 0:
        return TensorBase._make(x._data.reshape(1), x._dtype)
    return x


def _gather(t, dim, index, bounds):
    index = long_index(index)
    d = wrap_dim(dim, t._data.ndim)
    t1, index1 = _one_d(t), _one_d(index)
    _check_index("gather", t1, d, index1, self_word="input")
    _check_index_bounds("gather", t1, d, index1, bounds=bounds)
    # torch allows an index smaller than the input in every dim; the result has the index's shape
    data = _leading(t1._data, tuple(s if k != d else None for k, s in enumerate(index1._data.shape)))
    out = TensorBase._make(device_index.take_along_axis(data, index1._data, d).reshape(index._data.shape), t._dtype)
    # torch saves self (a write to it makes backward raise the version error)
    record("GatherBackward0", _gather_backward, [t, None], [out], {"dim": d, "index": index, "self": t})
    return out


def _scatter_add_backward(node, g):
    return (_backward_gather(g, node.saved("dim"), node.saved("index")),)


def scatter_into_zeros(shape, dim, index, src):
    """zeros(shape).scatter_add(dim, index, src): repeated indices add up."""
    data = dispatch.zeros(tuple(shape) or (1,), src._dtype.np, src._data)
    index1, src1 = _one_d(index), _one_d(src)
    device_index.scatter_along_axis(data, index1._data, dim, _leading(src1._data, index1._data.shape), True)
    out = TensorBase._make(data.reshape(shape), src._dtype)
    record("ScatterAddBackward0", _scatter_add_backward, [src], [out], {"dim": dim, "index": index})
    return out


def _scatter(op, t, dim, index, src, add, bounds=True, target=None):
    """`target`: the tensor scatter_/scatter_add_ writes, whose memory index and src must not share."""
    index = long_index(index)
    d = wrap_dim(dim, t._data.ndim)
    is_tensor = isinstance(src, TensorBase)
    if add and not is_tensor:
        raise TypeError(f"scatter_add(): argument 'src' (position 3) must be Tensor, not {type(src).__name__}")
    t1, index1, src1 = _one_d(t), _one_d(index), _one_d(src) if is_tensor else None
    _check_index(op, t1, d, index1, src1)
    if target is None:
        _check_index_bounds(op, t1, d, index1, src1, bounds)
    if not is_tensor and index1._data.size:  # NaN or an infinity into an integer tensor, if the kernel runs
        src = dtypes.check_scalar_fits(src, t._dtype)
    if target is not None:  # in place: torch refuses any memory shared with index or src after the shape checks,
        target._check_overlap((index, src), full=True)  # before the kernel's bounds check
        _check_index_bounds(op, t1, d, index1, src1, bounds, into_self=True)
    data = t1._data.copy()
    values = _leading(src1._data, index1._data.shape) if is_tensor else\
        dispatch.full((), np.asarray(src if index1._data.size else 0, data.dtype), data.dtype, data)
    device_index.scatter_along_axis(data, index1._data, d, values, add)
    out = TensorBase._make(data.reshape(t._data.shape), t._dtype)
    name = "ScatterAddBackward0" if add else ("ScatterBackward0" if is_tensor else "ScatterBackward1")
    record(name, _scatter_backward, [t, src if is_tensor else None], [out], {"dim": d, "index": index, "add": add})
    return out


def _scatter_backward(node, g):
    d, index = node.saved("dim"), node.saved("index")
    grad_self = grad_src = None
    if node.next_functions[0][0] is not None:
        grad_self = g if node.saved("add") else\
            _scatter("scatter", g, d, index, 0, False, False)
    if node.input_meta[1] is not None and node.next_functions[1][0] is not None:
        grad_src = _backward_gather(g, d, index)
        shape, got = node.input_shape(1), grad_src._data.shape
        if got != shape:  # src larger than index: torch's engine takes the index-shaped gradient only if src
            if len(shape) > len(got) or any(s not in (1, n) for s, n in zip(shape[::-1], got[::-1])):  # expands to it
                raise RuntimeError(f"Function {node.name()} returned an invalid gradient at index 1 - got {list(got)} "
                                   f"but expected shape compatible with {list(shape)}")
            grad_src = grad_src._sum_to(shape)
    return grad_self, grad_src


def scatter(t, dim, index, src=None, value=None, reduce=None):
    if reduce is not None:
        raise NotImplementedError("scatter(reduce=...) is not supported; use scatter_add")
    return _scatter("scatter", t, dim, index, value if src is None else src, False)


def scatter_add(t, dim, index, src):
    return _scatter("scatter_add", t, dim, index, src, True)


def scatter_inplace(t, dim, index, src=None, value=None, reduce=None):
    """scatter's result for scatter_ (Tensor._inplace writes it), with the in-place op's overlap checks."""
    if reduce is not None:
        raise NotImplementedError("scatter(reduce=...) is not supported; use scatter_add")
    return _scatter("scatter", t, dim, index, value if src is None else src, False, target=t)


def scatter_add_inplace(t, dim, index, src):
    return _scatter("scatter_add", t, dim, index, src, True, target=t)


def take_along_dim(t, indices, dim=None):
    if dim is not None and t._data.ndim == 0:
        wrap_dim(dim, 0)  # out of range first, as torch checks
        raise IndexError("Dimension specified as 0 but tensor has no dimensions")
    if indices._dtype is not dtypes.int64:
        raise RuntimeError("torch.take_along_dim(): dtype of indices should be Long but got "
                           f"{indices._dtype.word}")
    if dim is None:
        return gather(t.reshape(-1), 0, indices.reshape(-1))
    if t._data.ndim != indices._data.ndim:
        raise RuntimeError("torch.take_along_dim(): input and indices should have the same number of dimensions, but "
                           f"got {t._data.ndim} dimensions for input, and {indices._data.ndim} dimensions for indices")
    d = wrap_dim(dim, t._data.ndim)
    sizes = list(t._data.shape)
    sizes[d] = indices._data.shape[d]
    shape = list(broadcast_shapes(tuple(sizes), indices._data.shape))
    if t._data.shape[d] == 0 and math.prod(shape):  # torch's CPU kernel wraps indices by a size of 0
        raise RuntimeError("ZeroDivisionError")
    # torch broadcasts both with broadcast_to, a view even of the same shape: gather saves that view of t (a
    # version error after an in-place write to t names its regenerated grad_fn, AsStrided)
    indices = expand(indices, *shape)
    shape[d] = t._data.shape[d]
    return gather(expand(t, *shape), d, indices)



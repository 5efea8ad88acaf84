"""Joining and splitting: cat, stack, split, chunk, unbind, with backward."""

import numbers

import numpy as np

from .._core import dtypes
from ..kernels import dispatch
from ..kernels.dispatch import join as dispatch_join
from ..node import record
from ..tensor_base import TensorBase, check_same_device
from .._core.shapes import wrap_dim
from .._core.state import STATE
from .shape import eager_first_order, view_of
from .creation import zeros

__all__ = ["cat", "chunk", "concat", "concatenate", "split", "stack", "unbind"]


def _tensor_list(op, tensors):
    if not isinstance(tensors, (list, tuple)):
        raise TypeError(f"{op}(): argument 'tensors' (position 1) must be tuple of Tensors, not "
                        f"{type(tensors).__name__}")
    for i, t in enumerate(tensors):
        if not isinstance(t, TensorBase):
            raise TypeError(f"expected Tensor as element {i} in argument 0, but got {type(t).__name__}")
    return list(tensors)


def _result_dtype(tensors):
    return dtypes.result_type([(t._dtype, t._data.ndim) for t in tensors], [])


def _cat_backward(node, g):
    d, grads, offset = node.saved("dim"), [], 0
    for (shape, dtype), (child, _) in zip(node.input_meta, node.next_functions):
        if shape == (0,) and g._data.ndim != 1:  # a skipped legacy empty tensor
            grads.append(g.new_zeros(0).to(dtype) if child is not None else None)  # on g's device
            continue
        grads.append(g.narrow(d, offset, shape[d]).to(dtype) if child is not None else None)
        offset += shape[d]
    return grads


def cat(tensors, dim=0):
    tensors = _tensor_list("cat", tensors)
    if not tensors:
        raise ValueError("torch.cat(): expected a non-empty list of Tensors")
    for i, t in enumerate(tensors):
        if t._data.ndim == 0:
            raise RuntimeError(f"zero-dimensional tensor (at position {i}) cannot be concatenated")
    check_same_device(*tensors)
    # torch still skips 1-D empty tensors, whatever the others' shapes (legacy behaviour)
    if isinstance(dim, bool) or not isinstance(dim, numbers.Integral):
        raise TypeError(f"cat(): argument 'dim' (position 2) must be int, not {type(dim).__name__}")
    kept = [(i, t) for i, t in enumerate(tensors) if t._data.shape != (0,)]
    if kept:
        d = wrap_dim(dim, kept[0][1]._data.ndim)
    else:  # only legacy empty tensors: torch accepts any dim (it wraps against a tensor it keeps)
        kept, d = [(0, tensors[0])], 0
    ref = kept[0][1]._data.shape
    for i, t in kept:
        shape = t._data.shape
        if len(shape) != len(ref):
            raise RuntimeError(f"Tensors must have same number of dimensions: got {len(ref)} and {len(shape)}")
        for k, (a, b) in enumerate(zip(ref, shape)):
            if k != d and a != b:
                raise RuntimeError(f"Sizes of tensors must match except in dimension {d}. Expected size {a} but got "
                                   f"size {b} for tensor number {i} in the list.")
    dtype = _result_dtype(tensors)
    out = TensorBase._make(dispatch.cat([t._data for _, t in kept], d, dtype.np), dtype)
    record("CatBackward0", _cat_backward, tensors, [out], {"dim": d})
    return out


concat = concatenate = cat


def _stack_backward(node, g):
    d = node.saved("dim")
    return [g.select(d, i).to(dtype) if child is not None else None
            for i, ((_, dtype), (child, _)) in enumerate(zip(node.input_meta, node.next_functions))]


def stack(tensors, dim=0):
    tensors = _tensor_list("stack", tensors)
    if not tensors:
        raise RuntimeError("stack expects a non-empty TensorList")
    ref = tensors[0]._data.shape
    d = wrap_dim(dim, len(ref) + 1)
    for i, t in enumerate(tensors):
        if t._data.shape != ref:
            raise RuntimeError(f"stack expects each tensor to be equal size, but got {list(ref)} at entry 0 and "
                               f"{list(t._data.shape)} at entry {i}")
    check_same_device(*tensors)
    dtype = _result_dtype(tensors)
    out = TensorBase._make(dispatch.stack([t._data for t in tensors], d, dtype.np), dtype)
    record("StackBackward0", _stack_backward, tensors, [out], {"dim": d})
    return out


def _pieces_backward(join):
    """Backward of an op returning pieces of its input: join the pieces' gradients, zeros for unused ones."""
    def backward(node, *grads):
        d, shapes = node.saved("dim"), node.saved("shapes")
        dtype = node.input_meta[0][1]
        if join is cat and len(grads) == len(shapes) and _host_pieces(grads, dtype):
            return (TensorBase._make(dispatch_join.cat_pieces([g._data for g in grads], d, dtype.np), dtype),)
        device = next((g.device for g in grads if g is not None), None)  # the pieces' device
        grads = [g if g is not None else zeros(*s, dtype=dtype, device=device)
                 for g, s in zip(list(grads) + [None] * (len(shapes) - len(grads)), shapes)]
        return (join(grads, d),)
    return backward


def _host_pieces(grads, dtype):
    """Whether an eager first-order backward (no node to record, no forward AD or trace to serve: a replay keeps
    concatenate's prepared call) joins host gradients, each present and of the input's dtype."""
    if not eager_first_order():
        return False
    for g in grads:
        if g is None or g._dtype is not dtype or g._data.__class__ is not np.ndarray:
            return False
    return True


_split_backward = _pieces_backward(cat)
_unbind_backward = _pieces_backward(stack)


def _split(t, d, sizes, name):
    outs, offset = [], 0
    for s in sizes:
        outs.append(view_of(t, t._data[(slice(None),) * d + (slice(offset, offset + s), Ellipsis)]))
        offset += s
    _mark_multi_output(outs, record(name, _split_backward, [t], outs,
                                    {"dim": d, "shapes": [o._data.shape for o in outs]}))
    return tuple(outs)


def _mark_multi_output(outs, node):
    """torch's views from a function with several view outputs, made in grad mode, refuse in-place writes: those
    that require grad always, the others when the write would make them require grad (TensorBase._check_inplace,
    Tensor._write)."""
    if STATE.grad_enabled:
        for o in outs:
            o._multi_output = "grad" if node is not None else "no grad"


def split(tensor, split_size_or_sections, dim=0):
    if isinstance(split_size_or_sections, (list, tuple)):
        return _split_with_sizes(tensor, [int(s) for s in split_size_or_sections], dim)
    size = int(split_size_or_sections)
    if tensor._data.ndim == 0:
        raise RuntimeError("split expects at least a 1-dimensional tensor")
    d = wrap_dim(dim, tensor._data.ndim)
    n = tensor._data.shape[d]
    if size < 0:
        raise RuntimeError(f"split expects split_size be non-negative, but got split_size={size}")
    if size == 0 and n != 0:
        raise RuntimeError(f"split_size can only be 0 if dimension size is 0, but got dimension size of {n}")
    count = max(-(-n // size), 1) if size else 1
    return _split(tensor, d, [size] * (count - 1) + [n - size * (count - 1)], "SplitBackward0")


def _split_with_sizes(t, sizes, dim):
    if t._data.ndim == 0:  # torch's message names split for both
        raise RuntimeError("split expects at least a 1-dimensional tensor")
    d = wrap_dim(dim, t._data.ndim)
    n = t._data.shape[d]
    if any(s < 0 for s in sizes):
        raise RuntimeError(f"split_with_sizes expects split_sizes have only non-negative entries, but got "
                           f"split_sizes={sizes}")
    if sum(sizes) != n:
        raise RuntimeError(f"split_with_sizes expects split_sizes to sum exactly to {n} (input tensor's size at "
                           f"dimension {dim}), but got split_sizes={sizes}")  # the dim as given
    return _split(t, d, sizes, "SplitWithSizesBackward0")


def chunk(input, chunks, dim=0):
    if input._data.ndim == 0:
        raise RuntimeError("chunk expects at least a 1-dimensional tensor")
    if chunks <= 0:
        raise RuntimeError(f"chunk expects `chunks` to be greater than 0, got: {chunks}")
    d = wrap_dim(dim, input._data.ndim)
    n = input._data.shape[d]
    if n == 0:  # split(0) would give one piece; torch keeps the number of chunks
        return _split_with_sizes(input, [0] * chunks, d)
    return split(input, -(-n // chunks), d)


def unbind(input, dim=0):
    d = wrap_dim(dim, input._data.ndim)  # out of range first, as torch checks
    if input._data.ndim == 0:
        raise IndexError("Dimension specified as 0 but tensor has no dimensions")
    outs = [view_of(input, input._data[(slice(None),) * d + (i, Ellipsis)]) for i in range(input._data.shape[d])]
    _mark_multi_output(outs, record("UnbindBackward0", _unbind_backward, [input], outs,
                                    {"dim": d, "shapes": [o._data.shape for o in outs]}))
    return tuple(outs)



def split_with_sizes(input, split_sizes, dim=0):
    return _split_with_sizes(input, list(split_sizes), dim)

"""index_reduce (prod, mean, amax, amin): scatter_reduce along one dim with the index repeated across the others,
recorded as torch's IndexReduceBackward0 (whose formula is scatter_reduce's with index_select for gather)."""
import numpy as np

from .._core import dtypes
from .._core.shapes import wrap_dim
from .._core.warn import warn_once
from ..kernels import dispatch
from ..node import record
from ..tensor_base import TensorBase
from .scatter import _check_source, _check_vector_index, _scatter_reduce_array, _scatter_reduce_backward

__all__ = ["index_reduce"]

BETA = "index_reduce() is in beta and the API may change at any time."


def index_reduce(input, dim, index, source, reduce, *, include_self=True):
    warn_once(BETA)
    if reduce not in ("prod", "mean", "amax", "amin"):
        raise RuntimeError(f"index_reduce(): Expected reduce to be one of prod, mean, amax or amin but got {reduce}.")
    _check_vector_index("index_reduce_", index)
    d = wrap_dim(dim, len(input._shape))
    if not source._shape and (input._shape or index.numel() != 1):  # (a 0-d self takes a 0-d source, once)
        raise IndexError(f"Dimension specified as {d} but tensor has no dimensions")
    if not input._shape and source._shape:
        raise RuntimeError(f"source tensor shape must match self tensor shape, excluding the specified dimension. Got "
                           f"self.shape = [] source.shape = {list(source._shape)}")
    _check_source("index_reduce_", input, d, index, source)
    if input._dtype is dtypes.bool_:
        kernel = "index_func_" if include_self else "index_reduce_func_exclude_input_init"
        raise NotImplementedError(f"\"{kernel}\" not implemented for 'Bool'")
    dispatch.require_host("index_reduce", input._data, index._data, source._data)
    size = input._shape[d] if input._shape else 1
    positions = index._data.reshape(-1)
    if positions.size and (positions.min() < 0 or positions.max() >= size):
        if input.numel() == 0 and len(input._shape) > 1:  # torch selects the slice of each index first
            bad = positions[(positions < 0) | (positions >= size)][0]
            raise IndexError(f"select(): index {bad} out of range for tensor of size {list(input._shape)} at "
                             f"dimension {d}")
        raise IndexError("index out of range in self")
    data, values = input._data.reshape(-1) if not input._shape else input._data, source._data  # (0-d: one element)
    if values.ndim != data.ndim:
        values = values.reshape(data.shape[:d] + (positions.size,) + data.shape[d + 1:])
    along = [1] * values.ndim
    along[d] = positions.size
    spread = np.ascontiguousarray(np.broadcast_to(positions.reshape(along), values.shape))
    out = dispatch.numpy_op(_scatter_reduce_array, data, spread, d, values, reduce, include_self)
    out = TensorBase._make(out.reshape(input._shape), input._dtype)
    spread_index = TensorBase._make(spread.reshape(source._shape), dtypes.int64)
    record("IndexReduceBackward0", _scatter_reduce_backward, [input, source], [out],
           {"self": input, "src": source, "index": spread_index, "dim": d, "reduce": reduce,
            "include_self": include_self}, {"result": 0})
    return out

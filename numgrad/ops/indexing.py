"""Indexing ops: gather/scatter along a dim, with backward."""
import numpy as np

from ..autograd.node import record
from .shape import wrap_dim

__all__ = ["gather"]


def _gather_backward(node, g):
    return (scatter_into_zeros(node.input_shape(0), node.saved("dim"), node.saved("index"), g), None)


def gather(t, dim, index):
    from ..tensor import Tensor
    d = wrap_dim(dim, t._data.ndim)
    out = Tensor._make(np.take_along_axis(t._data, index._data, axis=d), t._dtype)
    record("GatherBackward0", _gather_backward, [t, None], [out], {"dim": d, "index": index})
    return out


def _scatter_add_backward(node, g):
    return (g.gather(node.saved("dim"), node.saved("index")),)


def scatter_into_zeros(shape, dim, index, src):
    """zeros(shape).scatter_add(dim, index, src): repeated indices add up."""
    from ..tensor import Tensor
    data = np.zeros(shape, src._dtype.np)
    idx = np.indices(index._data.shape, sparse=True)
    idx = list(np.broadcast_arrays(*idx))
    idx[dim] = index._data
    np.add.at(data, tuple(idx), src._data[tuple(slice(0, s) for s in index._data.shape)])
    out = Tensor._make(data, src._dtype)
    record("ScatterAddBackward0", _scatter_add_backward, [src], [out], {"dim": dim, "index": index})
    return out

"""Host order statistics that must tie-break as torch's CPU kernels do (topk, kthvalue, mode): the rows along one
axis as keys (float64 for floating types, int64 otherwise: both order exactly as the input), handed to
cpu/std_order.py, and the positions it picks laid back along the axis."""
import math

import numpy as np

from ..arrays import is_float, numpy_floats
from ..cpu import std_order


def _rows(data, axis):
    moved = np.moveaxis(data, axis, -1)
    keys = numpy_floats(moved) if is_float(moved.dtype) else moved
    keys = np.ascontiguousarray(keys, np.float64 if is_float(moved.dtype) else np.int64)
    return keys.reshape(math.prod(moved.shape[:-1]), moved.shape[-1]), moved.shape[:-1]


def topk_positions(data, axis, k, largest, sort):
    """The positions topk selects along `axis`, in torch's order (its heap or nth_element order when unsorted)."""
    keys, lead = _rows(data, axis)
    return np.moveaxis(std_order.topk_rows(keys, k, largest, sort).reshape(lead + (k,)), -1, axis)


def kthvalue_positions(data, axis, k):
    keys, lead = _rows(data, axis)
    return std_order.kthvalue_rows(keys, k).reshape(lead)


def mode_positions(data, axis):
    keys, lead = _rows(data, axis)
    return std_order.mode_rows(keys).reshape(lead)

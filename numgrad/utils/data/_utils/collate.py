"""torch.utils.data._utils.collate: default_collate (samples -> a batch of the same structure) and
default_convert (NumPy values -> tensors, for batch_size=None), and the type -> collate function map."""
import collections.abc
import copy
import re

import numpy as np

from ....ops.creation import as_tensor, tensor
from ....ops.join import stack
from ....tensor_base import TensorBase
from ...._core import dtypes

np_str_obj_array_pattern = re.compile(r"[SaUO]")
default_collate_err_msg_format = ("default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; "
                                  "found {}")


def _is_numpy_value(data):
    t = type(data)
    return t.__module__ == "numpy" and t.__name__ not in ("str_", "string_")


def default_convert(data):
    """NumPy arrays and scalars inside `data` become tensors (string and object arrays stay); the structure
    (mappings, namedtuples, sequences) is kept, a tuple becoming a list as in torch."""
    if isinstance(data, TensorBase):
        return data
    if _is_numpy_value(data):
        if isinstance(data, np.ndarray) and np_str_obj_array_pattern.search(data.dtype.str) is not None:
            return data
        return as_tensor(data)
    if isinstance(data, collections.abc.Mapping):
        return _rebuild_mapping(data, {key: default_convert(data[key]) for key in data})
    if isinstance(data, tuple) and hasattr(data, "_fields"):  # namedtuple
        return type(data)(*(default_convert(d) for d in data))
    if isinstance(data, tuple):
        return [default_convert(d) for d in data]
    if isinstance(data, collections.abc.Sequence) and not isinstance(data, (str, bytes)):
        return _rebuild_sequence(data, [default_convert(d) for d in data])
    return data


def _rebuild_mapping(like, values):
    """A mapping of `like`'s type holding `values` (a plain dict when that type cannot be built so)."""
    try:
        if isinstance(like, collections.abc.MutableMapping):
            clone = copy.copy(like)
            clone.update(values)
            return clone
        return type(like)(values)
    except TypeError:
        return values


def _rebuild_sequence(like, items):
    try:
        if isinstance(like, collections.abc.MutableSequence):
            clone = copy.copy(like)
            for i, item in enumerate(items):
                clone[i] = item
            return clone
        return type(like)(items)
    except TypeError:
        return items


def collate(batch, *, collate_fn_map=None):
    """Collates a list of samples by the type of the first: a function of `collate_fn_map` (exact type
    first, then isinstance), else mappings, namedtuples and sequences element-wise."""
    elem = batch[0]
    elem_type = type(elem)
    if collate_fn_map is not None:
        if elem_type in collate_fn_map:
            return collate_fn_map[elem_type](batch, collate_fn_map=collate_fn_map)
        for collate_type in collate_fn_map:
            if isinstance(elem, collate_type):
                return collate_fn_map[collate_type](batch, collate_fn_map=collate_fn_map)
    if isinstance(elem, collections.abc.Mapping):
        return _rebuild_mapping(elem, {key: collate([d[key] for d in batch], collate_fn_map=collate_fn_map)
                                       for key in elem})
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):  # namedtuple
        return elem_type(*(collate(samples, collate_fn_map=collate_fn_map) for samples in zip(*batch)))
    if isinstance(elem, collections.abc.Sequence):
        elem_size = len(elem)
        if not all(len(e) == elem_size for e in batch):
            raise RuntimeError("each element in list of batch should be of equal size")
        columns = [collate(samples, collate_fn_map=collate_fn_map) for samples in zip(*batch)]
        return columns if isinstance(elem, tuple) else _rebuild_sequence(elem, columns)
    raise TypeError(default_collate_err_msg_format.format(elem_type))


def collate_tensor_fn(batch, *, collate_fn_map=None):
    return stack(batch, 0)


def collate_numpy_array_fn(batch, *, collate_fn_map=None):
    elem = batch[0]
    if np_str_obj_array_pattern.search(elem.dtype.str) is not None:
        raise TypeError(default_collate_err_msg_format.format(elem.dtype))
    return collate([as_tensor(b) for b in batch], collate_fn_map=collate_fn_map)


def collate_numpy_scalar_fn(batch, *, collate_fn_map=None):
    return as_tensor(batch)


def collate_float_fn(batch, *, collate_fn_map=None):
    return tensor(batch, dtype=dtypes.float64)


def collate_int_fn(batch, *, collate_fn_map=None):
    return tensor(batch)


def collate_str_fn(batch, *, collate_fn_map=None):
    return batch


default_collate_fn_map = {
    TensorBase: collate_tensor_fn,
    np.ndarray: collate_numpy_array_fn,
    (np.bool_, np.number, np.object_): collate_numpy_scalar_fn,
    float: collate_float_fn,
    int: collate_int_fn,
    str: collate_str_fn,
    bytes: collate_str_fn,
}


def default_collate(batch):
    """Samples -> one batch of the same structure: tensors and NumPy arrays stacked along a new first
    dimension, Python ints -> an int64 tensor, floats -> float64, strings kept as a list, and mappings,
    namedtuples, tuples and lists collated field by field (a tuple becomes a list, as in torch)."""
    return collate(batch, collate_fn_map=default_collate_fn_map)

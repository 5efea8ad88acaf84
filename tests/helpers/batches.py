"""Batches of numgrad's and torch's DataLoaders as comparable data: the structure's types (list, tuple, dict,
namedtuple), and for each tensor its dtype, shape and values."""
import collections.abc

import numpy as np


def structure(x):
    if hasattr(x, "dtype") and hasattr(x, "tolist") and not isinstance(x, np.ndarray):
        return "tensor", str(x.dtype).split(".")[-1], tuple(x.shape), x.tolist()
    if isinstance(x, np.ndarray):
        return "ndarray", str(x.dtype), x.tolist()
    if isinstance(x, tuple) and hasattr(x, "_fields"):
        return type(x).__name__, tuple(structure(v) for v in x)
    if isinstance(x, collections.abc.Mapping):
        return type(x).__name__, {k: structure(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return type(x).__name__, [structure(v) for v in x]
    return type(x).__name__, x


def epoch(loader):
    return [structure(b) for b in loader]

"""numgrad.save / numgrad.load: tensors and (nested) state dicts in a numpy .npz archive.

Format (version 1): an uncompressed npz holding one array per tensor, named "t0", "t1", ..., and an array
"__numgrad__" whose single string is JSON: {"format": "numgrad", "version": 1, "object": ...}. In "object"
a tensor is {"tensor": "t0", "dtype": "float32", "requires_grad": false, "parameter": false}; a dict is
{"dict": [[key, value], ...]} (keys keep their int or str type), a list {"list": [...]}, a tuple
{"tuple": [...]}, and None, bools, numbers and strings stand for themselves. Nothing is pickled, so loading
a file runs no code from it.
"""
import collections
import json
import os
import zipfile

import numpy as np

from ._core import dtypes
from .backend import dispatch
from .tensor import Tensor
from .nn.parameter import Parameter
from . import cuda

FORMAT, VERSION, META = "numgrad", 1, "__numgrad__"


def _encode(obj, arrays):
    if isinstance(obj, Tensor):
        name = f"t{len(arrays)}"
        arrays[name] = obj._host  # a CUDA tensor is copied to the host, as torch.save does
        entry = {"tensor": name, "dtype": obj._dtype.name, "requires_grad": obj._requires_grad,
                 "parameter": isinstance(obj, Parameter)}
        if obj.is_cuda:
            entry["device"] = str(obj.device)
        return entry
    if isinstance(obj, dict):
        for key in obj:
            if not isinstance(key, (str, int)):
                raise TypeError(f"numgrad.save: dict keys must be str or int, got {type(key).__name__}")
        return {"dict": [[key, _encode(value, arrays)] for key, value in obj.items()]}
    if isinstance(obj, tuple):
        return {"tuple": [_encode(v, arrays) for v in obj]}
    if isinstance(obj, list):
        return {"list": [_encode(v, arrays) for v in obj]}
    if obj is None or isinstance(obj, (bool, int, float, str)):
        return obj
    if isinstance(obj, np.generic):
        return obj.item()
    raise TypeError(f"numgrad.save cannot store an object of type {type(obj).__name__} (tensors, dicts, lists, "
                    "tuples, numbers, strings and None are supported)")


def save(obj, f):
    """Writes `obj` (a tensor, or dicts/lists/tuples of tensors and plain values, such as a state_dict) to `f`,
    a path or a binary file object."""
    arrays = {}
    meta = {"format": FORMAT, "version": VERSION, "object": _encode(obj, arrays)}
    arrays[META] = np.array(json.dumps(meta))
    if isinstance(f, (str, os.PathLike)):
        with open(f, "wb") as fh:  # np.savez would append ".npz" to a path without it
            np.savez(fh, **arrays)
    else:
        np.savez(f, **arrays)


def _decode(obj, arrays, where, map_location=None):
    if isinstance(obj, dict):
        if "tensor" in obj:
            name = obj["tensor"]
            if name not in arrays:
                raise RuntimeError(f"numgrad.load: {where}: the file has no array '{name}' that its index names; "
                                   "the file is corrupt or was not written by numgrad.save")
            data, dtype = arrays[name], dtypes._by_name(obj["dtype"])
            if data.dtype != dtype.np:
                raise RuntimeError(f"numgrad.load: {where}: array '{name}' holds {data.dtype}, but the index says "
                                   f"{obj['dtype']}")
            cls = Parameter if obj.get("parameter") else Tensor
            device = map_location if map_location is not None else obj.get("device", "cpu")
            if str(device).startswith("cuda"):  # back where it was saved, as torch.load does
                if not cuda.is_available():
                    raise RuntimeError("Attempting to deserialize object on a CUDA device but "
                                       "torch.cuda.is_available() is False. If you are running on a CPU-only "
                                       "machine, please use torch.load with map_location=torch.device('cpu') "
                                       "to map your storages to the CPU.")
                data = dispatch.from_host(data)
            return cls._make(data, dtype, bool(obj.get("requires_grad")))
        if "dict" in obj:
            return collections.OrderedDict((key, _decode(v, arrays, f"{where}[{key!r}]", map_location))
                                           for key, v in obj["dict"])
        if "tuple" in obj:
            return tuple(_decode(v, arrays, f"{where}[{i}]", map_location) for i, v in enumerate(obj["tuple"]))
        if "list" in obj:
            return [_decode(v, arrays, f"{where}[{i}]", map_location) for i, v in enumerate(obj["list"])]
        raise RuntimeError(f"numgrad.load: {where}: unknown entry {sorted(obj)} in the file's index")
    return obj


def load(f, map_location=None, weights_only=True):
    """Reads what numgrad.save wrote. A file that is not such an archive, is truncated or corrupt, or whose
    index and arrays disagree raises RuntimeError saying so."""
    try:
        with np.load(f, allow_pickle=False) as archive:
            if META not in archive.files:
                raise RuntimeError("numgrad.load: not a numgrad file (an npz archive without the '__numgrad__' "
                                   "index)")
            meta = json.loads(str(archive[META]))
            arrays = {name: archive[name] for name in archive.files if name != META}
    except (zipfile.BadZipFile, EOFError, OSError, ValueError, KeyError) as exc:
        raise RuntimeError(f"numgrad.load: cannot read {f!r} as a numgrad file (a numpy .npz archive): "
                           f"{type(exc).__name__}: {exc}") from exc
    if not isinstance(meta, dict) or meta.get("format") != FORMAT:
        raise RuntimeError("numgrad.load: not a numgrad file (its index does not say format 'numgrad')")
    if meta.get("version") != VERSION:
        raise RuntimeError(f"numgrad.load: file format version {meta.get('version')} is not supported (this "
                           f"numgrad reads version {VERSION})")
    if map_location is not None and not isinstance(map_location, str):
        map_location = str(map_location)  # a numgrad.device
    return _decode(meta["object"], arrays, "object", map_location)

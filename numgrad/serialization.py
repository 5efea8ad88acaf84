"""numgrad.save / numgrad.load: tensors and (nested) state dicts in a numpy .npz archive.

Format (version 2): an uncompressed npz holding one flat array per storage, named "s0", "s1", ..., and an
array "__numgrad__" whose single string is JSON: {"format": "numgrad", "version": 2, "object": ...}. In
"object" a tensor is {"tensor": "t0", "storage": "s0", "offset": 0, "shape": [2, 3], "stride": [3, 1],
"dtype": "float32", "requires_grad": false, "parameter": false}: tensors sharing memory (tied weights, a
view and its base) name one storage and load sharing it again, and a tensor saved twice is one name and
loads as one object, as in torch. A dict is {"dict": [[key, value], ...]} (keys keep their int or str type;
"odict" for an OrderedDict), a list {"list": [...]}, a tuple {"tuple": [...]}, and None, bools, numbers and
strings stand for themselves. Version 1 (one array per tensor, named by "tensor", no "storage") still loads.
Nothing is pickled, so loading a file runs no code from it.

Loading trusts nothing in the file:
- a path that does not exist, or is a directory, raises what open() raises (as torch.load);
- anything else wrong with the file (not a zip archive, truncated, a bit flipped, compressed or encrypted
  members, an npy header that is not one of the four dtypes or declares more bytes than the member holds, an
  index with the wrong types, nested too deeply, or naming an array the archive lacks, one declaring a format
  version this numgrad does not read, a key twice, or fields no version it reads has) raises RuntimeError;
- no array is allocated before its header's shape and dtype are checked against the member's size in the
  archive, and the members read together hold no more bytes than the file, so a small crafted file cannot
  make load allocate much more than its own size;
- arrays are read as raw bytes into arrays of the four dtypes: there is no pickle, no object dtype, and no
  name in the file is ever imported or looked up.
map_location is applied as torch.load applies it, tensor by tensor, with torch's errors.
"""
import collections
import contextlib
import io
import json
import math
import os
import re
import zipfile

import numpy as np

from ._core import dtypes
from ._core.device import device as _device
from .kernels import dispatch
from .tensor import Tensor
from .nn.parameter import Parameter
from . import cuda

FORMAT, VERSION, META = "numgrad", 2, "__numgrad__"
READABLE_VERSIONS = (1, 2)
_READABLE = ", ".join(map(str, READABLE_VERSIONS))  # (in load's errors)
MAX_DEPTH = 100  # levels of nested dicts/lists/tuples that save writes and load reads
_MAX_HEADER = 10000  # characters of an npy header, np.load's own bound
_CHUNK = 1 << 20  # bytes read from a member at a time, straight into the array
_TENSOR_KEYS = {"tensor", "dtype", "requires_grad", "parameter", "device", "storage", "offset", "shape", "stride"}
_TO_CPU = ("If you are running on a CPU-only machine, please use torch.load with map_location=torch.device('cpu') "
           "to map your storages to the CPU.")
# torch's backends after cpu, cuda, mps and meta, in its registry's order: (name, whether torch has its module)
_OTHER_BACKENDS = (("privateuseone", False), ("hpu", False), ("xpu", True), ("mtia", True))


class _Writer:
    """What save has written so far: tensors by object (one name each) and storages by memory (one array
    each), so that tensors sharing memory load sharing it again."""

    def __init__(self):
        self.arrays, self.tensor_entries, self.storages = {}, {}, {}

    def tensor(self, obj):
        entry = self.tensor_entries.get(id(obj))
        if entry is not None:
            return entry[1]
        entry = {"tensor": f"t{len(self.tensor_entries)}", "dtype": obj._dtype.name,
                 "requires_grad": obj._requires_grad, "parameter": isinstance(obj, Parameter)}
        entry.update(self._storage_of(obj))
        if obj.is_cuda:
            entry["device"] = str(obj.device)
        self.tensor_entries[id(obj)] = (obj, entry)  # the object is kept so that its id stays its own
        return entry

    def _storage_of(self, obj):
        """The storage entry keys of tensor `obj`: its whole host storage, written once, and where in it the
        tensor lies. A GPU tensor, or a layout this cannot describe, gets a storage of its own."""
        arr = obj._data
        root = dispatch.storage(arr) if dispatch.is_host(arr) else None
        if root is not None and root.dtype == arr.dtype and root.flags.c_contiguous and \
                all(st >= 0 and st % arr.itemsize == 0 for st in arr.strides):
            key = (id(root), arr.dtype.str)
            name = self.storages.get(key, (None,))[0]
            if name is None:
                name = f"s{len(self.storages)}"
                self.storages[key] = (name, root)  # kept: its id stays its own while saving
                self.arrays[name] = _npy_storable(root.reshape(-1))
            offset = dispatch.element_offset(arr, root) if arr.size else 0
            return {"storage": name, "offset": int(offset), "shape": list(arr.shape),
                    "stride": [st // arr.itemsize for st in arr.strides]}
        name = f"s{len(self.storages)}"
        self.storages[(name,)] = (name, None)
        flat = np.ascontiguousarray(obj._host).reshape(-1)  # a CUDA tensor is copied to the host, as torch's
        self.arrays[name] = _npy_storable(flat)
        shape = list(obj.shape)
        stride = [math.prod(shape[i + 1:]) for i in range(len(shape))]
        return {"storage": name, "offset": 0, "shape": shape, "stride": stride}


def _npy_storable(flat):
    """bfloat16 has no .npy type: its bits are stored as uint16 (the index names the dtype)."""
    return flat.view(np.uint16) if flat.dtype == dtypes.bfloat16.np else flat


def _encode(obj, writer, depth=0):
    if isinstance(obj, Tensor):
        return writer.tensor(obj)
    if isinstance(obj, (dict, list, tuple)) and depth >= MAX_DEPTH:
        raise ValueError(f"numgrad.save: the object nests dicts, lists and tuples more than {MAX_DEPTH} levels "
                         "deep, more than numgrad.load reads")
    if isinstance(obj, dict):
        for key in obj:
            if not isinstance(key, (str, int)):
                raise TypeError(f"numgrad.save: dict keys must be str or int, got {type(key).__name__}")
        kind = "odict" if isinstance(obj, collections.OrderedDict) else "dict"
        return {kind: [[key, _encode(value, writer, depth + 1)] for key, value in obj.items()]}
    if isinstance(obj, tuple):
        return {"tuple": [_encode(v, writer, depth + 1) for v in obj]}
    if isinstance(obj, list):
        return {"list": [_encode(v, writer, depth + 1) for v in obj]}
    if obj is None or isinstance(obj, (bool, int, float, str)):
        return obj
    if isinstance(obj, np.generic):
        return obj.item()
    raise TypeError(f"numgrad.save cannot store an object of type {type(obj).__name__} (tensors, dicts, lists, "
                    "tuples, numbers, strings and None are supported)")


def save(obj, f):
    """Writes `obj` (a tensor, or dicts/lists/tuples of tensors and plain values, such as a state_dict) to `f`,
    a path or a binary file object."""
    writer = _Writer()
    meta = {"format": FORMAT, "version": VERSION, "object": _encode(obj, writer)}
    arrays = dict(writer.arrays)
    arrays[META] = np.array(json.dumps(meta))
    if isinstance(f, (str, os.PathLike)):
        with open(f, "wb") as fh:  # np.savez would append ".npz" to a path without it
            np.savez(fh, **arrays)
    else:
        np.savez(f, **arrays)


# ---- reading the archive: every failure is a RuntimeError ------------------------------------------------

def _fail(message):
    return RuntimeError(f"numgrad.load: {message}")


@contextlib.contextmanager
def _reading(source):
    """Turns whatever zipfile, numpy's npy header parser or json raise on a damaged file into RuntimeError."""
    try:
        yield
    except (RecursionError, NotImplementedError) as exc:  # RuntimeErrors, but not ours
        raise _fail(f"cannot read {source} as a numgrad file (a numpy .npz archive): {type(exc).__name__}: "
                    f"{exc}") from exc
    except RuntimeError:
        raise
    except zipfile.BadZipFile as exc:
        raise RuntimeError(f"PytorchStreamReader failed reading zip archive: {exc} (numgrad.load: cannot read "
                           f"{source} as a numgrad file, a numpy .npz archive)") from exc
    except Exception as exc:  # noqa: BLE001 - a damaged file can make the parsers raise almost anything
        raise _fail(f"cannot read {source} as a numgrad file (a numpy .npz archive): {type(exc).__name__}: "
                    f"{exc}") from exc


class _Archive:
    """The members of an npz archive, each read at most once and only after its header checks out; the
    members read hold at most as many bytes as the file."""

    def __init__(self, zf, size, source):
        self.zf, self.budget, self.source, self.arrays = zf, size, source, {}
        self.loaded = {}  # tensor name -> the tensor made for it

    def read(self, member, accept):
        """The array in `member`; `accept(shape, dtype)` returns why the header is refused, or None."""
        info = self.zf.getinfo(member)
        if info.compress_type != zipfile.ZIP_STORED:
            raise _fail(f"member '{member}' is compressed (method {info.compress_type}); numgrad files are "
                        "uncompressed archives")
        if info.flag_bits & 0x1:
            raise _fail(f"member '{member}' is encrypted")
        if info.file_size != info.compress_size or info.file_size > self.budget:
            raise _fail(f"member '{member}' declares {info.file_size} bytes ({info.compress_size} stored), more "
                        f"than the file holds ({self.budget} bytes left unread); the file is corrupt or crafted")
        self.budget -= info.file_size
        with self.zf.open(info) as fp:
            version = np.lib.format.read_magic(fp)
            if version == (1, 0):
                shape, fortran, dtype = np.lib.format.read_array_header_1_0(fp, max_header_size=_MAX_HEADER)
            elif version == (2, 0):
                shape, fortran, dtype = np.lib.format.read_array_header_2_0(fp, max_header_size=_MAX_HEADER)
            else:
                raise _fail(f"member '{member}' is npy format version {version[0]}.{version[1]}; numgrad files "
                            "hold versions 1.0 and 2.0")
            refused = accept(shape, dtype)
            if refused:
                raise _fail(f"member '{member}' {refused}")
            if any(n < 0 for n in shape):
                raise _fail(f"member '{member}' declares a negative size in shape {shape}")
            header, nbytes = fp.tell(), math.prod(shape) * dtype.itemsize
            if header + nbytes != info.file_size:
                raise _fail(f"member '{member}' declares shape {shape} of {dtype} ({nbytes} bytes), but holds "
                            f"{info.file_size - header} bytes of data; the file is corrupt or crafted")
            out = np.empty(shape[::-1] if fortran else shape, dtype)
            raw = out.reshape(-1).view(np.uint8)
            view, done = memoryview(raw), 0
            while done < nbytes:
                n = fp.readinto(view[done:done + _CHUNK])
                if not n:
                    raise _fail(f"member '{member}' ends after {done} of its {nbytes} bytes of data")
                done += n
            fp.read(1)  # at the end: zipfile checks the member's CRC-32 here, if the last read did not
        if dtype == np.bool_ and raw.size and raw.max() > 1:
            raise _fail(f"member '{member}' holds bool values other than 0 and 1")
        return out.T if fortran else out

    def meta(self):
        if META + ".npy" not in self.zf.NameToInfo:
            raise _fail(f"not a numgrad file (an npz archive without the '{META}' index)")
        text = self.read(META + ".npy", lambda shape, dtype: None if dtype.kind == "U" and shape == () else
                         f"is {dtype} of shape {shape}, not the index's one string")
        return str(text[()])

    def tensor(self, name, dtype, where):
        if name not in self.arrays:
            if f"{name}.npy" not in self.zf.NameToInfo:
                raise _fail(f"{where}: the file has no array '{name}' that its index names; the file is corrupt "
                            "or was not written by numgrad.save")
            stored = np.dtype(np.uint16) if dtype is dtypes.bfloat16 else dtype.np
            self.arrays[name] = self.read(f"{name}.npy", lambda shape, np_dtype: None if np_dtype == stored
                                          else f"holds {np_dtype}, but the index says {dtype.name}").view(dtype.np)
        return self.arrays[name]


# ---- map_location, as torch.load applies it: per tensor, from the location tag it was saved with ---------

def _device_index(backend, location):
    match = re.fullmatch(rf"{backend}(?::(0|[1-9][0-9]*))?", location)
    if match is None:
        raise RuntimeError(f"Invalid device string: '{location}'")
    return int(match.group(1) or 0)


def _unavailable(backend):
    return RuntimeError(f"Attempting to deserialize object on a {backend.upper()} device but "
                        f"torch.{backend}.is_available() is False. {_TO_CPU}")


def _default_restore(t, location):
    """torch's default_restore_location: a tensor (on the CPU) moved to the device its location tag names."""
    if isinstance(location, _device):  # as torch's re.match says of a torch.device
        raise TypeError("expected string or bytes-like object, got 'torch.device'")
    if location == "cpu":
        return t
    if location == "cuda" or re.match("cuda(:|[0-9]+)", location):  # torch's test: a TypeError for bytes
        index = _device_index("cuda", location)
        if not cuda.is_available():
            raise _unavailable("cuda")
        count = cuda.device_count()
        if index >= count:
            raise RuntimeError(f"Attempting to deserialize object on CUDA device {index} but "
                               f"torch.cuda.device_count() is {count}. Please use torch.load with map_location to "
                               "map your storages to an existing device.")
        return Tensor._make(dispatch.from_host(t._data), t._dtype)
    if location.startswith("mps"):
        raise RuntimeError("torch.UntypedStorage(): Storage device not recognized: mps")
    for backend, registered in _OTHER_BACKENDS:  # devices numgrad has not: torch's errors on a machine without
        if location == backend or re.match(f"{backend}(:|[0-9]+)", location):
            if not registered:
                raise RuntimeError(f"The {backend.upper()} device module is not registered. {_TO_CPU}")
            if location == "mtia":
                raise RuntimeError("Cannot execute getCurrentDevice() without MTIA backend.")
            _device_index(backend, location)
            raise _unavailable(backend)
    raise RuntimeError(f"don't know how to restore data location of torch.storage.UntypedStorage (tagged with "
                       f"{location})")


def _restore_location(map_location):
    """torch's _get_restore_location: fn(tensor, location tag) -> tensor. Nothing is checked until a tensor is
    restored, as in torch (a file without tensors loads whatever map_location says)."""
    if map_location is None:
        return _default_restore
    if isinstance(map_location, dict):
        return lambda t, location: _default_restore(t, map_location.get(location, location))
    if isinstance(map_location, (str, bytes)):
        return lambda t, location: _default_restore(t, map_location)
    if isinstance(map_location, _device) or type(map_location).__module__ == "torch" and \
            type(map_location).__name__ == "device":  # a numgrad.device, or torch's
        return lambda t, location: _default_restore(t, str(map_location))

    def restore(t, location):  # a callable (calling anything else raises TypeError, as torch's does)
        result = map_location(t, location)
        return _default_restore(t, location) if result is None else result
    return restore


# ---- the index ----------------------------------------------------------------------------------------------

def _kind(value):
    return "null" if value is None else type(value).__name__


def _decode(obj, archive, restore, where, depth=0):
    if obj is None or isinstance(obj, (bool, int, float, str)):
        return obj
    if not isinstance(obj, dict) or not obj:
        raise _fail(f"{where}: the index holds a {_kind(obj)} where it should hold a tensor, dict, list, tuple "
                    "or plain value")
    if "tensor" in obj:
        name = obj["tensor"]
        if isinstance(name, str) and name in archive.loaded:  # one tensor saved twice is one object
            return archive.loaded[name]
        tensor = _decode_tensor(obj, archive, restore, where)
        if isinstance(name, str):
            archive.loaded[name] = tensor
        return tensor
    (kind, items), = obj.items() if len(obj) == 1 else ((None, None),)
    if kind not in ("dict", "odict", "list", "tuple"):
        raise _fail(f"{where}: unknown entry {sorted(obj)} in the file's index")
    if not isinstance(items, list):
        raise _fail(f"{where}: the index's {kind} holds a {_kind(items)}, not a list")
    if depth >= MAX_DEPTH:
        raise _fail(f"{where}: the index nests more than {MAX_DEPTH} levels deep")
    if kind in ("dict", "odict"):
        result = collections.OrderedDict() if kind == "odict" else {}
        for item in items:
            if not (isinstance(item, list) and len(item) == 2 and isinstance(item[0], (str, int))):
                raise _fail(f"{where}: a dict item in the index is not a [str or int key, value] pair")
            result[item[0]] = _decode(item[1], archive, restore, f"{where}[{item[0]!r}]", depth + 1)
        return result
    values = [_decode(v, archive, restore, f"{where}[{i}]", depth + 1) for i, v in enumerate(items)]
    return tuple(values) if kind == "tuple" else values


def _is_int_list(value):
    return isinstance(value, list) and all(type(v) is int for v in value)


def _tensor_in_storage(entry, archive, dtype, where):
    """The tensor a version-2 entry places in its storage: a strided view of the flat storage array, once
    its offset, shape and strides are checked to stay inside it."""
    name, offset, shape, stride = entry["storage"], entry.get("offset"), entry.get("shape"), entry.get("stride")
    if not (isinstance(name, str) and type(offset) is int and _is_int_list(shape) and _is_int_list(stride)
            and len(shape) == len(stride) and len(shape) <= 64):
        raise _fail(f"{where}: a tensor entry's storage, offset, shape or stride has the wrong type")
    if offset < 0 or any(n < 0 for n in shape) or any(st < 0 for st in stride):
        raise _fail(f"{where}: a tensor entry has a negative offset, size or stride")
    with _reading(archive.source):
        flat = archive.tensor(name, dtype, where)
    if flat.ndim != 1:
        raise _fail(f"{where}: storage '{name}' is not a flat array")
    if math.prod(shape) and offset + sum((n - 1) * st for n, st in zip(shape, stride)) >= flat.size:
        raise _fail(f"{where}: a tensor of shape {shape}, strides {stride} and offset {offset} reaches past "
                    f"the {flat.size} elements of its storage '{name}'; the file is corrupt or crafted")
    if not math.prod(shape):
        return np.empty(shape, dtype.np)
    return np.lib.stride_tricks.as_strided(flat[offset:], shape, [st * flat.itemsize for st in stride])


def _decode_tensor(entry, archive, restore, where):
    if not set(entry) <= _TENSOR_KEYS or "dtype" not in entry:
        raise _fail(f"{where}: a tensor entry in the index has keys {sorted(entry)}")
    name, dtype_name, device = entry["tensor"], entry["dtype"], entry.get("device", "cpu")
    requires_grad, parameter = entry.get("requires_grad", False), entry.get("parameter", False)
    if not (isinstance(name, str) and isinstance(dtype_name, str) and isinstance(device, str)
            and isinstance(requires_grad, bool) and isinstance(parameter, bool)):
        raise _fail(f"{where}: a tensor entry in the index has values of the wrong types")
    if dtype_name not in dtypes._BY_NAME:
        raise _fail(f"{where}: the index names dtype '{dtype_name}', not one of {sorted(dtypes._BY_NAME)}")
    dtype = dtypes._BY_NAME[dtype_name]
    if requires_grad and not dtype.is_floating_point:
        raise _fail(f"{where}: the index says a {dtype_name} tensor requires grad")
    if "storage" in entry:
        data = _tensor_in_storage(entry, archive, dtype, where)
    else:  # version 1: an array of its own
        with _reading(archive.source):
            data = archive.tensor(name, dtype, where)
    restored = restore(Tensor._make(data, dtype), device)
    if not isinstance(restored, Tensor) or tuple(restored.shape) != data.shape or restored._dtype is not dtype:
        raise TypeError(f"map_location returned {restored!r} for a {dtype_name} tensor of shape "
                        f"{tuple(data.shape)} tagged with {device}; it must return a tensor like the one it was "
                        "given, or None")
    return (Parameter if parameter else Tensor)._make(restored._data, dtype, requires_grad)


def _check_seekable(f):
    """torch's check, with torch's message, that a file object can be read as an archive."""
    try:
        f.seek(f.tell())
    except (io.UnsupportedOperation, AttributeError) as exc:
        if "seek" in str(exc) or "tell" in str(exc):
            raise type(exc)(f"{exc}. You can only torch.load from a file that is seekable. Please pre-load the "
                            "data into a buffer like io.BytesIO and try to load from it instead.") from None
        raise


def _load(fh, restore, source):
    with _reading(source):
        start = fh.tell()
        size = fh.seek(0, os.SEEK_END) - start
        fh.seek(start)
        try:
            zf = zipfile.ZipFile(fh)
        except zipfile.BadZipFile as exc:  # torch's words for a zip archive it cannot open
            raise RuntimeError("PytorchStreamReader failed reading zip archive: failed finding central "
                               f"directory. numgrad.load: cannot read {source} as a numgrad file (a numpy .npz "
                               f"archive): {exc}") from exc
    with zf:
        archive = _Archive(zf, size, source)
        with _reading(source):
            text = archive.meta()
        try:
            meta = json.loads(text, object_pairs_hook=_unique_keys)
        except RecursionError:
            raise _fail("the file's index nests too deeply") from None
        except _RepeatedKey as exc:
            raise _fail(exc.message()) from None
        except ValueError as exc:  # json's errors, and an int with too many digits
            raise _fail(f"the file's index is not JSON: {exc}") from None
        if not isinstance(meta, dict) or meta.get("format") != FORMAT:
            raise _fail("not a numgrad file (its index does not say format 'numgrad')")
        version = meta.get("version")
        if type(version) is not int or version not in READABLE_VERSIONS:
            raise _fail(f"file format version {version!r} is not supported (this numgrad reads versions "
                        f"{_READABLE})")
        if "object" not in meta:
            raise _fail("the file's index has no 'object'")
        unknown = sorted(set(meta) - {"format", "version", "object"})
        if unknown:  # a later format's fields under a version this numgrad reads: not a file it wrote
            raise _fail(f"the file's index holds {unknown}, which no format version {version} file holds "
                        f"(this numgrad reads versions {_READABLE}); it was not written by numgrad.save")
        return _decode(meta["object"], archive, restore, "object")


class _RepeatedKey(ValueError):
    """A key twice in one JSON object of the index: json.loads would keep the last, so that a file declaring
    versions 99 and 2 loaded as version 2; numgrad.save never writes one."""

    def __init__(self, key, values):
        super().__init__(key)
        self.key, self.values = key, values

    def message(self):
        if self.key == "version":
            return (f"the file declares format versions {', '.join(map(repr, self.values))} (this numgrad reads "
                    f"versions {_READABLE}); it was not written by numgrad.save")
        return f"the file's index repeats the key {self.key!r} in one entry; it was not written by numgrad.save"


def _unique_keys(pairs):
    """json's object_pairs_hook: a dict of `pairs`, refusing a key given twice."""
    result = dict(pairs)
    if len(result) < len(pairs):
        key = next(k for i, (k, _) in enumerate(pairs) if any(k == other for other, _ in pairs[:i]))
        raise _RepeatedKey(key, [v for k, v in pairs if k == key])
    return result


def load(f, map_location=None, weights_only=True):
    """Reads what numgrad.save wrote, from a path or a seekable binary file object. A missing path raises
    FileNotFoundError and a directory IsADirectoryError, as torch.load; a file that is not such an archive, is
    truncated, corrupt or crafted, or whose index and arrays disagree raises RuntimeError saying so.
    `map_location` (a device string, a device, a dict of location tags, or a callable(tensor, tag)) works as in
    torch.load; a callable receives each tensor on the CPU where torch passes a storage."""
    restore = _restore_location(map_location)
    if isinstance(f, (str, os.PathLike)):
        with open(f, "rb") as fh:
            return _load(fh, restore, repr(os.fspath(f)))
    _check_seekable(f)
    return _load(f, restore, repr(f))

"""DLPack interop without copying: Tensor.__dlpack__/__dlpack_device__, from_dlpack, to_dlpack (ctypes capsules)."""
# The exporter's memory management: a capsule's DLManagedTensor(Versioned) lives in a "holder" tuple
# (the ctypes struct, its shape and strides, and what owns the data), and the struct's manager_ctx (also
# the capsule's context) holds one reference to that tuple. Whoever ends the managed tensor drops it: the
# consumer through the deleter, or the capsule's destructor when nobody consumed the capsule (a consumer
# renames it "used_dltensor[_versioned]", and then the destructor leaves it alone). Both are C callbacks
# that other libraries call from C, possibly while a Python exception is set (numpy drops a capsule it
# rejects that way) or from a thread without the GIL; a ctypes Python callback would clobber that
# exception, so they are three small Numba cfuncs (numba is already numgrad's kernel compiler), compiled
# on the first export. The importer reads a consumed DLManagedTensor through __array_interface__ (or
# __cuda_array_interface__ for numgrad.cuda) of a holder object that calls the producer's deleter when
# garbage-collected; the NumPy array keeps that holder as its base.
import ctypes
import enum
import importlib
import importlib.util
import sys
import threading
import types

import numpy as np

from ._core import dtypes
from . import lazy
from .tensor import Tensor
from .backend.dispatch import as_device

__all__ = ["DLDeviceType", "from_dlpack", "to_dlpack"]


class DLDeviceType(enum.IntEnum):
    """DLPack's device codes, as torch.utils.dlpack names them."""
    kDLCPU = 1
    kDLCUDA = 2
    kDLCUDAHost = 3
    kDLOpenCL = 4
    kDLVulkan = 7
    kDLMetal = 8
    kDLVPI = 9
    kDLROCM = 10
    kDLROCMHost = 11
    kDLExtDev = 12
    kDLCUDAManaged = 13
    kDLOneAPI = 14
    kDLWebGPU = 15
    kDLHexagon = 16
    kDLMAIA = 17


kDLCPU, kDLCUDA, kDLCUDAHost = DLDeviceType.kDLCPU, DLDeviceType.kDLCUDA, DLDeviceType.kDLCUDAHost
kDLInt, kDLUInt, kDLFloat, kDLBfloat, kDLComplex, kDLBool = 0, 1, 2, 4, 5, 6
FLAG_READ_ONLY, FLAG_IS_COPIED = 1 << 0, 1 << 1
VERSION = (1, 0)  # the DLManagedTensorVersioned ABI written here

INVALID_CAPSULE = ("from_dlpack received an invalid capsule. Note that DLTensor capsules can be consumed only "
                   "once, so you might have already constructed a tensor from it once.")
REQUIRES_GRAD = "Can't export tensors that require gradient, use tensor.detach()"


class ExportError(BufferError, RuntimeError):
    """Raised by __dlpack__ for a tensor that cannot be exported: a BufferError as torch 2.x raises, and a
    RuntimeError as older torch did."""


# ---- the DLPack ABI (dlpack.h) -----------------------------------------------------------------
class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", DLDevice), ("ndim", ctypes.c_int32),
                ("dtype", DLDataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


class DLManagedTensor(ctypes.Structure):
    _fields_ = [("dl_tensor", DLTensor), ("manager_ctx", ctypes.c_void_p), ("deleter", ctypes.c_void_p)]


class DLPackVersion(ctypes.Structure):
    _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32)]


class DLManagedTensorVersioned(ctypes.Structure):
    _fields_ = [("version", DLPackVersion), ("manager_ctx", ctypes.c_void_p), ("deleter", ctypes.c_void_p),
                ("flags", ctypes.c_uint64), ("dl_tensor", DLTensor)]


_DELETER = ctypes.CFUNCTYPE(None, ctypes.c_void_p)  # void (*deleter)(DLManagedTensor[Versioned] *)

_TO_DL = {dtypes.float32: (kDLFloat, 32), dtypes.float64: (kDLFloat, 64), dtypes.int64: (kDLInt, 64),
          dtypes.bool_: (kDLBool, 8)}
_FROM_DL = {v: k for k, v in _TO_DL.items()}
_CODE_NAMES = {kDLInt: "int", kDLUInt: "uint", kDLFloat: "float", 3: "opaque", kDLBfloat: "bfloat",
               kDLComplex: "complex", kDLBool: "bool"}


# ---- the Python C API, through ctypes (own prototypes: ctypes.pythonapi's are shared) ----------
def _api(name, restype, *argtypes):
    """A C API function called with the GIL held, raising the Python error it sets."""
    return ctypes.PYFUNCTYPE(restype, *argtypes)((name, ctypes.pythonapi))


def _raw(name, restype, *argtypes):
    """The same function as a plain C function pointer, for the cfuncs to call."""
    return ctypes.CFUNCTYPE(restype, *argtypes)((name, ctypes.pythonapi))


_capsule_new = _api("PyCapsule_New", ctypes.py_object, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p)
_capsule_set_context = _api("PyCapsule_SetContext", ctypes.c_int, ctypes.py_object, ctypes.c_void_p)
_capsule_is_valid = _api("PyCapsule_IsValid", ctypes.c_int, ctypes.py_object, ctypes.c_void_p)
_capsule_get_pointer = _api("PyCapsule_GetPointer", ctypes.c_void_p, ctypes.py_object, ctypes.c_void_p)
_capsule_set_name = _api("PyCapsule_SetName", ctypes.c_int, ctypes.py_object, ctypes.c_void_p)
_incref = _api("Py_IncRef", None, ctypes.py_object)
_decref = _api("Py_DecRef", None, ctypes.py_object)

# Capsule names must outlive every capsule, and the cfuncs may be called by a consumer during interpreter
# shutdown: what they use goes in _KEEP, which holds one reference nobody drops.
_KEEP = []
_incref(_KEEP)
_NAMES = {}
for _n in (b"dltensor", b"used_dltensor", b"dltensor_versioned", b"used_dltensor_versioned"):
    _NAMES[_n] = ctypes.create_string_buffer(_n)
    _KEEP.append(_NAMES[_n])
LEGACY, USED_LEGACY, VERSIONED, USED_VERSIONED = (ctypes.addressof(_NAMES[n]) for n in _NAMES)

_HOOKS = None  # (legacy deleter, versioned deleter, capsule destructor) addresses, compiled on first use
_HOOKS_LOCK = threading.Lock()


def _hooks():
    global _HOOKS
    if _HOOKS is None:
        with _HOOKS_LOCK:
            if _HOOKS is None:
                _HOOKS = _compile_hooks()
    return _HOOKS


def _compile_hooks():
    from numba import cfunc, types as nt
    is_initialized = _raw("Py_IsInitialized", ctypes.c_int)
    gil_ensure = _raw("PyGILState_Ensure", ctypes.c_int)
    gil_release = _raw("PyGILState_Release", None, ctypes.c_int)
    decref = _raw("Py_DecRef", None, ctypes.c_void_p)
    is_valid = _raw("PyCapsule_IsValid", ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p)
    get_context = _raw("PyCapsule_GetContext", ctypes.c_void_p, ctypes.c_void_p)
    word = ctypes.sizeof(ctypes.c_void_p)
    legacy_ctx = DLManagedTensor.manager_ctx.offset // word  # manager_ctx, in pointer-sized words
    versioned_ctx = DLManagedTensorVersioned.manager_ctx.offset // word
    legacy_name, versioned_name = LEGACY, VERSIONED

    # A consumer may call a deleter from any thread, with or without the GIL, even at shutdown (then
    # the holder leaks, as NumPy's deleter does).
    def deleter(ctx):  # for the layout whose manager_ctx is word `ctx` (a constant in the compiled code)
        @cfunc(nt.void(nt.CPointer(nt.intp)))
        def delete(managed):
            if is_initialized():
                state = gil_ensure()
                decref(managed[ctx])
                gil_release(state)
        return delete

    legacy_deleter, versioned_deleter = deleter(legacy_ctx), deleter(versioned_ctx)

    # Runs as the capsule is deallocated (GIL held); a renamed capsule belongs to its consumer. It
    # touches no Python error state, so an exception being raised at the time is left as it is.
    @cfunc(nt.void(nt.voidptr))
    def capsule_destructor(capsule):
        if is_valid(capsule, legacy_name) or is_valid(capsule, versioned_name):
            decref(get_context(capsule))

    _KEEP.extend((legacy_deleter, versioned_deleter, capsule_destructor))
    return legacy_deleter.address, versioned_deleter.address, capsule_destructor.address


# ---- export ------------------------------------------------------------------------------------
def _capsule(owner, pointer, shape, strides, dl_dtype, device, versioned, flags=0):
    """A capsule of a DLManagedTensor[Versioned] over `pointer` (strides in elements) that keeps `owner`
    alive until it is deleted."""
    legacy_deleter, versioned_deleter, destructor = _hooks()
    ndim = len(shape)
    shape_buf = (ctypes.c_int64 * max(ndim, 1))(*shape)
    strides_buf = (ctypes.c_int64 * max(ndim, 1))(*strides)
    managed = DLManagedTensorVersioned() if versioned else DLManagedTensor()
    dl = managed.dl_tensor
    dl.data = pointer or None
    dl.device = DLDevice(int(device[0]), int(device[1]))
    dl.ndim = ndim
    dl.dtype = DLDataType(dl_dtype[0], dl_dtype[1], 1)
    dl.shape = ctypes.cast(shape_buf, ctypes.POINTER(ctypes.c_int64))
    dl.strides = ctypes.cast(strides_buf, ctypes.POINTER(ctypes.c_int64))
    dl.byte_offset = 0
    if versioned:
        managed.version = DLPackVersion(*VERSION)
        managed.flags = flags
    holder = (managed, shape_buf, strides_buf, owner)
    managed.manager_ctx = id(holder)
    managed.deleter = versioned_deleter if versioned else legacy_deleter
    _incref(holder)  # the managed tensor's reference, dropped by its deleter or the capsule's destructor
    try:
        capsule = _capsule_new(ctypes.addressof(managed), VERSIONED if versioned else LEGACY, destructor)
    except BaseException:
        _decref(holder)
        raise
    _capsule_set_context(capsule, id(holder))
    return capsule


def _element_strides(byte_strides, itemsize):
    if any(s % itemsize for s in byte_strides):
        raise BufferError(f"DLPack strides are counted in elements: byte strides {tuple(byte_strides)} are "
                          f"not multiples of the item size {itemsize}")
    return [s // itemsize for s in byte_strides]


def _contiguous_strides(shape):
    strides, step = [], 1
    for d in reversed(shape):
        strides.append(step)
        step *= max(d, 1)
    return strides[::-1]


def _export_cpu(t, versioned, copy, copied=False):
    arr = t._data  # computes a pending result, and the pending ones reading this storage
    if copy:
        arr = arr.copy()
    else:
        lazy.export(arr)  # outside code may write to it from now on
    flags = (FLAG_IS_COPIED if copy or copied else 0) | (0 if arr.flags.writeable else FLAG_READ_ONLY)
    return _capsule(arr, arr.__array_interface__["data"][0], arr.shape,
                    _element_strides(arr.strides, arr.itemsize), _TO_DL[t._dtype], (kDLCPU, 0), versioned, flags)


def _export_cuda(t, stream, versioned, copy):
    if copy:
        t = t.clone()
    if stream is not None and stream not in (-1, 1):  # the consumer works on another stream than the
        importlib.import_module("numgrad.cuda").synchronize()  # legacy default one numgrad launches on
    desc = t.__cuda_array_interface__
    np_dtype = np.dtype(desc["typestr"])
    shape = tuple(desc["shape"])
    strides = desc.get("strides")
    strides = _contiguous_strides(shape) if strides is None else _element_strides(strides, np_dtype.itemsize)
    pointer, readonly = desc["data"]
    flags = (FLAG_IS_COPIED if copy else 0) | (FLAG_READ_ONLY if readonly else 0)
    return _capsule((t, desc), pointer, shape, strides, _TO_DL[dtypes.from_numpy_dtype(np_dtype)],
                    (kDLCUDA, t.device.index or 0), versioned, flags)


def __dlpack_device__(self):
    device = self.device
    return (kDLCUDA, device.index or 0) if device.type == "cuda" else (kDLCPU, 0)


def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
    """A DLPack capsule sharing this tensor's memory: "dltensor_versioned" (DLPack 1.0) when the consumer
    passes max_version >= (1, 0), else the legacy "dltensor". copy=True exports a copy; dl_device may ask
    for the CPU (a copy of a CUDA tensor)."""
    if getattr(self, "requires_grad", False):
        raise ExportError(REQUIRES_GRAD)
    return _export(self, stream, max_version, dl_device, copy)


def _export(t, stream=None, max_version=None, dl_device=None, copy=None):
    if stream is not None and type(stream) is not int:
        raise TypeError("stream must be ``int`` or ``none``")
    versioned = max_version is not None and int(max_version[0]) >= 1
    here = __dlpack_device__(t)
    if dl_device is not None and (int(dl_device[0]), int(dl_device[1])) != here:
        if (int(dl_device[0]), int(dl_device[1])) != (kDLCPU, 0) or copy is False:
            raise BufferError(f"Can't export a tensor on DLPack device {here} to device {tuple(dl_device)}"
                              + (" without copying" if copy is False else ""))
        return _export_cpu(t.to("cpu"), versioned, False, copied=True)  # the move is the copy
    if here[0] == kDLCUDA:
        return _export_cuda(t, stream, versioned, bool(copy))
    if stream is not None and stream != -1:
        raise BufferError(f"stream should be None on cpu, got {stream}")
    return _export_cpu(t, versioned, bool(copy))


def to_dlpack(tensor):
    """torch.utils.dlpack.to_dlpack: a legacy "dltensor" capsule sharing the tensor's memory (like
    torch's, it does not refuse a tensor that requires grad)."""
    return _export(tensor)


# ---- import ------------------------------------------------------------------------------------
class _Owner:
    """Owns a consumed DLManagedTensor[Versioned] and calls its deleter when collected; the tensor made
    from it keeps it alive (as the NumPy array's base, or the owner a CUDA array holds)."""

    _deleter = None

    def __init__(self, managed, deleter, desc):
        self._managed, self._desc = managed, desc
        self._deleter = _DELETER(deleter) if deleter else None

    def __del__(self):
        deleter, self._deleter = self._deleter, None
        if deleter is not None:
            deleter(self._managed)


class _Imported(_Owner):
    """CPU memory, shown to NumPy."""

    @property
    def __array_interface__(self):
        return self._desc


class _ImportedCUDA(_Owner):
    """GPU memory, shown to numgrad.cuda.as_tensor."""

    @property
    def __cuda_array_interface__(self):
        return self._desc


def _dtype_name(dl_dtype):
    name = f"{_CODE_NAMES.get(dl_dtype.code, f'code {dl_dtype.code} ')}{dl_dtype.bits}"
    return name if dl_dtype.lanes == 1 else f"{name}x{dl_dtype.lanes}"


def _from_capsule(capsule):
    if type(capsule).__name__ != "PyCapsule":
        raise TypeError(f"from_dlpack: expected an object with __dlpack__ or a DLPack capsule, got "
                        f"{type(capsule).__name__}")
    if _capsule_is_valid(capsule, VERSIONED):
        used = USED_VERSIONED
        managed = DLManagedTensorVersioned.from_address(_capsule_get_pointer(capsule, VERSIONED))
        if managed.version.major != 1:
            raise BufferError(f"from_dlpack: DLPack {managed.version.major}.{managed.version.minor} is not "
                              "supported (numgrad reads DLPack 1.x and the legacy capsules)")
        flags = managed.flags
    elif _capsule_is_valid(capsule, LEGACY):
        used, flags = USED_LEGACY, 0
        managed = DLManagedTensor.from_address(_capsule_get_pointer(capsule, LEGACY))
    else:
        raise RuntimeError(INVALID_CAPSULE)
    dl = managed.dl_tensor
    # everything is checked before the capsule is consumed: a refused one stays its producer's to free
    dtype = _FROM_DL.get((dl.dtype.code, dl.dtype.bits)) if dl.dtype.lanes == 1 else None
    if dtype is None:
        raise TypeError(f"from_dlpack: unsupported dtype {_dtype_name(dl.dtype)}; numgrad tensors are "
                        "float32, float64, int64 or bool")
    kind = dl.device.device_type
    if kind not in (kDLCPU, kDLCUDAHost, kDLCUDA):
        try:
            name = DLDeviceType(kind).name
        except ValueError:
            name = str(kind)
        raise BufferError(f"from_dlpack: unsupported device {name} (numgrad reads CPU and CUDA memory)")
    if dl.ndim < 0:
        raise BufferError(f"from_dlpack: invalid ndim {dl.ndim}")
    shape = tuple(dl.shape[i] for i in range(dl.ndim))
    itemsize = dtype.itemsize
    strides = tuple(dl.strides[i] * itemsize for i in range(dl.ndim)) if dl.strides else None
    desc = {"shape": shape, "typestr": dtype.np.str, "version": 3,
            "data": ((dl.data or 0) + dl.byte_offset, bool(flags & FLAG_READ_ONLY))}
    as_cuda_tensor = importlib.import_module("numgrad.cuda").as_tensor if kind == kDLCUDA else None
    pointer, deleter = ctypes.addressof(managed), managed.deleter
    if _capsule_set_name(capsule, used) != 0:  # consumed: the deleter is ours to call
        raise RuntimeError(INVALID_CAPSULE)
    if as_cuda_tensor is not None:
        desc["strides"] = strides
        return as_cuda_tensor(_ImportedCUDA(pointer, deleter, desc))
    desc["strides"] = strides if strides is not None else \
        tuple(s * itemsize for s in _contiguous_strides(shape))
    arr = np.asarray(_Imported(pointer, deleter, desc))
    lazy.export(arr)  # outside code may write to it
    return Tensor._make(arr, dtype)


def from_dlpack(ext_tensor, *, device=None, copy=None):
    """torch.from_dlpack: a tensor sharing the memory of `ext_tensor` (any object with __dlpack__ and
    __dlpack_device__, such as a NumPy array or a torch tensor, or a DLPack capsule). CPU memory gives a
    CPU tensor, CUDA memory a CUDA tensor (numgrad.cuda.as_tensor)."""
    if not hasattr(ext_tensor, "__dlpack__"):
        if device is not None or copy is not None:
            raise AssertionError("device and copy kwargs not supported when ext_tensor is already a DLPack "
                                 "capsule.")
        return _from_capsule(ext_tensor)
    source = tuple(int(v) for v in ext_tensor.__dlpack_device__())
    target = as_device(device) if device is not None else None
    target_dl = None if target is None else \
        ((kDLCUDA, target.index or 0) if target.type == "cuda" else (kDLCPU, 0))
    readable_as = (kDLCPU, 0) if source[0] == kDLCUDAHost else source  # pinned memory is CPU memory
    cross = target_dl is not None and target_dl != readable_as
    if cross and copy is False:
        raise ValueError(f"cannot move DLPack tensor from device {source} to {target_dl} without copying. Set "
                         "copy=None or copy=True.")
    kwargs = {"max_version": VERSION}
    if copy is not None:
        kwargs["copy"] = copy
    if target_dl is not None and target_dl == source:
        kwargs["dl_device"] = target_dl
    if source[0] == kDLCUDA:
        kwargs["stream"] = 1  # numgrad launches on the legacy default stream
    capsule, producer_copies = None, True
    for drop in ("max_version", "copy", "dl_device", None):  # older producers take fewer keywords
        try:
            capsule = ext_tensor.__dlpack__(**kwargs)
            break
        except TypeError:
            if drop is None:
                raise
            producer_copies = producer_copies and drop != "copy"
            kwargs.pop(drop, None)
    t = _from_capsule(capsule)
    if cross:
        return t.to(target)
    if copy and not producer_copies:
        t = Tensor._make(t._data.copy(), t._dtype)
    return t


Tensor.__dlpack__ = __dlpack__
Tensor.__dlpack_device__ = __dlpack_device__


def _install_utils_module():
    """numgrad.utils.dlpack, where torch keeps to_dlpack and from_dlpack, is this module; numgrad.utils is a
    bare namespace unless a real package exists."""
    parent = sys.modules[__name__.rpartition(".")[0]]
    utils = sys.modules.get(parent.__name__ + ".utils")
    if utils is None:
        spec = importlib.util.find_spec(parent.__name__ + ".utils")
        if spec is not None:
            utils = importlib.import_module(parent.__name__ + ".utils")
        else:
            utils = types.ModuleType(parent.__name__ + ".utils", "torch.utils's counterpart: utils.dlpack.")
            utils.__path__ = []
            sys.modules[utils.__name__] = utils
        parent.utils = utils
    if not hasattr(utils, "dlpack"):
        utils.dlpack = sys.modules[__name__]
    sys.modules.setdefault(utils.__name__ + ".dlpack", sys.modules[__name__])


_install_utils_module()

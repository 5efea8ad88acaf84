"""DLPack interop without copying: Tensor.__dlpack__/__dlpack_device__, from_dlpack, to_dlpack."""
# NumPy (2.1 or later) does the DLPack work for host memory: a CPU tensor exports through its ndarray's
# __dlpack__ (legacy or versioned capsule, copy=, the read-only and copied flags, the capsule's lifetime)
# and np.from_dlpack reads host capsules. cuda.core's StridedMemoryView reads GPU capsules. What is left
# here is what neither does:
# - reading a capsule's header before anyone consumes it, so that one numgrad refuses (a dtype numgrad
#   lacks, such as int32 that NumPy would take or bfloat16 that it cannot name; a device; DLPack 2) stays
#   its producer's, with torch's error types and messages;
# - exporting GPU memory: NumPy only exports host arrays and StridedMemoryView needs a CUDA driver (the
#   simulator has none), so NumPy describes the GPU memory shown to it as a host array (nothing reads it)
#   and the capsule's device is then set to CUDA (_retag, which also flags copies NumPy did not make);
# - a legacy capsule of a read-only array (numgrad's broadcast views): NumPy refuses one since it cannot
#   say read-only, torch exports any tensor; NumPy is shown the same memory as writable.
import ctypes
import enum

import numpy as np

from .. import lazy
from .._core import dtypes
from ..kernels.cuda import runtime as cuda_runtime
from ..kernels.dispatch import as_device
from ..kernels.dispatch.lazy_cuda import cuda as cuda_target
from ..tensor_base import TensorBase

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
FLAG_READ_ONLY, FLAG_IS_COPIED = 1 << 0, 1 << 1
VERSION = (1, 0)  # the DLPack version numgrad asks producers for
LEGACY, VERSIONED = b"dltensor", b"dltensor_versioned"

INVALID_CAPSULE = ("from_dlpack received an invalid capsule. Note that DLTensor capsules can be consumed only "
                   "once, so you might have already constructed a tensor from it once.")
REQUIRES_GRAD = "Can't export tensors that require gradient, use tensor.detach()"


class ExportError(BufferError, RuntimeError):
    """Raised by __dlpack__ for a tensor that cannot be exported: a BufferError as torch 2.x raises, and a
    RuntimeError as older torch did."""


# ---- the capsule header (dlpack.h), read before the capsule is consumed --------------------------
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


_capsule_is_valid = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.py_object, ctypes.c_char_p)(
    ("PyCapsule_IsValid", ctypes.pythonapi))
_capsule_get_pointer = ctypes.PYFUNCTYPE(ctypes.c_void_p, ctypes.py_object, ctypes.c_char_p)(
    ("PyCapsule_GetPointer", ctypes.pythonapi))

# what numgrad tensors hold, as (code, bits), that NumPy reads (bfloat16 it does not)
_DTYPES = {(2, 16), (2, 32), (2, 64), (0, 8), (0, 16), (0, 32), (0, 64), (1, 8), (6, 8)}
_CODE_NAMES = {0: "int", 1: "uint", 2: "float", 3: "opaque", 4: "bfloat", 5: "complex", 6: "bool"}


def _managed(capsule):
    """The DLManagedTensor[Versioned] of an unconsumed capsule, or None."""
    for name, struct in ((VERSIONED, DLManagedTensorVersioned), (LEGACY, DLManagedTensor)):
        if _capsule_is_valid(capsule, name):
            return struct.from_address(_capsule_get_pointer(capsule, name))
    return None


# ---- export ------------------------------------------------------------------------------------
class _Shown:
    """Shows memory through an array interface (`kind` names it) and keeps `owner` alive."""

    def __init__(self, kind, desc, owner):
        setattr(self, kind, desc)
        self.owner = owner


def _as_host_array(desc, owner, writable=False):
    """A NumPy array over the memory `desc` (an array interface, possibly of GPU memory) describes."""
    pointer, readonly = desc["data"]
    shown = {"shape": tuple(desc["shape"]), "typestr": desc["typestr"], "strides": desc.get("strides"),
             "data": (pointer, bool(readonly) and not writable), "version": 3}
    return np.asarray(_Shown("__array_interface__", shown, owner))


def _retag(capsule, flags, device=None, pointer=None):
    """Adds `flags` (a versioned capsule's) to a capsule NumPy just made for us; for GPU memory also sets
    the device, and the data pointer (NumPy gives an empty array host memory of its own)."""
    managed = _managed(capsule)
    if device is not None:
        managed.dl_tensor.device = DLDevice(*device)
        managed.dl_tensor.data = pointer or None
    if flags and isinstance(managed, DLManagedTensorVersioned):
        managed.flags |= flags


def _versioned(max_version):
    return max_version is not None and int(max_version[0]) >= 1


def _export_cpu(arr, max_version, copy, copied=False):
    if not copy:
        lazy.export(arr)  # outside code may write to it from now on
        if not arr.flags.writeable and not _versioned(max_version):
            arr = _as_host_array(arr.__array_interface__, arr, writable=True)
    capsule = arr.__dlpack__(max_version=max_version, copy=copy)
    if copied:
        _retag(capsule, FLAG_IS_COPIED)
    return capsule


def synchronize():
    """Waits for numgrad's GPU work (numgrad.cuda.synchronize)."""
    cuda_runtime.lazy_init()
    cuda_runtime.numba_cuda().synchronize()


def cuda_tensor(obj):
    """A CUDA tensor over the memory of an object with __cuda_array_interface__ (numgrad.cuda.as_tensor)."""
    cuda_runtime.lazy_init()
    arr = cuda_target().interop.device_array_from_object(obj)
    return TensorBase._make(arr, dtypes.from_numpy_dtype(arr.dtype))


def _export_cuda(t, stream, max_version, copy):
    if copy:
        t = t.clone()
    if stream is not None and stream not in (-1, 1):  # the consumer works on another stream than the
        synchronize()  # legacy default one numgrad uses
    desc = t.__cuda_array_interface__
    arr = _as_host_array(desc, (t, desc), writable=not _versioned(max_version))
    capsule = arr.__dlpack__(max_version=max_version)
    _retag(capsule, FLAG_IS_COPIED if copy else 0, (kDLCUDA, t.device.index or 0), desc["data"][0])
    return capsule


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
    here = __dlpack_device__(t)
    if dl_device is not None and (int(dl_device[0]), int(dl_device[1])) != here:
        if (int(dl_device[0]), int(dl_device[1])) != (kDLCPU, 0) or copy is False:
            raise BufferError(f"Can't export a tensor on DLPack device {here} to device {tuple(dl_device)}"
                              + (" without copying" if copy is False else ""))
        return _export_cpu(t.to("cpu")._data, max_version, False, copied=True)  # the move is the copy
    if here[0] == kDLCUDA:
        return _export_cuda(t, stream, max_version, bool(copy))
    if stream is not None and stream != -1:
        raise BufferError(f"stream should be None on cpu, got {stream}")
    return _export_cpu(t._data, max_version, bool(copy))  # _data computes a pending result first


def to_dlpack(tensor):
    """torch.utils.dlpack.to_dlpack: a legacy "dltensor" capsule sharing the tensor's memory (like
    torch's, it does not refuse a tensor that requires grad)."""
    return _export(tensor)


# ---- import ------------------------------------------------------------------------------------
class _Producer:
    """Hands a capsule to np.from_dlpack or StridedMemoryView.from_dlpack, which take producers."""

    def __init__(self, capsule, device):
        self.capsule, self.device = capsule, device

    def __dlpack__(self, **kwargs):
        return self.capsule

    def __dlpack_device__(self):
        return self.device


def _from_capsule(capsule):
    if type(capsule).__name__ != "PyCapsule":
        raise TypeError(f"from_dlpack: expected an object with __dlpack__ or a DLPack capsule, got "
                        f"{type(capsule).__name__}")
    managed = _managed(capsule)
    if managed is None:
        raise RuntimeError(INVALID_CAPSULE)
    if isinstance(managed, DLManagedTensorVersioned) and managed.version.major != 1:
        raise BufferError(f"from_dlpack: DLPack {managed.version.major}.{managed.version.minor} is not "
                          "supported (numgrad reads DLPack 1.x and the legacy capsules)")
    dl = managed.dl_tensor
    if (dl.dtype.code, dl.dtype.bits) not in _DTYPES or dl.dtype.lanes != 1:
        name = f"{_CODE_NAMES.get(dl.dtype.code, f'code {dl.dtype.code} ')}{dl.dtype.bits}"
        name = name if dl.dtype.lanes == 1 else f"{name}x{dl.dtype.lanes}"
        raise TypeError(f"from_dlpack: unsupported dtype {name}; numgrad reads float16, float32, float64, int8, "
                        "int16, int32, int64, uint8 or bool")
    kind, index = dl.device.device_type, dl.device.device_id
    if kind not in (kDLCPU, kDLCUDAHost, kDLCUDA):
        try:
            name = DLDeviceType(kind).name
        except ValueError:
            name = str(kind)
        raise BufferError(f"from_dlpack: unsupported device {name} (numgrad reads CPU and CUDA memory)")
    if kind == kDLCUDA:
        return _from_cuda_capsule(capsule, index)
    arr = np.from_dlpack(_Producer(capsule, (kind, index)))  # pinned memory (kDLCUDAHost) is host memory
    lazy.export(arr)  # outside code may write to it
    return TensorBase._make(arr, dtypes.from_numpy_dtype(arr.dtype))


def _from_cuda_capsule(capsule, index):
    from cuda.core.utils import StridedMemoryView
    # The view consumes the capsule and calls its deleter when collected. The producer was asked for
    # numgrad's stream already (from_dlpack), so the view orders no streams (-1).
    view = StridedMemoryView.from_dlpack(_Producer(capsule, (kDLCUDA, index)), stream_ptr=-1)
    strides = view.strides  # None: compact, as in __cuda_array_interface__
    desc = {"shape": tuple(view.shape), "typestr": view.dtype.str,
            "strides": None if strides is None else tuple(s * view.dtype.itemsize for s in strides),
            "data": (view.ptr, bool(view.readonly)), "version": 3}
    return cuda_tensor(_Shown("__cuda_array_interface__", desc, view))


def from_dlpack(ext_tensor, *, device=None, copy=None):
    """torch.from_dlpack: a tensor sharing the memory of `ext_tensor` (any object with __dlpack__ and
    __dlpack_device__, such as a NumPy array or a torch tensor, or a DLPack capsule). CPU memory gives a
    CPU tensor, CUDA memory a CUDA tensor (as numgrad.cuda.as_tensor makes)."""
    if not hasattr(ext_tensor, "__dlpack__"):
        if device is not None or copy is not None:
            raise AssertionError("device and copy kwargs not supported when ext_tensor is already a DLPack "
                                 "capsule.")
        return _from_capsule(ext_tensor)
    source = tuple(int(v) for v in ext_tensor.__dlpack_device__())
    target = as_device(device) if device is not None else None
    target_dl = None if target is None else\
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
        t = TensorBase._make(t._data.copy(), t._dtype)
    return t

"""DLPack interop (numgrad/dlpack.py): zero-copy round trips with NumPy and torch for every dtype, 0-d, empty
and strided views, memory shared both ways, legacy and versioned capsules, consumed capsules, storage
lifetimes (deleters and capsule destructors), errors, and the CUDA branches through a fake GPU array, a
patched dlpack.cuda_tensor (what numgrad.cuda.as_tensor calls) and Numba's CUDA simulator."""
import ctypes
import gc
import os
import subprocess
import sys
import textwrap
import weakref

import numpy as np
import pytest
import torch

import numgrad
from helpers import REPO
from numgrad import dlpack

DTYPES = [(numgrad.float32, torch.float32, np.float32), (numgrad.float64, torch.float64, np.float64),
          (numgrad.int64, torch.int64, np.int64), (numgrad.bool, torch.bool, np.bool_)]
SHAPES = [(2, 3), (), (0,), (2, 0, 3), (5,)]

_get_pointer = ctypes.PYFUNCTYPE(ctypes.c_void_p, ctypes.py_object, ctypes.c_char_p)(
    ("PyCapsule_GetPointer", ctypes.pythonapi))
_get_name = ctypes.PYFUNCTYPE(ctypes.c_char_p, ctypes.py_object)(("PyCapsule_GetName", ctypes.pythonapi))
_capsule_new = ctypes.PYFUNCTYPE(ctypes.py_object, ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p)(
    ("PyCapsule_New", ctypes.pythonapi))


def values(shape, np_dtype):
    n = int(np.prod(shape))
    if np_dtype == np.bool_:
        return (np.arange(n) % 3 == 1).reshape(shape)
    return (np.arange(n) * 3 - 4).astype(np_dtype).reshape(shape)


def ng_tensor(shape, np_dtype):
    return numgrad.tensor(values(shape, np_dtype))


def managed_of(capsule):
    """The DLManagedTensor[Versioned] a capsule holds, read through ctypes."""
    name = _get_name(capsule)
    struct = dlpack.DLManagedTensorVersioned if name == b"dltensor_versioned" else dlpack.DLManagedTensor
    return struct.from_address(_get_pointer(capsule, name))


def collect():
    gc.collect()


def assert_same(ng, ref):
    ref = ref.numpy() if isinstance(ref, torch.Tensor) else np.asarray(ref)
    got = ng.numpy()
    assert got.dtype == ref.dtype and got.shape == ref.shape
    np.testing.assert_array_equal(got, ref)


# ---- round trips, every dtype and shape ---------------------------------------------------------
@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("ng_dtype,th_dtype,np_dtype", DTYPES, ids=lambda d: str(d))
def test_roundtrip_every_dtype_and_shape(ng_dtype, th_dtype, np_dtype, shape):
    ref = values(shape, np_dtype)
    t = numgrad.tensor(ref)
    assert t.dtype == ng_dtype
    # numgrad -> torch, numpy, numgrad
    x = torch.from_dlpack(t)
    assert x.dtype == th_dtype and tuple(x.shape) == shape
    np.testing.assert_array_equal(x.numpy(), ref)
    a = np.from_dlpack(t)
    assert a.dtype == np_dtype and a.shape == shape
    np.testing.assert_array_equal(a, ref)
    assert_same(numgrad.from_dlpack(t), ref)
    # torch, numpy -> numgrad
    back = numgrad.from_dlpack(torch.tensor(ref))
    assert back.dtype == ng_dtype
    assert_same(back, ref)
    back = numgrad.from_dlpack(ref.copy())
    assert back.dtype == ng_dtype
    assert_same(back, ref)
    # through both: numgrad -> torch -> numgrad
    assert_same(numgrad.from_dlpack(torch.from_dlpack(t)), ref)


@pytest.mark.parametrize("shape", [(2, 3), ()], ids=str)
@pytest.mark.parametrize("ng_dtype,th_dtype,np_dtype", DTYPES, ids=lambda d: str(d))
def test_capsule_contents(ng_dtype, th_dtype, np_dtype, shape):
    t = ng_tensor(shape, np_dtype)
    for capsule, versioned in ((t.__dlpack__(), False), (t.__dlpack__(max_version=(1, 0)), True),
                               (t.__dlpack__(max_version=(1, 3)), True), (numgrad.to_dlpack(t), False)):
        assert _get_name(capsule) == (b"dltensor_versioned" if versioned else b"dltensor")
        m = managed_of(capsule)
        dl = m.dl_tensor
        assert (dl.device.device_type, dl.device.device_id) == (1, 0)
        assert (dl.dtype.code, dl.dtype.bits, dl.dtype.lanes) == {
            numgrad.float32: (2, 32, 1), numgrad.float64: (2, 64, 1), numgrad.int64: (0, 64, 1),
            numgrad.bool: (6, 8, 1)}[ng_dtype]
        assert dl.ndim == len(shape) and dl.byte_offset == 0
        assert [dl.shape[i] for i in range(dl.ndim)] == list(shape)
        assert [dl.strides[i] for i in range(dl.ndim)] == list(t.stride())
        assert dl.data == t.data_ptr()
        if versioned:
            assert (m.version.major, m.version.minor) == (1, 0) and m.flags == 0
        assert m.manager_ctx and m.deleter


def test_dlpack_device():
    t = numgrad.ones(2)
    assert t.__dlpack_device__() == (1, 0) == torch.ones(2).__dlpack_device__()
    assert t.__dlpack_device__()[0] is numgrad.utils.dlpack.DLDeviceType.kDLCPU


# ---- strided views ------------------------------------------------------------------------------
VIEWS = {"transposed": lambda t: t.t(), "sliced_step": lambda t: t[::2, 1::3],
         "column": lambda t: t[:, 2], "permuted_3d": lambda t: t.reshape(2, 3, 4).permute(2, 0, 1),
         "expanded": lambda t: t[:, :1].expand(4, 5)}


@pytest.mark.parametrize("view", VIEWS, ids=str)
def test_export_strided_views(view):
    base = numgrad.arange(24.).reshape(4, 6)
    tbase = torch.arange(24.).reshape(4, 6)
    v, tv = VIEWS[view](base), VIEWS[view](tbase)
    assert v.stride() == tv.stride()
    x = torch.from_dlpack(v)
    assert x.stride() == tv.stride() and x.data_ptr() == v.data_ptr()
    torch.testing.assert_close(x, tv)
    a = np.from_dlpack(v)
    np.testing.assert_array_equal(a, tv.numpy())
    assert a.strides == tuple(s * 4 for s in tv.stride())
    w = numgrad.from_dlpack(v)
    assert w.stride() == v.stride() and w.data_ptr() == v.data_ptr()
    np.testing.assert_array_equal(w.numpy(), tv.numpy())


@pytest.mark.parametrize("view", VIEWS, ids=str)
def test_import_strided_views(view):
    tv = VIEWS[view](torch.arange(24.).reshape(4, 6))
    t = numgrad.from_dlpack(tv)
    assert t.stride() == tv.stride() and t.data_ptr() == tv.data_ptr()
    np.testing.assert_array_equal(t.numpy(), tv.numpy())
    a = np.arange(24.).reshape(4, 6)[::2, 1::3]
    t = numgrad.from_dlpack(a)
    assert t.stride() == (12, 3) and t.data_ptr() == a.ctypes.data
    np.testing.assert_array_equal(t.numpy(), a)


def test_exported_view_into_a_larger_storage_keeps_it_alive():
    base = numgrad.arange(20.).reshape(4, 5)
    root = weakref.ref(numgrad.lazy.root(base._data))  # the array owning the memory
    x = torch.from_dlpack(base[1:, ::2].t())
    del base
    collect()
    assert root() is not None
    np.testing.assert_array_equal(x.numpy(), np.arange(20.).reshape(4, 5)[1:, ::2].T)
    del x
    collect()
    assert root() is None


# ---- shared memory --------------------------------------------------------------------------------
def test_export_shares_memory_with_torch():
    t = numgrad.zeros(2, 3)
    x = torch.from_dlpack(t)
    x[0, 1] = 5.0
    assert t[0, 1].item() == 5.0
    t.add_(1)
    t[1, 2] = -7.0
    torch.testing.assert_close(x, torch.tensor([[1., 6., 1.], [1., 1., -7.]]))


def test_export_shares_memory_with_numpy():
    t = numgrad.arange(6).reshape(2, 3)
    a = np.from_dlpack(t)
    a[1, 1] = 40
    assert t.tolist() == [[0, 1, 2], [3, 40, 5]]
    t.mul_(2)
    np.testing.assert_array_equal(a, [[0, 2, 4], [6, 80, 10]])


def test_import_shares_memory_with_numpy():
    a = np.zeros((2, 2), np.float32)
    t = numgrad.from_dlpack(a)
    a[0, 0] = 3
    assert t[0, 0].item() == 3
    t[1, 1] = 9
    t.add_(1)
    np.testing.assert_array_equal(a, [[4, 1], [1, 10]])


def test_import_shares_memory_with_torch():
    x = torch.zeros(3, dtype=torch.float64)
    t = numgrad.from_dlpack(x)
    x[0] = 2
    assert t.tolist() == [2.0, 0.0, 0.0]
    t[2] = 8
    t.sub_(1)
    assert x.tolist() == [1.0, -1.0, 7.0]


def test_import_of_bool_shares_memory():
    x = torch.tensor([True, False, True])
    t = numgrad.from_dlpack(x)
    t[1] = True
    x[0] = False
    assert t.tolist() == [False, True, True] and x.tolist() == [False, True, True]


def test_outside_writes_do_not_change_results_computed_before():
    # Pending fused results must not read memory outside code can write to (lazy.export).
    t = numgrad.arange(4.)
    x = torch.from_dlpack(t)
    y = t * 2 + 1
    x[0] = 100.0
    assert y.tolist() == [1.0, 3.0, 5.0, 7.0]
    a = np.arange(4.)
    u = numgrad.from_dlpack(a)
    z = u * 3
    a[1] = 50
    assert z.tolist() == [0.0, 3.0, 6.0, 9.0]


def test_export_computes_a_pending_result():
    t = numgrad.arange(5.) * 2 - 1  # possibly a pending fused expression
    np.testing.assert_array_equal(torch.from_dlpack(t).numpy(), np.arange(5.) * 2 - 1)
    u = numgrad.arange(5.)
    w = u.exp()
    x = torch.from_dlpack(u)  # computes w first: x may write to what w reads
    x[0] = 10.0
    np.testing.assert_allclose(w.numpy(), np.exp(np.arange(5.)), rtol=1e-6)


# ---- legacy and versioned capsules --------------------------------------------------------------
def test_legacy_and_versioned_capsules_consumed_by_torch_and_numgrad():
    t = numgrad.tensor([1.0, 2.0, 3.0])
    for make in (lambda: t.__dlpack__(), lambda: t.__dlpack__(max_version=(1, 0)), lambda: numgrad.to_dlpack(t),
                 lambda: numgrad.utils.dlpack.to_dlpack(t), lambda: t.__dlpack__(max_version=(0, 8))):
        c = make()
        x = torch.from_dlpack(c)
        assert _get_name(c) in (b"used_dltensor", b"used_dltensor_versioned")
        assert x.tolist() == [1.0, 2.0, 3.0] and x.data_ptr() == t.data_ptr()
        c = make()
        u = numgrad.utils.dlpack.from_dlpack(c)
        assert _get_name(c) in (b"used_dltensor", b"used_dltensor_versioned")
        assert u.tolist() == [1.0, 2.0, 3.0] and u.data_ptr() == t.data_ptr()
    assert _get_name(t.__dlpack__(max_version=(0, 8))) == b"dltensor"


def test_torch_capsules_consumed_by_numgrad():
    x = torch.tensor([[1, 2], [3, 4]])
    for c in (torch.utils.dlpack.to_dlpack(x), x.__dlpack__(), x.__dlpack__(max_version=(1, 0))):
        t = numgrad.from_dlpack(c)
        assert _get_name(c).startswith(b"used_")
        assert t.tolist() == [[1, 2], [3, 4]] and t.data_ptr() == x.data_ptr()


def test_numpy_capsules_consumed_by_numgrad():
    a = np.arange(4.)
    for c in (a.__dlpack__(), a.__dlpack__(max_version=(1, 0))):
        t = numgrad.from_dlpack(c)
        assert t.data_ptr() == a.ctypes.data and t.tolist() == [0.0, 1.0, 2.0, 3.0]


def test_capsule_consumed_twice_raises():
    t = numgrad.ones(3)
    for c in (numgrad.to_dlpack(t), t.__dlpack__(max_version=(1, 0))):
        numgrad.from_dlpack(c)
        with pytest.raises(RuntimeError, match="consumed only once"):
            numgrad.from_dlpack(c)
        with pytest.raises(RuntimeError, match="consumed only once"):
            torch.from_dlpack(c)
    c = numgrad.to_dlpack(t)
    torch.from_dlpack(c)
    with pytest.raises(RuntimeError, match="consumed only once"):
        numgrad.from_dlpack(c)
    c = torch.utils.dlpack.to_dlpack(torch.ones(2))
    numgrad.from_dlpack(c)
    with pytest.raises(RuntimeError, match="consumed only once"):
        torch.from_dlpack(c)
    with pytest.raises(RuntimeError, match="consumed only once"):
        numgrad.from_dlpack(c)


def test_not_a_capsule():
    with pytest.raises(TypeError, match="expected an object with __dlpack__ or a DLPack capsule, got list"):
        numgrad.from_dlpack([1, 2])
    other = _capsule_new(1234, b"something_else", None)
    with pytest.raises(RuntimeError, match="invalid capsule"):
        numgrad.from_dlpack(other)


# ---- storage lifetime: deleters and capsule destructors --------------------------------------------
def _exported():
    t = numgrad.arange(1000.)
    return t, weakref.ref(t._data)


@pytest.mark.parametrize("consumer", ["torch", "torch_legacy", "numpy", "numgrad", "numgrad_legacy"])
def test_exported_storage_lives_as_long_as_the_consumer(consumer):
    consume = {"torch": torch.from_dlpack,
               "torch_legacy": lambda t: torch.utils.dlpack.from_dlpack(numgrad.to_dlpack(t)),
               "numpy": np.from_dlpack,
               "numgrad": numgrad.from_dlpack,
               "numgrad_legacy": lambda t: numgrad.from_dlpack(t.__dlpack__())}[consumer]
    t, storage = _exported()
    out = consume(t)
    del t
    collect()
    junk = [np.full(1000, 7.0) for _ in range(50)]  # would reuse freed memory
    assert storage() is not None
    got = out.numpy() if consumer != "numpy" else out
    np.testing.assert_array_equal(got, np.arange(1000.))
    del out, got, junk
    collect()
    assert storage() is None  # the consumer called the deleter: nothing leaks


@pytest.mark.parametrize("versioned", [False, True])
def test_unconsumed_capsule_frees_the_storage(versioned):
    t, storage = _exported()
    c = t.__dlpack__(max_version=(1, 0) if versioned else None)
    del t
    collect()
    assert storage() is not None  # the capsule holds it
    del c
    collect()
    assert storage() is None


@pytest.mark.parametrize("versioned", [False, True])
def test_consumed_capsule_leaves_the_storage_to_its_consumer(versioned):
    t, storage = _exported()
    c = t.__dlpack__(max_version=(1, 0) if versioned else None)
    x = torch.from_dlpack(c)
    del t, c  # the renamed capsule's destructor must not free what x uses
    collect()
    assert storage() is not None
    assert x[999].item() == 999.0
    del x
    collect()
    assert storage() is None


@pytest.mark.parametrize("source", ["numpy", "torch"])
def test_imported_storage_lives_as_long_as_the_tensor(source):
    a = np.arange(500.)
    storage = weakref.ref(a)
    src = a if source == "numpy" else torch.from_numpy(a)
    t = numgrad.from_dlpack(src)
    del a, src
    collect()
    assert storage() is not None
    view = t[::7]
    del t
    collect()
    assert storage() is not None and view.tolist() == list(np.arange(500.)[::7])
    del view
    collect()
    assert storage() is None  # the holder called the producer's deleter


def test_refused_capsule_is_left_to_its_producer():
    a = np.arange(4, dtype=np.uint16)
    storage = weakref.ref(a)
    c = a.__dlpack__(max_version=(1, 0))
    with pytest.raises(TypeError, match="uint16"):
        numgrad.from_dlpack(c)
    assert _get_name(c) == b"dltensor_versioned"  # not consumed
    del a, c
    collect()
    assert storage() is None  # NumPy's capsule destructor freed it


def test_consumer_error_passes_through_the_capsule_destructor():
    # NumPy drops a capsule it refuses while its error is set: the capsule's C destructor (NumPy's, since
    # numgrad's capsules are NumPy's) keeps that error intact (a Python callback would turn it into a
    # SystemError) and frees the storage.
    base = np.arange(6.)
    storage = weakref.ref(base)

    class GPUArray:
        requires_grad = False
        device = numgrad.device("cuda", 0)
        __cuda_array_interface__ = {"shape": (6,), "strides": None, "typestr": "<f8",
                                    "data": (base.ctypes.data, False), "version": 3}

        def __dlpack__(self, **kwargs):
            return numgrad.Tensor.__dlpack__(self, max_version=kwargs.get("max_version"))

        def __dlpack_device__(self):
            return (2, 0)

    with pytest.raises(RuntimeError, match="Unsupported device"):
        np.from_dlpack(GPUArray())
    del base
    collect()
    assert storage() is None


# ---- hand-made producers: byte_offset, NULL strides, flags, deleter calls ---------------------------
class Producer:
    """A DLManagedTensor[Versioned] over a NumPy array, built by hand, counting its deleter's calls."""

    def __init__(self, arr, offset_elements=0, shape=None, strides=None, versioned=False, flags=0,
                 dl_dtype=None, device=(1, 0), version=(1, 0)):
        self.arr, self.calls = arr, 0
        shape = arr.shape if shape is None else shape
        self.shape = (ctypes.c_int64 * max(len(shape), 1))(*shape)
        self.strides = None if strides is None else (ctypes.c_int64 * max(len(strides), 1))(*strides)
        self.managed = dlpack.DLManagedTensorVersioned() if versioned else dlpack.DLManagedTensor()
        dl = self.managed.dl_tensor
        dl.data = arr.ctypes.data
        dl.byte_offset = offset_elements * arr.itemsize
        dl.device = dlpack.DLDevice(*device)
        dl.ndim = len(shape)
        dl.dtype = dlpack.DLDataType(*(dl_dtype or {np.dtype(np.float64): (2, 64), np.dtype(np.int64): (0, 64),
                                                    np.dtype(np.float32): (2, 32)}[arr.dtype]), 1)
        dl.shape = ctypes.cast(self.shape, ctypes.POINTER(ctypes.c_int64))
        if self.strides is not None:
            dl.strides = ctypes.cast(self.strides, ctypes.POINTER(ctypes.c_int64))
        self.deleter = ctypes.CFUNCTYPE(None, ctypes.c_void_p)(self._delete)
        self.managed.deleter = ctypes.cast(self.deleter, ctypes.c_void_p).value
        if versioned:
            self.managed.version = dlpack.DLPackVersion(*version)
            self.managed.flags = flags
        self.capsule = _capsule_new(ctypes.addressof(self.managed),
                                    b"dltensor_versioned" if versioned else b"dltensor", None)

    def _delete(self, ptr):
        assert ptr == ctypes.addressof(self.managed)
        self.calls += 1


@pytest.mark.parametrize("versioned", [False, True])
def test_byte_offset_and_compact_strides(versioned):
    a = np.arange(20.)
    p = Producer(a, offset_elements=5, shape=(3, 4), versioned=versioned)  # strides NULL: compact
    t = numgrad.from_dlpack(p.capsule)
    assert t.shape == (3, 4) and t.stride() == (4, 1) and t.data_ptr() == a.ctypes.data + 40
    np.testing.assert_array_equal(t.numpy(), np.arange(5., 17.).reshape(3, 4))
    a[5] = -1
    assert t[0, 0].item() == -1  # shared
    assert p.calls == 0
    del t
    collect()
    assert p.calls == 1


def test_explicit_strides_in_elements_and_zero_d():
    a = np.arange(12, dtype=np.int64)
    p = Producer(a, offset_elements=1, shape=(2, 3), strides=(1, 4))
    t = numgrad.from_dlpack(p.capsule)
    np.testing.assert_array_equal(t.numpy(), np.arange(12)[1:].reshape(-1)[[[0, 4, 8], [1, 5, 9]]])
    assert t.stride() == (1, 4)
    p0 = Producer(a, offset_elements=7, shape=())
    t0 = numgrad.from_dlpack(p0.capsule)
    assert t0.shape == () and t0.item() == 7
    del t, t0
    collect()
    assert p.calls == p0.calls == 1


def test_read_only_flag_gives_a_read_only_tensor():
    a = np.arange(3.)
    p = Producer(a, versioned=True, flags=dlpack.FLAG_READ_ONLY)
    t = numgrad.from_dlpack(p.capsule)
    assert t.tolist() == [0.0, 1.0, 2.0] and not t._data.flags.writeable
    with pytest.raises(ValueError, match="read-only"):
        t.numpy()[0] = 1
    ro = np.arange(3.)
    ro.flags.writeable = False
    t = numgrad.from_dlpack(ro)  # NumPy exports a read-only array with the flag set
    assert not t._data.flags.writeable and t.tolist() == [0.0, 1.0, 2.0]


def test_read_only_export_sets_the_flag():
    ro = np.ones((3, 1))
    ro.flags.writeable = False
    e = numgrad.from_dlpack(ro).expand(3, 4)  # a broadcast view of read-only memory stays read-only
    c = e.__dlpack__(max_version=(1, 0))
    m = managed_of(c)
    assert m.flags & dlpack.FLAG_READ_ONLY
    assert [m.dl_tensor.strides[i] for i in range(2)] == [1, 0]
    assert not np.from_dlpack(e).flags.writeable
    np.testing.assert_array_equal(torch.from_dlpack(e).numpy(), np.ones((3, 4)))


def test_legacy_export_of_a_read_only_view():
    # NumPy refuses a legacy capsule of a read-only array (it cannot say read-only); torch exports any
    # tensor that way, and so does numgrad, sharing the memory and keeping it alive.
    base = numgrad.ones(3, 1)
    root = weakref.ref(numgrad.lazy.root(base._data))
    e = base.expand(3, 4)
    for c in (numgrad.to_dlpack(e), e.__dlpack__(), e.__dlpack__(max_version=(0, 8))):
        assert _get_name(c) == b"dltensor"
        dl = managed_of(c).dl_tensor
        assert dl.data == e.data_ptr() and [dl.strides[i] for i in range(2)] == [1, 0]
    x = torch.utils.dlpack.from_dlpack(numgrad.to_dlpack(e))
    assert x.stride() == (1, 0) and x.data_ptr() == e.data_ptr()
    u = numgrad.from_dlpack(e.__dlpack__())
    assert u.stride() == (1, 0) and u.data_ptr() == e.data_ptr() and u.tolist() == [[1.0] * 4] * 3
    del base, e, u, c, dl
    collect()
    assert root() is not None
    np.testing.assert_array_equal(x.numpy(), np.ones((3, 4)))
    del x
    collect()
    assert root() is None


def test_copy_of_a_read_only_view():
    e = numgrad.arange(3.).reshape(3, 1).expand(3, 2)
    for c in (e.__dlpack__(copy=True), e.__dlpack__(copy=True, max_version=(1, 0))):
        dl = managed_of(c).dl_tensor
        assert dl.data != e.data_ptr()
        x = torch.from_dlpack(c)
        assert x.tolist() == [[0.0, 0.0], [1.0, 1.0], [2.0, 2.0]]
    assert managed_of(e.__dlpack__(copy=True, max_version=(1, 0))).flags & dlpack.FLAG_IS_COPIED


@pytest.mark.parametrize("kind,match", [((4, 0), "kDLOpenCL"), ((99, 0), "99")])
def test_unsupported_device_is_refused_and_not_consumed(kind, match):
    p = Producer(np.arange(3.), device=kind)
    with pytest.raises(BufferError, match=f"unsupported device {match}"):
        numgrad.from_dlpack(p.capsule)
    assert _get_name(p.capsule) == b"dltensor" and p.calls == 0


def test_unsupported_major_version_is_refused():
    p = Producer(np.arange(3.), versioned=True, version=(2, 0))
    with pytest.raises(BufferError, match=r"DLPack 2\.0 is not supported"):
        numgrad.from_dlpack(p.capsule)
    assert _get_name(p.capsule) == b"dltensor_versioned"


def test_pinned_host_memory_reads_as_cpu():
    p = Producer(np.arange(3.), device=(3, 0))  # kDLCUDAHost, as torch exports pinned tensors
    assert numgrad.from_dlpack(p.capsule).tolist() == [0.0, 1.0, 2.0]


# ---- errors ----------------------------------------------------------------------------------------
def test_requires_grad_cannot_be_exported():
    t = numgrad.ones(2, requires_grad=True)
    msg = r"^Can't export tensors that require gradient, use tensor\.detach\(\)$"
    for call in (lambda x: x.__dlpack__(), lambda x: x.__dlpack__(max_version=(1, 0)), torch.from_dlpack,
                 np.from_dlpack, numgrad.from_dlpack, lambda x: (x * 2).__dlpack__()):
        with pytest.raises(RuntimeError, match=msg):
            call(t)
        with pytest.raises(BufferError, match=msg):  # torch 2.x raises BufferError
            call(t)
    assert torch.from_dlpack(t.detach()).tolist() == [1.0, 1.0]
    with torch.no_grad():
        assert torch.utils.dlpack.to_dlpack(torch.ones(1, requires_grad=True)) is not None
    assert numgrad.to_dlpack(t) is not None  # as torch's to_dlpack, it does not check


@pytest.mark.parametrize("make,name", [
    (lambda: np.ones(3, np.complex64), "complex64"), (lambda: np.arange(3, dtype=np.uint16), "uint16"),
    (lambda: torch.ones(3, dtype=torch.bfloat16), "bfloat16"),
    (lambda: torch.ones(3, dtype=torch.complex128), "complex128"),
], ids=lambda v: v if isinstance(v, str) else "")
def test_unsupported_dtype(make, name):
    with pytest.raises(TypeError, match=f"unsupported dtype {name};.*float16, float32, float64, int8, int16, int32, "
                                        "int64, uint8 or bool"):
        numgrad.from_dlpack(make())


@pytest.mark.parametrize("dtype", ["int8", "int16", "int32", "uint8", "float16"])
def test_narrow_dtypes_both_ways(dtype):
    theirs = torch.arange(5).to(getattr(torch, dtype))
    ours = numgrad.from_dlpack(theirs)
    assert repr(ours) == repr(theirs) and ours.data_ptr() == theirs.data_ptr()
    back = torch.from_dlpack(numgrad.arange(5).to(getattr(numgrad, dtype)))
    assert repr(back) == repr(theirs)


def test_export_arguments():
    t = numgrad.arange(3.)
    with pytest.raises(TypeError, match="stream must be"):
        t.__dlpack__(stream="s")
    with pytest.raises(BufferError, match="stream should be None on cpu"):
        t.__dlpack__(stream=5)
    assert torch.from_dlpack(t.__dlpack__(stream=-1)).tolist() == [0.0, 1.0, 2.0]
    with pytest.raises(BufferError, match="to device"):
        t.__dlpack__(dl_device=(2, 0))
    c = t.__dlpack__(dl_device=(1, 0), copy=False, max_version=(1, 0))
    assert managed_of(c).flags == 0
    copied = t.__dlpack__(copy=True, max_version=(1, 0))
    assert managed_of(copied).flags == dlpack.FLAG_IS_COPIED
    x = torch.from_dlpack(copied)
    x[0] = 9.0
    assert t[0].item() == 0.0 and x.tolist() == [9.0, 1.0, 2.0]


def test_from_dlpack_copy_and_device():
    a = np.arange(3.)
    t = numgrad.from_dlpack(a, copy=True)
    a[0] = 5
    assert t.tolist() == [0.0, 1.0, 2.0]
    t = numgrad.from_dlpack(a, device="cpu", copy=False)
    a[1] = 6
    assert t.tolist() == [5.0, 6.0, 2.0]

    class Old:  # a producer from before DLPack 1.0 keywords
        def __init__(self):
            self.a = np.arange(2.)

        def __dlpack__(self, stream=None):
            return self.a.__dlpack__()

        def __dlpack_device__(self):
            return (1, 0)

    old = Old()
    t = numgrad.from_dlpack(old, copy=True)
    old.a[0] = 4
    assert t.tolist() == [0.0, 1.0]
    t = numgrad.from_dlpack(old)
    old.a[1] = 3
    assert t.tolist() == [4.0, 3.0]
    with pytest.raises(AssertionError, match="not supported when ext_tensor is already a DLPack capsule"):
        numgrad.from_dlpack(a.__dlpack__(), copy=True)


def test_module_paths():
    import numgrad.utils.dlpack as utils_dlpack
    assert utils_dlpack is dlpack and numgrad.utils.dlpack is dlpack
    assert numgrad.from_dlpack is dlpack.from_dlpack and numgrad.to_dlpack is dlpack.to_dlpack
    assert numgrad.Tensor.__dlpack__ is dlpack.__dlpack__
    assert dlpack.__doc__.splitlines()[0].startswith("DLPack interop")


# ---- CUDA branches -------------------------------------------------------------------------------
class FakeCUDATensor:
    """What the CUDA export branch reads of a numgrad CUDA tensor, over host memory."""

    requires_grad = False

    def __init__(self, arr, index=1, contiguous=False):
        self.arr, self.device = arr, numgrad.device("cuda", index)
        self.desc = {"shape": arr.shape, "strides": None if contiguous else arr.strides,
                     "typestr": arr.dtype.str, "data": (arr.ctypes.data, False), "version": 3}

    @property
    def __cuda_array_interface__(self):
        return self.desc

    def clone(self):
        return FakeCUDATensor(self.arr.copy(), self.device.index)


@pytest.fixture
def fake_as_tensor(monkeypatch):
    """dlpack.cuda_tensor (numgrad.cuda.as_tensor), reading the __cuda_array_interface__ holder as host memory."""
    seen = []

    class Host:
        def __init__(self, owner):
            d = owner.__cuda_array_interface__
            self.owner = owner
            self.__array_interface__ = {"shape": d["shape"], "strides": d["strides"], "typestr": d["typestr"],
                                        "data": d["data"], "version": 3}

    def as_tensor(obj):
        desc = obj.__cuda_array_interface__
        seen.append((desc, weakref.ref(obj)))
        arr = np.asarray(Host(obj))
        return numgrad.Tensor._make(arr, numgrad.dtypes.from_numpy_dtype(arr.dtype))

    monkeypatch.setattr(dlpack, "cuda_tensor", as_tensor)  # what numgrad.cuda.as_tensor calls
    return seen


@pytest.mark.parametrize("versioned", [False, True])
def test_cuda_export_branch(versioned):
    host = np.arange(12, dtype=np.float32).reshape(3, 4).T  # a strided view
    fake = FakeCUDATensor(host, index=1)
    assert numgrad.Tensor.__dlpack_device__(fake) == (2, 1)
    c = numgrad.Tensor.__dlpack__(fake, max_version=(1, 0) if versioned else None)
    m = managed_of(c)
    dl = m.dl_tensor
    assert (dl.device.device_type, dl.device.device_id) == (2, 1)
    assert (dl.dtype.code, dl.dtype.bits, dl.dtype.lanes) == (2, 32, 1)
    assert [dl.shape[i] for i in range(2)] == [4, 3] and [dl.strides[i] for i in range(2)] == [1, 4]
    assert dl.data == host.ctypes.data
    contiguous = FakeCUDATensor(np.zeros((2, 3), np.int64), index=0, contiguous=True)
    c2 = numgrad.Tensor.__dlpack__(contiguous)
    dl = managed_of(c2).dl_tensor
    assert [dl.strides[i] for i in range(2)] == [3, 1] and (dl.device.device_type, dl.device.device_id) == (2, 0)
    assert (dl.dtype.code, dl.dtype.bits) == (0, 64)
    # the capsule keeps the CUDA tensor alive until it is deleted
    ref = weakref.ref(fake)
    del fake
    collect()
    assert ref() is not None
    del c, m
    collect()
    assert ref() is None


def test_cuda_export_copy_read_only_and_empty():
    host = np.arange(6.)
    fake = FakeCUDATensor(host, index=1, contiguous=True)
    c = numgrad.Tensor.__dlpack__(fake, max_version=(1, 0), copy=True)
    m = managed_of(c)
    assert m.flags == dlpack.FLAG_IS_COPIED and m.dl_tensor.data != host.ctypes.data
    assert (m.dl_tensor.device.device_type, m.dl_tensor.device.device_id) == (2, 1)
    fake.desc["data"] = (host.ctypes.data, True)  # read-only GPU memory
    c = numgrad.Tensor.__dlpack__(fake, max_version=(1, 0))
    m = managed_of(c)
    assert m.flags == dlpack.FLAG_READ_ONLY and m.dl_tensor.data == host.ctypes.data
    c = numgrad.Tensor.__dlpack__(fake)  # a legacy capsule cannot say read-only: exported as torch does
    assert _get_name(c) == b"dltensor" and managed_of(c).dl_tensor.data == host.ctypes.data
    empty = FakeCUDATensor(np.zeros((2, 0)), contiguous=True)
    empty.desc["data"] = (0, False)  # no GPU memory behind an empty tensor
    for versioned in (None, (1, 0)):
        c = numgrad.Tensor.__dlpack__(empty, max_version=versioned)
        dl = managed_of(c).dl_tensor
        assert not dl.data and (dl.device.device_type, dl.ndim, dl.shape[0], dl.shape[1]) == (2, 2, 2, 0)


def test_cuda_export_synchronizes_for_another_stream(monkeypatch):
    calls = []
    monkeypatch.setattr(dlpack, "synchronize", lambda device=None: calls.append(device))  # numgrad.cuda's
    fake = FakeCUDATensor(np.ones(2))
    numgrad.Tensor.__dlpack__(fake, stream=1)
    numgrad.Tensor.__dlpack__(fake, stream=-1)
    assert calls == []
    numgrad.Tensor.__dlpack__(fake, stream=12345)
    assert len(calls) == 1


@pytest.mark.parametrize("versioned", [False, True])
def test_cuda_import_branch(fake_as_tensor, versioned):
    host = np.arange(12.).reshape(3, 4)[:, ::2]
    fake = FakeCUDATensor(host, index=0)
    t = numgrad.from_dlpack(numgrad.Tensor.__dlpack__(fake, max_version=(1, 0) if versioned else None))
    (desc, holder), = fake_as_tensor
    assert desc == {"shape": (3, 2), "strides": (32, 16), "typestr": "<f8", "data": (host.ctypes.data, False),
                    "version": 3}
    np.testing.assert_array_equal(t.numpy(), host)
    host[0, 0] = -5  # the same memory
    assert t[0, 0].item() == -5
    ref = weakref.ref(fake)
    del fake
    collect()
    assert ref() is not None and holder() is not None
    del t
    collect()
    assert holder() is None and ref() is None  # the holder called the deleter


def test_cuda_import_from_an_object_passes_the_stream(fake_as_tensor):
    host = np.arange(4.)
    seen = {}

    class GPUArray:
        def __dlpack__(self, **kwargs):
            seen.update(kwargs)
            return numgrad.Tensor.__dlpack__(FakeCUDATensor(host, contiguous=True), **kwargs)

        def __dlpack_device__(self):
            return (2, 0)

    t = numgrad.from_dlpack(GPUArray())
    assert seen == {"max_version": (1, 0), "stream": 1}
    assert fake_as_tensor[0][0]["strides"] == (8,) and t.tolist() == [0.0, 1.0, 2.0, 3.0]


@pytest.mark.parametrize("versioned", [False, True])
def test_cuda_import_of_a_hand_made_capsule(fake_as_tensor, versioned):
    a = np.arange(20.)
    p = Producer(a, offset_elements=5, shape=(3, 4), versioned=versioned, device=(2, 0),
                 flags=dlpack.FLAG_READ_ONLY if versioned else 0)  # strides NULL: compact
    t = numgrad.from_dlpack(p.capsule)
    assert _get_name(p.capsule).startswith(b"used_")
    (desc, holder), = fake_as_tensor
    assert desc == {"shape": (3, 4), "strides": None, "typestr": "<f8", "data": (a.ctypes.data + 40, versioned),
                    "version": 3}
    np.testing.assert_array_equal(t.numpy(), np.arange(5., 17.).reshape(3, 4))
    assert p.calls == 0
    del t
    collect()
    assert p.calls == 1 and holder() is None


def test_cuda_capsule_is_checked_before_it_is_consumed(fake_as_tensor):
    p = Producer(np.arange(3, dtype=np.uint16), dl_dtype=(1, 16), device=(2, 0))
    with pytest.raises(TypeError, match="unsupported dtype uint16"):
        numgrad.from_dlpack(p.capsule)
    assert _get_name(p.capsule) == b"dltensor" and p.calls == 0 and fake_as_tensor == []


CUDA_SIM_SCRIPT = textwrap.dedent("""
    import gc
    import numpy as np
    import numgrad
    from numgrad import dlpack
    t = numgrad.arange(12.).reshape(3, 4).cuda()
    v = t.t()
    assert v.__dlpack_device__() == (2, 0)
    for versioned in (None, (1, 0)):
        u = numgrad.from_dlpack(v.__dlpack__(max_version=versioned))
        assert u.device.type == "cuda" and u.shape == (4, 3) and u.stride() == v.stride()
        assert u.data_ptr() == v.data_ptr()
        np.testing.assert_array_equal(u.cpu().numpy(), np.arange(12.).reshape(3, 4).T)
    u = numgrad.from_dlpack(t)
    u.add_(100.0)  # shares t's GPU memory
    assert t[0, 0].item() == 100.0
    del t, v
    gc.collect()
    assert u.cpu().numpy()[2, 3] == 111.0
    c = u.__dlpack__(dl_device=(1, 0), max_version=(1, 0))  # a host copy
    m = dlpack.DLManagedTensorVersioned.from_address(dlpack._capsule_get_pointer(c, dlpack.VERSIONED))
    assert m.dl_tensor.device.device_type == 1 and m.flags & dlpack.FLAG_IS_COPIED
    assert numgrad.from_dlpack(c).tolist()[0][0] == 100.0
    for x in (numgrad.zeros(2, 0, 3, device="cuda"), numgrad.tensor(3.5, device="cuda"),
              numgrad.tensor([True, False], device="cuda")):
        for versioned in (None, (1, 0)):
            y = numgrad.from_dlpack(x.__dlpack__(max_version=versioned))
            assert y.device.type == "cuda" and y.shape == x.shape and y.dtype == x.dtype
            assert y.cpu().tolist() == x.cpu().tolist()
    c = u.__dlpack__(max_version=(1, 0), copy=True)
    m = dlpack.DLManagedTensorVersioned.from_address(dlpack._capsule_get_pointer(c, dlpack.VERSIONED))
    assert m.dl_tensor.device.device_type == 2 and m.flags & dlpack.FLAG_IS_COPIED
    w = numgrad.from_dlpack(c)
    assert w.device.type == "cuda" and w.data_ptr() != u.data_ptr()
    w.add_(1.0)
    assert u[0, 0].item() == 100.0 and w[0, 0].item() == 101.0
    print("OK")
""")


def test_cuda_round_trip_under_the_simulator():
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1")
    r = subprocess.run([sys.executable, "-c", CUDA_SIM_SCRIPT], env=env, capture_output=True, text=True,
                       timeout=600, cwd=REPO)
    assert r.returncode == 0 and r.stdout.strip().endswith("OK"), r.stdout + r.stderr

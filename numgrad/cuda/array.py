"""DeviceArray: a strided view of GPU memory with the ndarray attributes numgrad's ops read (shape,
strides, dtype, views), copying to the host only when asked (`to_host`, counted in TRANSFERS)."""
import math

import numpy as np
from numba import cuda

from ..kernels import cuda as target
from ..tensor import CUDA0

TRANSFERS = {"to_host": 0, "to_device": 0}  # copies between host and GPU, for the no-round-trip tests

NUMPY_ON_CUDA = ("can't convert cuda:0 device type tensor to numpy. Use Tensor.cpu() to copy the tensor to "
                 "host memory first.")


class _Flags:
    __slots__ = ("c_contiguous",)

    def __init__(self, c):
        self.c_contiguous = c


class DeviceArray:
    """`buf` is a flat contiguous Numba device array holding the whole storage; this view reads
    buf[offset + sum(index * stride)], strides in bytes as NumPy's (0 for broadcast dims)."""
    __slots__ = ("buf", "offset", "shape", "strides", "dtype", "__weakref__")
    __array_priority__ = 2000
    numgrad_device = CUDA0
    NUMPY_ON_CUDA = NUMPY_ON_CUDA

    def __init__(self, buf, shape, strides=None, offset=0):
        self.buf, self.offset, self.shape, self.dtype = buf, offset, tuple(shape), np.dtype(buf.dtype)
        self.strides = tuple(strides) if strides is not None else _c_strides(self.shape, self.dtype.itemsize)

    # ---- ndarray attributes ---------------------------------------------------------------------
    @property
    def ndim(self):
        return len(self.shape)

    @property
    def size(self):
        return math.prod(self.shape)

    @property
    def itemsize(self):
        return self.dtype.itemsize

    @property
    def nbytes(self):
        return self.size * self.itemsize

    @property
    def base(self):
        return None  # views share `buf`; lazy.root keys storage by it (see root_key)

    @property
    def flags(self):
        return _Flags(self.strides == _c_strides(self.shape, self.itemsize) or self.size <= 1)

    @property
    def T(self):
        return self.transpose()

    def element_strides(self):
        return tuple(s // self.itemsize for s in self.strides)

    # ---- views ----------------------------------------------------------------------------------
    def view(self, dtype=None):
        if dtype is not None and np.dtype(dtype) != self.dtype:
            raise NotImplementedError("reinterpreting GPU memory as another dtype is not supported")
        return DeviceArray(self.buf, self.shape, self.strides, self.offset)

    def transpose(self, *axes):
        if len(axes) == 1 and isinstance(axes[0], (tuple, list)):
            axes = tuple(axes[0])
        axes = axes or tuple(reversed(range(self.ndim)))
        return DeviceArray(self.buf, [self.shape[a] for a in axes], [self.strides[a] for a in axes], self.offset)

    def swapaxes(self, a, b):
        axes = list(range(self.ndim))
        axes[a], axes[b] = axes[b], axes[a]
        return self.transpose(axes)

    def reshape(self, *shape, order="C"):
        if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = tuple(shape[0])
        shape = _infer(shape, self.size)
        src = self if self.flags.c_contiguous else self.copy()
        return DeviceArray(src.buf, shape, None, src.offset)

    def ravel(self):
        return self.reshape(-1)

    def broadcast_to(self, shape):
        shape = tuple(shape)
        pad = len(shape) - self.ndim
        strides = [0] * pad + list(self.strides)
        for i, (d, s) in enumerate(zip(shape[pad:], self.shape)):
            if s != d:
                if s != 1:
                    raise ValueError(f"operands could not be broadcast together with shapes {self.shape} {shape}")
                strides[pad + i] = 0
        return DeviceArray(self.buf, shape, strides, self.offset)

    def expand_dims(self, axis):
        shape, strides = list(self.shape), list(self.strides)
        shape.insert(axis, 1)
        strides.insert(axis, 0)
        return DeviceArray(self.buf, shape, strides, self.offset)

    def squeeze(self, axis=None):
        axes = range(self.ndim) if axis is None else [axis] if isinstance(axis, int) else list(axis)
        keep = [i for i in range(self.ndim) if not (i in axes and self.shape[i] == 1)]
        return DeviceArray(self.buf, [self.shape[i] for i in keep], [self.strides[i] for i in keep], self.offset)

    def __getitem__(self, index):
        """Basic indexing (ints, slices, None, Ellipsis) as a view."""
        if not isinstance(index, tuple):
            index = (index,)
        if any(i is Ellipsis for i in index):
            k = index.index(Ellipsis)
            fill = self.ndim - sum(1 for i in index if i is not None and i is not Ellipsis)
            index = index[:k] + (slice(None),) * fill + index[k + 1:]
        shape, strides, offset, dim = [], [], self.offset, 0
        for i in index:
            if i is None:
                shape.append(1)
                strides.append(0)
                continue
            size, stride = self.shape[dim], self.strides[dim]
            if isinstance(i, slice):
                start, stop, step = i.indices(size)
                count = max(0, len(range(start, stop, step)))
                offset += start * stride // self.itemsize if count else 0
                shape.append(count)
                strides.append(stride * step)
            elif isinstance(i, (int, np.integer)):
                if not -size <= i < size:
                    raise IndexError(f"index {i} is out of bounds for dimension {dim} with size {size}")
                offset += (i % size) * stride // self.itemsize
            else:
                raise NotImplementedError("advanced indexing of CUDA tensors is not supported by numgrad")
            dim += 1
        shape += self.shape[dim:]
        strides += self.strides[dim:]
        return DeviceArray(self.buf, shape, strides, offset)

    # ---- copies ---------------------------------------------------------------------------------
    def flat_buffer(self):
        """A flat contiguous device array of the values (the storage itself when this view is
        C-contiguous, else a fresh gathered copy): what elementwise kernels read."""
        if self.flags.c_contiguous:
            return self.buf[self.offset:self.offset + self.size] if self.size else cuda.device_array(0, self.dtype)
        return self.copy().buf

    def contiguous(self, dtype=None):
        if (dtype is None or np.dtype(dtype) == self.dtype) and self.flags.c_contiguous:
            return self
        return self.copy(dtype)

    def copy(self, dtype=None):
        out = empty(self.shape, dtype or self.dtype)
        copy_into(out, self)
        return out

    def astype(self, dtype, copy=True):
        dtype = np.dtype(dtype)
        if dtype == self.dtype and not copy:
            return self
        return self.copy(dtype)

    def to_host(self):
        """The values as a NumPy array: the only device-to-host copy."""
        TRANSFERS["to_host"] += 1
        return self.flat_buffer().copy_to_host().reshape(self.shape) if self.size else np.empty(self.shape, self.dtype)

    def pointer(self):
        if target.SIMULATOR:  # the simulator's device memory is host memory
            base = self.buf._ary.ctypes.data
        else:
            base = self.buf.__cuda_array_interface__["data"][0]
        return base + self.offset * self.itemsize

    @property
    def __cuda_array_interface__(self):
        c = self.flags.c_contiguous
        return {"shape": self.shape, "strides": None if c else self.strides, "typestr": self.dtype.str,
                "data": (self.pointer() if self.size else 0, False), "version": 3}

    def __array__(self, dtype=None, copy=None):
        raise TypeError(NUMPY_ON_CUDA)

    def __array_function__(self, func, types, args, kwargs):
        """NumPy's view functions that the shape ops call; any other NumPy function on GPU memory is an
        op numgrad has not ported to CUDA, which must fail loudly rather than copy to the host."""
        method = _VIEW_FUNCTIONS.get(func.__name__)
        if method is None:
            raise NotImplementedError(f"numgrad: {func.__name__} is not implemented for CUDA tensors")
        return getattr(args[0], method)(*args[1:], **kwargs)

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        raise NotImplementedError(f"numgrad: {ufunc.__name__} is not implemented for CUDA tensors")

    def __len__(self):
        if not self.shape:
            raise TypeError("len() of a 0-d tensor")
        return self.shape[0]

    def __repr__(self):
        return f"DeviceArray(shape={self.shape}, dtype={self.dtype})"


_VIEW_FUNCTIONS = {"reshape": "reshape", "transpose": "transpose", "swapaxes": "swapaxes", "squeeze": "squeeze",
                   "expand_dims": "expand_dims", "broadcast_to": "broadcast_to", "ravel": "ravel",
                   "ascontiguousarray": "contiguous"}


def _c_strides(shape, itemsize):
    strides, step = [], itemsize
    for d in reversed(shape):
        strides.append(step)
        step *= max(d, 1)
    return tuple(reversed(strides))


def _infer(shape, size):
    shape = list(shape)
    if -1 in shape:
        k = shape.index(-1)
        rest = math.prod(d for i, d in enumerate(shape) if i != k)
        shape[k] = size // rest if rest else 0
    if math.prod(shape) != size:
        raise ValueError(f"cannot reshape array of size {size} into shape {tuple(shape)}")
    return tuple(shape)


# ---- making and copying ---------------------------------------------------------------------------
def empty(shape, dtype):
    shape = tuple(shape)
    return DeviceArray(cuda.device_array(max(math.prod(shape), 1), np.dtype(dtype)), shape)


def full(shape, value, dtype):
    out = empty(shape, dtype)
    fill(out, value)
    return out


def zeros(shape, dtype):
    return full(shape, 0, dtype)


def from_host(arr):
    """A new device array holding NumPy array `arr`'s values (a host-to-device copy)."""
    TRANSFERS["to_device"] += 1
    arr = np.ascontiguousarray(arr)
    flat = arr.reshape(-1) if arr.size else np.zeros(1, arr.dtype)
    return DeviceArray(cuda.to_device(flat), arr.shape)


def fill(out, value):
    target.launch(_fill_kernel(out.dtype.name), out.size, out.flat_buffer(), out.dtype.type(value)) \
        if out.flags.c_contiguous else copy_into(out, from_host(np.full(1, value, out.dtype)).broadcast_to(out.shape))


MAX_DIMS = 8


def copy_into(dst, src):
    """dst[...] = src (same shape; any strides on either side, src may broadcast; values cast to dst's
    dtype) by one strided-copy kernel on the GPU."""
    src = src.broadcast_to(dst.shape) if src.shape != dst.shape else src
    n = dst.size
    if not n:
        return
    if dst.ndim > MAX_DIMS:
        raise NotImplementedError(f"CUDA tensors have at most {MAX_DIMS} dims in numgrad")
    pad = MAX_DIMS - dst.ndim
    shape = (1,) * pad + dst.shape
    sst = (0,) * pad + src.element_strides()
    dstr = (0,) * pad + dst.element_strides()
    kernel = _copy_kernel(src.dtype.name, dst.dtype.name)
    target.launch(kernel, n, src.buf, src.offset, dst.buf, dst.offset, *shape, *sst, *dstr)


def _copy_source():
    dims = range(MAX_DIMS)
    shape = ", ".join(f"d{k}" for k in dims)
    sst = ", ".join(f"s{k}" for k in dims)
    dst = ", ".join(f"t{k}" for k in dims)
    walk = "".join(f"        q = r % d{k}\n        r = r // d{k}\n        ps += q * s{k}\n        pd += q * t{k}\n"
                   for k in reversed(dims))
    return (f"{target.HEADER}\n\n{target.KERNEL_DECORATOR}\n"
            f"def kernel(n, src, src_offset, dst, dst_offset, {shape}, {sst}, {dst}):\n"
            f"    {target.GRID_LOOP}\n        r = i\n        ps = src_offset\n        pd = dst_offset\n{walk}"
            f"        dst[pd] = src[ps]\n")


def _copy_kernel(src_dtype, dst_dtype):
    # one source for every dtype pair: Numba specialises it per argument types (and casts on the store)
    return target.source_kernel("cuda_strided_copy", _copy_source())


def _fill_kernel(dtype_name):
    source = (f"{target.HEADER}\n\n{target.KERNEL_DECORATOR}\ndef kernel(n, out, value):\n"
              f"    {target.GRID_LOOP}\n        out[i] = value\n")
    return target.source_kernel("cuda_fill", source)

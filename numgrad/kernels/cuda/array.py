"""DeviceArray: a strided view of GPU memory with the ndarray attributes numgrad's ops read (shape,
strides, dtype, views), copying to the host only when asked (`to_host`, counted in TRANSFERS)."""
import math

import numpy as np
from numba import cuda

from . import kernels as target, matmul as cuda_matmul, reduce, runtime
from ..._core.device import CUDA0
from ..._core.dtypes import _BY_NP as DTYPES_BY_NUMPY
from ..arrays import BFLOAT16, WIDER, is_float, kernel_dtype, length_error
from ...spec.table import ELEMENTWISE, REDUCTIONS

TRANSFERS = {"to_host": 0, "to_device": 0}  # copies between host and GPU, for the no-round-trip tests

NUMPY_ON_CUDA = ("can't convert cuda:0 device type tensor to numpy. Use Tensor.cpu() to copy the tensor to "
                 "host memory first.")


class _Flags:
    __slots__ = ("c_contiguous", "writeable")

    def __init__(self, c, writeable):
        self.c_contiguous, self.writeable = c, writeable


class DeviceArray:
    """`buf` is a flat contiguous Numba device array holding the whole storage; this view reads
    buf[offset + sum(index * stride)], strides in bytes as NumPy's (0 for broadcast dims)."""
    __slots__ = ("buf", "offset", "_shape", "strides", "dtype", "__weakref__")
    __array_priority__ = 2000
    numgrad_device = CUDA0
    NUMPY_ON_CUDA = NUMPY_ON_CUDA

    def __init__(self, buf, shape, strides=None, offset=0):
        self.buf, self.offset, self._shape, self.dtype = buf, offset, tuple(shape), np.dtype(buf.dtype)
        self.strides = tuple(strides) if strides is not None else _c_strides(self.shape, self.dtype.itemsize)

    # ---- ndarray attributes ---------------------------------------------------------------------
    @property
    def shape(self):
        return self._shape

    @shape.setter
    def shape(self, shape):
        """In-place reshape as NumPy's: allowed when it needs no copy (a contiguous view, or only size-1
        dims added or removed), else AttributeError, which the shape ops take as "copy instead"."""
        shape = _infer(tuple(shape), self.size)
        if self.flags.c_contiguous:
            self._shape, self.strides = shape, _c_strides(shape, self.itemsize)
            return
        kept = [(d, st) for d, st in zip(self._shape, self.strides) if d != 1]
        if [d for d in shape if d != 1] != [d for d, _ in kept]:
            raise AttributeError("Incompatible shape for in-place modification. Use `.reshape()` to make a copy "
                                 "with the desired shape.")
        it = iter(st for _, st in kept)
        self._shape, self.strides = shape, tuple(next(it) if d != 1 else 0 for d in shape)

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
        # broadcast views are read-only, as NumPy's
        return _Flags(self.strides == _c_strides(self.shape, self.itemsize) or self.size <= 1,
                      all(st or d <= 1 for d, st in zip(self.shape, self.strides)))

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

    # numpy-style arithmetic for code written against ndarrays (losses, optimizers): generated kernels
    def __add__(self, other):
        return arithmetic("add", self, other)

    def __radd__(self, other):
        return arithmetic("add", other, self)

    def __sub__(self, other):
        return arithmetic("sub", self, other)

    def __rsub__(self, other):
        return arithmetic("sub", other, self)

    def __mul__(self, other):
        return arithmetic("mul", self, other)

    def __rmul__(self, other):
        return arithmetic("mul", other, self)

    def __truediv__(self, other):
        return arithmetic("div", self, other)

    def __rtruediv__(self, other):
        return arithmetic("div", other, self)

    def __matmul__(self, other):
        return matmul(self, other)

    def __pow__(self, other):
        return arithmetic("pow", self, other)

    def __neg__(self):
        return arithmetic("neg", self)

    def __lt__(self, other):
        return arithmetic("lt", self, other)

    def __le__(self, other):
        return arithmetic("le", self, other)

    def __gt__(self, other):
        return arithmetic("gt", self, other)

    def __ge__(self, other):
        return arithmetic("ge", self, other)

    def __eq__(self, other):
        return arithmetic("eq", self, other)

    def __ne__(self, other):
        return arithmetic("ne", self, other)

    __hash__ = object.__hash__  # identity, as before __eq__ was defined elementwise

    def __or__(self, other):
        return arithmetic("logical_or", self, other)

    def __and__(self, other):
        return arithmetic("logical_and", self, other)

    def sum(self, axis=None, dtype=None, keepdims=False):
        """NumPy's sum on the GPU (block reductions), accumulated in float64 or int64."""
        axes = tuple(range(self.ndim)) if axis is None else (axis,) if isinstance(axis, int) else tuple(axis)
        axes = tuple(sorted(a % self.ndim for a in axes)) if self.ndim else ()
        kept = tuple(1 if i in axes else d for i, d in enumerate(self.shape)) if keepdims else\
            tuple(d for i, d in enumerate(self.shape) if i not in axes)
        acc = "float64" if is_float(self.dtype) else "int64"
        want = dtype or (self.dtype if is_float(self.dtype) else np.dtype(np.int64))
        if not axes or not self.size:
            return (self.astype(acc) if axes else self.astype(want)).reshape(kept) if self.size else\
                zeros(kept, want)
        x, outer, K, inner = reduce.layout(self.astype(kernel_dtype(self.dtype), copy=False), axes)
        out, _ = reduce.run_reduction("sum", REDUCTIONS["sum"].update, x, outer, K, inner, acc)
        return DeviceArray(out, kept).astype(want, copy=False)

    def mean(self, axis=None, keepdims=False):
        total = self.sum(axis, np.float64, keepdims)
        count = self.size // max(1, total.size) if self.size else 0
        return (total / count if count else full(total.shape, np.nan, np.float64)).astype(self.dtype)

    def any(self):
        """Whether any element is true: a control-flow read of one number from the GPU."""
        return bool(self.astype(np.bool_).sum().to_host())

    def dot(self, other):
        return matmul(self, other)

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

    def __setitem__(self, index, value):
        """Basic-index assignment on the GPU: from a scalar, a NumPy array (copied up) or a DeviceArray."""
        view = self[index]
        if isinstance(value, DeviceArray):
            copy_into(view, value)
        elif isinstance(value, np.ndarray):
            copy_into(view, from_host(value))
        else:
            fill(view, value)

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

    def astype(self, dtype, copy=True, order="K"):
        """A copy cast to `dtype` (C order whatever `order` says: GPU results are C order)."""
        dtype = np.dtype(dtype)
        if dtype == self.dtype and not copy:
            return self
        return self.copy(dtype)

    def to_host(self):
        """The values as a NumPy array: the only device-to-host copy."""
        TRANSFERS["to_host"] += 1
        if not self.size:
            return np.empty(self.shape, self.dtype)
        if self.dtype == BFLOAT16:  # the driver copies through the buffer protocol, which has no bfloat16: its bits
            return self.flat_buffer().view(UINT16).copy_to_host().view(BFLOAT16).reshape(self.shape)
        return self.flat_buffer().copy_to_host().reshape(self.shape)

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
        """np.matmul and the arithmetic ufuncs (also in place, `out=`) run as GPU kernels; the rest
        fail loudly rather than copy to the host."""
        out = kwargs.pop("out", None)
        if method == "__call__" and ufunc is np.matmul and out is None and not kwargs:
            return matmul(*inputs)
        entry = _UFUNC_ENTRIES.get(ufunc.__name__)
        if method != "__call__" or entry is None or kwargs:
            raise NotImplementedError(f"numgrad: {ufunc.__name__} is not implemented for CUDA tensors")
        return arithmetic(entry, *inputs, out=out[0] if out else None)

    def __len__(self):
        if not self.shape:
            raise TypeError("len() of a 0-d tensor")
        return self.shape[0]

    def __repr__(self):
        return f"DeviceArray(shape={self.shape}, dtype={self.dtype})"


# NumPy ufuncs that numgrad's NumPy-written ops call, as op-table entries
_UFUNC_ENTRIES = {"add": "add", "subtract": "sub", "multiply": "mul", "divide": "div", "power": "pow",
                  "maximum": "maximum", "minimum": "minimum", "less": "lt", "greater": "gt", "less_equal": "le",
                  "greater_equal": "ge", "equal": "eq", "not_equal": "ne", "logical_or": "logical_or",
                  "logical_and": "logical_and", "sqrt": "sqrt", "exp": "exp", "log": "log", "log1p": "log1p",
                  "expm1": "expm1", "negative": "neg", "absolute": "abs", "tanh": "tanh"}
_VIEW_FUNCTIONS = {"dot": "dot", "reshape": "reshape", "transpose": "transpose", "swapaxes": "swapaxes",
                   "squeeze": "squeeze",
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
    shape = (shape,) if isinstance(shape, (int, np.integer)) else tuple(shape)
    return DeviceArray(runtime.track(cuda.device_array(max(math.prod(shape), 1), np.dtype(dtype))), shape)


def full(shape, value, dtype):
    out = empty(shape, dtype)
    fill(out, value)
    return out


def zeros(shape, dtype):
    return full(shape, 0, dtype)


def from_host(arr):
    """A new device array holding NumPy array `arr`'s values (a host-to-device copy)."""
    TRANSFERS["to_device"] += 1
    arr = np.asarray(arr)
    shape = arr.shape  # (np.ascontiguousarray would make a 0-d array 1-d)
    flat = arr.reshape(-1).copy() if arr.size else np.zeros(1, arr.dtype)
    if flat.dtype == BFLOAT16:  # moved as its bits (the driver's copy takes no bfloat16 buffer), then viewed back
        return DeviceArray(runtime.track(cuda.to_device(flat.view(UINT16)).view(BFLOAT16)), shape)
    return DeviceArray(runtime.track(cuda.to_device(flat)), shape)


def fill(out, value):
    """out[...] = value: a fill kernel over contiguous storage, else a broadcast copy of one value."""
    if out.flags.c_contiguous and out.dtype == BFLOAT16:  # its bits, rounded on the host as the CPU's np.full
        target.launch(_fill_kernel("uint16"), out.size, bits(out.flat_buffer()),
                      np.asarray(value, BFLOAT16).view(np.uint16)[()])
    elif out.flags.c_contiguous:
        target.launch(_fill_kernel(out.dtype.name), out.size, out.flat_buffer(), out.dtype.type(value))
    else:
        copy_into(out, from_host(np.full(1, value, out.dtype)).reshape(()))


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
    plan = copy_plan(src.dtype, dst.dtype)
    if plan is None:  # through float32 (bfloat16 as ml_dtypes converts it: a double rounds twice, as on the CPU)
        between = empty(dst.shape, FLOAT32)
        copy_into(between, src)
        copy_into(dst, between)
        return
    convert, src_view, dst_view = plan
    pad = MAX_DIMS - dst.ndim
    shape = (1,) * pad + dst.shape
    sst = (0,) * pad + src.element_strides()
    dstr = (0,) * pad + dst.element_strides()
    target.launch(_copy_kernel(convert), n, _viewed(src.buf, src_view), src.offset, _viewed(dst.buf, dst_view),
                  dst.offset, *shape, *sst, *dstr)


def copy_plan(src_dtype, dst_dtype):
    """How the copy kernel converts `src_dtype` to `dst_dtype`: (its conversion, a template of the value read, the
    dtypes the source and the destination buffers are viewed as), or None for a copy that goes through float32: bfloat16 from or to a type
    other than float32, float16 to bool. bfloat16 is always moved as its uint16 bits, float32 as its uint32 bits
    when converted to or from bfloat16 (cuda_math's rounding)."""
    src_dtype, dst_dtype = np.dtype(src_dtype), np.dtype(dst_dtype)
    if src_dtype == FLOAT16 and dst_dtype == BOOL:  # (NVVM refuses half to i1; through float32, the same truth)
        return None
    to_bf16, from_bf16 = dst_dtype == BFLOAT16, src_dtype == BFLOAT16
    if to_bf16 != from_bf16:
        if (src_dtype if to_bf16 else dst_dtype) != FLOAT32:
            return None
        return ("float32_bits_to_bfloat16({})", UINT32, UINT16) if to_bf16 else \
            ("bfloat16_to_float32_bits({})", UINT16, UINT32)
    if dst_dtype != src_dtype and dst_dtype.kind in "iu" and (dst_dtype in WIDER or src_dtype == FLOAT16):
        # wraps, as a GPU's store does (the simulator's NumPy refuses to); a float goes through int64 first, as
        # c10::convert does (-2.5 is 254 as uint8 where the GPU's cvt would saturate to 0), and a half through
        # float32 before that (exact), since the GPU's half-to-integer conversion rounds to nearest (7.5 gave 8
        # on an H200) where c10::convert truncates
        read = "np.int64(np.float32({}))" if src_dtype == FLOAT16 else "np.int64({})" if src_dtype.kind == "f" else "{}"
        return f"np.{dst_dtype.name}({read})", src_dtype, dst_dtype
    return "{}", bits_dtype(src_dtype), bits_dtype(dst_dtype)


FLOAT32, UINT16, UINT32 = np.dtype(np.float32), np.dtype(np.uint16), np.dtype(np.uint32)
FLOAT16, BOOL = np.dtype(np.float16), np.dtype(np.bool_)


def bits_dtype(dtype):
    """The dtype a kernel is given a buffer of `dtype` as: bfloat16 as its uint16 bits (kernels move or convert them,
    never compute on them; ml_dtypes' type is not one Numba's CUDA target is sure to take), others as they are."""
    return UINT16 if dtype == BFLOAT16 else np.dtype(dtype)


def _viewed(buf, dtype):
    return buf if buf.dtype == dtype else buf.view(dtype)


def bits(buf):
    """Device buffer `buf` viewed as bits_dtype says."""
    return _viewed(buf, bits_dtype(np.dtype(buf.dtype)))


def _copy_source(convert="{}"):
    dims = range(MAX_DIMS)
    shape = ", ".join(f"d{k}" for k in dims)
    sst = ", ".join(f"s{k}" for k in dims)
    dst = ", ".join(f"t{k}" for k in dims)
    walk = "".join(f"        q = r % d{k}\n        r = r // d{k}\n        ps += q * s{k}\n        pd += q * t{k}\n"
                   for k in reversed(dims))
    return (f"{target.HEADER}\n\n{target.KERNEL_DECORATOR}\n"
            f"def kernel(n, src, src_offset, dst, dst_offset, {shape}, {sst}, {dst}):\n"
            f"    {target.GRID_LOOP}\n        r = i\n        ps = src_offset\n        pd = dst_offset\n{walk}"
            f"        dst[pd] = {convert.format('src[ps]')}\n")


def _copy_kernel(convert="{}"):
    """One source for every dtype pair (Numba specialises it per argument types, and casts on the store); a
    bfloat16 conversion (cuda_math's, on bits) or a cast to a narrow integer is a source of its own."""
    label = "".join(c for c in convert.replace("np.", "").replace("(", "_") if c.isalnum() or c == "_").strip("_")
    return target.source_kernel("cuda_strided_copy" + (f"_{label}" if label else ""), _copy_source(convert))


def _fill_kernel(dtype_name):
    source = (f"{target.HEADER}\n\n{target.KERNEL_DECORATOR}\ndef kernel(n, out, value):\n"
              f"    {target.GRID_LOOP}\n        out[i] = value\n")
    return target.source_kernel("cuda_fill", source)


# ---- arithmetic and products --------------------------------------------------------------------------
def run_elementwise(name, inputs, outputs, args, out_dtypes, n, dtype_name, outs=None):
    """cpu.kernels.run_elementwise on the GPU: `args` are flat contiguous device arrays or scalars; returns
    flat DeviceArrays (`outs`, flat contiguous DeviceArrays, if given)."""
    args = [target.raw(a) for a in args]
    is_array = tuple(target.is_device_array(a) for a in args)
    for a, is_arr in zip(args, is_array):  # one grid-stride range indexes every array
        if is_arr and a.size != n:
            raise length_error(name, n, a)
    kernel = target.elementwise_kernel(name, inputs, is_array, outputs, dtype_name)
    if outs is None:
        outs = [empty((n,), d) for d in out_dtypes]
    for o in outs:
        if o.size != n:
            raise length_error(name, n, o)
    outs = [o if isinstance(o, DeviceArray) else DeviceArray(o, (n,)) for o in outs]
    target.launch(kernel, n, *args, *[o.flat_buffer() for o in outs])
    return outs


def arithmetic(name, *operands, out=None):
    """The op table's kernel for `name` on DeviceArrays and scalars (NumPy-style: the arrays' result
    dtype), written to `out` when given (a DeviceArray of the broadcast shape)."""
    entry = ELEMENTWISE[name]
    arrays = [v for v in operands if isinstance(v, DeviceArray)]
    shape = np.broadcast_shapes(*(v.shape for v in arrays))
    dtype = np.result_type(*(v.dtype for v in arrays))
    if dtype in WIDER:  # computed in its kernel type and stored back (rounded, or wrapped), as on the CPU
        wide = arithmetic(name, *(v.astype(WIDER[dtype]) if isinstance(v, DeviceArray) else v for v in operands))
        result = wide if entry.kind == "compare" else wide.astype(dtype)
        if out is None:
            return result
        copy_into(out, result)
        return out
    args = [v.broadcast_to(shape).contiguous(dtype).flat_buffer() if isinstance(v, DeviceArray) else dtype.type(v)
            for v in operands]
    n = math.prod(shape)
    out_dtype = np.dtype(np.bool_) if entry.kind == "compare" else dtype
    target_out = out if out is not None and out.flags.c_contiguous and out.dtype == out_dtype else None
    (flat,) = run_elementwise(name, entry.inputs, entry.forward_outputs, args, (out_dtype,), n, dtype.name,
                              outs=[target_out.reshape(-1)] if target_out is not None else None)
    result = flat.reshape(shape)
    if out is not None and target_out is None:
        copy_into(out, result)
        return out
    return out if out is not None else result


def matmul(a, b):
    """np.matmul for DeviceArrays (float32/float64): the tiled shared-memory kernel of
    kernels/cuda/matmul.py reading transposed and broadcast operands in place through their strides."""
    if a.dtype == b.dtype and a.dtype in WIDER and is_float(a.dtype):
        # half types accumulate in float and round once, as cuBLAS does for torch (and the CPU's BLAS path)
        return matmul(a.astype(FLOAT32), b.astype(FLOAT32)).astype(a.dtype)
    if a.dtype != b.dtype or a.dtype.name not in ("float32", "float64"):
        word = DTYPES_BY_NUMPY[a.dtype].word if a.dtype in DTYPES_BY_NUMPY else a.dtype
        raise RuntimeError(f'"addmm_cuda" not implemented for \'{word}\'')
    drop_first, drop_last = a.ndim == 1, b.ndim == 1
    if drop_first:
        a = a.expand_dims(0)
    if drop_last:
        b = b.expand_dims(1)
    M, K = a.shape[-2:]
    N = b.shape[-1]
    batch_shape = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    if len(batch_shape) > 1:  # several batch dims: contiguous operands fold them into one
        a = a.broadcast_to(batch_shape + (M, K)).contiguous().reshape(-1, M, K)
        b = b.broadcast_to(batch_shape + (K, N)).contiguous().reshape(-1, K, N)
    else:
        a = a.broadcast_to(batch_shape + (M, K)) if a.ndim < 3 else a.broadcast_to(batch_shape + (M, K))
        b = b.broadcast_to(batch_shape + (K, N))
    batch = math.prod(batch_shape)
    a3 = a if a.ndim == 3 else a.expand_dims(0)
    b3 = b if b.ndim == 3 else b.expand_dims(0)
    out = empty((batch, M, N), a.dtype)
    cuda_matmul.matmul(a3.buf, a3.offset, a3.element_strides(), b3.buf, b3.offset, b3.element_strides(),
                       out.buf, batch, M, N, K)
    shape = batch_shape + ((M,) if not drop_first else ()) + ((N,) if not drop_last else ())
    return out.reshape(shape)


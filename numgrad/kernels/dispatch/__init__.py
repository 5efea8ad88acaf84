"""The one place that decides CPU or CUDA, with fused.py, indexing.py and optim.py beside it.

Array helpers that serve host (NumPy) and GPU (DeviceArray) storage alike, device arguments, and kernel
launches on the array's device. numba.cuda is imported only when a GPU array exists or is asked for."""

import functools

import numpy as np

from ..._core.device import CPU, CUDA0, device
from ..arrays import WIDER, is_float, kernel_dtype, numpy_floats, on_gpu, widened
from ..cpu import checksum as cpu_checksum
from ..cpu import kernels as cpu_kernels
from ..cpu import pool as cpu_pool
from ..cpu import softmax as cpu_softmax
from ..cpu import threads as cpu_threads
from ..cuda import runtime as cuda_runtime
from .. import tape
from .lazy_cuda import cuda

# the dtypes the CPU's hand-written row loops (layer_norm, nll_loss, rows added at repeated indices) take
ROW_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))


def full(shape, value, np_dtype, like=None, gpu=False):
    """`value` everywhere in a new array of `shape`: on the GPU when `gpu` is true or array `like` lives
    there, else a NumPy array."""
    if gpu or (like is not None and on_gpu(like)):
        return tape.call(cuda().array.full, shape, value, np_dtype)
    return tape.call_into("out", _host_full, shape, value, np_dtype)


def _host_full(shape, value, np_dtype, out=None):
    if out is None:
        return np.full(shape, value, np_dtype)
    np.copyto(out, value, casting="unsafe")
    return out


def _prepare_host_full(result, shape, value, np_dtype):
    """A replay of a recorded fill: ndarray.fill with the value as the fill cast it (the seed gradient of a
    loss refills in 0.1 us where np.copyto's casting takes 0.6)."""
    if result.size == 0:
        return functools.partial(np.copyto, result, value, casting="unsafe")
    return functools.partial(result.fill, result.flat[0])


_host_full.prepare = _prepare_host_full


def empty(shape, np_dtype, like):
    """A new uninitialised array of `shape` on the device of array `like`."""
    if on_gpu(like):
        return cuda().array.empty(shape, np_dtype)
    return np.empty(shape, np_dtype)


def zeros(shape, np_dtype, like):
    return full(shape, 0, np_dtype, like)


def c_order(arr):
    """`arr` in C order: torch's reductions, indexing, cat and stack make contiguous results where NumPy's
    follow the input's memory order (order 'K'). GPU arrays are C order already."""
    if isinstance(arr, np.ndarray) and not arr.flags.c_contiguous:
        return tape.call_into("out", _host_copy, arr)
    return arr


def _host_copy(arr, np_dtype=None, out=None):
    """A C-order copy of host array `arr` (cast to `np_dtype`), into `out` when given (a replay)."""
    if out is None:
        with np.errstate(all="ignore"):  # (np.ascontiguousarray would make a 0-d array 1-d)
            return np.array(arr, np_dtype, order="C")
    with np.errstate(all="ignore"):
        np.copyto(out, arr, casting="unsafe")
    return out


def _prepare_host_copy(result, arr, np_dtype=None):
    """A leaner replay of a recorded copy (numgrad.compile's tape): entering np.errstate costs about a
    microsecond, as much as the whole copy of a small array, and only a cast that can overflow needs it.
    A 0-d float narrowing (a float32 sum accumulated in float64) assigns the Python value when it fits,
    rounding as the cast does; anything else that could overflow keeps the errstate path."""
    if np.can_cast(arr.dtype, result.dtype, "safe"):
        return functools.partial(np.copyto, result, arr)
    if result.ndim == 0 and arr.dtype.kind == "f" and result.dtype.kind == "f":
        largest = float(np.finfo(result.dtype).max)

        def assign():
            value = arr.item()
            if -largest <= value <= largest:  # (NaN and the infinities take the errstate path: exact too)
                result[()] = value
            else:
                _host_copy(arr, out=result)
        return assign
    return None


_host_copy.prepare = _prepare_host_copy


def reshape_copy(arr, shape):
    """`arr`'s values in C order with `shape`: the copy reshape makes where no view has that shape."""
    if on_gpu(arr):
        return tape.call(_device_reshape_copy, arr, shape)
    return tape.call_into("out", _host_reshape_copy, arr, shape)


def _device_reshape_copy(arr, shape):
    return arr.reshape(shape).copy()  # (a contiguous device array reshapes to a view of its memory)


def _host_reshape_copy(arr, shape, out=None):
    # one strided pass into the result seen in arr's shape (np.reshape(arr, shape).copy() copies twice, and
    # its first copy of a permuted array took 80 us where this takes 13 for the GPT block's (8, 64, 2, 32))
    if out is None:
        out = cpu_pool.empty(arr.size, arr.dtype, shape)
    np.copyto(out.reshape(arr.shape), arr)
    return out


def asarray(values, np_dtype=None):
    """`values` (an array, host or GPU, or a scalar) as an array of `np_dtype`, copied only to convert."""
    if on_gpu(values):
        return values if np_dtype is None else tape.call(values.astype, np_dtype, copy=False)
    if np_dtype is None or getattr(values, "dtype", None) == np_dtype:
        return np.asarray(values, np_dtype)
    if isinstance(values, np.ndarray):  # a conversion of computed values: a replay converts again
        return tape.call_into("out", _host_copy, values, np_dtype)
    with np.errstate(all="ignore"):  # a cast to inf (or of NaN) without NumPy's warning: torch is silent
        return np.asarray(values, np_dtype)


def contiguous(arr):
    """`arr` in C order (itself when it already is)."""
    if on_gpu(arr):
        return arr.contiguous() if arr.flags.c_contiguous else tape.call(arr.contiguous)
    return arr if arr.flags.c_contiguous else tape.call_into("out", _host_copy, arr)


def strided(flat, shape, strides, offset):
    """A view of flat contiguous array `flat` with element `strides`, starting `offset` elements in."""
    if on_gpu(flat):
        return cuda().array.DeviceArray(flat.buf, shape, [s * flat.itemsize for s in strides], flat.offset + offset)
    return np.lib.stride_tricks.as_strided(flat[offset:], shape, [s * flat.itemsize for s in strides])


def element_offset(view, root):
    """Where view `view` starts inside array `root`, in elements."""
    if on_gpu(view):
        return view.offset - root.offset
    return (view.__array_interface__["data"][0] - root.__array_interface__["data"][0]) // root.itemsize


def device_of_array(arr):
    return CPU if arr.__class__ is np.ndarray else getattr(arr, "numgrad_device", CPU)


def storage(arr):
    """The array owning `arr`'s memory: a GPU view's buffer, or the last of a NumPy view's bases."""
    if arr.__class__ is np.ndarray:
        base = arr.base
        if base is None:  # the usual case first: every tensor access asks (lazy.before_access)
            return arr
    elif on_gpu(arr):
        return arr.buf
    else:
        base = arr.base
    while True:
        if isinstance(base, np.ndarray):
            arr, base = base, base.base
        elif isinstance(getattr(base, "base", None), np.ndarray):  # as_strided's holder (an expanded view)
            base = base.base
        else:
            return arr


def owns_memory(arr):
    """Whether array `arr` is nobody's view: it owns its memory, or it is a whole buffer from the CPU pool
    (whose base is the pool's memory, not an array)."""
    return arr.base is None or (arr.__class__ is np.ndarray and cpu_pool.is_buffer(arr))


def data_ptr(arr):
    """The address of `arr`'s first element, host or GPU."""
    return arr.__array_interface__["data"][0] if arr.__class__ is np.ndarray else arr.pointer()


def host_view(arr):
    """`arr` itself when it is a host array; GPU memory raises (Tensor.numpy() copies nothing)."""
    if arr.__class__ is not np.ndarray:
        raise TypeError(arr.NUMPY_ON_CUDA)
    return arr


def host_checksums(roots):
    """A checksum of each host array's bytes (numgrad.compile's check for writes it did not record)."""
    return cpu_checksum.checksums(roots)


def is_host(arr):
    """Whether `arr` is a host (NumPy) array."""
    return arr.__class__ is np.ndarray


def as_device(d):
    """A device argument (None, 'cpu', 'cuda', 'cuda:0', an int GPU index or a device) as a device;
    a CUDA device is checked to exist (torch's errors)."""
    if d is None:
        return CPU
    if isinstance(d, int) and not isinstance(d, bool):
        d = device("cuda", d)
    d = device(d)
    if d.type == "cuda":
        cuda_runtime.lazy_init()
        if (d.index or 0) >= cuda_runtime.device_count():
            raise RuntimeError("CUDA error: invalid device ordinal\nCUDA kernel errors might be asynchronously "
                               "reported at some other API call, so the stacktrace below might be incorrect.")
        return CUDA0 if not d.index else d
    return CPU


def by_device(arrays, cpu, cuda):
    """The implementation for the arrays' device: `cuda` when any of them lives on the GPU, else `cpu`.
    Ops with a whole GPU formulation (nll_loss as tensor ops, say) hand both and let this choose."""
    return cuda if any(a is not None and on_gpu(a) for a in arrays) else cpu


def require_host(op, *arrays):
    """Refuses GPU arrays for an op that only has a host implementation (im2col and pooling windows are
    NumPy views)."""
    if any(on_gpu(a) for a in arrays):
        raise NotImplementedError(f"numgrad: {op} is not implemented for CUDA tensors yet; move the input "
                                  "and the layer to the CPU")


def expand_scalar(arr, shape):
    """0-d array `arr` seen with `shape` through stride-0 dims (a writable view on the host, as before)."""
    if on_gpu(arr):
        return arr.broadcast_to(shape)
    return np.ndarray(shape, arr.dtype, arr, 0, (0,) * len(shape))


def broadcast_view(arr, shape):
    """`arr` seen with `shape` (torch's expand): broadcast dims get stride 0; a host view stays writable, as
    torch's expanded tensors are (writes that would meet themselves are refused by the ops, see below)."""
    if on_gpu(arr):
        return arr.broadcast_to(shape)
    lead = len(shape) - arr.ndim
    strides = [0 if n != size else st for st, n, size in zip(arr.strides, arr.shape, shape[lead:])]
    for i in reversed(range(lead)):  # torch's infer_expand_geometry: a new dim of size 1 continues the next one
        strides.insert(0, shape[i + 1] * strides[0] if shape[i] == 1 and arr.ndim else 0)
    return np.lib.stride_tricks.as_strided(arr, shape, strides, writeable=arr.flags.writeable)


# ---- memory overlap, as torch judges it before an in-place write (aten/src/ATen/MemoryOverlap.cpp) ----

def internal_overlap(arr):
    """Whether several elements of `arr` are one memory location: a dim of size above 1 with stride 0 (an
    empty array has no elements to share one)."""
    return arr.size > 0 and any(st == 0 and n > 1 for st, n in zip(arr.strides, arr.shape))


def _dense(arr):
    """Whether `arr`'s elements fill one block of memory without gaps, in some order of its dims."""
    expected = arr.itemsize
    for st, n in sorted((st, n) for st, n in zip(arr.strides, arr.shape) if n != 1):
        if st != expected:
            return False
        expected *= n
    return True


def overlap(a, b, exact=False):
    """torch's get_overlap_status of arrays `a` and `b`: "full" (the same elements in the same order),
    "partial" (some memory shared otherwise) or None. Like torch, it judges only two dense arrays (other
    layouts are too hard to tell and pass). With `exact`, "full" means the same data in any layout (one
    address, shape and strides), as copy_'s early return asks."""
    if exact and a.shape == b.shape and a.strides == b.strides and data_ptr(a) == data_ptr(b):
        return "full"
    if a.size == 0 or b.size == 0 or not _dense(a) or not _dense(b):
        return None
    a0, b0 = data_ptr(a), data_ptr(b)
    a1, b1 = a0 + a.size * a.itemsize, b0 + b.size * b.itemsize
    if a0 == b0 and a1 == b1:
        return "partial" if a.strides != b.strides else "full"
    return "partial" if a0 < b1 and b0 < a1 else None


def place(arr, d):
    """Array `arr` on device `d`: itself when it lives there, else one copy between host and GPU."""
    if d.type == "cuda":
        return arr if on_gpu(arr) else from_host(arr)
    return to_host(arr)


def full_on(shape, value, np_dtype, d):
    """`value` everywhere in a new array of `shape` made on device `d` (filled there, no copy)."""
    return full(shape, value, np_dtype, gpu=d.type == "cuda")


def cat(arrays, axis, np_dtype):
    """np.concatenate cast to `np_dtype`; on the GPU, copies into slices of one new array."""
    return tape.call(_cat, arrays, axis, np_dtype)


def _cat(arrays, axis, np_dtype):
    if not on_gpu(arrays[0]):
        return c_order(np.concatenate(arrays, axis=axis, dtype=np_dtype, casting="unsafe"))
    copy_into, empty = cuda().array.copy_into, cuda().array.empty
    shape = list(arrays[0].shape)
    shape[axis] = sum(a.shape[axis] for a in arrays)
    data, offset = empty(shape, np_dtype), 0
    for a in arrays:
        size = a.shape[axis]
        copy_into(data[(slice(None),) * axis + (slice(offset, offset + size),)], a)
        offset += size
    return data


def _prepare_cat(result, arrays, axis, np_dtype):
    """A replay of a host concatenation writing into the trace's result (C order, as _cat made it) instead of
    a new array then copied; None on the GPU or where the result could overlap an input."""
    if result.__class__ is not np.ndarray or not result.flags.c_contiguous or \
            any(a.__class__ is not np.ndarray or np.may_share_memory(a, result) for a in arrays):
        return None
    return functools.partial(np.concatenate, arrays, axis=axis, casting="unsafe", out=result)  # out: its dtype


_cat.prepare = _prepare_cat


def stack(arrays, axis, np_dtype):
    """np.stack cast to `np_dtype`; on the GPU, copies into slices of one new array."""
    return tape.call(_stack, arrays, axis, np_dtype)


def _stack(arrays, axis, np_dtype):
    if not on_gpu(arrays[0]):
        return c_order(np.stack(arrays, axis=axis, dtype=np_dtype, casting="unsafe"))
    copy_into, empty = cuda().array.copy_into, cuda().array.empty
    ref = arrays[0].shape
    data = empty(ref[:axis] + (len(arrays),) + ref[axis:], np_dtype)
    for i, a in enumerate(arrays):
        copy_into(data[(slice(None),) * axis + (i,)], a)
    return data


def reduce(name, entry, data, axes, acc_dtype, kept, want_index=False):
    """Runs the op table's reduction `entry` over sorted non-empty `axes` (every extent > 0): the CPU
    kernels, or the GPU block reduction. Returns (values, flat positions) shaped `kept`."""
    return tape.call(_reduce, name, entry, data, axes, acc_dtype, kept, want_index)


def _reduce(name, entry, data, axes, acc_dtype, kept, want_index):
    data, acc_dtype = widened(data), kernel_dtype(acc_dtype)  # (narrow dtypes fold in their kernel type)
    if not on_gpu(data):
        combine = getattr(np, entry.combine) if entry.combine else None
        out, idx = cpu_kernels.run_reduction(name, entry.update, data, axes, acc_dtype, combine, want_index)
        return out.reshape(kept), idx.reshape(kept)
    cuda_reduce, DeviceArray = cuda().reduce, cuda().array.DeviceArray
    x, outer, K, inner = cuda_reduce.layout(data, axes)
    out, idx = cuda_reduce.run_reduction(name, entry.update, x, outer, K, inner, np.dtype(acc_dtype).name,
                                         want_index)
    return DeviceArray(out, kept), DeviceArray(idx, kept)


def float_sum(entry, data, axes, out_dtype, kept):
    """The op table's sum `entry` of floats over sorted non-empty `axes` (every extent > 0), accumulated in
    float64, returned from +0.0 (torch's sum of -0.0s is +0.0) as a C-order array of `out_dtype` shaped `kept`.
    On the host one recorded call (a bias gradient's column sum: three replay entries were one)."""
    if on_gpu(data):
        values, _ = reduce("sum", entry, data, axes, np.float64, kept)
        # a half type: torch's float sum, rounded once (as _host_float_sum)
        return asarray(asarray(numpy_op(np.add, values, 0.0), kernel_dtype(out_dtype)), out_dtype)
    return tape.call_into("out", _host_float_sum, entry, data, axes, np.dtype(out_dtype), kept)


def column_sums_into(data, out):
    """sum's float fold over the rows of a C-order 2-d host array, rounded into `out` (its row of sums): one call
    of kernels.column_sums with its float64 scratch row."""
    cpu_kernels.column_sums(data, np.empty(data.shape[1], np.float64), out.reshape(-1))


def small_float_sum(entry, data, axes, out_dtype, kept):
    """float_sum of a small host array outside a trace, float32 or float64: the fold's kernel called at once and
    its sums rounded by a kernel (no recorded call, no pool lease, no NumPy errstate to enter)."""
    if data.dtype in WIDER or tape.active or tape.profiler is not None:
        return float_sum(entry, data, axes, out_dtype, kept)
    if axes == (0,) and data.ndim == 2 and data.shape[0] and data.flags.c_contiguous:  # columns: one kernel call
        out = np.empty(kept, out_dtype)
        column_sums_into(data, out)
        return out
    values = cpu_kernels.fold_at_once("sum", entry.update, data, axes, np.float64)
    out = np.empty(kept, out_dtype)
    cpu_kernels.round_sums(values, out.reshape(-1))
    return out


@np.errstate(all="ignore")  # a float64 sum past float32's range rounds to inf without NumPy's warning, as in torch
def _host_float_sum(entry, data, axes, out_dtype, kept, out=None):
    values, _ = cpu_kernels.run_reduction("sum", entry.update, widened(data), axes, np.float64)
    if out_dtype in WIDER:  # a half type: torch's float sum, rounded once
        values = np.add(values, 0.0, dtype=np.float32).astype(out_dtype)
        return values.reshape(kept) if out is None else np.copyto(out, values.reshape(kept)) or out
    out = cpu_pool.empty(values.size, out_dtype, kept) if out is None else out
    np.add(values.reshape(kept), 0.0, out=out)  # the fold starts from the first element; + 0.0 makes -0.0 +0.0
    return out


def _prepare_host_float_sum(result, entry, data, axes, out_dtype, kept, out=None):
    """A replay of _host_float_sum: the fold's kernel bound to the arrays once, then the + 0.0 into the result.
    A half type keeps the plain replay: its data widens first (the kernels have no half type) and its sum
    rounds through float."""
    if data.dtype in WIDER or out_dtype in WIDER:
        return None
    bound = cpu_kernels.bind_reduction("sum", entry.update, data, axes, np.float64)
    if bound is None:
        return None
    fold, values = bound
    values = values.reshape(result.shape)

    @np.errstate(all="ignore")
    def replay():
        fold()
        np.add(values, 0.0, out=result)
    replay.describes = f"float sum of {data.shape} over {axes} (prepared)"
    return replay


_host_float_sum.prepare = _prepare_host_float_sum


def row_softmax(x, log):
    """(log_)softmax over the last dim of a host array by the CPU row kernels (GPU tensors compose it from
    reductions and a fused region instead)."""
    return tape.call_into("out", cpu_softmax.forward, x, log)


def row_softmax_pending(program, var, dtype, log):
    """row_softmax of `var` of fused `program` (host leaves), computed in the row loop, never stored."""
    return tape.call_into("out", cpu_softmax.forward_pending, program, var, log, np.dtype(dtype))


def row_softmax_backward(g, y, log):
    return tape.call_into("out", cpu_softmax.backward, g, y, log)


def row_softmax_backward_pending(program, var, y, log, riders=()):
    """row_softmax_backward for a gradient that is `var` of fused `program` (host leaves), computed in the row
    loop (see cpu/softmax.py); with it, vars `riders` of the program, each into a flat array of its own.
    Returns [the gradient, *the riders' arrays]."""
    return tape.call_into("out", cpu_softmax.backward_pending, program, var, y, log, riders)


def from_host(arr):
    """A GPU copy of host array `arr`."""
    return cuda().array.from_host(arr)


def to_host(arr):
    """`arr` as a host array: itself, or a copy of GPU memory (the only reads that leave the device)."""
    if arr.__class__ is np.ndarray:
        return arr
    tape.graph_break("GPU memory is read on the host")
    return arr.to_host()


def copy_into(dst, src):
    """Writes `src` into array `dst` (same shape), across devices when they differ."""
    tape.call(_copy_into, dst, src)


def _copy_into(dst, src):
    if dst.__class__ is np.ndarray:
        np.copyto(dst, to_host(src), casting="unsafe")
    else:
        cuda().array.copy_into(dst, src if on_gpu(src) else from_host(src))


def run_elementwise(name, inputs, outputs, args, out_dtypes, n, dtype_name, outs=None):
    """Runs an elementwise kernel (kernels.cpu.kernels.run_elementwise) on the CPU, or its CUDA twin when an
    argument lives on the GPU."""
    for a in args:
        if a.__class__ is not np.ndarray and not isinstance(a, (np.generic, int, float)):
            return tape.call_into("outs", cuda().array.run_elementwise, name, inputs, outputs, args, out_dtypes, n,
                                  dtype_name, outs=outs)
    return tape.call_into("outs", cpu_kernels.run_elementwise, name, inputs, outputs, args, out_dtypes, n,
                          dtype_name, outs=outs)


_SMALL_KERNELS = {}  # (name, which arguments are arrays, outputs, dtype name) -> the kernel: one lookup per small op


def run_small_elementwise(name, inputs, outputs, args, out_dtypes, n, dtype_name, outs=None):
    """run_elementwise for a small host computation outside a trace: the kernel called at once in this thread,
    into fresh arrays or `outs` (no recorded call, no pool lease, no thread hand-off; below SMALL_MAX elements
    they cost more than the loop itself). A profile times it as a kernel."""
    if tape.profiler is not None:
        return tape.profiler.kernel(_run_small_elementwise, (name, inputs, outputs, args, out_dtypes, n, dtype_name, outs), {})
    return _run_small_elementwise(name, inputs, outputs, args, out_dtypes, n, dtype_name, outs)


def _run_small_elementwise(name, inputs, outputs, args, out_dtypes, n, dtype_name, outs):
    kernel = small_elementwise_kernel(name, inputs, tuple([a.__class__ is np.ndarray for a in args]), outputs,
                                      dtype_name)
    if outs is None:
        outs = [np.empty(n, d) for d in out_dtypes]
    kernel(0, n, *args, *outs)
    return outs


def small_elementwise_kernel(name, inputs, is_array, outputs, dtype_name):
    """The host kernel(start, stop, *args, *outs) of the small-tensor path, looked up once per signature."""
    key = (name, is_array, outputs, dtype_name)
    kernel = _SMALL_KERNELS.get(key)
    if kernel is None:  # (the loader's key: `name` and `outputs` identify the inputs)
        kernel = _SMALL_KERNELS[key] = cpu_kernels.elementwise_kernel(name, inputs, is_array, outputs, dtype_name)
    return kernel


def bind_elementwise(name, inputs, outputs, args, refresh, n, dtype_name, outs):
    """A replay of run_elementwise with its arguments bound once (kernels.cpu.kernels.bind_elementwise), or None
    (GPU arguments, or a threaded range: the recorded call replays)."""
    if any(a.__class__ is not np.ndarray and not isinstance(a, (np.generic, int, float)) for a in (*args, *outs)):
        return None
    return cpu_kernels.bind_elementwise(name, inputs, outputs, args, refresh, n, dtype_name, outs)


def numpy_op(fn, *args, **kwargs):
    """fn(*args, **kwargs) for a NumPy function of arrays (a ufunc, say) whose result is a new array:
    recorded for numgrad.compile like the kernels. A NumPy scalar result (a ufunc of 0-d arrays) comes
    back as a 0-d array."""
    return tape.call(_array_result, fn, *args, **kwargs)


def _array_result(fn, *args, **kwargs):
    with np.errstate(all="ignore"):  # IEEE results without NumPy's warnings: torch is silent
        result = fn(*args, **kwargs)
    return np.asarray(result) if isinstance(result, np.generic) else result


def _ufunc_into(fn, args, kwargs, out):
    with np.errstate(all="ignore"):
        fn(*args, out=out, **kwargs)


def _prepare_numpy_op(result, fn, *args, **kwargs):
    """A ufunc's replay writes into the trace's result instead of a new array (then copied); a function
    with a `prepare` of its own (conv2d's, max_pool2d's) makes its replay itself."""
    own = getattr(fn, "prepare", None)
    if own is not None:
        return own(result, *args, **kwargs)
    if isinstance(fn, np.ufunc) and result.__class__ is np.ndarray and "out" not in kwargs and \
            all(a.__class__ is not np.ndarray or not np.may_share_memory(a, result) for a in args):
        return functools.partial(_ufunc_into, fn, args, kwargs, result)
    return None


_array_result.prepare = _prepare_numpy_op


def matmul(a, b):
    """np.matmul of two arrays (BLAS on the host, the GPU's kernel for device arrays)."""
    if on_gpu(a) or on_gpu(b):
        return tape.call(np.matmul, a, b)
    return tape.call_into("out", _host_matmul, a, b)


def _host_matmul(a, b, out=None):
    if a.dtype in WIDER:  # half types accumulate in float (BLAS), as torch's CPU gemm; narrow integers wrap
        wide = np.matmul(widened(a), widened(b))
        return wide.astype(a.dtype) if out is None else np.copyto(out, wide, casting="unsafe") or out
    return np.matmul(a, b) if out is None else np.matmul(a, b, out=out)


def _silent(call):
    """Prepared `call` run inside np.errstate(all="ignore"): a replayed NumPy product gives IEEE results (inf,
    NaN) without NumPy's warnings, as its eager op (torch is silent)."""
    @np.errstate(all="ignore")
    def replay():
        return call()
    replay.func = call.func  # (what a tape's listing names: NumPy's function)
    return replay


_host_matmul.prepare = lambda result, a, b, out=None: _silent(functools.partial(np.matmul, a, b, out=result))


def matmul_laid_out(a, b, shape, transposed=False, single_products=False):
    """The 2-d product a @ b of host arrays in new memory that the result owns (a gradient kept as a leaf's
    .grad without a copy), laid out as the tensor it is the gradient of: `shape`, its C-order values
    regrouped (a conv weight's), or with `transposed` the product's transpose stored column-major (the
    gradient of a column-major operand, as torch's mm backward makes it). One GEMM written in place, so
    the values are those of matmul(a, b); with `single_products` (an inner size of 1), a * b, as mm takes
    it then."""
    return tape.call_into("out", _host_matmul_laid_out, a, b, shape, transposed, single_products)


def _host_matmul_laid_out(a, b, shape, transposed, single_products, out=None):
    if out is None:
        out = np.empty(shape, a.dtype, order="F" if transposed else "C")
    product = _product_view(out, a, b, transposed)
    if single_products:
        np.multiply(a, b, out=product)
    else:
        _host_matmul(a, b, out=product)
    return out


def _product_view(out, a, b, transposed):
    """The C-contiguous view of laid-out result `out` that the product a @ b is written into."""
    return out.T if transposed else out.reshape(a.shape[0], b.shape[1])


def _prepare_matmul_laid_out(result, a, b, shape, transposed, single_products, out=None):
    fn = np.multiply if single_products else _host_matmul if a.dtype in WIDER else np.matmul
    return _silent(functools.partial(fn, a, b, out=_product_view(result, a, b, transposed)))


_host_matmul_laid_out.prepare = _prepare_matmul_laid_out


def add_into(out, a, b):
    """out = a + b by NumPy's ufunc (a GPU array's own kernel), `out` an array of the result's shape."""
    tape.call(np.add, a, b, out=out)


def get_num_threads():
    """The threads the CPU kernels split their work over (torch.get_num_threads)."""
    return cpu_threads.count()


def set_num_threads(n):
    """The CPU kernels split their work over `n` threads from now on (torch.set_num_threads)."""
    cpu_threads.set_count(n)

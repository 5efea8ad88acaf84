"""The device choice for indexing: takes, puts, bounds checks, masks and gather/scatter along a dim on host
(NumPy) or GPU (kernels/cuda/index.py) arrays, so that ops/indexing.py and nn never ask where an array lives."""
import functools
import math

import numpy as np

from ...spec.table import ELEMENTWISE
from .. import tape
from ..cpu import scatter as cpu_scatter
from . import ROW_FLOATS, from_host, full, on_gpu
from .lazy_cuda import cuda


def is_index_array(a):
    """Whether `a` is an index array (host or GPU) rather than a slice, int or None."""
    return isinstance(a, np.ndarray) or on_gpu(a)


def on_other_device(arr, index):
    """Whether index array `index` lives on the GPU while `arr` stays on the host (torch refuses it)."""
    return not on_gpu(arr) and on_gpu(index)


def host_scalar(arr):
    """A 0-d array's value on the host; a GPU one is read back (one number), as torch reads a 0-d index."""
    return arr.to_host() if on_gpu(arr) else arr


def first_out_of_bounds(a, lo, hi, skip=None, checked=False):
    """The first value of index array `a` outside [lo, hi] (values equal to `skip` allowed), or None.
    On the GPU the check reads a number back, so an index the forward already `checked` is not read again;
    on the host the check costs nothing and always runs."""
    if on_gpu(a):
        if checked:
            return None
        return cuda().index.first_out_of_bounds(a.contiguous(np.int64).flat_buffer(), lo, hi, skip)
    bad = (a < lo) | (a > hi)
    if skip is not None:
        bad &= a != skip
    bad = a[bad]
    return bad.flat[0] if bad.size else None


def nonzero(mask):
    """np.nonzero of a mask; a GPU mask reads its count back."""
    return cuda().index.nonzero(mask) if on_gpu(mask) else np.nonzero(mask)


def take(data, adv):
    """data[adv] with NumPy's advanced indexing, on the GPU for a GPU array."""
    return cuda().index.take(data, adv) if on_gpu(data) else data[adv]


def upload_indices(adv, like):
    """Advanced index `adv` with its host index arrays copied up once when `like` lives on the GPU."""
    if not on_gpu(like):
        return adv
    return tuple(from_host(a) if isinstance(a, np.ndarray) else a for a in adv)


def like_device(arr, like):
    """A host array or scalar as an array on the device of array `like` (itself on the host)."""
    if on_gpu(like) and not on_gpu(arr):
        return from_host(np.asarray(arr))
    return arr


def advanced_shape(region, adv):
    """The shape of region[adv]."""
    if on_gpu(region):
        return cuda().index.result_shape(region.shape, adv)
    return np.broadcast_to(np.empty((), bool), region.shape)[adv].shape


def write_region(data, basic, adv, vdata, accumulate):
    """data[basic][adv] = vdata (or += with repeated indices adding up when `accumulate`), in place: a
    recorded call, so numgrad.compile repeats the write (a write it did not see would leave a replay's
    buffer as the fill before it left it)."""
    tape.call(_write_region, data, basic, adv, vdata, accumulate)


def _write_region(data, basic, adv, vdata, accumulate):
    region = data[basic]
    if on_gpu(data):
        vdata = like_device(vdata, data)
        if adv is not None:
            cuda().index.put(region, adv, vdata, accumulate)
        else:
            region[...] = region + vdata if accumulate else vdata
        return
    if adv is None:
        if accumulate:
            region += vdata
        else:
            region[...] = vdata
    elif accumulate:
        if not _add_rows(region, adv, vdata):
            np.add.at(region, adv, vdata)
    else:
        region[adv] = vdata


def _add_rows(region, adv, vdata):
    """np.add.at(region, adv, vdata) as cpu.scatter's row loop where it applies (one int64 index array over
    the first dim of a C-order float region, values of the indexed shape and the region's dtype); False
    elsewhere, and for an index out of range (np.add.at then raises NumPy's error)."""
    if len(adv) != 1 or region.ndim == 0 or region.dtype not in ROW_FLOATS or not region.flags.c_contiguous:
        return False
    (index,) = adv
    if not isinstance(index, np.ndarray) or index.ndim != 1 or index.dtype != np.int64 or not index.size \
            or not region.size:  # nothing to add (NumPy's reshape cannot infer a width from zero elements)
        return False
    vdata = np.asarray(vdata)
    if vdata.dtype != region.dtype or vdata.shape != index.shape + region.shape[1:]:
        return False
    rows = region.shape[0]
    return cpu_scatter.add_rows(region.reshape(rows, -1), index, np.ascontiguousarray(vdata).reshape(len(index), -1))


def summed_rows(index, rows, num):
    """embedding's backward on the host (torch's embedding_dense_backward): zeros of (num, width) with row i of
    2-d `rows` added at index[i], in np.add.at's order; None where the row loop does not apply (another dtype)."""
    if rows.dtype not in ROW_FLOATS or not isinstance(index, np.ndarray) or index.size != len(rows):
        return None
    return tape.call_into("out", _summed_rows, index, rows, num)


def _summed_rows(index, rows, num, out=None):
    # (a replay refills the trace's result in place rather than making new zeros and copying them over it)
    if out is None:
        out = np.zeros((num, rows.shape[1]), rows.dtype)
    else:
        out.fill(0)
    flat = np.ascontiguousarray(index, dtype=np.int64).reshape(-1)
    # (_add_rows turns nothing to add away; the forward checked the indices, so False means out of range)
    if out.size and flat.size and not _add_rows(out, (flat,), rows):
        raise IndexError("index out of range in self")
    return out


def masked_fill(mask, value, x, shape):
    """where(mask, value, x) broadcast to `shape`: NumPy on the host, the op table's `where` kernel on the GPU.
    `value` is a number or a 0-d array; the caller checked that mask and x share a device."""
    dtype = x.dtype
    if not (on_gpu(x) or on_gpu(mask)):
        return np.where(mask, np.asarray(value).astype(dtype), x)
    target = cuda().array
    if on_gpu(value):
        fill = value.astype(dtype, copy=False)
    else:  # a number (or a 0-d CPU tensor, a number to torch too): filled on the GPU
        # a Python number goes as it is (numgrad.compile replays the fill; a 0-d array is a value it reads)
        fill = full((), value if isinstance(value, (bool, int, float)) else np.asarray(value).astype(dtype), dtype, x)
    entry = ELEMENTWISE["where"]
    args = [a.broadcast_to(shape).contiguous().flat_buffer() for a in (mask, fill, x)]
    (flat,) = target.run_elementwise("where", entry.inputs, entry.forward_outputs, args, (dtype,), math.prod(shape),
                                     dtype.name)
    return flat.reshape(shape)


@np.errstate(all="ignore")  # as dispatch.numpy_op ran the traced call: a cast of the value to inf is silent
def _masked_fill_into(result, mask, value, x):
    np.copyto(result, x)
    np.copyto(result, np.asarray(value).astype(result.dtype), where=mask)


def _prepare_masked_fill(result, mask, value, x, shape):
    """A replay of a host masked_fill (numgrad.compile) writing into the trace's result: x copied, then the value
    where the mask holds, the same elements as np.where's (a causal attention mask: 72 -> 36 us, no new array
    copied after)."""
    if result.__class__ is not np.ndarray or on_gpu(x) or on_gpu(mask) or on_gpu(value):
        return None
    return functools.partial(_masked_fill_into, result, mask, value, x)


masked_fill.prepare = _prepare_masked_fill


def take_along_axis(data, index, dim):
    """np.take_along_axis(data, index, dim) on the array's device."""
    if on_gpu(data):
        return cuda().index.take_along_axis(data, index, dim)
    return np.take_along_axis(data, index, axis=dim)


def scatter_along_axis(data, index, dim, values, add):
    """data at index along `dim` set to (or, with `add`, increased by) values, in place; repeated indices add up.
    A recorded call, as write_region."""
    tape.call(_scatter_along_axis, data, index, dim, values, add)


@np.errstate(all="ignore")  # IEEE results (inf, NaN) without NumPy's warnings: torch is silent
def _scatter_along_axis(data, index, dim, values, add):
    if data.ndim == 0:  # a 0-d array (either device): index is 0-d too and points at it
        if index.size:
            data[...] = data + values if add else values
        return
    if on_gpu(data):
        cuda().index.scatter_along_axis(data, index, dim, values, add)
        return
    idx = list(np.indices(index.shape, sparse=True))  # sends index[p] to p with dim `dim` replaced by index[p]
    idx[dim] = index
    if add:
        np.add.at(data, tuple(idx), values)
    else:
        data[tuple(idx)] = values

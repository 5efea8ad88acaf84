"""CUDA indexing kernels: strided gather/scatter(-add) through int64 offsets, index offsets, bounds checks and nonzero."""
import math

import numpy as np

from . import kernels as target
from .array import DeviceArray, bits, copy_into, empty, from_host, full
from ..arrays import WIDER
from .array import _c_strides as byte_strides

MAX_DIMS = 8
# dtypes cuda.atomic.add accumulates in; bool accumulates as `or`, which plain stores do race-free
ATOMIC_DTYPES = ("float32", "float64", "int64")


# ---- sources ---------------------------------------------------------------------------------------------------
def _walk_source(mode):
    """A grid-stride walk over an up-to-8-d iteration shape with three stride sets: operand `a` (read), the
    int64 offsets `off` and operand `b`; `mode` says which side the offsets add to and how `b` is written."""
    dims = range(MAX_DIMS)
    params = ", ".join([f"d{k}" for k in dims] + [f"s{k}" for k in dims] + [f"o{k}" for k in dims]
                       + [f"t{k}" for k in dims])
    walk = "".join(f"        q = r % d{k}\n        r = r // d{k}\n        pa += q * s{k}\n        po += q * o{k}\n"
                   f"        pb += q * t{k}\n" for k in reversed(dims))
    body = {"gather": "        b[pb] = a[pa + off[po]]\n",
            "scatter": "        b[pb + off[po]] = a[pa]\n",
            "scatter_add": "        cuda.atomic.add(b, pb + off[po], a[pa])\n",
            "scatter_or": "        if a[pa]:\n            b[pb + off[po]] = True\n"}[mode]
    return (f"{target.HEADER}\n\n{target.KERNEL_DECORATOR}\n"
            f"def kernel(n, a, a_offset, off, b, b_offset, {params}):\n"
            f"    {target.GRID_LOOP}\n        r = i\n        pa = a_offset\n        po = 0\n        pb = b_offset\n"
            f"{walk}{body}")


_OFFSETS = """
def kernel(n, idx, size, stride, acc, first):
    {loop}
        v = idx[i]
        if v < 0:
            v += size
        if first:
            acc[i] = v * stride
        else:
            acc[i] += v * stride
"""

# out[0] = the first position (in flat order) of an index outside [lo, hi] (an index equal to `skip` is never out
# of bounds when use_skip); out[0] must start at n
_FIRST_BAD = """
def kernel(n, idx, lo, hi, skip, use_skip, out):
    {loop}
        v = idx[i]
        if (v < lo or v > hi) and not (use_skip and v == skip):
            cuda.atomic.min(out, 0, i)
"""

_BAD_VALUE = """
def kernel(n, idx, out):
    if cuda.grid(1) == 0 and out[0] < n:
        out[1] = idx[out[0]]
"""

# nonzero in three steps: True counts per contiguous chunk, an exclusive scan of the counts (one thread: there are
# few chunks), and each chunk writing the flat positions of its Trues from its start
_COUNT_CHUNKS = """
def kernel(n, mask, size, chunk, counts):
    {loop}
        c = 0
        for j in range(i * chunk, min(size, (i + 1) * chunk)):
            if mask[j]:
                c += 1
        counts[i] = c
"""

_SCAN = """
def kernel(n, counts, total):
    if cuda.grid(1) == 0:
        s = 0
        for j in range(n):
            c = counts[j]
            counts[j] = s
            s += c
        total[0] = s
"""

_WRITE_POSITIONS = """
def kernel(n, mask, size, chunk, starts, out):
    {loop}
        p = starts[i]
        for j in range(i * chunk, min(size, (i + 1) * chunk)):
            if mask[j]:
                out[p] = j
                p += 1
"""

_UNRAVEL = """
def kernel(n, flat, inner, dim_size, out):
    {loop}
        out[i] = (flat[i] // inner) % dim_size
"""


def _kernel(name, body):
    source = f"{target.HEADER}\n\n{target.KERNEL_DECORATOR}{body.format(loop=target.GRID_LOOP)}"
    return target.source_kernel(f"cuda_index_{name}", source)


def walk_kernel(mode):
    return target.source_kernel(f"cuda_index_{mode}", _walk_source(mode))


_BODIES = {"offsets": _OFFSETS, "first_bad": _FIRST_BAD, "bad_value": _BAD_VALUE, "count_chunks": _COUNT_CHUNKS,
           "scan": _SCAN, "write_positions": _WRITE_POSITIONS, "unravel": _UNRAVEL}


def small_kernel(name):
    """One of the index-bookkeeping kernels above, by name."""
    return _kernel(name, _BODIES[name])


# ---- launches --------------------------------------------------------------------------------------------------
def _i64(v):
    return np.int64(v)


def walk(mode, shape, a, a_offset, a_strides, off, off_strides, b, b_offset, b_strides):
    """For every position p of `shape` (element strides per operand): gather b[pb] = a[pa + off[po]], or
    scatter b[pb + off[po]] = a[pa] (plain, atomic add, or `or` for bool); a, off and b are flat device arrays."""
    n = math.prod(shape)
    if not n:
        return
    if len(shape) > MAX_DIMS:
        raise NotImplementedError(f"CUDA tensors have at most {MAX_DIMS} dims in numgrad")
    pad = (0,) * (MAX_DIMS - len(shape))
    args = [(1,) * len(pad) + tuple(shape)] + [pad + tuple(s) for s in (a_strides, off_strides, b_strides)]
    target.launch(walk_kernel(mode), _i64(n), bits(a), _i64(a_offset), off, bits(b), _i64(b_offset),
                  *[_i64(v) for group in args for v in group])


def scatter_mode(dtype, accumulate):
    if not accumulate:
        return "scatter"
    name = np.dtype(dtype).name
    if name == "bool":
        return "scatter_or"
    if name not in ATOMIC_DTYPES:
        raise NotImplementedError(f"numgrad: accumulating {name} values is not implemented for CUDA tensors")
    return "scatter_add"


def add_offsets(idx, size, stride, acc, first):
    """acc[i] (=|+=) (idx[i] wrapped once if negative) * stride over flat int64 device arrays of one length."""
    target.launch(small_kernel("offsets"), _i64(idx.size), idx, _i64(size), _i64(stride), acc, _i64(bool(first)))


def first_out_of_bounds(idx, lo, hi, skip=None):
    """The first value (flat order) of flat int64 device array `idx` outside [lo, hi] (values equal to `skip`
    allowed), or None. Reads two numbers back (the position found and its value): an index's bounds decide
    whether the op raises, which needs the host, as torch's device-side assert cannot be reproduced."""
    n = idx.size
    if not n:
        return None
    out = full((2,), n, np.int64)
    target.launch(small_kernel("first_bad"), _i64(n), idx, _i64(lo), _i64(hi), _i64(0 if skip is None else skip),
                  _i64(skip is not None), out.buf)
    small_kernel("bad_value")[1, 1](_i64(n), idx, out.buf)
    position, value = out.to_host().tolist()
    return value if position < n else None


def nonzero(mask):
    """The coordinates of a bool DeviceArray's True values, one int64 DeviceArray per dim, in C order.
    Their number decides the result's shape, so it is read back (one number), as torch syncs there too."""
    flat = mask.contiguous().flat_buffer()
    size = mask.size
    chunks = max(1, min(size, 4 * target.BLOCK * target.MAX_BLOCKS))
    chunk = -(-size // chunks) if size else 1
    counts = empty((chunks,), np.int64)
    total = empty((1,), np.int64)
    if size:
        target.launch(small_kernel("count_chunks"), _i64(chunks), flat, _i64(size), _i64(chunk), counts.buf)
        small_kernel("scan")[1, 1](_i64(chunks), counts.buf, total.buf)
        count = int(total.to_host()[0])  # the data-dependent result size: the one read back
    else:
        count = 0
    positions = empty((count,), np.int64)
    if count:
        target.launch(small_kernel("write_positions"), _i64(chunks), flat, _i64(size), _i64(chunk), counts.buf,
                      positions.buf)
    if mask.ndim == 1:
        return (positions,)
    coords, inner = [], size
    for dim_size in mask.shape:
        inner //= max(dim_size, 1)
        out = empty((count,), np.int64)
        target.launch(small_kernel("unravel"), _i64(count), positions.buf, _i64(max(inner, 1)), _i64(max(dim_size, 1)),
                      out.buf)
        coords.append(DeviceArray(out.buf, (count,)))
    return tuple(coords)


# ---- numpy's advanced indexing on DeviceArrays -----------------------------------------------------------------
def _device_index(a):
    return a if isinstance(a, DeviceArray) else from_host(np.asarray(a, np.int64))


def advanced_plan(shape, adv):
    """NumPy's layout of region[adv] (adv: slice(None) or integer arrays): the result shape, the broadcast
    shape of the index arrays, which region dims they index, and for each result dim the region dim it walks
    (None for the broadcast dims)."""
    adv = tuple(adv) + (slice(None),) * (len(shape) - len(adv))
    arrays = [k for k, a in enumerate(adv) if not isinstance(a, slice)]
    bshape = tuple(np.broadcast_shapes(*(adv[k].shape for k in arrays)))
    rest = [k for k in range(len(shape)) if k not in arrays]
    if arrays == list(range(arrays[0], arrays[-1] + 1)):  # adjacent: the broadcast dims stay in place
        before = [k for k in rest if k < arrays[0]]
        after = [k for k in rest if k > arrays[-1]]
    else:
        before, after = [], rest
    walked = before + [None] * len(bshape) + after
    result = tuple(shape[k] for k in before) + bshape + tuple(shape[k] for k in after)
    return result, bshape, arrays, walked, adv


def _c_strides(shape):
    """C-order strides in elements."""
    return byte_strides(shape, 1)


def _offsets(region, adv, arrays, bshape):
    """sum over the index arrays of (index broadcast to bshape) * the region's stride, flat int64 on the GPU."""
    acc = empty(bshape, np.int64)
    strides = region.element_strides()
    for j, k in enumerate(arrays):
        idx = _device_index(adv[k]).broadcast_to(bshape).contiguous(np.int64)
        add_offsets(idx.flat_buffer(), region.shape[k], strides[k], acc.buf, j == 0)
    return acc


def result_shape(shape, adv):
    return advanced_plan(shape, adv)[0]


def take(region, adv):
    """region[adv] (NumPy advanced indexing) for a DeviceArray region: one gather kernel."""
    result, bshape, arrays, walked, adv = advanced_plan(region.shape, adv)
    out = empty(result, region.dtype)
    if not out.size:
        return out
    off = _offsets(region, adv, arrays, bshape)
    strides, ost = region.element_strides(), iter(_c_strides(bshape))
    a_strides = [strides[k] if k is not None else 0 for k in walked]
    off_strides = [0 if k is not None else next(ost) for k in walked]
    walk("gather", result, region.buf, region.offset, a_strides, off.buf, off_strides, out.buf, 0, _c_strides(result))
    return out


def put(region, adv, values, accumulate):
    """region[adv] = values (or np.add.at(region, adv, values)) in place: values a DeviceArray broadcastable
    to the indexing result, cast to the region's dtype."""
    result, bshape, arrays, walked, adv = advanced_plan(region.shape, adv)
    if not math.prod(result):
        return
    values = values.broadcast_to(result).astype(region.dtype, copy=False)
    if accumulate and region.dtype in WIDER:
        _add_widened(region, lambda wide: put(wide, adv, values, True))
        return
    off = _offsets(region, adv, arrays, bshape)
    strides, ost = region.element_strides(), iter(_c_strides(bshape))
    b_strides = [strides[k] if k is not None else 0 for k in walked]
    off_strides = [0 if k is not None else next(ost) for k in walked]
    walk(scatter_mode(region.dtype, accumulate), result, values.buf, values.offset, values.element_strides(),
         off.buf, off_strides, region.buf, region.offset, b_strides)


def _add_widened(region, add):
    """add(wide) on a copy of narrow `region` in its kernel type, stored back: atomics add 32- and 64-bit values
    only. Integers wrap as adds in their own type would; a half type rounds once per element, where the CPU rounds
    after each add of a repeated index (the GPU's atomics add in no fixed order anyway)."""
    wide = region.astype(WIDER[region.dtype])
    add(wide)
    copy_into(region, wide)


def _along(data, index, dim):
    """The walk's strides for position p of index's shape reaching data at p with dim `dim` replaced by
    index[p]: data's strides with 0 at dim, and the offsets index * data's stride at dim."""
    idx = index.contiguous(np.int64)
    off = empty(index.shape, np.int64)
    strides = list(data.element_strides())
    add_offsets(idx.flat_buffer(), data.shape[dim], strides[dim], off.buf, True)
    strides[dim] = 0
    return off, strides


def take_along_axis(data, index, dim):
    """np.take_along_axis(data, index, dim) where index is no larger than data in the other dims."""
    out = empty(index.shape, data.dtype)
    if not out.size:
        return out
    off, strides = _along(data, index, dim)
    walk("gather", index.shape, data.buf, data.offset, strides, off.buf, _c_strides(index.shape), out.buf, 0,
         _c_strides(index.shape))
    return out


def scatter_along_axis(data, index, dim, values, accumulate):
    """data[p with dim replaced by index[p]] = values[p] (added up when accumulating) in place, p over
    index's shape; values a DeviceArray broadcastable to index's shape."""
    if not index.size:
        return
    values = values.broadcast_to(index.shape).astype(data.dtype, copy=False)
    if accumulate and data.dtype in WIDER:
        _add_widened(data, lambda wide: scatter_along_axis(wide, index, dim, values, True))
        return
    off, strides = _along(data, index, dim)
    walk(scatter_mode(data.dtype, accumulate), index.shape, values.buf, values.offset, values.element_strides(),
         off.buf, _c_strides(index.shape), data.buf, data.offset, strides)


# ---- PTX samples -----------------------------------------------------------------------------------------------
def ptx_samples():
    """(kernel py_func, signature, label) for each kernel here and the dtypes the ops launch it with."""
    from numba.cuda import types
    i64 = types.int64
    arr = lambda name: (types.boolean if name == "bool" else getattr(types, name))[::1]  # noqa: E731
    walk_scalars = (i64,) * (4 * MAX_DIMS)
    samples = []
    # gathers and plain writes move narrow values too (bfloat16 as uint16 bits); accumulation widens them first
    for dtype in ("bool", "int64", "float32", "float64", "uint8", "int8", "int16", "int32", "float16", "uint16"):
        adds = ("scatter_or",) if dtype == "bool" else ("scatter_add",) if dtype in ATOMIC_DTYPES else ()
        for mode in ("gather", "scatter") + adds:
            samples.append((walk_kernel(mode).py_func,
                            (i64, arr(dtype), i64, arr("int64"), arr(dtype), i64) + walk_scalars, f"{mode}-{dtype}"))
    ints = arr("int64")
    samples += [
        (small_kernel("offsets").py_func, (i64, ints, i64, i64, ints, i64), "offsets"),
        (small_kernel("first_bad").py_func, (i64, ints, i64, i64, i64, i64, ints), "first_bad"),
        (small_kernel("bad_value").py_func, (i64, ints, ints), "bad_value"),
        (small_kernel("count_chunks").py_func, (i64, arr("bool"), i64, i64, ints), "count_chunks"),
        (small_kernel("scan").py_func, (i64, ints, ints), "scan"),
        (small_kernel("write_positions").py_func, (i64, arr("bool"), i64, i64, ints, ints), "write_positions"),
        (small_kernel("unravel").py_func, (i64, ints, i64, i64, ints), "unravel"),
    ]
    return [(f, types.void(*sig), label) for f, sig, label in samples]

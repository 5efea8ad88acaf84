"""Pooling beyond max_pool2d: average (1-3 dims), adaptive average and max, max_pool1d/3d, max_unpool1d/2d/3d and
lp_pool. Averages are separable gathers (nn/_resample.py); maxima of any number of dims gather each window
and keep torch's first maximum, their gradient added back at its position as max_pool2d's is."""

import math

import numpy as np

from .._core import dtypes
from ..kernels import dispatch
from ..node import record
from ..ops import functional as _core
from ._common import constant, new_tensor
from ._conv import _check_pool, _pool_out_size, _scatter_to_input, max_pool2d
from ._resample import Taps, gather_array, resample


def _ints(value, k):
    return [value] * k if isinstance(value, int) else list(value)


def _pool_arg(value, k, message, allow_empty=False):
    values = _ints(value, k) if value is not None else []
    if not (len(values) in (1, k) or (allow_empty and not values)):
        raise RuntimeError(message)
    return tuple(values * k if len(values) == 1 else values)


def _check1d(op, name, value):
    values = _ints(value, 1)
    if len(values) != 1:
        raise RuntimeError(f"{op}() argument '{name}' should contain one int (got {len(values)})")
    return values[0]


def _check_dim_range(op, input, low, high):
    if not low <= input.dim() < high:
        raise RuntimeError(f"Expected {low} to {high - 1} dimensions, but got {input.dim()}-dimensional tensor for "
                           f"argument #1 'self' (while checking arguments for {op})")


def _window_taps(size, k, s, p, d, out):
    """Positions o*s - p + t*d of each window and which of them are inside the input; those outside are
    replaced by the window's nearest inside position (its first or last: a repeat of it, for the maxima)."""
    pos = np.arange(out)[:, None] * s - p + np.arange(k)[None, :] * d
    valid = (pos >= 0) & (pos < size)
    first = np.where(valid, pos, np.iinfo(np.int64).max).min(1, keepdims=True)
    last = np.where(valid, pos, -1).max(1, keepdims=True)
    return np.where(valid, pos, np.where(pos < 0, first, last)).clip(0, max(size - 1, 0)), valid


# ---- average pooling -----------------------------------------------------------------------------

def _avg_counts(size, k, s, p, out, count_include_pad):
    """Each window's divisor along one dim: its span inside the padded input, or inside the input alone."""
    start = np.arange(out) * s - p
    if count_include_pad:
        return np.minimum(start + k, size + p) - start
    return np.minimum(start + k, size) - np.maximum(start, 0)


def _int_avg_pool_array(x, plan, counts, divisor_override):
    """An integer average pool: the window sums divided by the divisor, truncated as C++ divides."""
    sums = gather_array(x, plan)
    if divisor_override is not None:
        divisor = np.int64(divisor_override)
    else:
        divisor = np.ones((), np.int64)
        for axis, count in zip((p[0] for p in plan), counts):
            shape = [1] * (-axis)
            shape[0] = len(count)
            divisor = divisor * np.array(count, np.int64).reshape(shape)
    return np.sign(sums) * (np.abs(sums) // divisor)


def _avg_pool(input, kernel, stride, padding, outs, ceil_mode, count_include_pad, divisor_override, name):
    np_dtype = input._data.dtype
    k = len(kernel)
    plan, counts = [], []
    for i in range(k):  # the last dim first: each window's rows are summed before its columns, as torch does
        d = k - 1 - i
        size = input.shape[input.dim() - 1 - i]
        index, valid = _window_taps(size, kernel[d], stride[d], padding[d], 1, outs[d])
        count = _avg_counts(size, kernel[d], stride[d], padding[d], outs[d], count_include_pad)
        if divisor_override is not None or not input._dtype.is_floating_point:
            weight = None if i < k - 1 or divisor_override is None or not input._dtype.is_floating_point else \
                np.full(index.shape, np_dtype.type(1) / np_dtype.type(divisor_override))
        else:
            weight = np.repeat((np_dtype.type(1) / count.astype(np_dtype))[:, None], kernel[d], axis=1)
        plan.append((-1 - i, Taps(index, size, weight, valid, from_zero=True)))
        counts.append(tuple(int(c) for c in count))  # Python ints: no array made outside recorded calls
    if input._dtype is dtypes.int64:  # torch averages longs too (no gradient to record)
        dispatch.require_host(name, input._data)
        return new_tensor(dispatch.numpy_op(_int_avg_pool_array, input._data, plan, counts, divisor_override),
                          input._dtype)
    if not input._dtype.is_floating_point:
        raise NotImplementedError(f"\"{name}\" not implemented for '{input._dtype.word}'")
    return resample(input, plan, f"AvgPool{k}DBackward0", saves_input=True)


def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=None):
    _pool_arg(kernel_size, 2, "avg_pool2d: kernel_size must either be a single int, or a tuple of two ints")
    _pool_arg(stride, 2, "avg_pool2d: stride must either be omitted, a single int, or a tuple of two ints", True)
    _pool_arg(padding, 2, "avg_pool2d: padding must either be a single int, or a tuple of two ints")
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
    if input.dim() < 3:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-input.dim()}, {input.dim() - 1}], "
                         "but got -3)")
    kernel, stride, padding, _, outs = _check_pool(input, kernel_size, stride, padding, 1, ceil_mode, "avg_pool2d")
    return _avg_pool(input, kernel, stride, padding, outs, ceil_mode, count_include_pad, divisor_override,
                     "avg_pool2d")


def avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True):
    stride = kernel_size if stride is None or not _ints(stride, 1) else stride
    _check_dim_range("avg_pool1d", input, 2, 4)
    kernel = _check1d("avg_pool1d", "kernel_size", kernel_size)
    stride = _check1d("avg_pool1d", "stride", stride)
    padding = _check1d("avg_pool1d", "padding", padding)
    return avg_pool2d(input.unsqueeze(-2), (1, kernel), (1, stride), (0, padding), ceil_mode,
                      count_include_pad).squeeze(-2)


def _pool3d_args(op, input, kernel_size, stride, padding, dilation, ceil_mode, either):
    """torch's checks of a 3-d pool's arguments in its order (the meta function, pooling_output_shape per dim,
    pool3d_shape_check); returns kernel, stride, padding, dilation and the output's sizes."""
    word = "either " if either else ""
    kernel = _pool_arg(kernel_size, 3, f"{op}: kernel_size must {word}be a single int, or a tuple of three ints")
    stride = _pool_arg(stride, 3, f"{op}: stride must {word}be omitted, a single int, or a tuple of three ints", True) \
        or kernel
    padding = _pool_arg(padding, 3, f"{op}: padding must {word}be a single int, or a tuple of three ints")
    dilation = _pool_arg(dilation, 3, f"{op}: dilation must be either a single int, or a tuple of three ints")
    if input.dim() not in (4, 5):
        raise RuntimeError("non-empty 4D or 5D (batch mode) tensor expected for input")
    outs = []
    for size, k, s, p, d in zip(input.shape[-3:], kernel, stride, padding, dilation):
        if s == 0:
            raise RuntimeError("stride should not be zero")
        if p < 0:
            raise RuntimeError(f"pad must be non-negative, but got pad: {p}")
        if p > int(((k - 1) * d + 1) / 2):
            raise RuntimeError(f"pad should be at most half of effective kernel size, but got pad={p}, "
                               f"kernel_size={k} and dilation={d}")
        outs.append(_pool_out_size(size, k, s, p, d, ceil_mode))
    (kt, kh, kw), (st, sh, sw), (pt, ph, pw), (dt, dh, dw) = kernel, stride, padding, dilation
    if min(kernel) <= 0:
        raise RuntimeError(f"kernel size should be greater than zero, but got kT: {kt} kH: {kh} kW: {kw}")
    if min(stride) <= 0:
        raise RuntimeError(f"stride should be greater than zero, but got dT: {st} dH: {sh} dW: {sw}")
    if min(dilation) <= 0:
        raise RuntimeError(f"dilation should be greater than zero, but got dilationT: {dt} dilationH: {dh} "
                           f"dilationW: {dw}")
    for i in range(input.dim()):
        if input.shape[i] == 0 and not (input.dim() == 5 and i == 0):
            raise RuntimeError(f"{op}: Expected input's non-batch dimensions to have positive length, but input has "
                               f"a shape of {list(input.shape)} and non-batch dimension 0 has length zero!")
    t, h, w = input.shape[-3:]
    if op == "avg_pool3d" and (t < kt or h < kh or w < kw):
        raise RuntimeError(f"input image (T: {t} H: {h} W: {w}) smaller than kernel size (kT: {kt} kH: {kh} "
                           f"kW: {kw})")
    if kt // 2 < pt or kw // 2 < pw or kh // 2 < ph:
        raise RuntimeError(f"pad should be smaller than or equal to half of kernel size, but got kT: {kt} kW: {kw} "
                           f"kH: {kh} padT: {pt} padW: {pw} padH: {ph}")
    if min(outs) < 1:
        c = input.shape[-4]
        raise RuntimeError(f"Given input size: ({c}x{t}x{h}x{w}). Calculated output size: "
                           f"({c}x{outs[0]}x{outs[1]}x{outs[2]}). Output size is too small")
    return kernel, stride, padding, dilation, tuple(outs)


def avg_pool3d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=None):
    if divisor_override is not None and divisor_override == 0:
        _pool3d_args("avg_pool3d", input, kernel_size, stride, padding, 1, ceil_mode, False)
        raise RuntimeError("divisor must be not zero")
    kernel, stride, padding, _, outs = _pool3d_args("avg_pool3d", input, kernel_size, stride, padding, 1, ceil_mode,
                                                    False)
    return _avg_pool(input, kernel, stride, padding, outs, ceil_mode, count_include_pad, divisor_override,
                     "avg_pool3d")


# ---- adaptive pooling ----------------------------------------------------------------------------

def _adaptive_bounds(size, out):
    o = np.arange(out)
    start = (o * size) // out
    end = -((-(o + 1) * size) // out)
    return start, end


def _adaptive_taps(size, out):
    start, end = _adaptive_bounds(size, out)
    width = int((end - start).max()) if out else 1
    pos = start[:, None] + np.arange(width)[None, :]
    return np.minimum(pos, end[:, None] - 1), pos < end[:, None]


def _list_with_default(out_size, defaults):
    if isinstance(out_size, int):
        return out_size
    if len(defaults) <= len(out_size):
        raise ValueError(f"Input dimension should be at least {len(out_size) + 1}")
    return [v if v is not None else d for v, d in zip(out_size, defaults[-len(out_size):])]


def _check_non_empty(op, t, dims, what="input"):
    """torch's pooling kernels' refusal of an empty non-batch dim (the first of `dims` that is empty)."""
    for i in dims:
        if t.shape[i] == 0:
            raise RuntimeError(f"{op}(): Expected {what} to have non-zero size for non-batch dimensions, but {what} "
                               f"has sizes {list(t.shape)} with dimension {i} being empty")


def _check_adaptive_avg2d_grad(g):
    # torch's adaptive_avg_pool2d_backward checks every non-batch dim of the gradient, where its forward checked
    # only the spatial ones: an empty channel dim passes forward and raises in the backward
    _check_non_empty("adaptive_avg_pool2d_backward", g, range(1, g.dim()), "grad_output")


def _adaptive_avg(input, output_size, k):
    op = f"adaptive_avg_pool{k}d"
    outs = _ints(output_size, k)
    if len(outs) != k:
        raise RuntimeError(f"{op}: output_size must be {k}")
    if any(o < 0 for o in outs):
        raise RuntimeError(f"{op}: elements of output_size must be greater than or equal to 0 but received "
                           f"{{{', '.join(map(str, outs))}}}")
    if all(o == 1 for o in outs):  # torch's shortcut: a mean over the spatial dims
        return input.mean(tuple(range(-1, -k - 1, -1)), keepdim=True)
    if k == 3:  # torch's 3-d kernel checks every non-batch dim, before the rank
        _check_non_empty(op, input, range(1, input.dim()))
    if input.dim() not in (k + 1, k + 2):
        raise RuntimeError(f"{op}(): Expected {k + 1}D or {k + 2}D tensor, but got {list(input.shape)}")
    _check_non_empty(op, input, range(input.dim() - k, input.dim()))
    if input.numel() and not input._dtype.is_floating_point:  # an empty input reaches no kernel
        raise NotImplementedError(f"\"{op}{'_cpu' if k == 3 else ''}\" not implemented for '{input._dtype.word}'")
    np_dtype = input._data.dtype
    plan = []
    for i in range(k):
        size, out = input.shape[-1 - i], outs[k - 1 - i]
        index, valid = _adaptive_taps(size, out)
        start, end = _adaptive_bounds(size, out)
        weight = np.repeat((np_dtype.type(1) / (end - start).astype(np_dtype))[:, None], index.shape[1], axis=1)
        plan.append((-1 - i, Taps(index, size, weight, valid, from_zero=True)))
    return resample(input, plan, f"AdaptiveAvgPool{k}DBackward0", _check_adaptive_avg2d_grad if k == 2 else None,
                    saves_input=True)


def adaptive_avg_pool2d(input, output_size):
    return _adaptive_avg(input, _list_with_default(output_size, input.shape), 2)


def adaptive_avg_pool3d(input, output_size):
    return _adaptive_avg(input, _list_with_default(output_size, input.shape), 3)


def adaptive_avg_pool1d(input, output_size):
    _check_dim_range("adaptive_avg_pool1d", input, 2, 4)
    out = _check1d("adaptive_avg_pool1d", "output_size", output_size)
    return adaptive_avg_pool2d(input.unsqueeze(-2), (1, out)).squeeze(-2)


# ---- maxima over windows of any number of dims ---------------------------------------------------

def _window_max_arrays(x, taps, outs):
    """Each window's maximum of (rows, *spatial) array `x` and its flat index in the spatial plane: the first
    maximum in the window's row-major order, a NaN over any number (NumPy's argmax). `taps` per dim hold
    positions clipped into the input: a clipped repeat of a position changes neither value nor index."""
    sizes = x.shape[1:]
    strides = np.cumprod((1,) + sizes[:0:-1])[::-1]
    flat = np.zeros((), np.int64)
    for d, index in enumerate(t.index for t in taps):
        # axes (o_1, t_1, o_2, t_2, ...): each dim's output and tap positions
        shape = [1] * (2 * len(taps))
        shape[2 * d], shape[2 * d + 1] = index.shape
        flat = flat + (index * strides[d]).reshape(shape)
    k = len(taps)
    order = [2 * d for d in range(k)] + [2 * d + 1 for d in range(k)]
    flat = flat.transpose(order).reshape(math.prod(outs), -1)
    windows = x.reshape(x.shape[0], math.prod(sizes))[:, flat]  # (sizes: an empty batch has no -1 to infer)
    pos = windows.argmax(-1) if flat.shape[1] else np.zeros(windows.shape[:2], np.int64)
    values = np.take_along_axis(windows, pos[..., None], -1)[..., 0]
    return values.reshape(x.shape[0], *outs), flat[np.arange(flat.shape[0]), pos].reshape(x.shape[0], *outs)


def _window_max(input, taps, outs, name, overlapping):
    k = len(taps)
    dispatch.require_host(name, input._data)
    rows = math.prod(input.shape[:-k])
    x = input._data.reshape(rows, *input.shape[-k:])
    values, indices = dispatch.numpy_op(_window_max_arrays, x, taps, tuple(outs))
    shape = tuple(input.shape[:-k]) + tuple(outs)
    out = new_tensor(values.reshape(shape), input._dtype)
    record(name, _window_max_backward, [input], [out],  # (torch's node saves its input: see resample)
           {"flat_indices": constant(indices.reshape(rows, math.prod(outs))), "overlapping": overlapping, "dims": k,
            "self": input})
    return out, constant(indices.reshape(shape))


def _window_max_backward(node, g):
    name = f"MaxPool{node.saved('dims')}DWithIndicesBackwardBackward0"
    return (_scatter_to_input(g, node.saved("flat_indices"), node.input_shape(0), node.saved("overlapping"), name),)


def _adaptive_max(input, output_size, k, return_indices):
    op = f"adaptive_max_pool{k}d"
    if input.dim() not in (k + 1, k + 2):
        raise RuntimeError(f"{op}(): Expected {k + 1}D or {k + 2}D tensor, but got: {list(input.shape)}")
    _check_non_empty(op, input, range(1, input.dim()))
    outs = _ints(output_size, k)
    if len(outs) != k:
        raise RuntimeError(f"{op}(): internal error: output_size.size() must be {k}")
    if any(o < 0 for o in outs):
        raise RuntimeError(f"Trying to create tensor with negative dimension {min(outs)}: "
                           f"{list(input.shape[:-k]) + outs}")
    if not input._dtype.is_floating_point:  # the kernel's dispatch: floating types only, an empty batch too
        raise NotImplementedError(f"\"{op}{'_cpu' if k == 3 else ''}\" not implemented for '{input._dtype.word}'")
    taps = tuple(Taps(_adaptive_taps(n, o)[0], n) for n, o in zip(input.shape[-k:], outs))
    out, indices = _window_max(input, taps, outs, f"AdaptiveMaxPool{k}DBackward0", True)
    return (out, indices) if return_indices else out


def adaptive_max_pool2d(input, output_size, return_indices=False):
    return _adaptive_max(input, _list_with_default(output_size, input.shape), 2, return_indices)


def adaptive_max_pool3d(input, output_size, return_indices=False):
    return _adaptive_max(input, _list_with_default(output_size, input.shape), 3, return_indices)


def adaptive_max_pool1d(input, output_size, return_indices=False):
    _check_dim_range("adaptive_max_pool1d", input, 2, 4)
    _check_non_empty("adaptive_max_pool1d", input, range(1, input.dim()))  # (as itself, before the 2-d kernel)
    out = _check1d("adaptive_max_pool1d", "output_size", output_size)
    values, indices = adaptive_max_pool2d(input.unsqueeze(-2), (1, out), True)
    values = values.squeeze(-2)
    return (values, indices.squeeze(-2)) if return_indices else values


def max_pool3d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    kernel, stride, padding, dilation, outs = _pool3d_args("max_pool3d", input, kernel_size, stride, padding,
                                                           dilation, ceil_mode, True)
    taps = tuple(Taps(_window_taps(n, *args)[0], n) for n, args in zip(input.shape[-3:], zip(
        kernel, stride, padding, dilation, outs)))
    overlapping = any(s < d * (k - 1) + 1 for s, k, d in zip(stride, kernel, dilation))
    out, indices = _window_max(input, taps, outs, "MaxPool3DWithIndicesBackward0", overlapping)
    return (out, indices) if return_indices else out


def _check_max_pool1d(input, kernel_size, stride, padding, dilation, ceil_mode):
    """check_max_pool1d: the words of max_pool1d without indices."""
    if input.dim() not in (2, 3):
        raise RuntimeError(f"max_pool1d() Expected 2D or 3D input tensor, but got {list(input.shape)}")
    kernel, stride, padding, dilation = (_ints(v, 1) for v in (kernel_size, stride or [], padding, dilation))
    if len(kernel) != 1:
        raise RuntimeError(f"max_pool1d() kernel_size must be an int, list of ints or tuple of ints of size 1 but got "
                           f"size {len(kernel)}")
    if len(stride) > 1:
        raise RuntimeError(f"max_pool1d() stride must be None, an int, list of ints, or tuple of ints of size 1 but "
                           f"got size {len(stride)}")
    if len(padding) != 1:
        raise RuntimeError(f"max_pool1d() padding must be an int, list of ints, or tuple of ints of size 1 but got "
                           f"size {len(padding)}")
    if len(dilation) != 1:
        raise RuntimeError(f"max_pool1d() dilation must be an int, list of ints or tuple of ints of size 1 but got "
                           f"size {len(dilation)}")
    (k,), (p,), (d,) = kernel, padding, dilation
    s = stride[0] if stride else k
    if k <= 0:
        raise RuntimeError(f"max_pool1d() kernel_size must be greater than zero, but got {k}")
    if s <= 0:
        raise RuntimeError(f"max_pool1d() stride must be greater than zero, but got {s}")
    if p < 0:
        raise RuntimeError(f"max_pool1d() padding must be non-negative, but got {p}")
    if p > k // 2:
        raise RuntimeError(f"max_pool1d() padding should be at most half of kernel size, but got padding={p} and "
                           f"kernel_size={k}")
    if d <= 0:
        raise RuntimeError(f"max_pool1d() dilation must be greater than zero, but got {d}")
    out = _pool_out_size(input.shape[-1], k, s, p, d, ceil_mode)
    if out <= 0:
        raise RuntimeError(f"max_pool1d() Invalid computed output size: {out}")


def max_pool1d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    if not return_indices:
        shape = input.shape
        if not ((input.dim() == 2 and shape[0] and shape[1]) or (input.dim() == 3 and shape[1] and shape[2])):
            raise RuntimeError("max_pool1d: Expected 2D or 3D (batch mode) tensor with optional 0 dim batch size for "
                               f"input, but got:{list(shape)}")
        _check_max_pool1d(input, kernel_size, stride, padding, dilation, ceil_mode)
        if not input._dtype.is_floating_point:  # torch's kernel without indices takes floating types only
            raise NotImplementedError(f"\"max_pool1d_impl\" not implemented for '{input._dtype.word}'")
    stride = kernel_size if stride is None or not _ints(stride, 1) else stride
    _check_dim_range("max_pool1d", input, 2, 4)
    args = [_check1d("max_pool1d", name, value) for name, value in
            (("kernel_size", kernel_size), ("stride", stride), ("padding", padding), ("dilation", dilation))]
    k, s, p, d = args
    result = max_pool2d(input.unsqueeze(-2), (1, k), (1, s), (0, p), (1, d), ceil_mode, return_indices)
    if return_indices:
        return result[0].squeeze(-2), result[1].squeeze(-2)
    return result.squeeze(-2)


# ---- max_unpool2d and lp_pool --------------------------------------------------------------------

def _unpool_output_size(input, kernel, stride, padding, output_size):
    k = len(kernel)
    default = [(input.shape[-k + d] - 1) * stride[d] + kernel[d] - 2 * padding[d] for d in range(k)]
    if output_size is None:
        return default
    if len(output_size) == k + 2:
        output_size = output_size[2:]
    if len(output_size) != k:
        raise ValueError(f"output_size should be a sequence containing {k} or {k + 2} elements, but it has a length "
                         f"of '{len(output_size)}'")
    for d in range(k):
        min_size = default[d] - stride[d]
        max_size = default[d] + stride[d]
        if not min_size < output_size[d] < max_size:
            raise ValueError(f'invalid output_size "{output_size}" (dim {d} must be between {min_size} and '
                             f'{max_size})')
    return list(output_size)


def _max_unpool(input, indices, outs, k):
    """max_unpool2d/3d: each value put at its flat index into a zero output plane (MaxUnpool2DBackward0)."""
    dispatch.require_host(f"max_unpool{k}d", input._data, indices._data)
    if indices._dtype.name != "int64":
        raise RuntimeError(f"elements in indices should be type int64 but got: {indices._dtype.word}")
    if tuple(input.shape) != tuple(indices.shape):
        raise RuntimeError(f"Expected shape of indices to be same as that of the input tensor ({list(input.shape)}) "
                           f"but got indices tensor with shape: {list(indices.shape)}")
    if input.dim() not in (k + 1, k + 2):
        raise RuntimeError(f"Input to max_unpooling{k}d should be a {k + 1}d or {k + 2}d Tensor, but got a tensor "
                           f"with {input.dim()} dimensions.")
    rows = math.prod(input.shape[:-k])
    flat = indices._data.reshape(rows, -1)
    bad = (flat < 0) | (flat >= math.prod(outs))
    if bad.any():
        raise RuntimeError(f"Found an invalid max index: {int(flat[bad][0])} (output volumes are of size "
                           f"{'x'.join(map(str, outs))})")
    shape = tuple(input.shape[:-k]) + tuple(outs)
    return _scatter_to_input(input, constant(flat), shape, False, f"MaxUnpool{k}DBackward0", assign=True)


def max_unpool2d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    kernel = tuple(_ints(kernel_size, 2))
    stride = kernel if stride is None else tuple(_ints(stride, 2))
    padding = tuple(_ints(padding, 2))
    return _max_unpool(input, indices, _unpool_output_size(input, kernel, stride, padding, output_size), 2)


def max_unpool3d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    kernel = tuple(_ints(kernel_size, 3))
    stride = kernel if stride is None else tuple(_ints(stride, 3))
    padding = tuple(_ints(padding, 3))
    return _max_unpool(input, indices, _unpool_output_size(input, kernel, stride, padding, output_size), 3)


def max_unpool1d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    kernel = tuple(_ints(kernel_size, 1))
    stride = kernel if stride is None else tuple(_ints(stride, 1))
    padding = tuple(_ints(padding, 1))
    outs = _unpool_output_size(input, kernel, stride, padding, output_size) + [1]
    return _max_unpool(input.unsqueeze(-1), indices.unsqueeze(-1), outs, 2).squeeze(-1)


def lp_pool3d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    kd, kw, kh = _ints(kernel_size, 3)
    if norm_type == float("inf"):
        return max_pool3d(input.abs(), kernel_size, stride, 0, 1, ceil_mode)
    if norm_type == -float("inf"):
        return -max_pool3d(-input.abs(), kernel_size, stride, 0, 1, ceil_mode)
    out = avg_pool3d(input.pow(norm_type), kernel_size, stride, 0, ceil_mode)
    return (out.sign() * _core.relu(out.abs())).mul(kd * kw * kh).pow(1.0 / norm_type)


def lp_pool2d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    kw, kh = (kernel_size, kernel_size) if isinstance(kernel_size, int) else kernel_size
    if norm_type == float("inf"):
        return max_pool2d(input.abs(), kernel_size, stride, 0, 1, ceil_mode)
    if norm_type == -float("inf"):
        return -max_pool2d(-input.abs(), kernel_size, stride, 0, 1, ceil_mode)
    out = avg_pool2d(input.pow(norm_type), kernel_size, stride, 0, ceil_mode)
    return (out.sign() * _core.relu(out.abs())).mul(kw * kh).pow(1.0 / norm_type)


def lp_pool1d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    if norm_type == float("inf"):
        return max_pool1d(input.abs(), kernel_size, stride, 0, 1, ceil_mode)
    if norm_type == -float("inf"):
        return -max_pool1d(-input.abs(), kernel_size, stride, 0, 1, ceil_mode)
    out = avg_pool1d(input.pow(norm_type), kernel_size, stride, 0, ceil_mode)
    return (out.sign() * _core.relu(out.abs())).mul(kernel_size).pow(1.0 / norm_type)


# ---- torch's *_with_indices forms: always the (values, indices) pair ----------------------------

def max_pool1d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
                            return_indices=False):
    return max_pool1d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


def max_pool2d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
                            return_indices=False):
    return max_pool2d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


def max_pool3d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
                            return_indices=False):
    return max_pool3d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


def adaptive_max_pool1d_with_indices(input, output_size, return_indices=False):
    return adaptive_max_pool1d(input, output_size, True)


def adaptive_max_pool2d_with_indices(input, output_size, return_indices=False):
    return adaptive_max_pool2d(input, output_size, True)


def adaptive_max_pool3d_with_indices(input, output_size, return_indices=False):
    return adaptive_max_pool3d(input, output_size, True)

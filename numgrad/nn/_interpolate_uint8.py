"""interpolate of uint8 images (4-d input, bilinear or bicubic, antialiased or not) as torch's CPU kernels compute
it: separable passes (width, then height) with weights computed in double, rescaled to int16 with a precision
chosen per pass, integer sums rounded by a shift and clamped to [0, 255] (aten/src/ATen/native/cpu/
UpSampleKernel.cpp, _compute_index_ranges_int16_weights and basic_loop_separable_1d_*<uint8_t>)."""
import math

import numpy as np

from ..kernels import dispatch
from ._common import new_tensor

_INTERP_SIZE = {"bilinear": 2, "bicubic": 4}


def _scale(in_size, out_size, align_corners, scale):
    """area_pixel_compute_scale<double>."""
    if align_corners:
        return (in_size - 1) / (out_size - 1) if out_size > 1 else 0.0
    return 1.0 / scale if scale is not None and scale > 0 else in_size / out_size


def _filter(mode, antialias):
    if mode == "bilinear":
        return lambda x: 1.0 - abs(x) if abs(x) < 1.0 else 0.0
    a = -0.5 if antialias else -0.75  # Keys' kernel antialiased (Pillow's), OpenCV's otherwise

    def cubic(x):
        x = abs(x)
        if x < 1.0:
            return ((a + 2) * x - (a + 3)) * x * x + 1
        if x < 2.0:
            return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a
        return 0.0
    return cubic


def _plain_weights(i, in_size, scale, size, fn, align_corners, cubic):
    """_compute_indices_min_size_weights: the taps' first index and count; out-of-range taps' weights added to
    the nearest valid one (read as torch accumulates them: the running maximum included)."""
    real = scale * i if align_corners else scale * (i + 0.5) - 0.5
    if not cubic and not align_corners and real < 0:
        real = 0.0
    index = min(int(math.floor(np.float32(real))), in_size - 1)  # (floorf: through float)
    lam = min(max(real - index, 0.0), 1.0)
    support = int(size * 0.5)
    lo = index - support + 1
    first = max(lo, 0)
    count = min(max(min(index + support + 1, in_size) - first, 0), size)
    weights, peak, w_index = [0.0] * size, 0.0, 0
    for j in range(size):
        w = fn(float(j + 1 - support) - lam)
        if lo + j <= 0:
            w_index = 0
        elif lo + j >= in_size - 1:
            w_index = count - 1
        weights[w_index] += w
        peak = max(peak, weights[w_index])
        w_index += 1
    return first, count, weights, peak


def _antialias_weights(i, in_size, scale, support, size, fn):
    """_compute_indices_min_size_weights_aa: the filter widened by the downscaling factor, normalised."""
    center = scale * (i + 0.5)
    invscale = 1.0 / scale if scale >= 1.0 else 1.0
    first = max(int(center - support + 0.5), 0)
    count = min(max(min(int(center + support + 0.5), in_size) - first, 0), size)
    weights = [fn((j + first - center + 0.5) * invscale) for j in range(count)] + [0.0] * (size - count)
    total = sum(weights[:count])
    peak = 0.0
    if total != 0.0:
        weights = [w / total for w in weights[:count]] + weights[count:]
        peak = max(weights[:count])
    return first, count, weights, peak


def _int16_taps(in_size, out_size, align_corners, scale, mode, antialias):
    """Per output position: the first input index, the tap count and the int16 weights; and their precision."""
    scale = _scale(in_size, out_size, align_corners, scale)
    interp, fn = _INTERP_SIZE[mode], _filter(mode, antialias)
    if antialias:
        support = interp * 0.5 * scale if scale >= 1.0 else interp * 0.5
        size = int(math.ceil(support)) * 2 + 1
    else:
        size = interp
    rows = [_antialias_weights(i, in_size, scale, support, size, fn) if antialias else
            _plain_weights(i, in_size, scale, size, fn, align_corners, mode == "bicubic") for i in range(out_size)]
    peak = max([r[3] for r in rows] + [0.0])
    precision = 0
    while precision < 22 and int(0.5 + peak * (1 << (precision + 1))) < (1 << 15):
        precision += 1
    v = np.array([r[2] for r in rows], np.float64) * (1 << precision)
    weights = np.where(v < 0, np.trunc(v - 0.5), np.trunc(v + 0.5)).astype(np.int64)
    return (np.array([r[0] for r in rows], np.int64), np.array([r[1] for r in rows], np.int64), weights,
            precision)


def _pass(x, axis, taps):
    """One 1-d pass along `axis`: sum_j x[first + j] * w[j] over the valid taps, + 0.5 in fixed point, shifted
    back and clamped, as the uint8 loops compute it in int."""
    first, count, weights, precision = taps
    j = np.arange(weights.shape[1])
    index = np.minimum(first[:, None] + j, x.shape[axis] - 1)
    w = np.where(j < count[:, None], weights, 0)
    moved = np.moveaxis(x, axis, -1).astype(np.int64)
    total = (moved[..., index] * w).sum(-1) + (1 << (precision - 1))
    return np.moveaxis(np.clip(total >> precision, 0, 255).astype(np.uint8), -1, axis)


def _resize_array(x, outs, align_corners, scales, mode, antialias):
    out = x
    for axis in (3, 2):  # the width first, then the height; a dim of unchanged size is skipped
        if outs[axis - 2] != x.shape[axis]:
            taps = _int16_taps(x.shape[axis], outs[axis - 2], align_corners, scales[axis - 2], mode, antialias)
            if axis == 2 and out.shape[3] == 1 and x.shape[1] > 4:
                # torch's generic kernel (more than four channels) reads the first row's taps only, which the
                # iterator's inner loop over a width of one makes every row's: each row is the first one
                taps = tuple(t[:1].repeat(len(t), 0) for t in taps[:3]) + taps[3:]
            out = _pass(out, axis, taps)
    return np.ascontiguousarray(out) if out is not x else x.copy()


def _channels_last(shape, strides):
    """Whether an (N, C, H, W) layout is channels-last contiguous (dims of size one taking any stride)."""
    n, c, h, w = shape
    wanted = (h * w * c, 1, w * c, c)
    return all(size == 1 or stride == want for size, stride, want in zip(shape, strides, wanted))


def _check_avx_layout(input, outs):
    """torch's AVX2 kernel (three or four channels) unpacks a three-channel input that is not channels-last to
    four channels, then fails its own assertion when it writes a 1x1 output (channels-last too) row by row."""
    shape = tuple(input.shape)
    strides = tuple(st // input._data.itemsize for st in input._data.strides)
    if shape[1] == 3 and tuple(outs) == (1, 1) and shape[2] != 1 and not _channels_last(shape, strides) and \
            shape[3] * shape[2] != 1:
        raise RuntimeError('num_channels == unpacked_output.size(0) INTERNAL ASSERT FAILED at "/__w/pytorch/pytorch/'
                           'aten/src/ATen/native/cpu/UpSampleKernelAVXAntialias.h":269, please report a bug to '
                           'PyTorch. ')


def interpolate_uint8(input, outs, align_corners, scales, mode, antialias):
    dispatch.require_host(f"upsample_{mode}2d", input._data)
    _check_avx_layout(input, outs)
    data = dispatch.numpy_op(_resize_array, input._data, tuple(outs), bool(align_corners), tuple(scales), mode,
                             antialias)
    return new_tensor(data, input._dtype)

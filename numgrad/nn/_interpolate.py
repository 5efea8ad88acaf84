"""F.interpolate and the upsample functions: nearest, nearest-exact, (bi/tri)linear, bicubic (antialiased too) and
area, as separable gathers (nn/_resample.py) whose source positions and weights are computed in the input's
precision with torch's formulas (aten/src/ATen/native/UpSample.h), so that each output reads what torch reads."""

import math
import warnings

import numpy as np

from ..kernels import dispatch
from ._pool import adaptive_avg_pool1d, adaptive_avg_pool2d, adaptive_avg_pool3d
from ._interpolate_uint8 import interpolate_uint8
from ._resample import Taps, resample

_MODES = "nearest | linear | bilinear | bicubic | trilinear | lanczos | area | nearest-exact"
_LINEAR = {1: "linear", 2: "bilinear", 3: "trilinear"}
_CUBIC_A = -0.75


def _scale_value(dt, scale, in_size, out_size):
    """compute_scales_value: 1/scale_factor when one was given, else in/out."""
    if scale is not None and scale > 0:
        return dt.type(1.0 / scale)
    return dt.type(in_size) / dt.type(out_size)


def _area_scale(dt, in_size, out_size, align_corners, scale):
    if align_corners:
        return dt.type(in_size - 1) / dt.type(out_size - 1) if out_size > 1 else dt.type(0)
    return _scale_value(dt, scale, in_size, out_size)


def _source_index(dt, scale, out_size, align_corners, cubic):
    dst = np.arange(out_size).astype(dt)
    if align_corners:
        return scale * dst
    src = scale * (dst + dt.type(0.5)) - dt.type(0.5)
    return src if cubic else np.maximum(src, dt.type(0))


def _guard(real, in_size):
    """guard_index_and_lambda: the position left of `real` (kept inside) and the distance from it in [0, 1]."""
    index = np.minimum(np.floor(real.astype(np.float32)).astype(np.int64), in_size - 1)
    lam = np.clip(real - index.astype(real.dtype), 0, 1).astype(real.dtype)
    return index, lam


def _nearest_taps(in_size, out_size, scale, exact):
    out = np.arange(out_size)
    if exact:
        s = _scale_value(np.dtype(np.float32), scale, in_size, out_size)
        index = np.floor(((out + 0.5) * np.float64(s)).astype(np.float32)).astype(np.int64)
    elif out_size == in_size:  # torch's exact cases, free of float rounding
        index = out
    elif out_size == 2 * in_size:
        index = out >> 1
    else:
        s = _scale_value(np.dtype(np.float32), scale, in_size, out_size)
        index = np.floor(out.astype(np.float32) * s).astype(np.int64)
    return Taps(np.minimum(index, in_size - 1), in_size)


def _linear_taps(dt, in_size, out_size, align_corners, scale):
    if out_size == in_size:  # a copy: the second tap weighs nothing
        index = np.arange(out_size)
        return Taps(np.stack([index, index], 1), in_size,
                    np.stack([np.ones(out_size, dt), np.zeros(out_size, dt)], 1))
    ratio = _area_scale(dt, in_size, out_size, align_corners, scale)
    index0, lambda1 = _guard(_source_index(dt, ratio, out_size, align_corners, False), in_size)
    index1 = index0 + (index0 < in_size - 1)
    return Taps(np.stack([index0, index1], 1), in_size, np.stack([dt.type(1) - lambda1, lambda1], 1))


def _cubic_coefficients(t):
    a = t.dtype.type(_CUBIC_A)
    one = t.dtype.type(1)

    def near(x):  # cubic_convolution1
        return ((a + 2) * x - (a + 3)) * x * x + one

    def far(x):  # cubic_convolution2
        return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a
    return np.stack([far(t + one), near(t), near(one - t), far(one - t + one)], 1)


def _cubic_taps(dt, in_size, out_size, align_corners, scale):
    ratio = _area_scale(dt, in_size, out_size, align_corners, scale)
    index, lam = _guard(_source_index(dt, ratio, out_size, align_corners, True), in_size)
    taps = np.clip(index[:, None] - 1 + np.arange(4)[None, :], 0, in_size - 1)
    return Taps(taps, in_size, _cubic_coefficients(lam))


def _antialias_filter(x, cubic):
    x = np.abs(x)
    if not cubic:
        return np.where(x < 1, 1 - x, 0).astype(x.dtype)
    a = x.dtype.type(-0.5)  # Keys' kernel, as Pillow's (not the -0.75 of plain bicubic)
    near = ((a + 2) * x - (a + 3)) * x * x + 1
    far = ((a * x - 5 * a) * x + 8 * a) * x - 4 * a
    return np.where(x < 1, near, np.where(x < 2, far, 0)).astype(x.dtype)


def _antialias_taps(dt, in_size, out_size, align_corners, scale, cubic):
    """The antialiased filter's taps: its support widened by the downscaling factor, weights normalised."""
    ratio = _area_scale(dt, in_size, out_size, align_corners, scale)
    half = dt.type(2.0 if cubic else 1.0)
    support = half * ratio if ratio >= 1 else half
    width = int(np.ceil(support)) * 2 + 1
    center = ratio * (np.arange(out_size).astype(dt) + dt.type(0.5))
    invscale = dt.type(1) / ratio if ratio >= 1 else dt.type(1)
    lo = np.maximum((center - support + dt.type(0.5)).astype(np.int64), 0)
    size = np.minimum((center + support + dt.type(0.5)).astype(np.int64), in_size) - lo
    j = np.arange(width)[None, :]
    weight = _antialias_filter(((j + lo[:, None]).astype(dt) - center[:, None] + dt.type(0.5)) * invscale, cubic)
    valid = j < size[:, None]
    weight = np.where(valid, weight, 0).astype(dt)
    total = weight.sum(1, keepdims=True)
    weight = np.where(total != 0, weight / np.where(total != 0, total, 1), weight).astype(dt)
    return Taps(np.minimum(lo[:, None] + j, in_size - 1), in_size, weight, valid)


def _check_sizes(sizes, outs):
    if min(sizes) > 0 and min(outs) > 0:
        return
    if len(sizes) == 1:
        raise RuntimeError(f"Input and output sizes should be greater than 0, but got input (W: {sizes[0]}) and "
                           f"output (W: {outs[0]})")
    names = "HW" if len(sizes) == 2 else "DHW"
    given = ", ".join(f"{n}: {v}" for n, v in zip(names, sizes))
    wanted = ", ".join(f"{n}: {v}" for n, v in zip(names, outs))
    raise RuntimeError(f"Input and output sizes should be greater than 0, but got input ({given}) output ({wanted})")


def _check_dtype(input, mode, k):
    """torch's kernels take floating types, and uint8 for nearest (a gather) and for 4-d bilinear and bicubic
    (fixed-point kernels of their own: nn/_interpolate_uint8.py); an integer 4-d input is refused by the
    channels-last kernel torch picks for it."""
    if input._dtype.is_floating_point or (input._dtype.name == "uint8" and mode.startswith("nearest")):
        return
    nearest = mode.startswith("nearest")
    if k == 2 and mode != "bicubic":
        kernel = f"upsample_{'nearest' if nearest else 'bilinear'}2d_channels_last"
    else:
        kernel = "compute_indices_weights_" + ("nearest" if nearest else "cubic" if mode == "bicubic" else "linear")
    raise NotImplementedError(f"\"{kernel}\" not implemented for '{input._dtype.word}'")


def _upsample(input, mode, output_size, scale_factors, align_corners, antialias=False):
    k = input.dim() - 2
    sizes = list(input.shape[2:])
    outs = list(output_size) if output_size is not None else [
        int(n * s) for n, s in zip(sizes, scale_factors)]  # C++'s conversion of size * scale: toward zero
    _check_sizes(sizes, outs)
    scales = list(scale_factors) if scale_factors is not None else [None] * k
    if input._dtype.name == "uint8" and k == 2 and mode in ("bilinear", "bicubic"):
        return interpolate_uint8(input, outs, align_corners, scales, mode, antialias)
    _check_dtype(input, mode, k)
    dt = dispatch.kernel_dtype(input._data.dtype)  # a half type's weights in float32 (torch's opmath)
    plan = []
    for i in range(k):  # the last dim first: torch sums each row before it weighs the rows
        d = k - 1 - i
        if antialias:
            taps = _antialias_taps(dt, sizes[d], outs[d], align_corners, scales[d], mode == "bicubic")
        elif mode in ("nearest", "nearest-exact"):
            taps = _nearest_taps(sizes[d], outs[d], scales[d], mode == "nearest-exact")
        elif mode == "bicubic":
            taps = _cubic_taps(dt, sizes[d], outs[d], align_corners, scales[d])
        else:
            taps = _linear_taps(dt, sizes[d], outs[d], align_corners, scales[d])
        plan.append((-1 - i, taps))
    if mode == "nearest":
        name = f"UpsampleNearest{k}D"
    elif mode == "nearest-exact":
        name = f"UpsampleNearestExact{k}D"
    else:
        name = f"Upsample{mode.capitalize()}{k}D" + ("Aa" if antialias else "")
    return resample(input, plan, name + "Backward0")


def _is_integer(x):
    return isinstance(x, (int, np.integer)) and not isinstance(x, bool) or \
        (hasattr(x, "dtype") and hasattr(x, "is_floating_point") and not x.is_floating_point())


def _output_size_and_scales(input, size, scale_factor, recompute_scale_factor, mode):
    dim = input.dim() - 2
    if size is not None and scale_factor is not None:
        raise ValueError("only one of size or scale_factor should be defined")
    if size is not None:
        scale_factors = None
        if isinstance(size, (list, tuple)):
            if len(size) != dim:
                raise ValueError("Input and output must have the same number of spatial dimensions, but got input with "
                                 f"spatial dimensions of {list(input.shape[2:])} and output size of {size}. Please "
                                 "provide input tensor in (N, C, d1, d2, ...,dK) format and output size in (o1, o2, "
                                 "...,oK) format.")
            if not all(_is_integer(x) for x in size):
                raise TypeError("expected size to be one of int or Tuple[int] or Tuple[int, int] or Tuple[int, int, "
                                f"int], but got size with types {[type(x) for x in size]}")
            output_size = [int(x) for x in size]
        else:
            output_size = [size for _ in range(dim)]
    elif scale_factor is not None:
        output_size = None
        if isinstance(scale_factor, (list, tuple)):
            if len(scale_factor) != dim:
                raise ValueError("Input and scale_factor must have the same number of spatial dimensions, but got "
                                 f"input with spatial dimensions of {list(input.shape[2:])} and scale_factor of shape "
                                 f"{scale_factor}. Please provide input tensor in (N, C, d1, d2, ...,dK) format and "
                                 "scale_factor in (s1, s2, ...,sK) format.")
            scale_factors = scale_factor
        else:
            scale_factors = [scale_factor for _ in range(dim)]
    else:
        raise ValueError("either size or scale_factor should be defined")
    if recompute_scale_factor and size is not None:
        raise ValueError("recompute_scale_factor is not meaningful with an explicit size.")
    if mode == "area" and output_size is None:
        recompute_scale_factor = True
    if recompute_scale_factor:
        output_size = [math.floor(input.shape[i + 2] * scale_factors[i]) for i in range(dim)]
        scale_factors = None
    return output_size, scale_factors


def interpolate(input, size=None, scale_factor=None, mode="nearest", align_corners=None, recompute_scale_factor=None,
                antialias=False):
    if mode in ("nearest", "area", "nearest-exact"):
        if align_corners is not None:
            raise ValueError("align_corners option can only be set with the interpolating modes: linear | bilinear | "
                             "bicubic | trilinear")
    elif align_corners is None:
        align_corners = False
    output_size, scale_factors = _output_size_and_scales(input, size, scale_factor, recompute_scale_factor, mode)
    if antialias and not (mode in ("bilinear", "bicubic", "lanczos") and input.dim() == 4):
        raise ValueError("Anti-alias option is restricted to bilinear, bicubic, and lanczos modes and requires a 4-D "
                         "tensor as input")
    if antialias and mode == "lanczos":
        raise NotImplementedError("numgrad: interpolate(mode='lanczos') is not implemented yet")
    if antialias:
        return _upsample(input, mode, output_size, scale_factors, align_corners, antialias=True)
    k = input.dim() - 2
    if k in (1, 2, 3) and mode in ("nearest", "nearest-exact"):
        return _upsample(input, mode, output_size, scale_factors, align_corners)
    if k in (1, 2, 3) and mode == "area":
        return (adaptive_avg_pool1d, adaptive_avg_pool2d, adaptive_avg_pool3d)[k - 1](input, output_size)
    if _LINEAR.get(k) == mode or (k == 2 and mode == "bicubic"):
        return _upsample(input, mode, output_size, scale_factors, align_corners)
    if k == 2 and mode == "lanczos":
        if align_corners:
            raise ValueError("Lanczos mode does not support align_corners=True")
        raise ValueError("Lanczos mode requires antialias=True")
    wanted = {"linear": 3, "bilinear": 4, "trilinear": 5}
    if input.dim() in (3, 4, 5) and mode in wanted:
        raise NotImplementedError(f"Got {input.dim()}D input, but {mode} mode needs {wanted[mode]}D input")
    raise NotImplementedError(f"Input Error: Only 3D, 4D and 5D input Tensors supported (got {input.dim()}D) for the "
                              f"modes: {_MODES} (got {mode})")


def upsample(input, size=None, scale_factor=None, mode="nearest", align_corners=None):
    warnings.warn("`nn.functional.upsample` is deprecated. Use `nn.functional.interpolate` instead.", stacklevel=2)
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(input, size=None, scale_factor=None):
    warnings.warn("`nn.functional.upsample_nearest` is deprecated. Use `nn.functional.interpolate` instead.",
                  stacklevel=2)
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input, size=None, scale_factor=None):
    warnings.warn("`nn.functional.upsample_bilinear` is deprecated. Use `nn.functional.interpolate` instead.",
                  stacklevel=2)
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)

"""The host arrays of conv2d and max_pool2d: im2col and col2im, the convolution's product, pooling and its
scatter back, by the CPU's window kernels (kernels/cpu/window.py) or, for a dtype they lack, NumPy's strided
views. nn/_conv.py builds the tensors and nodes around these; each function is one recorded call that
numgrad.compile replays (its `prepare` writes into the trace's arrays). GPU arrays are refused before
(dispatch.require_host)."""
import functools
import itertools
import math

import numpy as np
from numpy.lib.stride_tricks import as_strided

from .. import tape
from ..arrays import is_float
from ..cpu import window


class Geometry:
    """Sizes of one sliding-window op over an (N, C, H, W) input."""

    def __init__(self, shape, kernel, stride, padding, dilation, out_hw=None):
        self.n, self.c, self.h, self.w = shape
        self.kh, self.kw = kernel
        self.sh, self.sw = stride
        self.ph, self.pw = padding
        self.dh, self.dw = dilation
        self.oh, self.ow = out_hw if out_hw is not None else (
            (self.h + 2 * self.ph - self.dh * (self.kh - 1) - 1) // self.sh + 1,
            (self.w + 2 * self.pw - self.dw * (self.kw - 1) - 1) // self.sw + 1)
        # a ceil_mode window may reach past the padding: pad that far
        self.hp = max(self.h + 2 * self.ph, (self.oh - 1) * self.sh + self.dh * (self.kh - 1) + 1)
        self.wp = max(self.w + 2 * self.pw, (self.ow - 1) * self.sw + self.dw * (self.kw - 1) + 1)

    def key(self):
        """The sizes as the tuple the window kernels take."""
        return (self.n, self.c, self.h, self.w, self.kh, self.kw, self.sh, self.sw, self.ph, self.pw, self.dh,
                self.dw, self.oh, self.ow)

    def padded(self, x, fill=0.0):
        if (self.hp, self.wp) == (self.h, self.w):
            return x
        out = np.full((self.n, self.c, self.hp, self.wp), fill, x.dtype)
        out[:, :, self.ph:self.ph + self.h, self.pw:self.pw + self.w] = x
        return out

    def windows(self, xp, order):
        """A strided view of the padded input with axes named by `order` from n, c, i, j (kernel offsets),
        y, x (output positions)."""
        sn, sc, sy, sx = xp.strides
        sizes = {"n": self.n, "c": self.c, "i": self.kh, "j": self.kw, "y": self.oh, "x": self.ow}
        steps = {"n": sn, "c": sc, "i": sy * self.dh, "j": sx * self.dw, "y": sy * self.sh, "x": sx * self.sw}
        return as_strided(xp, tuple(sizes[a] for a in order), tuple(steps[a] for a in order), writeable=False)


class VolumeGeometry:
    """Sizes of one sliding-window op over an (N, C, *spatial) input of any number of spatial dims (conv3d's),
    by NumPy's strided views alone."""

    def __init__(self, shape, kernel, stride, padding, dilation, outs=None):
        self.n, self.c = shape[:2]
        self.sizes, self.kernel, self.stride, self.padding, self.dilation = (tuple(v) for v in (
            shape[2:], kernel, stride, padding, dilation))
        self.outs = tuple(outs) if outs is not None else tuple(
            (n + 2 * p - d * (k - 1) - 1) // s + 1 for n, k, s, p, d in zip(
                self.sizes, kernel, stride, padding, dilation))
        self.padded_sizes = tuple(max(n + 2 * p, (o - 1) * s + d * (k - 1) + 1) for n, k, s, p, d, o in zip(
            self.sizes, kernel, stride, padding, dilation, self.outs))

    def _padded(self, x):
        out = np.zeros((self.n, self.c) + self.padded_sizes, x.dtype)
        out[(slice(None), slice(None)) + tuple(slice(p, p + n) for p, n in zip(self.padding, self.sizes))] = x
        return out

    def im2col(self, x):
        xp = self._padded(x)
        strides = xp.strides
        shape = (self.c,) + self.kernel + (self.n,) + self.outs
        steps = (strides[1],) + tuple(st * d for st, d in zip(strides[2:], self.dilation)) + (strides[0],) + \
            tuple(st * s for st, s in zip(strides[2:], self.stride))
        cols = as_strided(xp, shape, steps, writeable=False)
        return cols.reshape(self.c * math.prod(self.kernel), self.n * math.prod(self.outs))

    def col2im(self, cols):
        out = np.zeros((self.n, self.c) + self.padded_sizes, cols.dtype)
        blocks = cols.reshape((self.c,) + self.kernel + (self.n,) + self.outs)
        for offset in itertools.product(*(range(n) for n in self.kernel)):
            region = tuple(slice(i * d, i * d + s * (o - 1) + 1, s) for i, d, s, o in zip(
                offset, self.dilation, self.stride, self.outs))
            out[(slice(None), slice(None)) + region] += np.moveaxis(blocks[(slice(None),) + offset], 0, 1)
        return out[(slice(None), slice(None)) + tuple(slice(p, p + n) for p, n in zip(self.padding, self.sizes))]


def im2col_data(x, geo):
    """(N, C, H, W) -> (C*kh*kw, N*oh*ow): one column per output position, rows grouped by channel."""
    if isinstance(geo, VolumeGeometry):
        return geo.im2col(x)
    if window.supports(x.dtype):
        return window.im2col(x, geo.key())
    cols = geo.windows(geo.padded(x), "cijnyx")
    return cols.reshape(geo.c * geo.kh * geo.kw, geo.n * geo.oh * geo.ow)


def col2im_data(cols, geo):
    """The adjoint of im2col: every column entry is added back to the input position it was read from."""
    if isinstance(geo, VolumeGeometry):
        return geo.col2im(cols)
    if window.supports(cols.dtype):
        return window.col2im(cols, geo.key())
    out = np.zeros((geo.n, geo.c, geo.hp, geo.wp), cols.dtype)
    blocks = cols.reshape(geo.c, geo.kh, geo.kw, geo.n, geo.oh, geo.ow)
    for i in range(geo.kh):
        for j in range(geo.kw):
            y0, x0 = i * geo.dh, j * geo.dw
            out[:, :, y0:y0 + geo.sh * (geo.oh - 1) + 1:geo.sh, x0:x0 + geo.sw * (geo.ow - 1) + 1:geo.sw] += \
                blocks[:, i, j].transpose(1, 0, 2, 3)
    return out[:, :, geo.ph:geo.ph + geo.h, geo.pw:geo.pw + geo.w]


def col2im_array(cols, geo):
    """col2im_data as a recorded call's function (numgrad.compile replays it on new values)."""
    return _fresh(col2im_data(cols, geo))


def _prepare_window(kernel):
    """A replay of a recorded window function that writes into the trace's result(s) with `kernel`."""
    def prepare(result, array, geo, *rest):
        if not window.supports(array.dtype) or not isinstance(geo, Geometry):
            return None
        outs = result if isinstance(result, tuple) else (result,)
        return functools.partial(kernel, array, geo, *rest, *outs)
    return prepare


def _fresh(arr):
    """`arr`, copied when it is a read-only view (a 1x1 kernel's columns can be one of the input): a replay
    of a recorded call copies the new values into the array the trace got."""
    return arr if arr.flags.writeable else np.array(arr)


def im2col_array(x, geo):
    """im2col_data as a recorded call's function (numgrad.compile replays it on new values)."""
    return _fresh(im2col_data(x, geo))


im2col_array.prepare = _prepare_window(lambda x, geo, out: window.im2col(x, geo.key(), out))
col2im_array.prepare = _prepare_window(lambda cols, geo, out: window.col2im(cols, geo.key(), out))


def conv_arrays(x, weight, bias, geo, groups, bias_first=False):
    """conv2d's output (C order) and its im2col columns: one BLAS product per group (or per batch entry), then
    the bias. `bias_first`: the sums start from the bias, as torch's slow (not oneDNN) CPU kernels start them."""
    cols = im2col_array(x, geo)
    result = np.empty((geo.n, weight.shape[0]) + _outs(geo), weight.dtype)
    _conv_finish(weight, bias, geo, groups, cols, _product_buffer(weight, cols, geo, groups), result, bias_first)
    return result, cols


def _per_entry(geo, groups):
    """Whether the product goes straight into the NCHW result, a BLAS product per batch entry: one group and
    more than one output position (a single column would go to BLAS's gemv, whose sums differ)."""
    return groups == 1 and math.prod(_outs(geo)) > 1


def _product_buffer(weight, cols, geo, groups):
    """The (O, N*positions) product's memory, when the product is not written into the result directly."""
    return None if _per_entry(geo, groups) else np.empty((weight.shape[0], cols.shape[1]), weight.dtype)


@np.errstate(all="ignore")  # IEEE results (inf, NaN) without NumPy's warnings, at a replay too
def _conv_finish(weight, bias, geo, groups, cols, product, result, bias_first=False):
    """The product of the weight and the columns into `result` as NCHW, with the bias."""
    out_channels = weight.shape[0]
    w2 = weight.reshape(out_channels, -1)
    outs = _outs(geo)
    bias_shape = (1, -1) + (1,) * len(outs)
    if _per_entry(geo, groups):
        # (O, K) @ (K, positions) per batch entry into the result's (O, positions) planes: the same sums as
        # one (O, K) @ (K, N*positions) product, without its (O, N, ...) -> (N, O, ...) pass (the convnet's
        # first conv on one core: 120 -> 66 us)
        positions = math.prod(outs)
        np.matmul(w2, cols.reshape(cols.shape[0], geo.n, positions).transpose(1, 0, 2),
                  out=result.reshape(geo.n, out_channels, positions))
        if bias is not None:
            np.add(result, bias.reshape(bias_shape), out=result)
    else:
        if groups == 1:
            np.matmul(w2, cols, out=product)
        else:
            np.matmul(w2.reshape(groups, out_channels // groups, -1), cols.reshape(groups, -1, cols.shape[1]),
                      out=product.reshape(groups, out_channels // groups, -1))
        # (O, N, oh, ow) -> (N, O, oh, ow) in one pass, with the bias added on the way
        out = np.swapaxes(product.reshape((out_channels, geo.n) + outs), 0, 1)
        if bias is None:
            np.copyto(result, out)
        else:
            np.add(out, bias.reshape(bias_shape), out=result)
    if bias is not None and bias_first and is_float(weight.dtype):
        _keep_negative_zeros(weight, bias, geo, groups, cols, result)


def _keep_negative_zeros(weight, bias, geo, groups, cols, result):
    """torch's slow CPU convolutions add each output's terms onto its bias (slow_conv2d's gemm with beta 1): a
    -0.0 bias whose terms are all -0.0 stays -0.0, where the product then the bias give +0.0. (A one-column
    product goes to BLAS's gemv, which keeps -0.0 only over few terms; beyond that torch's sums are +0.0 too.)"""
    negative_zero = (bias == 0) & np.signbit(bias)
    terms = weight[0].size
    if not negative_zero.any() or not result.size or (
            math.prod(_outs(geo)) == 1 and terms > (8 if weight.dtype == np.float64 else 11)):
        return
    out_channels = weight.shape[0]
    w = weight.reshape(groups, out_channels // groups, -1)
    c = cols.reshape(groups, -1, cols.shape[1])

    def flags(condition):  # counted by a product of 0/1 matrices
        return condition.astype(np.float32)
    w_finite, c_finite = np.isfinite(w), np.isfinite(c)
    w_zero, c_zero = w == 0, c == 0
    w_neg, c_neg = np.signbit(w), np.signbit(c)
    # a term w * c is -0.0 where one factor is 0, the other finite, and their signs differ
    negative_terms = (flags(w_zero & ~w_neg) @ flags(c_finite & c_neg)
                      + flags(w_zero & w_neg) @ flags(c_finite & ~c_neg)
                      + flags(w_finite & ~w_zero & ~w_neg) @ flags(c_zero & c_neg)
                      + flags(w_finite & ~w_zero & w_neg) @ flags(c_zero & ~c_neg))
    all_negative = np.swapaxes((negative_terms == terms).reshape((out_channels, geo.n) + _outs(geo)), 0, 1)
    keep = all_negative & negative_zero.reshape((1, -1) + (1,) * len(_outs(geo))) & (result == 0)
    result[keep] = -0.0


def _outs(geo):
    return (geo.oh, geo.ow) if isinstance(geo, Geometry) else geo.outs


def _conv_replay(x, weight, bias, geo, groups, bias_first, cols, product, result):
    window.im2col(x, geo.key(), cols)
    _conv_finish(weight, bias, geo, groups, cols, product, result, bias_first)


def _prepare_conv(result, x, weight, bias, geo, groups, bias_first=False):
    """numgrad.compile's replay of conv_arrays: into the trace's arrays, the product's buffer kept."""
    out, cols = result
    if not window.supports(x.dtype) or not isinstance(geo, Geometry):
        return None
    product = _product_buffer(weight, cols, geo, groups)
    return functools.partial(_conv_replay, x, weight, bias, geo, groups, bias_first, cols, product, out)


conv_arrays.prepare = _prepare_conv


def conv_weight_grad(g2, cols, shape):
    """conv2d's weight gradient g2 @ cols.T for a (O, L) gradient and (K, L) columns, in new memory of the
    weight's `shape` (AccumulateGrad keeps it without a copy); recorded for numgrad.compile."""
    return tape.call_into("out", _host_conv_weight_grad, g2, cols, shape)


def _host_conv_weight_grad(g2, cols, shape, out=None):
    # BLAS takes the transpose cols @ g2.T, then a (K, O) copy: the same sums in the same order, but OpenBLAS
    # runs the g2 @ cols.T orientation of these long-inner products 1.2-1.6x slower on one thread and up to 5x
    # on two (the benchmark's convnet: (16, 3872) @ (3872, 72) 226 -> 141 us, 544 -> 115 us)
    out = np.empty(shape, g2.dtype) if out is None else out
    np.copyto(out.reshape(g2.shape[0], cols.shape[0]), _long_inner_product(cols, g2.T).T)
    return out


# OpenBLAS's SkylakeX small-matrix GEMM kernel takes products of up to 10^6 multiply-adds, this one's
# orientation only with results of up to 1200 entries (its sgemm_small_kernel_permit); past 10^6 its packed path
# spends most of its time packing when the result is this small (the convnet's first conv: a (9, 8) result over
# 21632 terms, 185 -> 46 us on one core as two products of half the terms, summed; a (72, 32) result gained nothing)
_SMALL_GEMM = 10 ** 6
_SMALL_RESULT = 1200


def _long_inner_product(a, b):
    """a @ b for a small float32 result with a long inner size, as a sum of products over slices of the inner
    size that each fit BLAS's small-matrix kernel (the sums in another order, as BLAS's blocking varies them)."""
    rows, inner = a.shape
    size = rows * b.shape[1]
    parts = -(-size * inner // _SMALL_GEMM)
    if size > _SMALL_RESULT or parts < 2 or a.dtype != np.float32:
        return np.matmul(a, b)
    step = -(-inner // parts)
    total = np.matmul(a[:, :step], b[:step])
    for start in range(step, inner, step):
        total += np.matmul(a[:, start:start + step], b[start:start + step])
    return total


def unpool_array(g, idx, plane, overlapping, assign=False):
    """(rows, plane) array: each value of `g` added at its row's flat position in `idx` (rows of it) onto zeros, as
    torch's max-pool backward does (-0.0 lands as +0.0); `assign`: put there instead, as torch's max_unpool."""
    rows = idx.shape[0]
    gd = g.reshape(rows, g.size // rows if rows else 0)
    if not overlapping and not assign and window.supports(gd.dtype):
        return window.unpool(gd, idx, plane)
    if overlapping:  # several windows may share a maximum: sum (bincount is much faster than np.add.at)
        offsets = (np.arange(rows) * plane)[:, None]
        return np.bincount((idx + offsets).ravel(), weights=gd.ravel(), minlength=rows * plane).astype(gd.dtype)
    data = np.zeros((rows, plane), gd.dtype)
    np.put_along_axis(data, idx, gd if assign else gd + gd.dtype.type(0), axis=1)
    return data


def _prepare_unpool(result, g, idx, plane, overlapping, assign=False):
    if overlapping or assign or not window.supports(g.dtype) or result.dtype != g.dtype:
        return None
    return functools.partial(window.unpool, g, idx, plane, result)


unpool_array.prepare = _prepare_unpool


def _lowest(dtype):
    """The padding that never wins a window: -inf, or an integer type's least value (no cast warning)."""
    return -np.inf if is_float(dtype) else np.iinfo(dtype).min


def max_pool_arrays(x, geo):
    """Each window's maximum of (N, C, H, W) array `x` and torch's `indices`: where it came from, as a flat
    index into the unpadded input plane."""
    if window.supports(x.dtype):
        return window.max_pool(x, geo.key(), _lowest(x.dtype))
    n, c, _, w = x.shape
    windows = geo.windows(geo.padded(x, _lowest(x.dtype)), "ncyxij").reshape(n, c, geo.oh, geo.ow, geo.kh * geo.kw)
    pos = windows.argmax(-1)  # the first maximum, as torch picks it
    values = np.take_along_axis(windows, pos[..., None], -1)[..., 0]
    i, j = np.divmod(pos, geo.kw)
    rows = np.arange(geo.oh)[:, None] * geo.sh + i * geo.dh - geo.ph
    cols = np.arange(geo.ow)[None, :] * geo.sw + j * geo.dw - geo.pw
    return values, (rows * w + cols).astype(np.int64)


max_pool_arrays.prepare = _prepare_window(
    lambda x, geo, values, indices: window.max_pool(x, geo.key(), _lowest(x.dtype), values, indices))


@np.errstate(all="ignore")
def conv_transpose_arrays(x, weight, bias, geo, groups):
    """conv_transpose's output: each input position's weighted kernel (one BLAS product per group) added into
    the output by col2im, then the bias. `x` is (N, C_in, *spatial) in the layout `geo` reads its output in."""
    in_channels = x.shape[1]
    x2 = np.moveaxis(x, 1, 0).reshape(groups, in_channels // groups, x.shape[0] * x.shape[2])
    w2 = weight.reshape(groups, in_channels // groups, math.prod(weight.shape[1:]))
    cols = np.matmul(w2.transpose(0, 2, 1), x2).reshape(groups * w2.shape[2], x2.shape[-1])
    out = col2im_array(cols, geo)
    if bias is not None:
        out += bias.reshape((1, -1) + (1,) * (out.ndim - 2))
    return out


def unfold_array(x, geo):
    """F.unfold's layout of im2col: (N, C*kh*kw, L), a row of blocks per batch entry."""
    cols = im2col_data(x, geo).reshape(geo.c * geo.kh * geo.kw, geo.n, geo.oh * geo.ow)
    return np.ascontiguousarray(cols.transpose(1, 0, 2))


def fold_array(cols, geo):
    """F.fold: (N, C*kh*kw, L) blocks added back into (N, C, H, W) (col2im of unfold's layout)."""
    return _fresh(col2im_data(np.ascontiguousarray(cols.transpose(1, 0, 2)).reshape(cols.shape[1], -1), geo))

"""F.pad in torch's modes: constant (ConstantPadNdBackward0, negative padding crops), reflect and replicate
(separable gathers, ReflectionPad2DBackward0, ...) and circular (slice copies, CopySlices as torch)."""

import numpy as np

from .._core import dtypes
from ..kernels import dispatch
from ..node import record
from ._common import new_tensor
from ._resample import Taps, resample

_MODES = ("constant", "reflect", "replicate", "circular")
_SIZES_MESSAGE = ("Supported combinations for non-constant padding:\n"
                  "  - 2D or 3D input: padding size = 2 (pads last dimension)\n"
                  "  - 3D or 4D input: padding size = 4 (pads last 2 dimensions)\n"
                  "  - 4D or 5D input: padding size = 6 (pads last 3 dimensions)")


def _pad_ints(pad, op="pad"):
    pad = tuple(pad)
    for i, p in enumerate(pad):
        if isinstance(p, bool) or not isinstance(p, (int, np.integer)):
            raise TypeError(f"{op}(): argument 'pad' (position 2) must be tuple of ints, but found element of type "
                            f"{type(p).__name__} at pos {i}")
    return tuple(int(p) for p in pad)


def _pairs(pad):
    """(left, right) per padded dim, innermost (last) dim first, as torch lists them."""
    return [(pad[2 * i], pad[2 * i + 1]) for i in range(len(pad) // 2)]


# ---- constant ------------------------------------------------------------------------------------

def _constant_array(x, pad, value):
    shape = list(x.shape)
    dst, src = [slice(None)] * x.ndim, [slice(None)] * x.ndim
    for i, (left, right) in enumerate(_pairs(pad)):
        d = x.ndim - 1 - i
        size = shape[d]
        shape[d] = size + left + right
        kept = size - max(-left, 0) - max(-right, 0)
        src[d] = slice(max(-left, 0), max(-left, 0) + kept)
        dst[d] = slice(max(left, 0), max(left, 0) + kept)
    out = np.full(shape, value, x.dtype)
    out[tuple(dst)] = x[tuple(src)]
    return out


def _constant_backward(node, g):
    return (constant_pad_nd(g, tuple(-p for p in node.saved("pad"))),)


def _fill_value(value, dtype, pad):
    if any(p > 0 for p in pad):  # torch converts the value only when it pads
        return dtypes.check_scalar_fits(value, dtype)
    return 0


def constant_pad_nd(input, pad, value=0):
    """torch.constant_pad_nd: F.pad's constant mode, with its own checks of `pad`."""
    pad = _pad_ints(pad, "constant_pad_nd")
    if len(pad) % 2:
        raise RuntimeError(f"Length of pad must be even but instead it equals {len(pad)}")
    if len(pad) > 2 * input.dim():
        raise RuntimeError(f"Length of pad should be no more than twice the number of dimensions of the input. Pad "
                           f"length is {len(pad)}while the input has {input.dim()}dimensions.")
    for i, (left, right) in enumerate(_pairs(pad)):
        size = input.shape[input.dim() - 1 - i]
        if size + min(left, 0) + min(right, 0) < 0:  # torch narrows by the negative pads first
            raise RuntimeError("narrow(): length must be non-negative.")
    dispatch.require_host("pad", input._data)
    out = new_tensor(dispatch.numpy_op(_constant_array, input._data, pad, _fill_value(value, input._dtype, pad)),
                     input._dtype)
    record("ConstantPadNdBackward0", _constant_backward, [input], [out], {"pad": pad})
    return out


# ---- reflect and replicate -----------------------------------------------------------------------

def _source_positions(mode, size, left, right):
    pos = np.arange(size + left + right) - left
    if mode == "replicate":
        return np.clip(pos, 0, size - 1)
    pos = np.abs(pos)
    return np.where(pos >= size, 2 * (size - 1) - pos, pos)


def _check_not_empty(input, k):
    lead = input.shape[1:] if input.dim() == k + 2 else input.shape
    if 0 in lead:
        raise RuntimeError(f"Expected {k + 1}D or {k + 2}D (batch mode) tensor with possibly 0 batch size and other "
                           f"non-zero dimensions for input, but got: {list(input.shape)}")


def _too_small(mode, sizes, outs):
    """torch's words for an output that crops to nothing (each kernel has its own)."""
    k = len(sizes)
    if k == 1:
        return f"input (W: {sizes[0]}) is too small. Calculated output W: {outs[0]}"
    if k == 2:
        gap = "" if mode == "reflect" else " "
        return (f"input (H: {sizes[0]}, W: {sizes[1]}{gap}) is too small. Calculated output H: {outs[0]} "
                f"W: {outs[1]}")
    return (f"input (D: {sizes[0]} H: {sizes[1]}, W: {sizes[2]}) is too small. Calculated output D: {outs[0]} "
            f"H: {outs[1]} W: {outs[2]}")


def _check_sizes(input, mode, pad, k):
    pairs = _pairs(pad)
    if mode == "reflect":
        for i, (left, right) in enumerate(pairs):
            d = input.dim() - 1 - i
            if left >= input.shape[d] or right >= input.shape[d]:
                raise RuntimeError(f"Argument #{4 + 2 * i}: Padding size should be less than the corresponding input "
                                   f"dimension, but got: padding ({left}, {right}) at dimension {d} of input "
                                   f"{list(input.shape)}")
    sizes = list(input.shape[-k:])
    outs = [n + left + right for n, (left, right) in zip(sizes, reversed(pairs))]
    if (k == 1 and outs[0] < 1) or all(o < 1 for o in outs):
        raise RuntimeError(_too_small(mode, sizes, outs))
    shape = list(input.shape[:-k]) + outs
    negative = [o for o in outs if o < 0]
    if negative:
        if mode == "reflect" and k == 2:
            raise RuntimeError("numel: integer multiplication overflow")
        raise RuntimeError(f"Trying to create tensor with negative dimension {negative[0]}: {shape}")


def _gather_pad(input, mode, pad, k):
    _check_not_empty(input, k)
    _check_sizes(input, mode, pad, k)
    if input._dtype is dtypes.bool_:
        name = "reflection" if mode == "reflect" else "replication"
        raise NotImplementedError(f"\"{name}_pad{k}d\" not implemented for 'Bool'")
    plan = [(-1 - i, Taps(_source_positions(mode, input.shape[-1 - i], left, right), input.shape[-1 - i]))
            for i, (left, right) in enumerate(_pairs(pad))]
    name = "ReflectionPad" if mode == "reflect" else "ReplicationPad"
    return resample(input, plan, f"{name}{k}DBackward0")


# ---- circular ------------------------------------------------------------------------------------

def _narrowed(t, dim, start, stop):
    index = [slice(None)] * t.dim()
    index[dim] = slice(start, stop)
    return t[tuple(index)]


def _circular_pad(input, pad):
    """torch's _pad_circular: the input copied into the middle of a new tensor, then each dim's wrapped
    borders copied from the tensor itself (a corner is written once per dim)."""
    k = len(pad) // 2
    lead = input.dim() - k
    if lead not in (1, 2):
        raise RuntimeError(f"Invalid padding size, expected 1 or 2 non-padded dimensions, which would be equivalent "
                           f"to padding of length {(input.dim() - 1) * 2} or {(input.dim() - 2) * 2} respectively "
                           f"but got {len(pad)}")
    shape = list(input.shape)
    for i in range(k):
        left, right = pad[2 * (k - i - 1)], pad[2 * (k - i - 1) + 1]
        size = input.shape[lead + i]
        shape[lead + i] = size + left + right
        if left > size or right > size:
            raise RuntimeError("Padding value causes wrapping around more than once.")
        if shape[lead + i] < 0:
            raise RuntimeError("Negative padding value is resulting in an empty dimension")
    out = input.new_empty(*shape)
    out_slice, in_slice = out, input
    for i in range(k):
        dim = k - i + lead - 1
        left, right = pad[2 * i], pad[2 * i + 1]
        out_slice = _narrowed(out_slice, dim, max(left, 0), shape[dim] - max(right, 0))
        in_slice = _narrowed(in_slice, dim, max(-left, 0), input.shape[dim] - max(-right, 0))
    out_slice.copy_(in_slice)
    for i in range(k):
        dim = k - i + lead - 1
        left, right = pad[2 * i], pad[2 * i + 1]
        if left > 0:
            _narrowed(out, dim, 0, left).copy_(
                _narrowed(out, dim, shape[dim] - left - max(right, 0), shape[dim] - max(right, 0)))
        if right > 0:
            _narrowed(out, dim, shape[dim] - right, shape[dim]).copy_(
                _narrowed(out, dim, max(left, 0), max(left, 0) + right))
    return out


def pad(input, pad, mode="constant", value=None):
    pad = _pad_ints(pad)
    if len(pad) % 2:
        raise RuntimeError("Padding length must be divisible by 2")
    if len(pad) > input.dim() * 2:
        raise RuntimeError(f"Padding length should be less than or equal to two times the input dimension but got "
                           f"padding length {len(pad)} and input of dimension {input.dim()}")
    if mode not in _MODES:
        raise NotImplementedError(f"Unrecognised padding mode {mode}")
    if mode == "constant":
        return constant_pad_nd(input, pad, 0.0 if value is None else float(value))  # F.pad's value is a double
    if value is not None and value != 0:
        raise RuntimeError(f"Padding mode \"{mode}\" doesn't take in value argument")
    k = len(pad) // 2
    if not (k in (1, 2, 3) and input.dim() in (k + 1, k + 2)):
        raise NotImplementedError(f"Padding size {len(pad)} is not supported for {input.dim()}D input tensor.\n"
                                  + _SIZES_MESSAGE)
    if mode == "circular":
        return _circular_pad(input, pad)
    return _gather_pad(input, mode, pad, k)

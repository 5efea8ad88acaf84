"""F.unfold and F.fold (Im2ColBackward0, Col2ImBackward0: each the other's backward), pixel_shuffle /
pixel_unshuffle (likewise) and channel_shuffle, with torch's checks."""
from ..kernels import dispatch
from ..kernels.dispatch import window
from ..node import record
from ..spec.table import NOT_IMPLEMENTED_NODE
from ._common import new_tensor, refuse_dtype


def _pair(value):
    return tuple(value) if hasattr(value, "__iter__") else (value, value)


def _check_window(kernel, dilation, padding, stride):
    if min(kernel) <= 0:
        raise RuntimeError(f"kernel size should be greater than zero, but got kernel_height: {kernel[0]} "
                           f"kernel_width: {kernel[1]}")
    if min(dilation) <= 0:
        raise RuntimeError(f"dilation should be greater than zero, but got dilation_height: {dilation[0]} "
                           f"dilation_width: {dilation[1]}")
    if min(padding) < 0:
        raise RuntimeError(f"padding should be non-negative, but got pad_height: {padding[0]} pad_width: {padding[1]}")
    if min(stride) <= 0:
        raise RuntimeError(f"stride should be greater than zero, but got stride_height: {stride[0]} stride_width: "
                           f"{stride[1]}")


def _blocks(size, k, d, p, s):
    return (size + 2 * p - (d * (k - 1) + 1)) // s + 1


def _unfold_backward(node, g):
    return (_fold(g, node.saved("geometry"), node.saved("batched")),)


def _fold_backward(node, g):
    return (_unfold(g, node.saved("geometry"), node.saved("batched")),)


def _unfold(x, geo, batched):
    data = dispatch.numpy_op(window.unfold_array, x._data if batched else x._data[None], geo)
    out = new_tensor(data if batched else data[0], x._dtype)
    record("Im2ColBackward0", _unfold_backward, [x], [out], {"geometry": geo, "batched": batched})
    return out


def _fold(cols, geo, batched):
    data = dispatch.numpy_op(window.fold_array, cols._data if batched else cols._data[None], geo)
    out = new_tensor(data if batched else data[0], cols._dtype)
    record("Col2ImBackward0", _fold_backward, [cols], [out], {"geometry": geo, "batched": batched})
    return out


def _im2col_types(d):
    return d.is_floating_point or d.name == "bool"  # torch's im2col/col2im: floating types and bool


def unfold(input, kernel_size, dilation=1, padding=0, stride=1):
    kernel, dilation, padding, stride = (_pair(v) for v in (kernel_size, dilation, padding, stride))
    dispatch.require_host("unfold", input._data)
    _check_window(kernel, dilation, padding, stride)
    shape = input.shape
    if input.dim() < 3:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-input.dim()}, {input.dim() - 1}], "
                         f"but got {min(input.dim(), 2)})")
    valid = shape[1] != 0 and shape[2] != 0
    if not ((input.dim() == 3 and shape[0] and valid) or (input.dim() == 4 and valid and shape[3] != 0)):
        raise RuntimeError("Expected 3D or 4D (batch mode) tensor with possibly 0 batch size and other non-zero "
                           f"dimensions for input, but got: {list(shape)}")
    h, w = shape[-2:]
    blocks = [_blocks(n, *args) for n, args in zip((h, w), zip(kernel, dilation, padding, stride))]
    if min(blocks) < 1:
        raise RuntimeError(f"Given input with spatial size ({h}, {w}), kernel_size=({kernel[0]}, {kernel[1]}), "
                           f"dilation=({dilation[0]}, {dilation[1]}), padding=({padding[0]}, {padding[1]}), calculated "
                           f"shape of the array of sliding blocks as ({blocks[0]}, {blocks[1]}), but its components "
                           "must be at least one.")
    refuse_dtype("im2col_out_cpu", input, _im2col_types)
    batched = input.dim() == 4
    n = shape[0] if batched else 1
    geo = window.Geometry((n, shape[-3], h, w), kernel, stride, padding, dilation)
    return _unfold(input, geo, batched)


def fold(input, output_size, kernel_size, dilation=1, padding=0, stride=1):
    out_hw, kernel, dilation, padding, stride = (_pair(v) for v in (output_size, kernel_size, dilation, padding,
                                                                     stride))
    dispatch.require_host("fold", input._data)
    if min(out_hw) <= 0:
        raise RuntimeError(f"Expected output spatial size to be positive, but got: output_size=({out_hw[0]}, "
                           f"{out_hw[1]})")
    _check_window(kernel, dilation, padding, stride)
    shape = input.shape
    valid = input.dim() >= 2 and shape[1] != 0 and (input.dim() < 3 or shape[2] != 0)
    if not ((input.dim() == 2 and valid and shape[0] != 0) or (input.dim() == 3 and valid)):
        raise RuntimeError("Expected 2D or 3D (batch mode) tensor for input with possibly 0 batch size and non-zero "
                           f"dimensions for input, but got: {list(shape)}")
    planes, length = shape[-2:]
    if planes % (kernel[0] * kernel[1]):
        raise RuntimeError(f"Expected size of input's dimension 1 to be divisible by the product of kernel_size, but "
                           f"got input.size(1)={planes} and kernel_size=({kernel[0]}, {kernel[1]}).")
    blocks = [_blocks(n, *args) for n, args in zip(out_hw, zip(kernel, dilation, padding, stride))]
    words = (f"Given output_size=({out_hw[0]}, {out_hw[1]}), kernel_size=({kernel[0]}, {kernel[1]}), "
             f"dilation=({dilation[0]}, {dilation[1]}), padding=({padding[0]}, {padding[1]}), "
             f"stride=({stride[0]}, {stride[1]}), ")
    if length != blocks[0] * blocks[1]:
        raise RuntimeError(words + "expected size of input's dimension 2 to match the calculated number of sliding "
                           f"blocks {blocks[0]} * {blocks[1]} = {blocks[0] * blocks[1]}, but got "
                           f"input.size(2)={length}.")
    if min(blocks) < 1:
        raise RuntimeError(words + f"calculated shape of the array of sliding blocks as ({blocks[0]}, {blocks[1]}), "
                           "which is invalid.")
    refuse_dtype("col2im_out_cpu", input, _im2col_types)
    batched = input.dim() == 3
    n = shape[0] if batched else 1
    geo = window.Geometry((n, planes // (kernel[0] * kernel[1]), *out_hw), kernel, stride, padding, dilation)
    return _fold(input, geo, batched)


# ---- pixel shuffle ---------------------------------------------------------------------------------

def _shuffle_array(x, r):
    *lead, c, h, w = x.shape
    blocks = x.reshape(*lead, c // (r * r), r, r, h, w)
    k = len(lead)
    order = list(range(k)) + [k, k + 3, k + 1, k + 4, k + 2]
    return blocks.transpose(order).copy().reshape(*lead, c // (r * r), h * r, w * r)  # a copy even for r == 1, as torch


def _unshuffle_array(x, r):
    *lead, c, h, w = x.shape
    blocks = x.reshape(*lead, c, h // r, r, w // r, r)
    k = len(lead)
    order = list(range(k)) + [k, k + 2, k + 4, k + 1, k + 3]
    return blocks.transpose(order).copy().reshape(*lead, c * r * r, h // r, w // r)  # a copy even for r == 1, as torch


def _checked_gradient(node, grad):
    """torch's backward runs the checked public op, whose empty-input shortcut can return the wrong shape."""
    expected = node.input_shape(0)
    if tuple(grad.shape) != tuple(expected):
        raise RuntimeError(f"Function {node.name()} returned an invalid gradient at index 0 - got {list(grad.shape)} "
                           f"but expected shape compatible with {list(expected)}")
    return (grad,)


def _shuffle(x, r):
    out = new_tensor(dispatch.numpy_op(_shuffle_array, x._data, r), x._dtype)
    record("PixelShuffleBackward0", lambda node, g: _checked_gradient(node, pixel_unshuffle(g, r)), [x], [out])
    return out


def _unshuffle(x, r):
    out = new_tensor(dispatch.numpy_op(_unshuffle_array, x._data, r) if x.numel() else x._data.copy(), x._dtype)
    record("PixelUnshuffleBackward0", lambda node, g: _checked_gradient(node, pixel_shuffle(g, r)), [x], [out])
    return out


def pixel_shuffle(input, upscale_factor):
    dispatch.require_host("pixel_shuffle", input._data)
    if input.dim() < 3:
        raise RuntimeError(f"pixel_shuffle expects input to have at least 3 dimensions, but got input with "
                           f"{input.dim()} dimension(s)")
    if upscale_factor <= 0:
        raise RuntimeError(f"pixel_shuffle expects a positive upscale_factor, but got {upscale_factor}")
    c, square = input.shape[-3], upscale_factor * upscale_factor
    if c % square:
        raise RuntimeError(f"pixel_shuffle expects its input's 'channel' dimension to be divisible by the square of "
                           f"upscale_factor, but input.size(-3)={c} is not divisible by {square}")
    return _shuffle(input, upscale_factor)


def pixel_unshuffle(input, downscale_factor):
    dispatch.require_host("pixel_unshuffle", input._data)
    if input.dim() < 3:
        raise RuntimeError(f"pixel_unshuffle expects input to have at least 3 dimensions, but got input with "
                           f"{input.dim()} dimension(s)")
    if downscale_factor <= 0:
        raise RuntimeError(f"pixel_unshuffle expects a positive downscale_factor, but got {downscale_factor}")
    r = downscale_factor
    h, w = input.shape[-2:]
    if h % r:
        raise RuntimeError(f"pixel_unshuffle expects height to be divisible by downscale_factor, but input.size(-2)={h}"
                           f" is not divisible by {r}")
    if w % r:
        raise RuntimeError(f"pixel_unshuffle expects width to be divisible by downscale_factor, but input.size(-1)={w} "
                           f"is not divisible by {r}")
    return _unshuffle(input, r)  # (an empty input keeps its shape, as torch's shortcut does)


# ---- channel_shuffle: (N, g, C/g, *) -> (N, C/g, g, *), its own backward with C/g groups --------------------------

def _channel_shuffle_array(x, groups):
    n, c = x.shape[:2]
    return x.reshape(n, groups, c // groups, *x.shape[2:]).swapaxes(1, 2).copy().reshape(x.shape)  # a copy always


def _channel_shuffled(x, groups):
    dispatch.require_host("channel_shuffle", x._data)
    return new_tensor(dispatch.numpy_op(_channel_shuffle_array, x._data, groups), x._dtype)


def _check_channel_shuffle(input, groups):
    if input.dim() <= 2:
        raise RuntimeError(f"channel_shuffle expects input with > 2 dims, but got input with sizes "
                           f"{list(input.shape)}")
    if groups <= 0:
        raise RuntimeError(f"Number of groups to divide channels in must be positive. Value of groups:{groups}")
    if input.shape[1] % groups:
        raise RuntimeError(f"Number of channels must be divisible by groups. Got {input.shape[1]} channels and "
                           f"{groups} groups.")


def _channel_shuffle_backward(node, g):
    return (channel_shuffle(g, g.shape[1] // node.saved("groups")),)


def channel_shuffle(input, groups):
    _check_channel_shuffle(input, groups)
    out = _channel_shuffled(input, groups)
    record("ChannelShuffleBackward0", _channel_shuffle_backward, [input], [out], {"groups": groups})
    return out


def _native_channel_shuffle_backward(node, g):
    raise RuntimeError("derivative for aten::native_channel_shuffle is not implemented")


def native_channel_shuffle(input, groups):
    """The same values through torch's kernel, for which torch defines no derivative."""
    _check_channel_shuffle(input, groups)
    out = _channel_shuffled(input, groups)
    record(NOT_IMPLEMENTED_NODE, _native_channel_shuffle_backward, [input], [out])
    return out

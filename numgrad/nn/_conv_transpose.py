"""conv_transpose1d/2d/3d (ConvolutionBackward0): each input position's kernel, weighted, added into the
output by col2im (the adjoint of the convolution's im2col), with torch's checks; the backward is written
with im2col and matmuls, so create_graph works through it."""

import math

import numpy as np

from ..kernels import dispatch
from ..kernels.dispatch import window
from ..node import record
from ..ops import autocast
from ._common import new_tensor, refuse_dtype, wants
from ._conv import _expand, _grouped, check_common, geometry, im2col, op_ints

_AXES = {1: ("width",), 2: ("height", "width"), 3: ("depth", "height", "width")}


def _conv_transpose_backward(node, g):
    x, weight, geo, groups = node.saved("input"), node.saved("weight"), node.saved("geometry"), node.saved("groups")
    in_channels = weight.shape[0]
    grad_cols = _grouped(im2col(g, geo), groups)  # (groups, C_out/groups * K, N * L)
    input_grad = weight_grad = bias_grad = None
    if wants(node, 0):
        w2 = _grouped(weight.reshape(in_channels, -1), groups)
        input_grad = w2.matmul(grad_cols).reshape(in_channels, x.shape[0], *x.shape[2:]).transpose(0, 1)
    if wants(node, 1):
        x2 = _grouped(x.transpose(0, 1).reshape(in_channels, -1), groups)
        weight_grad = x2.matmul(grad_cols.mT).reshape(*weight.shape)
    if len(node.next_functions) > 2 and wants(node, 2):
        bias_grad = g.sum((0, *range(2, g.dim())))
    return input_grad, weight_grad, bias_grad


def _check(input, weight, bias, stride, padding, output_padding, groups, dilation, k):
    """torch's checks of a transposed convolution, in its order; returns the expanded arguments."""
    if weight.dim() <= 2:
        raise RuntimeError("weight should have at least three dimensions")
    if groups <= 0:
        raise RuntimeError("non-positive groups is not supported")
    k = weight.dim() - 2
    stride, padding, dilation, output_padding = (_expand(v, name, k) for v, name in (
        (stride, "stride"), (padding, "padding"), (dilation, "dilation"), (output_padding, "output_padding")))
    wshape = check_common(input, weight, groups, stride, padding, dilation, output_padding)
    if input.shape[1] != wshape[0]:
        raise RuntimeError(f"Given transposed=1, weight of size {wshape}, expected input{list(input.shape)} to have "
                           f"{wshape[0]} channels, but got {input.shape[1]} channels instead")
    out_channels = wshape[1] * groups
    if bias is not None and (bias.dim() != 1 or bias.shape[0] != out_channels):
        raise RuntimeError(f"Given transposed=1, weight of size {wshape}, expected bias to be 1-dimensional with "
                           f"{out_channels} elements, but got bias of size {list(bias.shape)} instead")
    if any(p >= s and p >= d for p, s, d in zip(output_padding, stride, dilation)):
        axes = _AXES[k]
        words = " ".join(f"{name}_{axis}: {v}" for name, values in (
            ("output_padding", output_padding), ("stride", stride), ("dilation", dilation))
            for axis, v in zip(axes, values))
        raise RuntimeError(f"output padding must be smaller than either stride or dilation, but got {words}")
    if input._dtype is not weight._dtype:
        raise RuntimeError(f"expected scalar type {input._dtype.word} but found {weight._dtype.word}")
    return stride, padding, output_padding, dilation


@autocast.lower_precision
@np.errstate(all="ignore")
def conv_transpose(input, weight, bias, stride, padding, output_padding, groups, dilation, k):
    op = f"conv_transpose{k}d"
    dispatch.require_host(op, *(t._data for t in (input, weight, bias) if t is not None))
    if isinstance(padding, str):
        raise TypeError(f"{op}(): argument 'padding' must be tuple of ints, not str")
    if bias is not None and bias._dtype is not input._dtype:
        raise RuntimeError(f"Input type ({input._dtype.c_name}) and bias type ({bias._dtype.c_name}) should be the "
                           "same")
    if input.dim() == k + 1:
        return conv_transpose(input.unsqueeze(0), weight, bias, stride, padding, output_padding, groups, dilation,
                              k).squeeze(0)
    if input.dim() != k + 2:
        raise RuntimeError(f"Expected {k + 1}D (unbatched) or {k + 2}D (batched) input to {op}, but got input of "
                           f"size: {list(input.shape)}")
    stride, padding, output_padding, dilation = (op_ints(v, k) for v in (stride, padding, output_padding, dilation))
    stride, padding, output_padding, dilation = _check(input, weight, bias, stride, padding, output_padding, groups,
                                                       dilation, k)
    kernel = weight.shape[2:]
    sizes = input.shape[2:]
    outs = [(i - 1) * s - 2 * p + d * (n - 1) + q + 1 for i, s, p, d, n, q in zip(
        sizes, stride, padding, dilation, kernel, output_padding)]
    viewed = ([1] if k == 1 else []) + list(sizes)  # torch reports a 1-d one as 2-d
    if input.numel() == 0 and input.shape[0] and input.shape[1]:
        raise RuntimeError(f"Only zero batch or zero channel inputs are supported, but got input shape: "
                           f"{list(input.shape[:2]) + viewed}")
    if min(outs) < 0 or (min(outs) < 1 and all(s == 1 for s in stride)):  # as each backend checks
        raise RuntimeError(f"Given input size per channel: ({' x '.join(map(str, viewed))}). Calculated output size "
                           f"per channel: ({' x '.join(map(str, ([1] if k == 1 else []) + outs))}). Output size is too "
                           "small")
    if k > 1 and input.numel():  # torch's slow transposed kernels (an empty input runs none): floating types, long
        refuse_dtype(f"slow_conv_transpose{k}d_out_cpu", input, lambda d: d.is_floating_point or d.name == "int64")
    out_channels = weight.shape[1] * groups
    shape = (input.shape[0], out_channels, *outs)
    geo = geometry(shape, kernel, stride, padding, dilation, sizes)
    x = input._data.reshape(input.shape[0], input.shape[1], math.prod(sizes))
    data = dispatch.numpy_op(window.conv_transpose_arrays, x, weight._data, None if bias is None else bias._data, geo,
                             groups)
    result = new_tensor(data.reshape(shape), input._dtype)
    record("ConvolutionBackward0", _conv_transpose_backward, [input, weight, bias], [result],
           {"input": input, "weight": weight, "geometry": geo, "groups": groups})
    return result


def conv_transpose1d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    return conv_transpose(input, weight, bias, stride, padding, output_padding, groups, dilation, 1)


def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    return conv_transpose(input, weight, bias, stride, padding, output_padding, groups, dilation, 2)


def conv_transpose3d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    return conv_transpose(input, weight, bias, stride, padding, output_padding, groups, dilation, 3)

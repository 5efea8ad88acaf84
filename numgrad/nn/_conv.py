"""conv2d (im2col + one BLAS product per group, ConvolutionBackward0) and max_pool2d
(MaxPool2DWithIndicesBackward0). im2col and col2im are differentiable ops of their own, each the other's
backward, so that backward is written with tensor ops and create_graph works through it."""

import math

import numpy as np

from .._core import dtypes
from .._core.state import STATE
from .._core.warn import warn_once
from ..kernels import dispatch
from ..kernels.dispatch import window
from ..node import record
from ..ops import join
from ..ops import autocast
from ..ops.linalg import mm_laid_out
from ..ops.reduction import sums_unrecorded
from ..ops.indexing import gather
from ..tensor_base import TensorBase
from ._common import constant, new_tensor, refuse_dtype, wants


def _im2col_backward(node, g):
    return (col2im(g, node.saved("geometry"), node.input_shape(0)),)


def _col2im_backward(node, g):
    return (im2col(g, node.saved("geometry")),)


def geometry(shape, kernel, stride, padding, dilation, outs=None):
    """The window geometry of a k-d op over an (N, C, *spatial) input: a 1-d one as 2-d over a height of one
    (the CPU's window kernels), a 3-d one by NumPy's strided views."""
    if len(shape) == 3:
        return window.Geometry((shape[0], shape[1], 1, shape[2]), (1, kernel[0]), (1, stride[0]), (0, padding[0]),
                               (1, dilation[0]), None if outs is None else (1, outs[0]))
    if len(shape) == 4:
        return window.Geometry(shape, kernel, stride, padding, dilation, outs)
    return window.VolumeGeometry(shape, kernel, stride, padding, dilation, outs)


def spatial(data, geo):
    """An input array in the layout its geometry reads (a 1-d one with a height of one)."""
    return data.reshape(geo.n, geo.c, geo.h, geo.w) if isinstance(geo, window.Geometry) else data


def output_sizes(geo):
    return (geo.oh, geo.ow) if isinstance(geo, window.Geometry) else geo.outs


def im2col(x, geo):
    out = new_tensor(dispatch.numpy_op(window.im2col_array, spatial(x._data, geo), geo), x._dtype)
    record("Im2ColBackward0", _im2col_backward, [x], [out], {"geometry": geo})
    return out


def col2im(cols, geo, shape):
    """The adjoint of im2col, as a tensor of `shape` (the input's that geometry `geo` describes)."""
    out = new_tensor(dispatch.numpy_op(window.col2im_array, cols._data, geo).reshape(shape), cols._dtype)
    record("Col2ImBackward0", _col2im_backward, [cols], [out], {"geometry": geo})
    return out


def _grouped(t, groups):
    """A (rows, cols) matrix as (groups, rows/groups, cols); 2-d when there is one group (plain mm)."""
    return t if groups == 1 else t.reshape(groups, t.shape[0] // groups, t.shape[1])


def _blas_first_order(a, b):
    """Whether a product of `a` and `b` in a backward can be one BLAS call on their arrays: a first-order
    backward (no graph to record) of host float32 or float64 arrays, outside autocast."""
    return not STATE.grad_enabled and STATE.autocast is None and a._dtype is b._dtype and \
        a._dtype in _BLAS_DTYPES and dispatch.is_host(a._data) and dispatch.is_host(b._data)


_BLAS_DTYPES = (dtypes.float32, dtypes.float64)


def _conv_backward(node, g):
    x, weight, geo, groups = node.saved("input"), node.saved("weight"), node.saved("geometry"), node.saved("groups")
    out_channels = weight.shape[0]
    # (N, O, oh, ow) -> (O, N*oh*ow), the layout of the forward product
    rows = g.transpose(0, 1).reshape(out_channels, -1)
    g2 = _grouped(rows, groups)
    input_grad = weight_grad = bias_grad = None
    if wants(node, 1):
        # create_graph needs the columns as a function of x; otherwise the forward's copy serves
        cols = im2col(x, geo) if STATE.grad_enabled else node.saved("columns")
        if groups == 1 and _blas_first_order(g2, cols):
            weight_grad = TensorBase._make(window.conv_weight_grad(g2._data, cols._data, tuple(weight.shape)),
                                           g2._dtype)
        elif groups == 1:  # in the weight's own shape and memory: AccumulateGrad keeps it without a copy
            weight_grad = mm_laid_out(g2, cols.mT, tuple(weight.shape))
        else:
            weight_grad = g2.matmul(_grouped(cols, groups).mT).reshape(*weight.shape)
    if wants(node, 0):
        w2 = _grouped(weight.reshape(out_channels, -1), groups)
        input_grad = col2im(w2.mT.matmul(g2).reshape(-1, g2.shape[-1]), geo, x.shape)
    if len(node.next_functions) > 2 and wants(node, 2):
        # first order: g.sum's fold over the very copy it would make of g (its rows are the bias's sums)
        bias_grad = g.sum((0, *range(2, g.dim()))) if STATE.grad_enabled or not rows.is_contiguous() or \
            not rows._dtype.is_floating_point else sums_unrecorded(rows, 1)
    return input_grad, weight_grad, bias_grad


# ---- argument checks: torch's, in torch's order (aten/src/ATen/native/Convolution.cpp, Pool.h) -------

def _int_list(value):
    """An int or a sequence of ints as a list, as torch's argument parser reads `int[2]` (an int twice)."""
    return [value, value] if isinstance(value, int) else list(value)


def op_ints(value, k):
    """An int argument as torch's parser reads an `int[k]` of a k-d op: the int k times."""
    return [value] * k if isinstance(value, int) else value


def _expand(value, name, k):
    """expand_param_if_needed: one value for every spatial dim, or all of them."""
    values = [value] if isinstance(value, int) else list(value)
    if len(values) == 1:
        return tuple(values * k)
    if len(values) != k:
        raise RuntimeError(f"expected {name} to be a single integer value or a list of {k} values to match the "
                           f"convolution dimensions, but got {name}={values}")
    return tuple(values)


def _same_padding(weight, stride, dilation, groups):
    """_convolution_same's checks and its padding: half the total on each side, and where the total is odd
    one more row or column after the input (returned as the second pair)."""
    k = weight.dim()
    if k <= 2:
        raise RuntimeError("weight should have at least three dimensions")
    if groups <= 0:
        raise RuntimeError("non-positive groups is not supported")
    dim = k - 2
    stride, dilation = ([v] if isinstance(v, int) else list(v) for v in (stride, dilation))
    if len(stride) not in (1, dim):
        raise RuntimeError(f"stride cannot broadcast to {dim} dimensions")
    if len(dilation) not in (1, dim):
        raise RuntimeError(f"dilation cannot broadcast to {dim} dimensions")
    if any(s != 1 for s in stride):
        raise RuntimeError("padding='same' is not supported for strided convolutions")
    dilation = dilation * dim if len(dilation) == 1 else dilation
    total = [d * (n - 1) for d, n in zip(dilation, weight.shape[2:])]
    return tuple(t // 2 for t in total), tuple(t % 2 for t in total)


def _conv_padding(padding, weight, stride, dilation, groups):
    """F.conv2d's padding: ints, or torch's strings ('valid', 'same'), checked as torch's C++ checks them."""
    if isinstance(padding, str):
        if padding == "valid":
            return (0,) * max(weight.dim() - 2, 1), (0,) * max(weight.dim() - 2, 1)
        if padding == "same":
            return _same_padding(weight, stride, dilation, groups)
        raise RuntimeError(f"Invalid padding string: '{padding}'")
    return padding, (0,) * max(weight.dim() - 2, 1)


def _pad_after(input, extra):
    """`input` with `extra` zero rows and columns after its spatial dims (differentiably, by concatenation)."""
    for dim, n in zip(range(2, input.dim()), extra):
        if n:
            shape = list(input.shape)
            shape[dim] = n
            input = join.cat([input, input.new_zeros(*shape)], dim)
    return input


def check_common(input, weight, groups, stride, padding, dilation, output_padding=()):
    """The checks a convolution and a transposed one share, in torch's order; returns the weight's shape."""
    if any(p < 0 for p in padding):
        raise RuntimeError("negative padding is not supported")
    if any(p < 0 for p in output_padding):
        raise RuntimeError("negative output_padding is not supported")
    if any(s <= 0 for s in stride):
        raise RuntimeError("non-positive stride is not supported")
    if any(d < 0 for d in dilation):
        raise RuntimeError("dilation should be greater than zero")
    wshape = list(weight.shape)
    if weight.dim() != input.dim():
        raise RuntimeError(f"Expected {weight.dim()}-dimensional input for {weight.dim()}-dimensional weight {wshape}, "
                           f"but got {input.dim()}-dimensional input of size {list(input.shape)} instead")
    if wshape[0] < groups:
        raise RuntimeError(f"Given groups={groups}, expected weight to be at least {groups} at dimension 0, but got "
                           f"weight of size {wshape} instead")
    if wshape[0] % groups:
        raise RuntimeError(f"Given groups={groups}, expected weight to be divisible by {groups} at dimension 0, but "
                           f"got weight of size [{wshape}] instead")
    return wshape


def _check_conv(input, weight, bias, stride, padding, dilation, groups):
    """torch's checks of a batched (N, C, *spatial) convolution's arguments, in its order (at::_convolution, then
    check_shape_forward, then the CPU kernel's own); returns stride, padding and dilation as pairs."""
    k = weight.dim() - 2
    if k <= 0:
        raise RuntimeError("weight should have at least three dimensions")
    if groups <= 0:
        raise RuntimeError("non-positive groups is not supported")
    stride, padding, dilation = (_expand(v, name, k) for v, name in
                                 ((stride, "stride"), (padding, "padding"), (dilation, "dilation")))
    wshape = check_common(input, weight, groups, stride, padding, dilation)
    if input.shape[1] != wshape[1] * groups:
        raise RuntimeError(f"Given groups={groups}, weight of size {wshape}, expected input{list(input.shape)} to have "
                           f"{wshape[1] * groups} channels, but got {input.shape[1]} channels instead")
    if bias is not None and (bias.dim() != 1 or bias.shape[0] != wshape[0]):
        raise RuntimeError(f"Given weight of size {wshape}, expected bias to be 1-dimensional with {wshape[0]} "
                           f"elements, but got bias of size {list(bias.shape)} instead")
    padded = [n + 2 * p for n, p in zip(input.shape[2:], padding)]
    spans = [d * (n - 1) + 1 for d, n in zip(dilation, wshape[2:])]
    if any(a < b for a, b in zip(padded, spans)):
        raise RuntimeError(f"Calculated padded input size per channel: ({' x '.join(map(str, padded))}). Kernel size: "
                           f"({' x '.join(map(str, spans))}). Kernel size can't be greater than actual input size")
    if input.numel() == 0:  # torch's empty-input path computes the output's shape only
        if input.shape[0] and input.shape[1]:
            raise RuntimeError(f"Only zero batch or zero channel inputs are supported, but got input shape: "
                               f"{list(input.shape)}")
        return stride, padding, dilation
    kernel = wshape[2:]
    if _uses_mkldnn(input, weight, stride, padding, dilation, groups):
        _check_mkldnn(input, weight, dilation, kernel)
        return stride, padding, dilation
    if any(d != 1 for d in dilation) or k != 2:  # the dilated CPU kernel
        if any(n <= 0 for n in kernel):
            raise RuntimeError(f"kernel size should be greater than zero, but got {kernel}")
        if any(d <= 0 for d in dilation):
            raise RuntimeError(f"dilation should be greater than zero, but got {list(dilation)}")
    elif any(n <= 0 for n in kernel):
        raise RuntimeError(f"kernel size should be greater than zero, but got kernel_height: {kernel[0]} "
                           f"kernel_width: {kernel[1]}")
    if input._dtype is not weight._dtype:
        raise RuntimeError(f"expected scalar type {input._dtype.word} but found {weight._dtype.word}")
    return stride, padding, dilation


def _uses_mkldnn(input, weight, stride, padding, dilation, groups):
    """torch's ConvParams::use_mkldnn for a CPU float32 input (its backend decides which checks and words
    follow). torch's default thread count is the core count; numgrad assumes more than one, where the
    thread clause makes the first condition true."""
    if input._dtype is not dtypes.float32:
        return False
    n = input.shape[0]
    kh, kw = weight.shape[-2:] if weight.dim() > 3 else (1, weight.shape[-1])  # conv1d runs as a 2-d one
    return groups > 1 or (kh > 3 and kw > 3) or n > 1 or math.prod(input.shape[:4]) > 20480


def _check_mkldnn(input, weight, dilation, kernel):
    """The mkldnn backend's checks, in their order: the weight's dtype, the dilation, then oneDNN's refusal of
    an empty kernel."""
    if weight._dtype is not input._dtype:
        raise RuntimeError(f"Input type ({input.type()}) and weight type ({weight.type()}) "
                           "should be the same or input should be a MKLDNN tensor and weight is a dense tensor")
    if any(d <= 0 for d in dilation):
        raise RuntimeError("non-positive dilation is not supported")
    if any(k <= 0 for k in kernel):
        raise RuntimeError("could not create a primitive descriptor for the convolution forward propagation "
                           "primitive. Run workload with environment variable ONEDNN_VERBOSE=all to get additional "
                           "diagnostic information.")


def _refuse_kernel_dtype(input, dilation, k):
    """The dtypes of the CPU kernel torch picks: the dilated one takes floating types and long, slow_conv2d and
    slow_conv3d anything but bool; an empty input runs none."""
    if k == 1 or not input.numel():
        return
    if any(d != 1 for d in dilation):
        refuse_dtype("slow_conv_dilated<>", input, lambda d: d.is_floating_point or d.name == "int64")
    else:
        refuse_dtype("slow_conv2d_cpu" if k == 2 else "compute_columns3d", input, lambda d: d.name != "bool")


@autocast.lower_precision
@np.errstate(all="ignore")  # IEEE results (inf, NaN) without NumPy's warnings: torch is silent
def convolution(input, weight, bias, stride, padding, dilation, groups, k):
    """conv1d, conv2d and conv3d: one im2col product per group (ConvolutionBackward0)."""
    op = f"conv{k}d"
    dispatch.require_host(op, *(t._data for t in (input, weight, bias) if t is not None))  # NumPy views
    if bias is not None and bias._dtype is not input._dtype:
        raise RuntimeError(f"Input type ({input._dtype.c_name}) and bias type ({bias._dtype.c_name}) should be the "
                           "same")
    if input.dim() == k + 1:  # an unbatched (C, *spatial) input
        return convolution(input.unsqueeze(0), weight, bias, stride, padding, dilation, groups, k).squeeze(0)
    if input.dim() != k + 2:
        raise RuntimeError(f"Expected {k + 1}D (unbatched) or {k + 2}D (batched) input to {op}, but got input of "
                           f"size: {list(input.shape)}")
    stride, padding, dilation = (op_ints(v, k) for v in (stride, padding, dilation))
    padding, extra = _conv_padding(padding, weight, stride, dilation, groups)
    if any(extra):  # padding='same' with an odd total: torch pads the input's end by one
        warn_once("Using padding='same' with even kernel lengths and odd dilation may require a zero-padded copy "
                  "of the input be created (Triggered internally at "
                  "/__w/pytorch/pytorch/aten/src/ATen/native/Convolution.cpp:1101.)")
        input = _pad_after(input, extra)
    stride, padding, dilation = _check_conv(input, weight, bias, stride, padding, dilation, groups)
    _refuse_kernel_dtype(input, dilation, k)
    geo = geometry(input.shape, weight.shape[2:], stride, padding, dilation)
    # one recorded call: numgrad.compile replays it on new values
    bias_first = not _uses_mkldnn(input, weight, stride, padding, dilation, groups)  # torch's slow kernels
    out, cols = dispatch.numpy_op(window.conv_arrays, spatial(input._data, geo), weight._data,
                                  None if bias is None else bias._data, geo, groups, bias_first)
    result = new_tensor(out.reshape(input.shape[0], weight.shape[0], *output_sizes(geo)[-k:]), input._dtype)
    record("ConvolutionBackward0", _conv_backward, [input, weight, bias], [result],
           {"input": input, "weight": weight, "geometry": geo, "groups": groups,
            "columns": constant(cols) if weight._requires_grad else None})
    return result


def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    return convolution(input, weight, bias, stride, padding, dilation, groups, 1)


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    return convolution(input, weight, bias, stride, padding, dilation, groups, 2)


def conv3d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    return convolution(input, weight, bias, stride, padding, dilation, groups, 3)


# ---- max pooling ---------------------------------------------------------------------------------

def _pool_out_size(size, k, s, p, d, ceil_mode):
    span = size + 2 * p - d * (k - 1) - 1
    out = (-(-span // s) if ceil_mode else span // s) + 1
    if ceil_mode and (out - 1) * s >= size + p:  # the last window must start inside the input or left padding
        out -= 1
    return out


def _unpool_backward(node, g):
    return (gather(g.reshape(node.saved("rows"), -1), 1, node.saved("flat_indices")).reshape(node.saved("shape")),)


def _scatter_to_input(g, flat_indices, input_shape, overlapping, name="MaxPool2DWithIndicesBackwardBackward0",
                      assign=False):
    """The max-pool gradient: each output gradient added at the input position its maximum came from (of
    any number of spatial dims: `flat_indices` has a row per (batch, channel) plane); `assign`: put there, as
    max_unpool does."""
    rows = flat_indices.shape[0]
    plane = math.prod(input_shape) // rows if rows else 0
    data = dispatch.numpy_op(window.unpool_array, g._data, flat_indices._data, plane, overlapping, assign)  # recorded
    out = new_tensor(data.reshape(input_shape), g._dtype)
    record(name, _unpool_backward, [g], [out],
           {"rows": rows, "flat_indices": flat_indices, "shape": tuple(g.shape)})
    return out


def _max_pool_backward(node, g):
    return (_scatter_to_input(g, node.saved("flat_indices"), node.input_shape(0), node.saved("overlapping")),)


def _pool_pair(value, name, message, allow_empty=False, op="max_pool2d"):
    values = _int_list(value)
    if not (1 <= len(values) <= 2 or (allow_empty and not values)):
        raise RuntimeError(f"{op}: {name} {message}")
    return tuple(values * 2 if len(values) == 1 else values)


def _check_pool(input, kernel_size, stride, padding, dilation, ceil_mode, op="max_pool2d"):
    """torch's checks of max_pool2d's (or avg_pool2d's) arguments, in its order (max_pool2d_with_indices' meta
    function, pooling_output_shape for each dim, pool2d_shape_check); returns kernel, stride, padding,
    dilation and the output's (height, width)."""
    kernel = _pool_pair(kernel_size, "kernel_size", "must either be a single int, or a tuple of two ints", op=op)
    stride = () if stride is None else stride
    stride = _pool_pair(stride, "stride", "must either be omitted, a single int, or a tuple of two ints", True,
                        op) if _int_list(stride) else kernel
    padding = _pool_pair(padding, "padding", "must either be a single int, or a tuple of two ints", op=op)
    dilation = _pool_pair(dilation, "dilation", "must be either a single int, or a tuple of two ints")
    if input.dim() not in (3, 4):
        raise RuntimeError("non-empty 3D or 4D (batch mode) tensor expected for input")
    out_hw = []
    for size, k, s, p, d in zip(input.shape[-2:], kernel, stride, padding, dilation):
        if s == 0:
            raise RuntimeError("stride should not be zero")
        if p < 0:
            raise RuntimeError(f"pad must be non-negative, but got pad: {p}")
        if p > int(((k - 1) * d + 1) / 2):  # C++ division, truncating toward zero
            raise RuntimeError(f"pad should be at most half of effective kernel size, but got pad={p}, "
                               f"kernel_size={k} and dilation={d}")
        out_hw.append(_pool_out_size(size, k, s, p, d, ceil_mode))
    (kh, kw), (sh, sw), (ph, pw), (dh, dw) = kernel, stride, padding, dilation
    if kh <= 0 or kw <= 0:
        raise RuntimeError(f"kernel size should be greater than zero, but got kH: {kh} kW: {kw}")
    if sh <= 0 or sw <= 0:
        raise RuntimeError(f"stride should be greater than zero, but got dH: {sh} dW: {sw}")
    if dh <= 0 or dw <= 0:
        raise RuntimeError(f"dilation should be greater than zero, but got dilationH: {dh} dilationW: {dw}")
    shape = input.shape
    if 0 in shape[-3:] or (input.dim() == 3 and shape[0] == 0):
        raise RuntimeError("Expected 3D or 4D (batch mode) tensor with optional 0 dim batch size for input, but "
                           f"got:{list(shape)}")
    if kw // 2 < pw or kh // 2 < ph:
        raise RuntimeError(f"pad should be smaller than or equal to half of kernel size, but got padW = {pw}, "
                           f"padH = {ph}, kW = {kw}, kH = {kh}")
    c, h, w = shape[-3:]
    if min(out_hw) < 1:
        raise RuntimeError(f"Given input size: ({c}x{h}x{w}). Calculated output size: ({c}x{out_hw[0]}x{out_hw[1]})."
                           " Output size is too small")
    return kernel, stride, padding, dilation, tuple(out_hw)


def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    dispatch.require_host("max_pool2d", input._data)  # pooling windows are NumPy views
    kernel, stride, padding, dilation, out_hw = _check_pool(input, kernel_size, stride, padding, dilation, ceil_mode)
    if input._dtype is dtypes.bool_:  # the kernel's dispatch, after the meta function's checks
        raise NotImplementedError("\"max_pool2d\" not implemented for 'Bool'")
    x = input._data if input.dim() == 4 else input._data[None]  # an unbatched input: one node all the same
    n, c = x.shape[:2]
    geo = window.Geometry(x.shape, kernel, stride, padding, dilation, out_hw)
    values, indices = dispatch.numpy_op(window.max_pool_arrays, x, geo)  # one recorded call (numgrad.compile)
    if input.dim() == 3:
        values, indices = values[0], indices[0]
    out = new_tensor(values, input._dtype)
    overlapping = any(s < d * (k - 1) + 1 for s, k, d in zip(stride, kernel, dilation))
    record("MaxPool2DWithIndicesBackward0", _max_pool_backward, [input], [out],  # (torch's node saves its input)
           {"flat_indices": constant(indices.reshape(n * c, geo.oh * geo.ow)), "overlapping": overlapping,
            "self": input})
    if return_indices:
        return out, constant(indices)
    return out

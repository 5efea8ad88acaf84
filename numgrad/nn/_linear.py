"""linear (addmm through BLAS, AddmmBackward0) and embedding (EmbeddingBackward0)."""
import functools
import math

import numpy as np

from .. import lazy
from .._core import dtypes
from .._core.device import CPU
from .._core.state import STATE
from ..kernels import dispatch, tape
from .._core.grad_mode import no_grad
from ..spec.table import ELEMENTWISE
from ..node import record
from ..ops import autocast
from ..ops.indexing import index_put, long_index
from ..ops.linalg import backward_mm, mm_laid_out
from ..ops.reduction import sums_unrecorded
from ..tensor import Tensor
from ..tensor_base import check_same_device
from ._common import constant, new_tensor
from ..ops.indexing import _put
from ..kernels.dispatch import indexing as device_index


@np.errstate(all="ignore")  # the products' IEEE results (inf, NaN) without NumPy's warnings, as mm: one for both
def _addmm_backward(node, g):
    bias_grad = input_grad = weight_grad = None
    (bias_edge, _), (input_edge, _), (weight_edge, _) = node.next_functions  # (wants(node, i), read once)
    if bias_edge is not None:  # a bias of other shapes than (out,) broadcasts: its gradient sums back to its shape
        shape = node.input_shape(0)
        bias_grad = _column_sums(g) if shape == (g._shape[1],) else g._sum_to(shape)
    # as torch's mm_mat1_backward and mm_mat2_backward of input @ weight.t(): each gradient in its operand's
    # layout, so that AccumulateGrad keeps it without a copy (a column-major weight's too; GPU arrays are C order)
    input_column_major, weight_column_major = node.layouts
    if input_edge is not None:
        weight = node.saved("weight")
        input_grad = mm_laid_out(weight.t(), g.t(), (g.shape[0], weight.shape[1]), transposed=True) \
            if input_column_major else backward_mm(g, weight)
    if weight_edge is not None:
        input = node.saved("input")
        weight_grad = mm_laid_out(input.t(), g, (g.shape[1], input.shape[1]), transposed=True) \
            if weight_column_major else backward_mm(g, input, a_transposed=True)
    return bias_grad, input_grad, weight_grad


_SUMMED_FLOATS = (dtypes.float32, dtypes.float64)


def _column_sums(g):
    """g.sum(0), a bias's gradient. In a first-order backward of a host float32 or float64 gradient (no graph to
    record, no forward AD to serve), the sum's own float fold over dim 0 called directly: its values, without
    the binding, the dims' parsing and the node (half of a small MLP step's backward of each Linear)."""
    arr = g._arr
    if STATE.grad_enabled or STATE.forward_ad is not None or g._dtype not in _SUMMED_FLOATS or \
            arr.__class__ is not np.ndarray or not arr.size:
        return g.sum(0)
    return sums_unrecorded(g, 0)


def _check_addmm(input, weight, bias, x, w):
    """torch's checks of addmm(bias, input, weight.t()), in its order (weight.t() first, then addmm's meta
    function: dtypes, ranks, shapes); `x` and `w` are the input's and weight's arrays."""
    if w.ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {w.ndim}D")
    if bias._dtype is not weight._dtype:
        raise RuntimeError(f"self and mat2 must have the same dtype, but got {bias._dtype.word} and "
                           f"{weight._dtype.word}")
    if input._dtype is not weight._dtype:
        raise RuntimeError(f"mat1 and mat2 must have the same dtype, but got {input._dtype.word} and "
                           f"{weight._dtype.word}")
    if w.ndim != 2:
        raise RuntimeError(f"mat2 must be a matrix, got {w.ndim}-D tensor")
    (n, k), (m, k2) = x.shape, w.shape
    if k != k2:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({n}x{k} and {k2}x{m})")


@np.errstate(all="ignore")  # IEEE results (inf, NaN) without NumPy's warnings: torch is silent
def _addmm(input, weight, bias):
    """bias + input @ weight.T for a 2-d input: one BLAS call, one node, as torch's Linear."""
    x, w = input._data, weight._data  # (each read once: every Linear call runs this)
    dtype = input._dtype
    if w.ndim != 2 or bias._dtype is not dtype or weight._dtype is not dtype or x.shape[1] != w.shape[1]:
        _check_addmm(input, weight, bias, x, w)  # (its errors, in torch's order)
    n, m = x.shape[0], w.shape[0]
    host = x.__class__ is np.ndarray
    # host arrays all: the CPU, with no device to compare (check_same_device's answer, without its loop)
    device = CPU if host and w.__class__ is np.ndarray and bias._arr.__class__ is np.ndarray else \
        check_same_device(input, weight, bias)
    if bias._shape != (m,):
        bias.expand(n, m)  # torch's error for a bias that does not broadcast to the result
    out = _plus_bias(dispatch.matmul(x, w.T), bias, dtype, device)
    # each operand is kept only if the other one's gradient needs it
    node = record("AddmmBackward0", _addmm_backward, [bias, input, weight], [out],
                  {"input": input if weight._requires_grad else None,
                   "weight": weight if input._requires_grad else None})
    if node is not None:
        # torch's tests on the strides AddmmBackward0 saves: input (mat1) column-major, and weight.t() (mat2)
        # column-major, which is weight in C order (written out: every Linear runs it). GPU arrays and
        # gradients are C order.
        (rows, inner), (s0, s1), size, (w0, w1) = x.shape, x.strides, x.itemsize, w.strides
        node.layouts = (host and s0 == size and s1 == rows * size, host and not (w1 == size and w0 == inner * size))
    return out


def _plus_bias(product, bias, dtype, device):
    """The product plus the bias, as torch's addmm adds them. On the host, with fusion on, the sum is left
    pending: the elementwise op that reads it next (a ReLU) adds in its own kernel, and the sum never goes
    to memory (the MLP step's two hidden layers: one pass over a (256, 512) array fewer each)."""
    if STATE.fusion and product.size > lazy.SMALL_MAX and dispatch.is_host(product):
        out = lazy.defer(Tensor, _ADD, (Tensor._make(product, dtype), bias), dtype, dtype, product.shape, device)
        if out is not None:
            return out
    dispatch.add_into(product, product, bias._data)  # on the GPU, a generated kernel (DeviceArray.__array_ufunc__)
    return Tensor._make(product, dtype)


_ADD = ELEMENTWISE["add"]


@autocast.lower_precision
def linear(input, weight, bias=None):
    if not isinstance(input, Tensor):
        raise TypeError(f"linear(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}")
    rank = len(input._shape)
    if rank == 0 or not weight._shape:
        raise RuntimeError(f"both arguments to linear need to be at least 1D, but they are {input.dim()}D and "
                           f"{weight.dim()}D")
    if bias is None:
        return input.matmul(weight.t())
    if rank == 2:
        return _addmm(input, weight, bias)
    if _bias_fusable(bias) and input.is_contiguous():
        return _flatten_nd_linear(input, weight, bias)
    # torch's generic path: the product, then the bias added in place (its errors for a bias that does not
    # broadcast to the product's shape)
    return input.matmul(weight.t()).add_(bias)


def _bias_fusable(bias):
    """torch's is_bias_likely_fusable: a contiguous bias with one non-unit dimension (or one dimension)."""
    return (bias.dim() == 1 or bias.squeeze().dim() == 1) and bias.is_contiguous()


def _flatten_nd_linear(input, weight, bias):
    """Other ranks fold into rows, one addmm, and a view back (as torch). The row count is the product of the
    leading sizes, not -1, which a reshape cannot resolve when the last size is 0."""
    lead = input._data.shape[:-1]
    out = _addmm(input.reshape(math.prod(lead), input._data.shape[-1]), weight, bias)
    return out.view(*lead, out._shape[1])


def _embedding_backward(node, g):
    indices, num, scale = node.saved("indices"), node.saved("num_weights"), node.saved("row_scale")
    rows = g.reshape(math.prod(g.shape[:-1]), g.shape[-1])  # (not -1: a zero width leaves it ambiguous)
    if scale is not None:  # padding rows get nothing; scale_grad_by_freq divides by each index's count
        rows = rows * scale
    if rows.is_cuda:  # index_put without parsing the index again (its bounds were checked by the forward)
        zeros = rows.new_zeros(num, rows.shape[-1], device=rows.device)
        return (_put(zeros, (slice(None), Ellipsis), (indices._data,), rows, True, "IndexPutBackward0"),)
    if not STATE.grad_enabled:  # a first-order backward: one row loop into new zeros, nothing to record
        summed = device_index.summed_rows(indices._data, rows._data, num)
        if summed is not None:
            return (Tensor._make(summed, rows._dtype),)
    return (index_put(rows.new_zeros(num, rows.shape[-1]), (indices,), rows, accumulate=True),)


def embedding(input, weight, padding_idx=None, max_norm=None, norm_type=2.0, scale_grad_by_freq=False,
              sparse=False):
    if input._dtype is not dtypes.int64 and input._dtype is not dtypes.int32:
        raise RuntimeError("Expected tensor for argument #1 'indices' to have one of the following scalar types: "
                           f"Long, Int; but got torch.{input._dtype.word}Tensor instead (while checking arguments "
                           "for embedding)")
    input = long_index(input)
    if sparse:
        raise RuntimeError("numgrad has no sparse tensors: use sparse=False")
    num = weight._data.shape[0]
    if padding_idx is not None:
        if padding_idx > 0:
            assert padding_idx < num, "Padding_idx must be within num_embeddings"
        elif padding_idx < 0:
            assert padding_idx >= -num, "Padding_idx must be within num_embeddings"
            padding_idx = num + padding_idx
    lookup = dispatch.by_device([input._data, weight._data], _embedding_numpy, _embedding_tensor_ops)
    return lookup(input, weight, padding_idx, max_norm, norm_type, scale_grad_by_freq, num)


def _embedding_numpy(input, weight, padding_idx, max_norm, norm_type, scale_grad_by_freq, num):
    """embedding on host arrays: a NumPy row gather, the gradient's row scales by np.bincount."""
    idx = input._data
    if max_norm is not None:
        dispatch.numpy_op(_check_rows, idx, num)
        # the rows are renormalized in place by plain NumPy: a replay would not repeat it
        tape.graph_break("embedding(max_norm=...) writes the weight outside the recorded kernels")
        _renorm_rows(weight, np.unique(idx), max_norm, norm_type)
    # one recorded call (the bounds check inside it): numgrad.compile replays it on new indices
    data, flat, s = dispatch.numpy_op(_embedding_arrays, idx, weight._data, num, padding_idx, scale_grad_by_freq)
    out = new_tensor(data, weight._dtype)
    scale = None if s is None else constant(s)
    record("EmbeddingBackward0", _embedding_backward, [weight], [out],
           {"indices": constant(flat), "num_weights": num, "row_scale": scale})
    return out


def _check_rows(idx, num):
    """Raises torch's error for an index outside [0, num); returns nothing."""
    if idx.size and (idx.min() < 0 or idx.max() >= num):
        raise IndexError("index out of range in self")


def _embedding_arrays(idx, weight, num, padding_idx, scale_grad_by_freq):
    """The looked-up rows, the indices flat, and the gradient's row scales (None when every row gets 1):
    padding rows 0, scale_grad_by_freq divides by each index's count."""
    _check_rows(idx, num)
    flat = idx.reshape(-1)
    if not flat.flags.writeable:  # a read-only view: a replay copies the new indices into what the trace got
        flat = flat.copy()
    if padding_idx is None and not scale_grad_by_freq:
        return weight[idx], flat, None
    s = np.ones(flat.size, weight.dtype)
    if scale_grad_by_freq:
        s /= np.bincount(flat, minlength=num)[flat]
    if padding_idx is not None:
        s[flat == padding_idx] = 0
    return weight[idx], flat, s.reshape(-1, 1)


def _gather_rows_into(idx, weight, num, out):
    _check_rows(idx, num)
    np.take(weight, idx, axis=0, out=out, mode="clip")  # (checked above: "raise" mode's own check is 2x slower)


def _prepare_embedding_arrays(result, idx, weight, num, padding_idx, scale_grad_by_freq):
    """A replay of _embedding_arrays gathering into the trace's rows (numgrad.compile): the bounds check, then
    np.take into the buffer, no new array to copy over; the flat indices are a view of idx's buffer, which the
    replay fills with the call's indices. None (the recorded call replays) with row scales or copied indices."""
    data, flat, scale = result
    if scale is not None or data.__class__ is not np.ndarray or weight.__class__ is not np.ndarray or \
            not data.flags.c_contiguous or not np.may_share_memory(flat, idx):
        return None
    return functools.partial(_gather_rows_into, idx, weight, num, data)


_embedding_arrays.prepare = _prepare_embedding_arrays


def _embedding_tensor_ops(input, weight, padding_idx, max_norm, norm_type, scale_grad_by_freq, num):
    """embedding for GPU arrays: a row gather, and the gradient's row scales from tensor ops outside autograd."""
    check_same_device(input, weight)
    idx = input._data
    if idx.size and device_index.first_out_of_bounds(idx, 0, num - 1) is not None:
        raise IndexError("index out of range in self")
    if max_norm is not None:
        raise NotImplementedError("numgrad: embedding(max_norm=...) is not implemented for CUDA tensors")
    out = new_tensor(device_index.take(weight._data, (idx,)), weight._dtype)
    flat = Tensor._make(idx.reshape(-1), dtypes.int64)
    scale = None
    if padding_idx is not None or scale_grad_by_freq:
        with no_grad():
            s = Tensor._make(dispatch.full(flat.shape, 1, weight._data.dtype, idx), weight._dtype)
            if scale_grad_by_freq:
                counts = dispatch.zeros((num,), np.int64, idx)  # np.bincount: the indices are checked
                one = dispatch.full((), 1, np.int64, idx)
                device_index.write_region(counts, (Ellipsis,), (flat._data,), one, True)
                s = s / Tensor._make(device_index.take(counts, (flat._data,)), dtypes.int64)
            if padding_idx is not None:
                s = s.masked_fill(flat == padding_idx, 0)
        scale = Tensor._make(s._data.reshape(-1, 1), weight._dtype)
    record("EmbeddingBackward0", _embedding_backward, [weight], [out],
           {"indices": flat, "num_weights": num, "row_scale": scale})
    return out


def _renorm_rows(weight, rows, max_norm, norm_type):
    """embedding's max_norm: the looked-up rows are scaled in place to norm max_norm (outside autograd)."""
    data = weight._data
    norms = np.linalg.norm(data[rows], ord=norm_type, axis=1)
    big = norms > max_norm
    data[rows[big]] *= (max_norm / (norms[big] + 1e-7))[:, None].astype(data.dtype)
    weight._vc[0] += 1

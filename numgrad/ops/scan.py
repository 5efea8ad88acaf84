"""Scans along a dim (cumsum, cumprod, cummax, cummin, logcumsumexp) and the differences diff and cross."""
import numpy as np

from .._core import dtypes
from .._core.grad_mode import no_grad
from .._core.shapes import broadcast_shapes, wrap_dim
from .._core.warn import warn_once
from ..kernels import dispatch
from ..node import record, zero_gradients
from ..tensor_base import TensorBase
from . import creation, reduction
from .elementwise import apply
from .join import cat
from .reduction import _indices_backward, _return_type
from .reshaping import flip

__all__ = ["cross", "cummax", "cummin", "cumprod", "cumsum", "diff", "logcumsumexp"]


CUMMAX, CUMMIN = _return_type("cummax"), _return_type("cummin")


def _check_dim(op, dim):
    if dim is None or isinstance(dim, (tuple, list, float)):
        raise TypeError(f"{op}(): argument 'dim' (position 2) must be int, not {type(dim).__name__}")


@np.errstate(all="ignore")
def _accumulated(ufunc, data, axis, np_dtype):
    """ufunc.accumulate along `axis`, in double for single precision as torch's CPU kernel accumulates."""
    if data.ndim == 0:
        return data.astype(np_dtype)
    wide = np.float64 if np_dtype == np.float32 else np_dtype
    out = ufunc.accumulate(data.astype(wide), axis=axis)
    if ufunc is not np.multiply:  # torch's sums start from 0 (and -inf), never from the first value: no -0.0
        out += out.dtype.type(0)
    return out.astype(np_dtype)


def _scan(op, ufunc, t, dim, dtype, name, backward, saves=True):
    _check_dim(op, dim)
    d = wrap_dim(dim, len(t._shape))
    if dtype is not None:
        out_dtype = dtypes.to_dtype(dtype)
    elif t._dtype.is_floating_point:
        out_dtype = t._dtype
    else:  # integers and bools add up in int64
        out_dtype = dtypes.int64
    if out_dtype is dtypes.bool_:
        raise NotImplementedError(f"\"{op}_out_cpu\" not implemented for 'Bool'")
    dispatch.require_host(op, t._data)
    data = dispatch.numpy_op(_accumulated, ufunc, t._data, d if t._shape else 0, out_dtype.np)
    out = TensorBase._make(data, out_dtype)
    # (cumsum's backward reads neither its input nor its result: an in-place write to them is no error)
    record(name, backward, [t], [out], {"dim": d, "self": t} if saves else {"dim": d}, {"result": 0} if saves else ())
    return out


def _reversed_cumsum(g, d):
    return flip(cumsum(flip(g, (d,)), d), (d,))


def _cumsum_backward(node, g):
    d, dtype = node.saved("dim"), node.input_meta[0][1]
    if g.numel() <= 1 or g._shape[d] == 1:
        return (g.to(dtype),)
    return (_reversed_cumsum(g.to(dtype), d),)


def cumsum(input, dim, *, dtype=None):
    return _scan("cumsum", np.add, input, dim, dtype, "CumsumBackward0", _cumsum_backward, saves=False)


def _cumprod_backward(node, g):
    """torch's cumprod_backward: the simple formula where no input is 0; otherwise each slice's gradient up to its
    first zero, and at that zero the product of the others (no division by 0)."""
    x, out, d, dtype = node.saved("self"), node.saved("result"), node.saved("dim"), node.input_meta[0][1]
    g, out = g.to(dtype), out.to(dtype)
    if x.numel() <= 1:
        return (g,)
    is_zero = x == 0
    if not bool(reduction.sum(is_zero)):
        return (_reversed_cumsum(g * out, d) / x,)
    zeros_so_far = cumsum(is_zero, d)
    before = zeros_so_far == 0
    first_zero = is_zero & (zeros_so_far == 1)
    up_to_zero = apply("where", before, _reversed_cumsum(g * apply("where", before, out, 0.0), d) /
                       apply("where", before, x, 1.0), 0.0)
    others = cumprod(apply("where", first_zero, 1.0, x), d)  # the product of all but the first zero
    at_zero = _reversed_cumsum(g * apply("where", zeros_so_far >= 1, others, 0.0), d)
    return (up_to_zero + apply("where", first_zero, at_zero, 0.0),)


def cumprod(input, dim, *, dtype=None):
    return _scan("cumprod", np.multiply, input, dim, dtype, "CumprodBackward0", _cumprod_backward)


def _logcumsumexp_backward(node, g):
    x, out, d = node.saved("self"), node.saved("result"), node.saved("dim")
    if g.dim() == 0 or g.numel() == 0:
        return (g,)
    lowest = -dtypes.float_max(g._dtype)  # torch's scale trick, with the signs of g apart
    log_abs = g.abs().log()
    positive = apply("where", g > 0, log_abs, lowest)
    negative = apply("where", g < 0, log_abs, lowest)

    def reverse_lcse(v):
        return flip(logcumsumexp(flip(v, (d,)), d), (d,))
    return ((reverse_lcse(positive - out) + x).exp() - (reverse_lcse(negative - out) + x).exp(),)


def logcumsumexp(input, dim):
    _check_dim("logcumsumexp", dim)
    wrap_dim(dim, len(input._shape))  # the dim's range first, then the dtype, as torch
    if not input._dtype.is_floating_point:
        raise NotImplementedError(f"\"logcumsumexp_out_cpu\" not implemented for '{input._dtype.word}'")
    return _scan("logcumsumexp", np.logaddexp, input, dim, None, "LogcumsumexpBackward0", _logcumsumexp_backward)


# ---- cummax / cummin ---------------------------------------------------------------------------------

@np.errstate(invalid="ignore")
def _running_extreme(data, axis, largest):
    """(values, indices) of the running max or min along `axis`, as torch's loop: an element at least as large
    (small) as the best so far takes its place, so ties take the later index, and a NaN wins (then each later NaN)."""
    wide = dispatch.numpy_floats(data)
    best = (np.maximum if largest else np.minimum).accumulate(wide, axis=axis)
    at = wide == best
    if dispatch.is_float(data.dtype):
        at |= np.isnan(wide) & np.isnan(best)
    positions = np.arange(data.shape[axis]).reshape((-1,) + (1,) * (data.ndim - 1 - axis))
    indices = np.maximum.accumulate(np.where(at, positions, -1), axis=axis).astype(np.int64)
    return np.take_along_axis(data, indices, axis), indices  # the chosen elements: a later 0.0 over -0.0


def _empty_extreme_backward(node, g):
    # torch saves self and the indices even of an empty input: an in-place change to either since is an error
    node.saved("self"), node.saved("indices")
    return zero_gradients(node, g)


def _cummaxmin(op, input, dim):
    _check_dim(op, dim)
    if not input._shape and dim not in (0, -1):
        raise IndexError(f"{op}(): Expected reduction dim -1 or 0 for scalar but got {dim}")
    if input.numel() == 0:  # torch returns an empty result before it looks at the dim
        values = TensorBase._make(input._data.copy(), input._dtype)
        indices = TensorBase._make(np.zeros(input._shape, np.int64), dtypes.int64)
        record("CummaxBackward0" if op == "cummax" else "CumminBackward0", _empty_extreme_backward, [input], [values],
               {"self": input, "indices": indices})
        return (CUMMAX if op == "cummax" else CUMMIN)(values, indices)
    d = wrap_dim(dim, len(input._shape))
    dispatch.require_host(op, input._data)
    if input._shape:
        values, indices = dispatch.numpy_op(_running_extreme, input._data, d, op == "cummax")
    else:
        values, indices = input._data.copy(), np.zeros((), np.int64)
    values, indices = TensorBase._make(values, input._dtype), TensorBase._make(indices, dtypes.int64)
    record("CummaxBackward0" if op == "cummax" else "CumminBackward0", _indices_backward, [input], [values],
           {"dim": d, "indices": indices, "keepdim": True, "self": input})
    return (CUMMAX if op == "cummax" else CUMMIN)(values, indices)


def cummax(input, dim):
    return _cummaxmin("cummax", input, dim)


def cummin(input, dim):
    return _cummaxmin("cummin", input, dim)


# ---- diff / cross ------------------------------------------------------------------------------------

def _check_diff_operand(input, other, d, name):
    if other is None:
        return
    if not isinstance(other, TensorBase):
        raise TypeError(f"diff(): argument '{name}' must be Tensor, not {type(other).__name__}")
    if len(other._shape) != len(input._shape):
        raise RuntimeError("diff expects prepend or append to be the same dimension as input")
    for k, (a, b) in enumerate(zip(input._shape, other._shape)):
        if k != d and a != b:
            raise RuntimeError("diff expects the shape of tensor to prepend or append to match that of input except "
                               f"along the differencing dimension; input.size({k}) = {a}, but got tensor.size({k}) = "
                               f"{b}")


def diff(input, n=1, dim=-1, prepend=None, append=None):
    if len(input._shape) < 1:
        raise RuntimeError("diff expects input to be at least one-dimensional")
    if n < 0:
        raise RuntimeError(f"order must be non-negative but got {n}")
    for name, other in (("prepend", prepend), ("append", append)):
        if other is not None:
            _check_diff_operand(input, other, wrap_dim(dim, len(input._shape)), name)
    if n == 0:  # the input itself, copied (prepend and append are only checked), before the dim is read
        return creation.empty_like(input).copy_(input)
    d = wrap_dim(dim, len(input._shape))
    out = input
    if prepend is not None or append is not None:
        out = cat([t for t in (prepend, input, append) if t is not None], d)
    length = out._shape[d] - 1
    for _ in range(min(n, out._shape[d])):
        hi, lo = out.narrow(d, 1, length), out.narrow(d, 0, length)
        out = apply("logical_xor", hi, lo) if out._dtype is dtypes.bool_ else hi - lo
        length -= 1
    return out


CROSS_DIM = ("Using torch.cross without specifying the dim arg is deprecated.\nPlease either pass the dim explicitly "
             "or simply use torch.linalg.cross.\nThe default value of dim will change to agree with that of "
             "linalg.cross in a future release. (Triggered internally at "
             "/__w/pytorch/pytorch/aten/src/ATen/native/Cross.cpp:63.)")


def _cross_backward(node, g):
    a, b, d = node.saved("self"), node.saved("other"), node.saved("dim")
    grad_a = _cross(b, g, d)._sum_to(node.input_shape(0)) if node.next_functions[0][0] is not None else None
    grad_b = _cross(g, a, d)._sum_to(node.input_shape(1)) if node.next_functions[1][0] is not None else None
    return grad_a, grad_b


def _cross(a, b, d):
    def part(t, i):
        return t.narrow(d, i, 1)
    with no_grad():
        a0, a1, a2 = (part(a, i) for i in range(3))
        b0, b1, b2 = (part(b, i) for i in range(3))
        out = cat([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0], d)
    record("LinalgCrossBackward0", _cross_backward, [a, b], [out], {"self": a, "other": b, "dim": d})
    return out


def cross(input, other, dim=None):
    if dim is None:
        warn_once(CROSS_DIM)
        full = broadcast_shapes(input._shape, other._shape)
        dim = next((k for k, n in enumerate(full) if n == 3), None)
        if dim is None:
            raise RuntimeError("no dimension of size 3 in input")
    if len(input._shape) != len(other._shape):
        raise RuntimeError("linalg.cross: inputs must have the same number of dimensions.")
    d = wrap_dim(dim, len(input._shape))
    if input._shape[d] != 3 or other._shape[d] != 3:
        raise RuntimeError(f"linalg.cross: inputs dimension {dim} must have length 3. Got {input._shape[d]} and "
                           f"{other._shape[d]}")
    broadcast_shapes(input._shape, other._shape)
    if input._dtype is dtypes.bool_:  # torch's kernel refuses bool before it compares the dtypes
        raise NotImplementedError("\"cross\" not implemented for 'Bool'")
    if other._dtype is not input._dtype:  # no promotion: torch's cross wants one dtype
        raise RuntimeError(f"expected scalar type {input._dtype.word} but found {other._dtype.word}")
    return _cross(input, other, d)

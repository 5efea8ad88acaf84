"""Counting and statistics of torch's namespace: nansum, nanmean, aminmax, count_nonzero, bincount, cov, corrcoef,
trapezoid/trapz and renorm, composed from the reductions as torch composes them (or with torch's own node)."""
import collections

import numpy as np

from .._core import dtypes
from .._core.grad_mode import no_grad
from .._core.shapes import wrap_dim
from .._core.warn import warn
from ..kernels import dispatch
from ..node import record
from ..spec.table import NOT_IMPLEMENTED_NODE
from ..tensor_base import TensorBase
from . import creation, functional as F, linalg, reduction
from .elementwise import apply
from .functional import _tensor_arg

__all__ = ["nansum", "nanmean", "aminmax", "count_nonzero", "bincount", "cov", "corrcoef", "trapezoid", "trapz",
           "renorm"]


def _restored(g, shape_, axes, keepdim):
    """A reduction's gradient reshaped with its reduced dims kept, then expanded to the input's shape."""
    if not keepdim:
        g = g.reshape(reduction._kept_shape(shape_, axes, True))
    return g.expand(*shape_)


# ---- nansum / nanmean -------------------------------------------------------------------------------------

def _nansum_backward(node, g):
    x = node.saved("self")
    g = _restored(g, tuple(x.shape), node.saved("axes"), node.saved("keepdim"))
    return (apply("where", x.isnan(), 0, g).to(x.dtype),)


def nansum(input, dim=None, keepdim=False, *, dtype=None):
    _tensor_arg("nansum", input, 1, "input")
    axes = reduction._axes(input, dim)
    with no_grad():
        zeroed = apply("where", input.isnan(), 0, input) if input._dtype.is_floating_point else input
        out = reduction.sum(zeroed, list(axes), keepdim, dtype=dtype)
    out = TensorBase._make(out._data, out._dtype)
    record("NansumBackward0", _nansum_backward, [input], [out], {"self": input, "axes": axes, "keepdim": keepdim})
    return out


def nanmean(input, dim=None, keepdim=False, *, dtype=None):
    _tensor_arg("nanmean", input, 1, "input")
    if not input._dtype.is_floating_point:
        raise RuntimeError(f"nanmean(): expected input to have floating point or complex dtype but got "
                           f"{input._dtype.word}")
    counted = reduction.sum(F.logical_not(input.isnan()), dim, keepdim)
    return F.div(nansum(input, dim, keepdim, dtype=dtype), counted)


# ---- aminmax ---------------------------------------------------------------------------------------------

_AMINMAX = collections.namedtuple("aminmax", ["min", "max"], module="torch.return_types")
_AMINMAX.__repr__ = lambda self: f"torch.return_types.aminmax(\nmin={self.min!r},\nmax={self.max!r})"


def _aminmax_backward(node, g_min, g_max=None):
    x, axes, keepdim = node.saved("self"), node.saved("axes"), node.saved("keepdim")
    grad = None
    for g, out in ((g_min, node.saved("min")), (g_max, node.saved("max"))):
        if g is None:
            continue
        shape_ = tuple(x.shape)
        mask = x == _restored(out, shape_, axes, keepdim)  # shared evenly among the elements equal to the result
        count = reduction.sum(mask, list(axes), keepdim=True)
        part = mask * (_restored(g, shape_, axes, keepdim) / count.expand(*shape_))
        grad = part if grad is None else grad + part
    return (grad,)


def aminmax(input, *, dim=None, keepdim=False):
    _tensor_arg("aminmax", input, 1, "input")
    if dim is None:
        if input.numel() == 0:
            raise RuntimeError("aminmax(): cannot compute aminmax over an empty dimension as the operation has no "
                               "identity.")
        axes = tuple(range(len(input._shape)))
    else:
        d = wrap_dim(dim, len(input._shape))
        if input._shape and input._shape[d] == 0:
            raise IndexError(f"aminmax: Expected reduction dim {d} to have non-zero size.")
        axes = (d,) if input._shape else ()
    with no_grad():
        low, high = (reduction.amax(input, list(axes), keepdim, _name=name) for name in ("amin", "amax"))
    low, high = TensorBase._make(low._data, low._dtype), TensorBase._make(high._data, high._dtype)
    record("AminmaxBackward0", _aminmax_backward, [input], [low, high], {"self": input, "axes": axes,
                                                                          "keepdim": keepdim}, {"min": 0, "max": 1})
    return _AMINMAX(low, high)


# ---- counting ---------------------------------------------------------------------------------------------

def count_nonzero(input, dim=None):
    _tensor_arg("count_nonzero", input, 1, "input")
    axes = reduction._axes(input, dim)
    data = dispatch.to_host(input._data)
    return TensorBase._make(np.asarray(np.count_nonzero(data, axis=axes), np.int64), dtypes.int64)


def _bincount_backward(node, *grads):
    raise RuntimeError("derivative for aten::bincount is not implemented")


def bincount(input, weights=None, minlength=0):
    _tensor_arg("bincount", input, 1, "input")
    if input._dtype.is_floating_point or input._dtype is dtypes.bool_:
        raise NotImplementedError(f'"bincount_cpu" not implemented for \'{input._dtype.word}\'')
    if minlength < 0:
        raise RuntimeError("minlength should be >= 0")
    data = dispatch.to_host(input._data)
    if data.ndim == 1 and data.size == 0:
        return TensorBase._make(np.zeros(minlength, np.int64), dtypes.int64)
    if data.ndim != 1 or data.min() < 0:
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    if weights is not None and (len(weights._shape) != 1 or weights._shape[0] != data.shape[0]):
        raise RuntimeError("weights should be 1-d and have the same length as input")
    if weights is None:
        return TensorBase._make(np.bincount(data, minlength=minlength).astype(np.int64), dtypes.int64)
    # float weights keep their dtype, any other counts in double (torch's _bincount_cpu)
    dtype = weights._dtype if weights._dtype in (dtypes.float32, dtypes.float64) else dtypes.float64
    counts = np.bincount(data, dispatch.to_host(weights._data).astype(np.float64), minlength)
    out = TensorBase._make(counts.astype(dtype.np), dtype)
    record(NOT_IMPLEMENTED_NODE, _bincount_backward, [weights], [out])
    return out


# ---- cov / corrcoef --------------------------------------------------------------------------------------

def _check_weights(name, w, kind, observations):
    if len(w._shape) > 1:
        raise RuntimeError(f"cov(): expected {name} to have one or fewer dimensions but got {name} with "
                           f"{len(w._shape)} dimensions")
    integral = not w._dtype.is_floating_point and w._dtype is not dtypes.bool_
    if (kind == "integral" and not integral) or (kind == "floating point" and not w._dtype.is_floating_point):
        raise RuntimeError(f"cov(): expected {name} to have {kind} dtype but got {name} with {w._dtype.word} dtype")
    if w.numel() != observations:
        raise RuntimeError(f"cov(): expected {name} to have the same numel as there are observations in the input "
                           f"but got {w.numel()} != {observations}")
    if observations and not bool(w.min() >= 0):
        raise RuntimeError(f"cov(): {name} cannot be negative")


def cov(input, *, correction=1, fweights=None, aweights=None):
    _tensor_arg("cov", input, 1, "input")
    if len(input._shape) > 2:
        raise RuntimeError(f"cov(): expected input to have two or fewer dimensions but got an input with "
                           f"{len(input._shape)} dimensions")
    if input._dtype is dtypes.bool_:
        raise RuntimeError("cov(): bool dtype is not supported for input")
    x = input.view(1, -1) if len(input._shape) < 2 else input
    observations = x.shape[1]
    w = None
    if fweights is not None:
        _check_weights("fweights", fweights, "integral", observations)
        w = fweights
    if aweights is not None:
        _check_weights("aweights", aweights, "floating point", observations)
        w = aweights if w is None else w * aweights
    w_sum = w.sum() if w is not None else creation.tensor(observations, dtype=dtypes.int64)
    if w is not None and not bool(w_sum != 0):
        raise RuntimeError("cov(): weights sum to zero, can't be normalized")
    avg = (x * w if w is not None else x).sum(1) / w_sum
    if w is not None and aweights is not None and correction != 0:
        norm_factor = w_sum - correction * (w * aweights).sum() / w_sum
    else:
        norm_factor = w_sum - correction
    if bool(norm_factor <= 0):
        warn("cov(): degrees of freedom is <= 0. Correction should be strictly less than the number of observations.")
        norm_factor = norm_factor * 0
    x = x - avg.unsqueeze(1)
    c = linalg.mm(x, (x * w if w is not None else x).t())
    return F.div(c, norm_factor).squeeze()


def corrcoef(input):
    _tensor_arg("corrcoef", input, 1, "input")
    if len(input._shape) > 2:
        raise RuntimeError(f"corrcoef(): expected input to have two or fewer dimensions but got an input with "
                           f"{len(input._shape)} dimensions")
    c = cov(input)
    if len(c.shape) == 0:  # one variable: NaN where its variance is NaN, inf or 0, else 1
        return c / c
    stddev = c.diagonal().sqrt()
    c = c / stddev.view(-1, 1)
    c = c / stddev.view(1, -1)
    return F.clip(c, -1, 1)


# ---- trapezoid ---------------------------------------------------------------------------------------------

def _zeros_except(y, d):
    return creation.zeros(*(s for i, s in enumerate(y.shape) if i != d), dtype=y.dtype)


def trapezoid(y, x=None, *, dx=None, dim=-1):
    _tensor_arg("trapezoid", y, 1, "y")
    if not y._shape:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    if x is not None and dx is not None:
        raise TypeError("trapezoid() received an invalid combination of arguments - got (Tensor, Tensor, dx=, dim=)")
    d = wrap_dim(dim, len(y._shape))
    if isinstance(x, TensorBase):
        if y.shape[d] == 0:
            return _zeros_except(y, d)
        if y._dtype is dtypes.bool_ or x._dtype is dtypes.bool_:
            raise RuntimeError("trapezoid: received a bool input for `x` or `y`, but bool is not supported")
        if len(x._shape) == 1:
            if x.shape[0] != y.shape[d]:
                raise RuntimeError("trapezoid: There must be one `x` value for each sample point")
            x = x.view(*(x.shape[0] if i == d else 1 for i in range(len(y._shape))))
        elif len(x._shape) < len(y._shape):
            x = x.view(*((1,) * (len(y._shape) - len(x._shape)) + tuple(x.shape)))
        n = x.shape[d]
        spacing = x.narrow(d, 1, n - 1) - x.narrow(d, 0, n - 1)
        m = y.shape[d]
        return apply("div_scalar", (spacing * (y.narrow(d, 1, m - 1) + y.narrow(d, 0, m - 1))).sum(d), 2.0)
    step = 1 if x is None and dx is None else (dx if dx is not None else x)
    if y.shape[d] == 0:
        return _zeros_except(y, d)
    if y._dtype is dtypes.bool_:
        raise RuntimeError("trapezoid: received a bool input for `y`, but bool is not supported")
    if isinstance(step, bool):
        raise RuntimeError("trapezoid: Currently, we only support dx as a real number.")
    return apply("mul_scalar", y.sum(d) - (y.select(d, 0) + y.select(d, -1)) * 0.5, float(step))


def trapz(y, x=None, *, dx=None, dim=-1):
    return trapezoid(y, x, dx=dx, dim=dim)


# ---- renorm -----------------------------------------------------------------------------------------------

def _renorm_parts(x, p, d):
    """The p-norm of each slice along d (kept as a dim) in x's accumulation dtype, and the dims it reduced."""
    axes = [i for i in range(len(x.shape)) if i != d]
    return reduction.norm(x, p, axes, keepdim=True), axes


def _norm_gradient(x, p, norm, grad_norm):
    """d norm / d x times grad_norm as torch's norm_backward writes it per p (0 for p == 0, sign(x) for p == 1, shared
    evenly among the largest |x| for p == inf, |x|^(p - 1) masked at x == 0 below 1, else over norm^(p - 1) masked
    where the norm is 0)."""
    if p == 0:
        return x * 0
    if p == 1:
        return x.sign() * grad_norm
    if p == 2:
        return apply("where", norm == 0, 0.0, x * (grad_norm / norm))
    if p == float("inf"):
        top = (x.abs() == norm).to(x.dtype)
        return x.sign() * top * (grad_norm / top.sum([i for i in range(len(x.shape)) if norm.shape[i] == 1],
                                                     keepdim=True))
    if p < 1:
        return x.sign() * apply("where", x == 0, 0.0, x.abs() ** (p - 1)) * grad_norm * norm ** (1 - p)
    scale = apply("where", norm == 0, 0.0, grad_norm / norm ** (p - 1))
    return (x.sign() * x.abs() ** (p - 1) if p < 2 else x * x.abs() ** (p - 2)) * scale


def _renorm_backward(node, g):
    x, p, d, maxnorm = node.saved("self"), node.saved("p"), node.saved("dim"), node.saved("maxnorm")
    norm, axes = _renorm_parts(x, p, d)
    grad_norm = (x * g).sum(axes, keepdim=True)
    nb = _norm_gradient(x, p, norm, grad_norm)
    inverse = (norm + 1e-7).reciprocal()
    factor = inverse * maxnorm
    return (apply("where", norm > maxnorm, factor * g - factor * inverse * nb, g),)


def renorm(input, p, dim, maxnorm):
    _tensor_arg("renorm", input, 1, "input")
    if p <= 0:
        raise RuntimeError("renorm: non-positive-norm not supported")
    if maxnorm < 0:
        raise RuntimeError(f"renorm: expected maxnorm to be >= 0 but got {maxnorm:g}")
    if len(input._shape) <= 1:
        raise RuntimeError(f"renorm: input needs at least 2 dimensions, got {len(input._shape)} dimensions")
    d = wrap_dim(dim, len(input._shape))
    if not input._dtype.is_floating_point:
        raise RuntimeError(f"linalg.vector_norm: Expected a floating point or complex tensor as input. Got "
                           f"{input._dtype.word}")
    with no_grad():
        norm, _ = _renorm_parts(input, p, d)
        factor = apply("where", norm > maxnorm, maxnorm / (norm + 1e-7), 1.0).to(input.dtype)
        out = input * factor
    out = TensorBase._make(dispatch.c_order(out._data), out._dtype)  # torch's renorm: C order, whatever the layout
    record("RenormBackward0", _renorm_backward, [input], [out], {"self": input, "p": p, "dim": d, "maxnorm": maxnorm})
    return out

"""cdist: p-norm distances between rows, as torch chooses them: the matmul form for Euclidean distances of many
rows (EuclideanDistBackward0 under a view), else the direct differences (CdistBackward0)."""
import math

from .._core.grad_mode import no_grad
from .._core.shapes import broadcast_shapes
from ..node import record
from ..tensor_base import TensorBase
from . import creation, linalg, reduction
from .elementwise import apply
from .join import cat

__all__ = ["cdist"]

_MODES = {"use_mm_for_euclid_dist_if_necessary": 0, "use_mm_for_euclid_dist": 1, "donot_use_mm_for_euclid_dist": 2}


def _direct(x1, x2, p):
    """The distances from the differences of every pair of rows: (..., r1, r2)."""
    diff = x1.unsqueeze(-2) - x2.unsqueeze(-3)
    if p == 0:  # torch's min(ceil(|diff|), 1): a NaN difference counts as NaN
        return apply("minimum", diff.abs().ceil(), creation.ones((), dtype=diff.dtype)).sum(-1)
    if p == 1:
        return diff.abs().sum(-1)
    if p == 2:
        return (diff * diff).sum(-1).sqrt()
    if p == math.inf:  # torch's running std::max from 0 passes over NaN differences
        return reduction.amax(apply("where", diff.isnan(), 0.0, diff.abs()), -1)
    return (diff.abs() ** p).sum(-1) ** (1 / p)


def distance_sign(diff):
    """sign(diff) as torch's distance backwards compute it (from ceil and floor, clamped): NaN where diff is NaN,
    where Tensor.sign gives 0."""
    return apply("where", diff.isnan(), diff, diff.sign())


def at_max_norm(diff, dist):
    """1 where a coordinate's |diff| is the pair's max-norm distance, else 0, written as torch's inf-norm backward
    writes it (1 - min(1, ceil(| |diff| - dist |))): NaN where both are infinite, as torch's gradient is."""
    return 1 - ((diff.abs() - dist).abs().ceil()).clamp(max=1)


def _pair_gradient(diff, dist, g, p):
    """torch's _cdist_backward per pair: the distance's derivative by diff times g, 0 where the distance is 0."""
    if p == 0:
        return diff * 0
    if p == 1:
        return distance_sign(diff) * g
    if p == math.inf:
        return distance_sign(diff) * at_max_norm(diff, dist) * g
    if p == 2:
        term = diff / dist
    elif p < 2:
        term = distance_sign(diff) * diff.abs() ** (p - 1) / dist ** (p - 1)
        if p < 1:
            term = apply("where", diff == 0, 0.0, term)
    else:
        term = diff * diff.abs() ** (p - 2) / dist ** (p - 1)
    return apply("where", dist == 0, 0.0, term * g)


def _cdist_backward(node, g):
    x1, x2, p, dist = node.saved("x1"), node.saved("x2"), node.saved("p"), node.saved("result")
    diff = x1.unsqueeze(-2) - x2.unsqueeze(-3)
    pair = _pair_gradient(diff, dist.unsqueeze(-1), g.unsqueeze(-1), p)
    return pair.sum(-2)._sum_to(tuple(x1.shape)), (-pair).sum(-3)._sum_to(tuple(x2.shape))


def _euclidean_dist(x1, x2):
    """torch's _euclidean_dist: |a|^2 - 2 a.b + |b|^2 by one matmul, clamped at 0 before the square root."""
    with no_grad():
        x1_norm, x2_norm = (x1 ** 2).sum(-1, keepdim=True), (x2 ** 2).sum(-1, keepdim=True)
        x1_ = cat([x1 * -2, x1_norm, creation.ones_like(x1_norm)], -1)
        x2_ = cat([x2, creation.ones_like(x2_norm), x2_norm], -1)
        out = linalg.matmul(x1_, x2_.mT).clamp_min(0).sqrt()
    out = TensorBase._make(out._data, out._dtype)
    record("EuclideanDistBackward0", _euclidean_backward, [x1, x2], [out], {"x1": x1, "x2": x2}, {"result": 0})
    return out


def _euclidean_backward(node, g):
    x1, x2, res = node.saved("x1"), node.saved("x2"), node.saved("result")
    ratio = apply("where", res == 0, 0.0, g / res)
    return (x1 * ratio.sum(-1, keepdim=True) - linalg.matmul(ratio, x2),
            x2 * ratio.sum(-2).unsqueeze(-1) - linalg.matmul(ratio.mT, x1))


def cdist(x1, x2, p=2.0, compute_mode="use_mm_for_euclid_dist_if_necessary"):
    if compute_mode not in _MODES:
        raise ValueError(f"{compute_mode} is not a valid value for compute_mode")
    mode = _MODES[compute_mode]
    for name, x in (("X1", x1), ("X2", x2)):
        if len(x._shape) < 2:
            raise RuntimeError(f"cdist only supports at least 2D tensors, {name} got: {len(x._shape)}D")
    if x1._shape[-1] != x2._shape[-1]:
        raise RuntimeError(f"X1 and X2 must have the same number of columns. X1: {x1._shape[-1]} X2: "
                           f"{x2._shape[-1]}")
    for name, x in (("X1", x1), ("X2", x2)):
        if not x._dtype.is_floating_point:
            raise RuntimeError(f"cdist only supports floating-point dtypes, {name} got: {x._dtype.word}")
    if p < 0:
        raise RuntimeError("cdist only supports non-negative p values")
    batch = broadcast_shapes(x1._shape[:-2], x2._shape[:-2])
    (r1, c), r2 = x1._shape[-2:], x2._shape[-2]
    euclid = p == 2 and (mode == 1 or (mode == 0 and (r1 > 25 or r2 > 25)))
    if x1._dtype is not x2._dtype and x1.numel() and x2.numel():  # (matmul's refusal, or the direct kernel's)
        if euclid and c:
            raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: {x1._dtype.c_name} != "
                               f"{x2._dtype.c_name}")
        raise RuntimeError(f"expected scalar type {x1._dtype.word} but found {x2._dtype.word}")
    if euclid and x1.numel() and x2.numel() and c:
        count = math.prod(batch)
        if count == 1:
            dist = _euclidean_dist(x1, x2)
        else:
            dist = _euclidean_dist(x1.expand(*batch, r1, c).reshape(count, r1, c),
                                   x2.expand(*batch, r2, c).reshape(count, r2, c))
        return dist.view(*batch, r1, r2)
    if x1._dtype.is_narrow and x1.numel() and x2.numel() and c:
        raise NotImplementedError(f"\"cdist\" not implemented for '{x1._dtype.word}'")
    with no_grad():
        out = _direct(x1, x2, p) if c else creation.zeros(*batch, r1, r2, dtype=x1._dtype)
    out = TensorBase._make(out._data, out._dtype)
    record("CdistBackward0", _cdist_backward, [x1, x2], [out], {"x1": x1, "x2": x2, "p": float(p)}, {"result": 0})
    return out

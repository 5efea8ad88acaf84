"""cosine_similarity and pairwise_distance (torch's composites) and pdist (PdistBackward0, torch's CPU kernel's
norms and subgradients), with torch's checks."""
import numpy as np

from .._core import dtypes
from .._core.grad_mode import no_grad
from .._core.shapes import broadcast_shapes
from ..kernels import dispatch
from ..node import record
from ..ops import creation
from ..ops.creation import _scalar_text
from ..ops.distance import at_max_norm, distance_sign
from ..ops.functional import where
from ..ops.reduction import norm
from ._common import add_scalar
from ._common import new_tensor


def pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False):
    """at::pairwise_distance: the p-norm of x1 - x2 + eps over the last dim of the broadcast shape."""
    return norm(add_scalar(x1 - x2, eps), p, max(x1.dim(), x2.dim()) - 1, keepdim, _node="NormBackward1")


def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    """Each input divided by its norm (clamped to eps outside the graph) first, then the products summed, as
    torch computes it: |result| <= 1 and no overflow of the products."""
    common = dtypes.result_type([(x1._dtype, x1.dim()), (x2._dtype, x2.dim())], [])
    if not common.is_floating_point:
        raise RuntimeError(f"expected common dtype to be floating point, yet common dtype is {common.word}")
    if eps < 0:
        raise RuntimeError(f"eps must be non-negative, got: {_scalar_text(eps)}")
    x1, x2 = (x if x._dtype.is_floating_point else x.to(common) for x in (x1, x2))
    if x1.shape != x2.shape:
        shape = broadcast_shapes(x1.shape, x2.shape)
        x1, x2 = x1.expand(*shape), x2.expand(*shape)
    norms = [norm(x, 2, dim, True).clone() for x in (x1, x2)]
    # a 0-d bound of float32 for half types: an eps beyond their range clamps to inf rather than failing
    bound = creation.tensor(eps, dtype=dtypes.float32 if common.is_narrow else common, device=x1.device)
    with no_grad():
        for n in norms:
            n.clamp_min_(bound)
    return ((x1 / norms[0]) * (x2 / norms[1])).sum(dim)


# ---- pdist ------------------------------------------------------------------------------------------------------

def _pair_rows(n):
    """The row pairs (i < j) in torch's order of the results."""
    i, j = np.triu_indices(n, 1)
    return i, j


@np.errstate(all="ignore")
def _pdist_array(x, p):
    i, j = _pair_rows(x.shape[0])
    diff = np.abs(x[i] - x[j])
    if p == 0:
        return np.minimum(np.ceil(diff), 1).sum(1)
    if p == 1:
        return diff.sum(1)
    if p == 2:
        return np.sqrt((diff * diff).sum(1))
    if p == float("inf"):
        return diff.max(1)
    return (diff ** x.dtype.type(p)).sum(1) ** x.dtype.type(1.0 / p)


def _pdist_backward(node, g):
    """torch's _pdist_backward: each pair's term added to its first row and taken from its second."""
    x, p, dist = node.saved("self"), node.saved("p"), node.saved("result")
    if x._dtype.is_narrow:  # (the forward's kernel never ran for no pairs; the backward's always does)
        raise NotImplementedError(f"\"pdist_backward\" not implemented for '{x._dtype.word}'")
    n, m = x.shape
    if p == 0 or not g.numel() or not m:
        return (creation.zeros_like(x),)
    i, j = (creation.tensor(v, dtype=dtypes.int64, device=x.device) for v in _pair_rows(n))
    diff = x[i] - x[j]
    d, gg = dist.unsqueeze(1), g.unsqueeze(1)
    zero = creation.zeros_like(diff)
    if p == 1:
        term = gg * distance_sign(diff)
    elif p < 2:
        term = where(d == 0, zero, distance_sign(diff) * diff.abs() ** (p - 1) * gg / d ** (p - 1))
        if p < 1:
            term = where(diff == 0, zero, term)
    elif p == 2:
        term = where(d == 0, zero, gg * diff / d)
    elif p == float("inf"):  # every coordinate at the maximum takes the whole gradient
        term = gg * distance_sign(diff) * at_max_norm(diff, d)
    else:
        term = where(d == 0, zero, diff * diff.abs() ** (p - 2) * gg / d ** (p - 1))
    return (creation.zeros_like(x).index_add(0, i, term).index_add(0, j, -term),)


def pdist(input, p=2):
    if input.dim() != 2:
        raise RuntimeError(f"pdist only supports 2D tensors, got: {input.dim()}D")
    if not input._dtype.is_floating_point:
        raise RuntimeError("pdist only supports floating-point dtypes")
    if p < 0:
        raise RuntimeError("pdist only supports non-negative p values")
    n, m = input.shape
    pairs = n * (n - 1) // 2
    if pairs and m and input._dtype.is_narrow:
        raise NotImplementedError(f"\"pdist\" not implemented for '{input._dtype.word}'")
    dispatch.require_host("pdist", input._data)
    if pairs and m:
        data = dispatch.numpy_op(_pdist_array, input.detach()._data, p)
    else:
        data = np.zeros(pairs, input._dtype.np)
    out = new_tensor(data, input._dtype)
    record("PdistBackward0", _pdist_backward, [input], [out], {"self": input, "p": p}, {"result": 0})
    return out

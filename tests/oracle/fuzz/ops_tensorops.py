"""The tensor-ops fuzz family: scans (cumsum, cumprod, cummax, cummin, logcumsumexp, diff), rearrangements (tril,
triu, roll, flip, rot90, repeat, tile, repeat_interleave, diagonal, trace, movedim, tensor_split), einsum and kron,
stable sorts (sort, argsort, msort), and scatter/select (scatter_reduce, index_add, index_copy, index_fill, take).
topk, kthvalue and mode follow torch's tie order and are drawn by the breadth family (ops_breadth.py); median, whose
tie order is left to torch's selection algorithm, is not drawn."""
import numpy as np

from .ops import dim, scalar, var
from .ops_index import _seed_rng, index_tensor
from .program import Dt, Lit, Step

SCANS = ("cumsum", "cumprod", "cummax", "cummin", "logcumsumexp")
REARRANGES = ("tril", "triu", "roll", "flip", "rot90", "repeat", "tile", "repeat_interleave", "diagonal", "trace",
              "movedim", "tensor_split", "diff")
SELECTS = ("scatter_reduce", "index_add", "index_copy", "index_fill", "take")


def _call(d, name, args, kw=None):
    return Step("fn" if d.chance(0.5) else "method", name, args, kw or {})


def _scan(d, x, t):
    name = d.choice(SCANS)
    kw = {"dtype": Dt(d.choice(("float32", "float64", "int64")))} if name in ("cumsum", "cumprod") and \
        d.chance(0.2) else {}
    return _call(d, name, (x, dim(d, t.dim())), kw)


def _rearrange(d, x, t):
    nd, name = t.dim(), d.choice(REARRANGES)
    if name in ("tril", "triu"):
        return _call(d, name, (x, d.integer(-3, 3)) if d.chance(0.7) else (x,))
    if name == "roll":
        if d.chance(0.3):
            return _call(d, name, (x, d.integer(-4, 4)))
        k = d.integer(1, 2)
        return _call(d, name, (x, tuple(d.integer(-4, 4) for _ in range(k)), tuple(dim(d, nd) for _ in range(k))))
    if name == "flip":
        return Step("fn", name, (x, tuple({dim(d, nd) for _ in range(d.integer(0, 2))})))
    if name == "rot90":
        return _call(d, name, (x, d.integer(-2, 5), (dim(d, nd), dim(d, nd))))
    if name in ("repeat", "tile"):
        reps = tuple(d.integer(0, 2) if d.chance(0.9) else -1 for _ in range(nd + d.integer(-1, 1)))
        return Step("method", name, (x, reps)) if name == "repeat" else _call(d, name, (x, reps))
    if name == "repeat_interleave":
        if d.chance(0.3) and nd:
            k = dim(d, nd)
            size = t.shape[k] if -nd <= k < nd else 1
            return _call(d, name, (x, Lit(_seed_rng(d).integers(0, 3, (size,)).astype(np.int64)), k))
        return _call(d, name, (x, d.integer(0, 3)) if d.chance(0.4) else (x, d.integer(0, 3), dim(d, nd)))
    if name == "diagonal":
        return _call(d, name, (x, d.integer(-2, 2), dim(d, nd), dim(d, nd)))
    if name == "trace":
        return _call(d, name, (x,))
    if name == "movedim":
        return _call(d, name, (x, dim(d, nd), dim(d, nd)))
    if name == "tensor_split":
        spec = d.integer(1, 3) if d.chance(0.5) else tuple(sorted(d.integer(-1, 4) for _ in range(d.integer(1, 2))))
        return _call(d, name, (x, spec, dim(d, nd)))
    kw = {"n": d.integer(0, 3)} if d.chance(0.5) else {}
    return _call(d, name, (x,), dict(kw, dim=dim(d, nd)) if d.chance(0.6) else kw)


def _einsum(d, env, x, t):
    nd = t.dim()
    letters = "abcd"[:nd]
    if nd and d.chance(0.5):
        y = var(d, env, lambda u: u.dim() >= 1 and u.shape[0] == t.shape[-1])
        if y is not None:
            other = "e" + "fg"[:env[y.i].dim() - 1] if env[y.i].dim() <= 3 else None
            if other is not None:
                shared = letters[-1] + other[1:]
                return Step("fn", "einsum", (letters + "," + shared + "->" + letters[:-1] + other[1:], x, y))
    out = "".join(c for c in letters if d.chance(0.6))
    if d.chance(0.3):
        out = out[::-1]
    return Step("fn", "einsum", (letters + "->" + out, x) if d.chance(0.8) else (letters, x))


def _select(d, env, x, t):
    nd, name = t.dim(), d.choice(SELECTS)
    k = dim(d, nd)
    size = t.shape[k] if nd and -nd <= k < nd else 1
    if name == "take":
        n = int(np.prod(t.shape)) if nd else 1
        return _call(d, name, (x, index_tensor(d, n, (d.integer(0, 4),))))
    if name == "scatter_reduce":
        shape = tuple(d.integer(0, n) for n in t.shape)
        idx = Lit(_seed_rng(d).integers(0, max(size, 1), shape).astype(np.int64))
        src = var(d, env, lambda u: tuple(u.shape) == shape and u.dtype == t.dtype)
        src = src if src is not None else Lit(_seed_rng(d).standard_normal(shape).astype(str(t.dtype)[6:]))
        return _call(d, name, (x, k, idx, src, d.choice(("sum", "prod", "mean", "amax", "amin"))),
                     {"include_self": d.choice((True, False))})
    count = d.integer(0, min(size, 3)) if size else 0
    idx = Lit(_seed_rng(d).permutation(size)[:count].astype(np.int64)) if size else Lit(np.zeros(0, np.int64))
    if name == "index_fill":
        return _call(d, name, (x, k, idx, scalar(d)))
    shape = tuple(count if i == k % max(nd, 1) else n for i, n in enumerate(t.shape))
    src = var(d, env, lambda u: tuple(u.shape) == shape and u.dtype == t.dtype)
    src = src if src is not None else Lit(_seed_rng(d).standard_normal(shape).astype(str(t.dtype)[6:]))
    return _call(d, name, (x, k, idx, src))


def tensor_ops(d, env):
    x = var(d, env)
    t = env[x.i]
    r = d.integer(0, 9)
    if r <= 2:
        return _scan(d, x, t)
    if r <= 6:
        return _rearrange(d, x, t)
    if r == 7:
        return _einsum(d, env, x, t)
    if r == 8:
        name = d.choice(("sort", "argsort", "msort"))
        return _call(d, name, (x,) if name == "msort" or d.chance(0.4) else (x, dim(d, t.dim())),
                     {"descending": True} if name != "msort" and d.chance(0.3) else {})
    return _select(d, env, x, t)

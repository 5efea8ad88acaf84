"""The indexing and in-place op families of a fuzz step: getitem (int, slice, None, ..., mask, index tensor),
index_select, gather, where, masked_fill, take_along_dim; add_/mul_/sub_/div_/clamp_/fill_/zero_/setitem/copy_,
masked_fill_ and the table's in-place methods."""
import numpy as np

from .ops import TABLE_UNARY, dim, other, scalar, var
from .program import Lit, Ref, Step


def _seed_rng(d):
    return np.random.default_rng(d.integer(0, 2 ** 31))


def index_tensor(d, size, shape, in_range=False):
    """An int64 index into a dim of `size`: negatives too, now and then out of range (unless in_range)."""
    rng = _seed_rng(d)
    hi = size if size else 1
    a = rng.integers(-hi, hi, shape) if size else np.zeros(shape, np.int64)
    if in_range:  # take_along_dim: torch does not check its indices (an index out of range reads anything)
        a = rng.integers(0, size, shape) if size else np.zeros(shape, np.int64)
    elif d.chance(0.04):
        a = np.full(shape, hi, np.int64)
    return Lit(np.asarray(a, np.int64))


def mask(d, env, shape):
    """A bool mask of `shape`: a bool variable of that shape, or a fresh one."""
    ref = var(d, env, lambda t: t.dtype.__str__() == "torch.bool" and tuple(t.shape) == tuple(shape))
    if ref is not None and d.chance(0.5):
        return ref
    return Lit(_seed_rng(d).random(shape) < 0.5)


def basic_index(d, shape):
    """A tuple of ints, slices, None and ... for `shape`."""
    parts = []
    for n in shape[:d.integer(0, len(shape))]:
        k = d.integer(0, 5)
        if k == 0 and n:
            parts.append(d.integer(-n, n - 1))
        elif k == 1:
            parts.append(n if d.chance(0.5) else -n - 1)  # out of range
        elif k == 2:
            parts.append(slice(d.integer(-n - 1, n), None, d.choice((1, 2, 3))))
        elif k == 3:
            parts.append(slice(None, d.integer(-n - 1, n + 1)))
        else:
            parts.append(slice(None))
        if d.chance(0.1):
            parts.append(None)
    if d.chance(0.15):
        parts.insert(d.integer(0, len(parts)), Ellipsis)
    return tuple(parts) if len(parts) != 1 or d.chance(0.5) else parts[0]


def any_index(d, env, t):
    shape = tuple(t.shape)
    r = d.integer(0, 9)
    if r <= 4 or not shape:
        return basic_index(d, shape) if shape or d.chance(0.7) else d.choice((None, Ellipsis, 0, (), True))
    if r <= 6:
        k = d.integer(1, len(shape))
        return mask(d, env, shape[:k])
    idx = index_tensor(d, shape[0], (d.integer(0, 3),) if d.chance(0.8) else (2, 2))
    if r == 9 and len(shape) >= 2:
        return (slice(None), index_tensor(d, shape[1], (d.integer(0, 3),)))
    return idx


def indexing(d, env):
    x = var(d, env)
    t = env[x.i]
    nd = t.dim()
    name = d.choice(("getitem", "getitem", "getitem", "index_select", "gather", "where", "masked_fill",
                     "take_along_dim"))
    if name == "getitem":
        return Step("getitem", "getitem", (x, any_index(d, env, t)))
    if name == "index_select":
        k = dim(d, nd)
        size = t.shape[k] if nd and -nd <= k < nd else 1
        return Step("fn" if d.chance(0.5) else "method", name, (x, k, index_tensor(d, size, (d.integer(0, 4),))))
    if name in ("gather", "take_along_dim"):
        k = dim(d, nd)
        size = t.shape[k] if nd and -nd <= k < nd else 1
        shape = tuple(d.integer(0, n) if n and d.chance(0.3) else n for n in t.shape)
        if nd and -nd <= k < nd:
            shape = shape[:k % nd] + (d.integer(0, 3),) + shape[k % nd + 1:]
        idx = index_tensor(d, size, shape, in_range=name == "take_along_dim")
        if name == "gather":
            return Step("fn" if d.chance(0.5) else "method", name, (x, k, idx))
        return Step("fn" if d.chance(0.5) else "method", name, (x, idx), {"dim": k})
    if name == "where":
        cond = mask(d, env, tuple(t.shape)) if d.chance(0.8) else Lit(np.asarray(d.chance(0.5)))
        y = other(d, env, x)
        return Step("fn", "where", (cond, x, y) if d.chance(0.7) else (cond, y, x))
    value = scalar(d) if d.chance(0.8) else var(d, env, lambda u: u.dim() == 0)
    if value is None:
        value = 1.5
    return Step("method", "masked_fill", (x, mask(d, env, tuple(t.shape)), value))


def _target(d, env, leaves_rg):
    """The variable an in-place op writes: mostly not a leaf that requires grad (torch refuses those)."""
    if d.chance(0.15):
        return var(d, env)
    return var(d, env, lambda u: not (u.is_leaf and u.requires_grad)) or var(d, env)


def inplace(d, env, leaves_rg=()):
    x = _target(d, env, leaves_rg)
    t = env[x.i]
    name = d.choice(("add_", "mul_", "sub_", "div_", "clamp_", "fill_", "zero_", "setitem", "setitem", "copy_",
                     "masked_fill_", "unary_"))
    if name in ("add_", "sub_"):
        kw = {"alpha": d.choice((2, 0.5, -1))} if d.chance(0.2) else {}
        return Step("method", name, (x, other(d, env, x)), kw)
    if name in ("mul_", "div_"):
        return Step("method", name, (x, other(d, env, x)))
    if name == "clamp_":
        lo, hi = sorted((d.choice((-1, 0, 0.5, -0.5, 2)), d.choice((-1, 0, 1, 1.5, 3))))
        args = {0: (lo, hi), 1: (lo,), 2: (None, hi)}[d.integer(0, 2)]
        return Step("method", name, (x,) + args)
    if name == "fill_":
        return Step("method", name, (x, scalar(d)))
    if name == "zero_":
        return Step("method", name, (x,))
    if name == "setitem":
        value = scalar(d) if d.chance(0.5) else var(d, env)
        return Step("setitem", "setitem", (x, any_index(d, env, t), value))
    if name == "copy_":
        return Step("method", name, (x, other(d, env, x, scalar_ok=False)))
    if name == "masked_fill_":
        return Step("method", name, (x, mask(d, env, tuple(t.shape)), scalar(d)))
    return Step("method", d.choice(TABLE_UNARY) + "_", (x,))

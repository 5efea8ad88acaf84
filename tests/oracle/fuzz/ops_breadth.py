"""The breadth fuzz family (issue 30's ops): heaviside, gcd, lcm, float_power, addcmul, addcdiv, threshold; nansum,
nanmean, aminmax, count_nonzero; topk, kthvalue and mode (whose tie order now follows torch's kernels); atleast_Nd,
argwhere, isin, cartesian_prod, block_diag, vander; trapezoid, cov, corrcoef, renorm, cdist; index_reduce,
fill_diagonal_ and bincount."""
import numpy as np

from .ops import dim, dims, other, scalar, var
from .ops_index import _seed_rng, _target
from .program import Lit, Step


def _call(d, name, args, kw=None):
    return Step("fn" if d.chance(0.5) else "method", name, args, kw or {})


def _same_dtype(d, env, x):
    t = env[x.i]
    return var(d, env, lambda u: u.dtype == t.dtype and len(u.shape) <= len(t.shape)) or x


def _pointwise(d, env, x):
    name = d.choice(("heaviside", "gcd", "lcm", "float_power", "addcmul", "addcdiv", "threshold"))
    if name == "heaviside":
        return _call(d, name, (x, _same_dtype(d, env, x)))
    if name in ("gcd", "lcm"):
        return _call(d, name, (x, other(d, env, x, scalar_ok=d.chance(0.05))))
    if name == "float_power":
        return _call(d, name, (x, other(d, env, x)))
    if name == "threshold":
        return Step("fn", name, (x, d.choice((0.5, -1, 0, 2.5)), d.choice((0.0, -2, 7.5, 1))))
    kw = {"value": d.choice((2, 0.5, -1, 0, True))} if d.chance(0.6) else {}
    divisor = other(d, env, x, scalar_ok=False)
    if name == "addcdiv":  # (an integer divisor: torch's backward then refuses a cast numgrad does not refuse)
        divisor = var(d, env, lambda u: u.dtype.is_floating_point) or divisor
    return _call(d, name, (x, other(d, env, x, scalar_ok=False), divisor), kw)


def _reduction(d, env, x):
    t = env[x.i]
    name = d.choice(("nansum", "nanmean", "aminmax", "count_nonzero"))
    if name == "aminmax":
        kw = {"dim": dim(d, t.dim())} if d.chance(0.6) else {}
        return _call(d, name, (x,), dict(kw, keepdim=True) if d.chance(0.3) else kw)
    dd = dims(d, t.dim())
    if name == "count_nonzero":
        return _call(d, name, (x,) if dd is None else (x, dd))
    kw = {"keepdim": True} if d.chance(0.3) else {}
    return _call(d, name, (x,) if dd is None else (x, dd), kw)


def _order(d, env, x):
    t = env[x.i]
    k_dim = dim(d, t.dim())
    size = t.shape[k_dim] if t.dim() and -t.dim() <= k_dim < t.dim() else 1
    name = d.choice(("topk", "kthvalue", "mode"))
    if name == "topk":
        k = d.integer(0, size) if d.chance(0.95) else size + 1
        return _call(d, name, (x, k, k_dim), {"largest": d.chance(0.6), "sorted": d.chance(0.6)})
    if name == "kthvalue":
        k = d.integer(1, max(size, 1)) if d.chance(0.95) else 0
        return _call(d, name, (x, k, k_dim), {"keepdim": d.chance(0.3)})
    return _call(d, name, (x, k_dim), {"keepdim": d.chance(0.3)})


def _building(d, env, x):
    t = env[x.i]
    name = d.choice(("atleast_1d", "atleast_2d", "atleast_3d", "argwhere", "isin", "cartesian_prod", "block_diag",
                     "vander"))
    if name.startswith("atleast") or name == "argwhere":
        return Step("fn", name, (x,)) if name != "argwhere" else _call(d, name, (x,))
    if name == "isin":
        return Step("fn", name, (x, other(d, env, x)), {"invert": d.chance(0.3)})
    if name in ("cartesian_prod", "block_diag"):
        y = var(d, env, lambda u: u.dim() <= 2 and (name == "block_diag" or u.dim() == 1)) or x
        return Step("fn", name, (x, y) if d.chance(0.8) else (x,))
    n = d.choice((None, 0, 1, 2, 3)) if t.dim() == 1 else None
    return Step("fn", name, (x, n, d.chance(0.5)))


def _statistic(d, env, x):
    t = env[x.i]
    name = d.choice(("trapezoid", "cov", "corrcoef", "renorm", "cdist"))
    if name == "trapezoid":
        kw = {"dim": dim(d, t.dim())} if d.chance(0.6) else {}
        if d.chance(0.3):
            kw["dx"] = d.choice((0.5, 2, -1.5))
        return Step("fn", name, (x,), kw)
    if name in ("cov", "corrcoef"):
        return _call(d, name, (x,))
    if name == "renorm":
        return _call(d, name, (x, d.choice((1, 2, 3, 0.5, float("inf"))), dim(d, t.dim()), d.choice((0.5, 1.0, 5.0))))
    y = var(d, env, lambda u: u.dim() >= 2 and t.dim() >= 2 and u.shape[-1] == t.shape[-1] and u.dtype == t.dtype)
    mode = d.choice(("use_mm_for_euclid_dist_if_necessary", "use_mm_for_euclid_dist", "donot_use_mm_for_euclid_dist"))
    return Step("fn", name, (x, y or x, d.choice((2.0, 1.0, 0.0, 3.0, float("inf"), 1.5))), {"compute_mode": mode})


def _reducible(u):
    """index_reduce's self (not drawn: a bool one, whose refusal torch words by its dispatch path, and an empty one,
    where torch's kernel fails inside with its own setStorage error)."""
    return u.numel() > 0 and str(u.dtype) != "torch.bool"


def _index_reduce(d, env, x):
    name = "index_reduce_" if d.chance(0.3) else "index_reduce"
    x = var(d, env, lambda u: _reducible(u) and not (name == "index_reduce_" and u.is_leaf and u.requires_grad))
    if x is None:
        return _order(d, env, var(d, env))
    t = env[x.i]
    k = dim(d, t.dim())
    size = t.shape[k] if t.dim() and -t.dim() <= k < t.dim() else 1
    rng = _seed_rng(d)
    count = d.integer(1, 3)
    idx = rng.integers(0, max(size, 1), (count,)).astype(np.int64)
    shape = tuple(count if i == k % max(t.dim(), 1) else n for i, n in enumerate(t.shape))
    src = var(d, env, lambda u: tuple(u.shape) == shape and u.dtype == t.dtype)
    src = src if src is not None else Lit(rng.standard_normal(shape).astype(str(t.dtype)[6:]))
    return Step("method", name, (x, k, Lit(idx), src, d.choice(("prod", "mean", "amax", "amin"))),
                {"include_self": d.chance(0.5)})


def breadth(d, env):
    x = var(d, env)
    r = d.integer(0, 7)
    if r == 0:
        return _pointwise(d, env, x)
    if r == 1:
        return _reduction(d, env, x)
    if r == 2:
        return _order(d, env, x)
    if r == 3:
        return _building(d, env, x)
    if r == 4:
        return _statistic(d, env, x)
    if r == 5:
        return _index_reduce(d, env, x)
    if r == 6:
        return Step("method", "fill_diagonal_", (_target(d, env, ()), scalar(d)), {"wrap": d.chance(0.4)})
    counts = Lit(_seed_rng(d).integers(0 if d.chance(0.95) else -1, 5, (d.integer(0, 6),)).astype(np.int64))
    return Step("fn", "bincount", (counts,), {"minlength": d.integer(0, 7)})

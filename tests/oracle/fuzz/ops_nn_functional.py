"""nn.functional's distance, normalisation, shuffle and activation ops for the nn family of the fuzz (threshold,
cosine_similarity, pairwise_distance, pdist, local_response_norm, channel_shuffle, bilinear, normalize, softmin,
rms_norm, and the dropouts in their deterministic cases: eval, p=0, p=1), on the program's variables, with arguments
that mostly fit."""
from .ops import var
from .ops_index import _seed_rng
from .ops_loss import _target
from .program import Lit, Step

FUNCTIONAL = ("threshold", "cosine_similarity", "pairwise_distance", "pdist", "local_response_norm",
              "channel_shuffle", "bilinear", "dropout", "normalize", "softmin", "rms_norm")
DROPOUTS = ("alpha_dropout", "feature_alpha_dropout", "dropout1d", "dropout2d", "dropout3d")


def _floating(pred=lambda t: True):
    return lambda t: t.dtype.is_floating_point and pred(t)


def _fn(name, args, kw=None):
    return Step("fn", "nn.functional." + name, args, kw or {})


def _pair_op(d, env, name):
    x = var(d, env, _floating())
    if x is None:
        return None
    y = _target(d, env, x, mixed=True)
    if name == "pairwise_distance":
        kw = {"p": d.choice((2.0, 1, 3, 0.5, 0)), "keepdim": d.chance(0.3)}
    else:
        nd = env[x.i].dim()
        kw = {"dim": d.integer(-nd, nd - 1) if nd else 0, "eps": d.choice((1e-8, 0.5))}
    return _fn(name, (x, y), kw)


def _channel_op(d, env, name):
    x = var(d, env, _floating(lambda t: t.dim() >= 3))
    if x is None:
        return None
    if name == "local_response_norm":
        kw = {"alpha": d.choice((1e-4, 0.5)), "beta": d.choice((0.75, 0.5)), "k": d.choice((1.0, 2.0))}
        return _fn(name, (x, d.choice((1, 2, 3))), kw)
    channels = env[x.i].shape[1]
    divisors = [g for g in range(1, channels + 1) if channels % g == 0] or [1]
    return _fn(name, (x, d.choice(divisors) if d.chance(0.9) else d.choice((0, channels + 1))))


def _bilinear(d, env):
    x = var(d, env, _floating(lambda t: t.dim() >= 1 and 0 not in tuple(t.shape)))
    if x is None:
        return None
    t = env[x.i]
    rng = _seed_rng(d)
    dtype = str(t.dtype).rsplit(".", 1)[-1]
    k, out = d.integer(1, 3), d.integer(1, 3)
    other = Lit(rng.standard_normal(tuple(t.shape[:-1]) + (k,)).astype(dtype))
    weight = Lit(rng.standard_normal((out, t.shape[-1], k)).astype(dtype))
    bias = Lit(rng.standard_normal(out).astype(dtype)) if d.chance(0.5) else None
    return _fn("bilinear", (x, other, weight, bias))


def _dim_op(d, env, name):
    x = var(d, env, _floating())
    if x is None:
        return None
    nd = env[x.i].dim()
    dim = d.integer(-nd, nd - 1) if nd else 0
    if name == "softmin":
        return _fn(name, (x, dim))
    return _fn(name, (x,), {"p": d.choice((2.0, 1, 3.0, 0.5, float("inf"))), "dim": dim, "eps": d.choice((1e-12, 0.5))})


def _rms_norm(d, env):
    x = var(d, env, _floating(lambda t: t.dim() >= 1))
    if x is None:
        return None
    t = env[x.i]
    shape = tuple(t.shape[t.dim() - d.integer(1, min(t.dim(), 2)):])
    dtype = str(t.dtype).rsplit(".", 1)[-1]
    weight = Lit(_seed_rng(d).standard_normal(shape).astype(dtype)) if d.chance(0.5) else None
    return _fn("rms_norm", (x, shape, weight, d.choice((None, 1e-5, 0.5))))


def _dropout(d, env):
    x = var(d, env, _floating())
    if x is None:
        return None
    name = d.choice(DROPOUTS)
    p, training = (d.choice((0.0, 1.0)), True) if d.chance(0.6) else (0.5, False)
    return _fn(name, (x, p, training))


def functional_op(d, env):
    """One of FUNCTIONAL's ops, or None where no variable fits."""
    name = d.choice(FUNCTIONAL)
    if name == "threshold":
        x = var(d, env, lambda t: str(t.dtype) != "torch.bool")
        if x is None:
            return None
        return _fn(name, (x, d.choice((0.0, 0.5, -1, 1)), d.choice((20.0, -2, 0.5))), {"inplace": d.chance(0.2)})
    if name in ("cosine_similarity", "pairwise_distance"):
        return _pair_op(d, env, name)
    if name == "pdist":  # (not with no rows: torch's backward of that crashes)
        x = var(d, env, _floating(lambda t: t.dim() == 2 and t.shape[0] > 0))
        return None if x is None else _fn(name, (x, d.choice((2, 1, 0, 3, 1.5, float("inf")))))
    if name in ("local_response_norm", "channel_shuffle"):
        return _channel_op(d, env, name)
    if name == "bilinear":
        return _bilinear(d, env)
    if name in ("normalize", "softmin"):
        return _dim_op(d, env, name)
    if name == "rms_norm":
        return _rms_norm(d, env)
    return _dropout(d, env)


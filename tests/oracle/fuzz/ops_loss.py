"""The loss fuzz family: nn.functional's elementwise and margin losses (soft margin, hinge embedding, multilabel
margin, multilabel soft margin and triplet margin with distance too) on a floating variable, a target of its shape (another variable, a fresh tensor, now and then a broadcast
or a wrong dtype), every reduction and option."""
import numpy as np

from .ops import var
from .ops_index import _seed_rng
from .program import Lit, Step

REDUCTIONS = ("mean", "sum", "none")
ELEMENTWISE_LOSSES = ("smooth_l1_loss", "huber_loss", "kl_div", "poisson_nll_loss", "gaussian_nll_loss", "mse_loss",
                      "l1_loss")


def _float_name(t):
    return str(t.dtype).rsplit(".", 1)[-1]


# Losses whose formulas have no transcendental function: their targets may have another floating dtype. (Elsewhere
# a float32 log or exp feeding a float64 result would compare torch's 1-ulp-off float32 log, not the loss.)
MIXED_OK = ("smooth_l1_loss", "huber_loss", "mse_loss", "l1_loss", "margin_ranking_loss")


def _target(d, env, x, positive=False, mixed=False):
    """A tensor of x's shape: a variable of it (mostly), or a fresh one; now and then of a broadcast shape."""
    shape = tuple(env[x.i].shape)
    if d.chance(0.1) and shape:
        shape = shape[1:]  # broadcast: torch warns, then broadcasts
    same = _float_name(env[x.i])
    ref = var(d, env, lambda t: tuple(t.shape) == shape and t.dtype.is_floating_point and
              (mixed or _float_name(t) == same)) if not positive else None
    if ref is not None and d.chance(0.6):
        return ref
    dtype = same if not mixed or d.chance(0.9) else d.choice(("float32", "float64"))
    values = _seed_rng(d).standard_normal(shape)
    return Lit((np.abs(values) + 0.05 if positive else values).astype(dtype))


def _elementwise(d, env, x):
    name = d.choice(ELEMENTWISE_LOSSES)
    kw = {"reduction": d.choice(REDUCTIONS + ("batchmean",) if name == "kl_div" else REDUCTIONS)}
    if name == "smooth_l1_loss" and d.chance(0.7):
        kw["beta"] = d.choice((0.0, 0.5, 1.0, 2.0))
    if name == "huber_loss" and d.chance(0.7):
        kw["delta"] = d.choice((0.3, 1.0, 2.5))
    if name == "kl_div" and d.chance(0.5):
        kw["log_target"] = d.choice((True, False))
    if name == "poisson_nll_loss":
        kw.update(log_input=d.choice((True, False)), full=d.choice((True, False)))
    if name == "gaussian_nll_loss":
        kw["full"] = d.choice((True, False))
        return Step("fn", "nn.functional." + name, (x, _target(d, env, x), _target(d, env, x, positive=True)), kw)
    target = _target(d, env, x, positive=name == "poisson_nll_loss", mixed=name in MIXED_OK)
    return Step("fn", "nn.functional." + name, (x, target), kw)


def _multilabel(d, env, x, reduction):
    """multilabel_margin_loss on rows of class scores: each row's targets, a -1 ending the list now and then."""
    shape = tuple(env[x.i].shape)
    rng = _seed_rng(d)
    rows, classes = (shape[0], shape[1]) if len(shape) == 2 else (1, shape[0] if shape else 1)
    labels = rng.integers(0, classes, (rows, classes))
    labels[np.arange(classes)[None, :] >= rng.integers(0, classes + 1, rows)[:, None]] = -1
    target = Lit(labels.reshape(shape).astype(np.int64))  # (a 1-d or 0-d input: one row of its classes)
    return Step("fn", "nn.functional.multilabel_margin_loss", (x, target), {"reduction": reduction})


def _sign_losses(d, env, x, reduction):
    """soft_margin_loss and hinge_embedding_loss: a target of signs mostly, any values now and then."""
    rng = _seed_rng(d)
    shape = tuple(env[x.i].shape)
    signs = Lit(np.where(rng.random(shape) < 0.5, -1.0, 1.0).astype(_float_name(env[x.i])))
    target = signs if d.chance(0.8) else _target(d, env, x, mixed=True)
    if d.chance(0.5):
        return Step("fn", "nn.functional.soft_margin_loss", (x, target), {"reduction": reduction})
    kw = {"margin": d.choice((1.0, 0.5, 2)), "reduction": reduction}
    return Step("fn", "nn.functional.hinge_embedding_loss", (x, target), kw)


def _composite_margin(d, env, x, reduction):
    """multilabel_soft_margin_loss (0/1 labels, now and then any values, a weight per class now and then) or
    triplet_margin_with_distance_loss (its default distance, swap and margin)."""
    t = env[x.i]
    if d.chance(0.5) and t.dim() >= 1:
        rng = _seed_rng(d)
        labels = Lit((rng.random(tuple(t.shape)) < 0.5).astype(_float_name(t)))
        target = labels if d.chance(0.8) else _target(d, env, x)
        weight = Lit(rng.random(t.shape[-1:]).astype(_float_name(t))) if d.chance(0.3) else None
        return Step("fn", "nn.functional.multilabel_soft_margin_loss", (x, target, weight), {"reduction": reduction})
    kw = {"margin": d.choice((1.0, 0.5, 2.0)), "swap": d.chance(0.3), "reduction": reduction}
    return Step("fn", "nn.functional.triplet_margin_with_distance_loss", (x, _target(d, env, x), _target(d, env, x)),
                kw)


def _margin(d, env, x):
    """margin_ranking (a 1-d pair with signs), multi_margin or multilabel_margin (rows of class scores),
    soft_margin or hinge_embedding (signs)."""
    shape = tuple(env[x.i].shape)
    rng = _seed_rng(d)
    reduction = d.choice(REDUCTIONS)
    if d.chance(0.3):
        return _sign_losses(d, env, x, reduction)
    if d.chance(0.15):
        return _composite_margin(d, env, x, reduction)
    # (not with no rows: torch's reduced loss of an empty batch reads uninitialised memory)
    if len(shape) <= 2 and all(shape) and d.chance(0.25):
        return _multilabel(d, env, x, reduction)
    # (not with no rows: torch's reduced loss of an empty batch reads uninitialised memory)
    if len(shape) == 2 and shape[0] and shape[1] and d.chance(0.5):
        classes = Lit(rng.integers(0, shape[1], shape[0]).astype(np.int64))
        kw = {"p": d.choice((1, 2)), "margin": d.choice((0.5, 1.0, 2.0)), "reduction": reduction}
        return Step("fn", "nn.functional.multi_margin_loss", (x, classes), kw)
    signs = Lit(np.where(rng.random(shape) < 0.5, -1.0, 1.0).astype(_float_name(env[x.i])))
    kw = {"margin": d.choice((0.0, 0.3)), "reduction": reduction}
    return Step("fn", "nn.functional.margin_ranking_loss", (x, _target(d, env, x, mixed=True), signs), kw)


def loss(d, env):
    x = var(d, env, lambda t: t.dtype.is_floating_point)
    if x is None:
        x = var(d, env)
        return Step("fn", "nn.functional.smooth_l1_loss", (x, x))  # an integer input: torch's error
    return _elementwise(d, env, x) if d.chance(0.75) else _margin(d, env, x)

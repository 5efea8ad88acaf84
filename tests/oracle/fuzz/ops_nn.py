"""The nn family of the fuzz: torch's top-level names of the nn ops (constant_pad_nd, avg_pool1d, max_pool1d,
adaptive_avg_pool1d, pixel_shuffle, pixel_unshuffle, conv1d, conv_transpose1d) and nn.functional's ops of
ops_nn_functional.py, on the program's variables, with arguments that mostly fit and now and then do not."""
from .ops import scalar, var
from .ops_index import _seed_rng
from .ops_nn_functional import functional_op
from .program import Lit, Step

NAMES = ("constant_pad_nd", "constant_pad_nd", "avg_pool1d", "max_pool1d", "adaptive_avg_pool1d", "pixel_shuffle",
         "pixel_unshuffle", "conv1d", "conv_transpose1d")


def _floating(t):
    return t.dtype.is_floating_point


def _input(d, env, ndim):
    """A floating variable of `ndim` dims with no empty dim mostly, else any variable."""
    ref = var(d, env, lambda t: _floating(t) and t.dim() in ndim and 0 not in tuple(t.shape)) \
        if d.chance(0.9) else None
    return ref if ref is not None else var(d, env)


def _weight(d, shape, like):
    dtype = str(like.dtype).rsplit(".", 1)[-1] if like.dtype.is_floating_point else "float32"
    return Lit(_seed_rng(d).standard_normal(shape).astype(dtype))


def nn_op(d, env):
    if d.chance(0.35):
        step = functional_op(d, env)
        if step is not None:
            return step
    name = d.choice(NAMES)
    if name == "constant_pad_nd":
        x = var(d, env)
        nd = env[x.i].dim()
        pad = tuple(d.integer(-1, 2) for _ in range(2 * d.integer(0, min(nd, 3))))
        if d.chance(0.05):
            pad = pad + (1,)
        return Step("fn", name, (x, pad) if d.chance(0.4) else (x, pad, scalar(d)))
    x = _input(d, env, (2, 3) if "1d" in name or name == "conv_transpose1d" else (3, 4))
    if name.startswith("conv") and (not _floating(env[x.i]) or env[x.i].numel() == 0):
        # integer and empty convolutions: torch's errors vary by backend, its empty results are its own
        x = var(d, env, lambda t: _floating(t) and t.numel() > 0)
        if x is None:
            return Step("fn", "constant_pad_nd", (var(d, env), ()))
    t = env[x.i]
    size = t.shape[-1] if t.dim() else 1
    if name in ("avg_pool1d", "max_pool1d"):
        kernel = d.integer(1, max(1, min(size, 3)))
        args = (x, kernel, d.choice((None, 1, 2)), d.integer(0, kernel // 2))
        return Step("fn", name, args, {"ceil_mode": d.chance(0.3)})
    if name == "adaptive_avg_pool1d":
        return Step("fn", name, (x, d.integer(1, max(1, size + 1))))
    if name in ("pixel_shuffle", "pixel_unshuffle"):
        return Step("fn", name, (x, d.choice((1, 2, 2, 3))))
    channels = t.shape[-2] if t.dim() >= 2 else 1
    if d.chance(0.05):
        channels += 1
    kernel = d.integer(1, max(1, min(size, 3)))
    groups = 2 if channels % 2 == 0 and d.chance(0.3) else 1
    out = d.choice((1, 2, 3)) * groups
    if name == "conv1d":
        weight = _weight(d, (out, channels // groups, kernel), t)
        bias = _weight(d, (out,), t) if d.chance(0.5) else None
        # no padding: a window wholly in it sums zeros, whose sign BLAS and torch's kernels do not agree on
        return Step("fn", name, (x, weight, bias, d.choice((1, 2)), 0, d.choice((1, 2)), groups))
    weight = _weight(d, (channels, out // groups, kernel), t)
    bias = _weight(d, (out,), t) if d.chance(0.5) else None
    stride = d.choice((1, 2))
    return Step("fn", name, (x, weight, bias, stride, 0, d.integer(0, stride - 1), groups))

"""The pointwise fuzz family: nn.functional's activations (with their options and in-place forms) and the pointwise
functions with options (copysign, logaddexp, hypot, xlogy, lerp, logit, nan_to_num, isclose, bitwise ops)."""
from .ops import dim, other, scalar, var
from .ops_index import _target
from .program import Step

# activation -> a function drawing its keyword options
_ACTIVATIONS = {
    "silu": lambda d: {}, "mish": lambda d: {}, "hardsigmoid": lambda d: {}, "hardswish": lambda d: {},
    "selu": lambda d: {}, "relu6": lambda d: {}, "logsigmoid": lambda d: {}, "softsign": lambda d: {},
    "tanhshrink": lambda d: {},
    "hardtanh": lambda d: {"min_val": d.choice((-1.0, -0.5, 0.0, -2)), "max_val": d.choice((1.0, 0.5, 2, 6.0))},
    "elu": lambda d: {"alpha": d.choice((1.0, 0.5, 2.0))},
    "celu": lambda d: {"alpha": d.choice((1.0, 0.5, 2.0))},
    "leaky_relu": lambda d: {"negative_slope": d.choice((0.01, 0.2, 2.0, 0.0))},
    "softplus": lambda d: {"beta": d.choice((1.0, 2.0, 0.5)), "threshold": d.choice((20.0, 1.0, 0.5))},
    "softshrink": lambda d: {"lambd": d.choice((0.5, 0.25, 1.0, 0.0))},
    "hardshrink": lambda d: {"lambd": d.choice((0.5, 0.25, 1.0, 0.0))},
}
_IN_PLACE = ("silu", "mish", "hardsigmoid", "hardswish", "selu", "relu6", "hardtanh", "elu", "celu", "leaky_relu")
_TWO_TENSORS = ("logaddexp", "logaddexp2", "hypot")
_BITWISE = ("bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_left_shift", "bitwise_right_shift")


def activation(d, env):
    name = d.choice(tuple(_ACTIVATIONS))
    kw = {k: v for k, v in _ACTIVATIONS[name](d).items() if d.chance(0.7)}
    if name in _IN_PLACE and d.chance(0.25):
        return Step("fn", f"nn.functional.{name}", (_target(d, env, ()),), {**kw, "inplace": True})
    return Step("fn", f"nn.functional.{name}", (var(d, env),), kw)


def pointwise_math(d, env):
    x = var(d, env)
    name = d.choice(("copysign", "xlogy", "lerp", "logit", "nan_to_num", "isclose", "glu", "bitwise_not", "bitwise",
                     *_TWO_TENSORS))
    form = "fn" if d.chance(0.5) else "method"
    if name in _TWO_TENSORS:
        return Step(form, name, (x, other(d, env, x, scalar_ok=d.chance(0.05))))
    if name in ("copysign", "xlogy"):
        return Step(form, name, (x, other(d, env, x)))
    if name == "lerp":
        weight = scalar(d) if d.chance(0.6) else other(d, env, x, scalar_ok=False)
        return Step(form, name, (x, other(d, env, x, scalar_ok=False), weight))
    if name == "logit":
        return Step(form, name, (x,), {"eps": d.choice((0.1, 1e-6, 0.25))} if d.chance(0.5) else {})
    if name == "nan_to_num":
        kw = {k: d.choice(values) for k, values in (("nan", (0.0, 1.5, -2)), ("posinf", (1e4, 3.0)),
                                                     ("neginf", (-1e4, -3.0))) if d.chance(0.4)}
        return Step(form, name, (x,), kw)
    if name == "isclose":
        kw = {k: d.choice(values) for k, values in (("rtol", (1e-5, 0.1, 0.0)), ("atol", (1e-8, 0.5)),
                                                     ("equal_nan", (True, False))) if d.chance(0.4)}
        return Step(form, name, (x, var(d, env, lambda u: u.dtype == env[x.i].dtype) or x), kw)
    if name == "glu":
        return Step("fn", "nn.functional.glu", (x,), {"dim": dim(d, env[x.i].dim())})
    if name == "bitwise_not":
        return Step(form, name, (x,))
    return Step(form, d.choice(_BITWISE), (x, other(d, env, x)))


def pointwise(d, env):
    return activation(d, env) if d.chance(0.5) else pointwise_math(d, env)

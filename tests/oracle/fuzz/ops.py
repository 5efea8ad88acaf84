"""The op families a fuzz step draws from; each takes the choices and the torch values so far and returns a Step.
Arguments are mostly valid for the operand's shape and dtype, and now and then not, to compare the errors."""
import numpy as np

from numgrad.spec.table import ELEMENTWISE

from .program import Dt, Lit, Ref, Step

# Every published entry of the op table (numgrad.<name> and Tensor.<name>), from the table itself.
TABLE_UNARY = tuple(e.name for e in ELEMENTWISE.values() if e.published and len(e.inputs) == 1)
TABLE_BINARY = tuple(e.name for e in ELEMENTWISE.values() if e.published and len(e.inputs) == 2)
OPERATORS = ("add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "eq", "ne", "lt", "le", "gt", "ge",
             "and_", "or_", "xor")
INT_SCALARS = (-2, -1, 0, 1, 2, 3)
FLOAT_SCALARS = (0.5, -1.5, 2.0, 0.0, -0.0, 1e-3, -0.5, 3.0, float("inf"), float("nan"))
CASTS = ("float32", "float64", "int64", "bool", "int32", "int16", "int8", "uint8", "float16")


def is_float(t):
    return t.dtype.is_floating_point


def scalar(d):
    kind = d.choice(("int", "int", "float", "float", "float", "bool"))
    if kind == "int":
        return d.choice(INT_SCALARS)
    if kind == "float":
        return d.choice(FLOAT_SCALARS)
    return d.choice((True, False))


def dim(d, ndim):
    """A dim for a tensor of `ndim` dims: in range (negative too), now and then out of range."""
    n = max(ndim, 1)
    if d.chance(0.04):
        return d.choice((n, -n - 1))
    return d.integer(-n, n - 1)


def dims(d, ndim):
    """None, one dim or a tuple of distinct dims (a reduction's dim argument)."""
    r = d.integer(0, 4)
    if r == 0:
        return None
    if r <= 2 or ndim < 2:
        return dim(d, ndim)
    k = d.integer(1, ndim)
    picked = sorted({d.integer(0, ndim - 1) for _ in range(k)})
    return tuple(p - ndim if d.chance(0.3) else p for p in picked)


def _holds(pred, t):
    try:
        return pred(t)
    except RuntimeError:  # torch refuses to show some fields (grad_fn of a multi-output view whose base changed)
        return False


def var(d, env, pred=lambda t: True):
    """A variable satisfying pred (the latest ones more often), or None."""
    ok = [i for i, t in enumerate(env) if _holds(pred, t)]
    if not ok:
        return None
    if d.chance(0.5):
        return Ref(ok[-1])
    return Ref(d.choice(ok))


def broadcastable(a, b):
    return all(x == y or x == 1 or y == 1 for x, y in zip(reversed(a.shape), reversed(b.shape)))


def other(d, env, x, scalar_ok=True):
    """A second operand for x: a broadcastable variable, a Python scalar, or now and then any variable."""
    if scalar_ok and d.chance(0.3):
        return scalar(d)
    ref = var(d, env, lambda t: broadcastable(env[x.i], t)) if d.chance(0.9) else None
    return ref if ref is not None else var(d, env)


def table(d, env):
    x = var(d, env)
    if d.chance(0.55):
        name = d.choice(TABLE_UNARY)
        return Step("fn", name, (x,)) if d.chance(0.5) else Step("method", name, (x,))
    name = d.choice(TABLE_BINARY)
    y = other(d, env, x, scalar_ok=d.chance(0.3))
    if d.chance(0.5):
        return Step("fn", name, (x, y))
    return Step("method", name, (x, y))


def operator_step(d, env):
    x = var(d, env)
    if d.chance(0.08):
        name = d.choice(("neg", "invert"))
        return Step("op", name, (x,))
    name = d.choice(OPERATORS)
    y = other(d, env, x)
    if not isinstance(y, Ref) and d.chance(0.4):
        return Step("op", name, (y, x))  # reflected: 2 - x, 2 ** x
    return Step("op", name, (x, y))


REDUCTIONS = ("sum", "mean", "prod", "amax", "amin", "max", "min", "argmax", "argmin", "std", "var", "norm",
              "logsumexp", "all", "any", "softmax", "log_softmax")


def reduction(d, env):
    x = var(d, env)
    t = env[x.i]
    name = d.choice(REDUCTIONS)
    kw = {}
    if name in ("softmax", "log_softmax", "logsumexp"):
        args = (x, dim(d, t.dim()) if name != "logsumexp" else dims(d, t.dim()) or 0)
    elif name in ("prod", "max", "min", "argmax", "argmin", "all", "any"):
        args = (x,) if d.chance(0.35) else (x, dim(d, t.dim()))
    else:
        dd = dims(d, t.dim())
        args = (x,) if dd is None else (x, dd)
    if len(args) == 2 and name not in ("softmax", "log_softmax") and d.chance(0.5):
        kw["keepdim"] = d.choice((True, False))
    if name in ("std", "var") and d.chance(0.4):  # unbiased is a bool in torch's signature, correction a number
        if d.chance(0.5):
            kw["unbiased"] = d.choice((False, True))
        else:
            kw["correction"] = d.choice((0, 1, 2))
    if name == "norm" and len(args) == 2:  # Tensor.norm's first positional argument is p
        kw["dim"] = args[1]
        args = args[:1]
    if name == "norm" and d.chance(0.6):
        kw["p"] = d.choice((1, 2, 3, float("inf"), float("-inf"), 0, "fro"))
    if name in ("softmax", "log_softmax") and d.chance(0.3):
        kw["dtype"] = Dt(d.choice(("float32", "float64")))
    return Step("fn" if d.chance(0.5) else "method", name, args, kw)


def _factor(d, shape):
    """A shape with the same number of elements (dims merged, split or -1)."""
    n = int(np.prod(shape)) if shape else 1
    if d.chance(0.3):
        return (-1,)
    if n == 0:
        return d.choice(((0,), (0, 3), (2, 0, -1), (-1, 0)))
    divs = [k for k in range(1, n + 1) if n % k == 0]
    a = d.choice(divs)
    out = (a, n // a)
    if d.chance(0.3):
        out = (a, -1)
    if d.chance(0.2):
        out = out + (1,)
    if d.chance(0.05):
        out = (n + 1,)
    return out


def shape_op(d, env):
    x = var(d, env)
    t = env[x.i]
    nd = t.dim()
    name = d.choice(("reshape", "view", "transpose", "permute", "unsqueeze", "squeeze", "expand", "flatten",
                     "narrow", "t", "contiguous", "clone", "cat", "stack", "chunk", "split", "unbind", "select",
                     "detach", "cast", "cast", "to", "unflatten", "T"))
    if name in ("reshape", "view"):
        return Step("method", name, (x, _factor(d, tuple(t.shape))))
    if name == "transpose":
        return Step("method", name, (x, dim(d, nd), dim(d, nd)))
    if name == "permute":
        perm = list(range(nd))
        for i in range(nd - 1, 0, -1):
            j = d.integer(0, i)
            perm[i], perm[j] = perm[j], perm[i]
        if d.chance(0.05):
            perm = perm[:-1] if perm else [0]
        return Step("method", name, (x, tuple(perm)))
    if name == "unsqueeze":
        return Step("method", name, (x, d.integer(-nd - 1, nd)))
    if name == "squeeze":
        return Step("method", name, (x,) if d.chance(0.4) else (x, dim(d, nd)))
    if name == "expand":
        size = [d.choice((n, -1, 2, 3)) if n == 1 else (n if d.chance(0.85) else -1) for n in t.shape]
        if d.chance(0.3):
            size.insert(0, d.choice((1, 2)))
        return Step("method", name, (x, tuple(size)))
    if name == "flatten":
        return Step("method", name, (x,) if d.chance(0.3) else (x, dim(d, nd), dim(d, nd)))
    if name == "narrow":
        k = dim(d, nd)
        size = t.shape[k] if -nd <= k < nd and nd else 1
        start = d.integer(-size, size) if size else 0
        return Step("method", name, (x, k, start, d.integer(0, max(size - max(start, 0), 0) + (d.chance(0.05)))))
    if name in ("t", "contiguous", "clone", "detach"):
        return Step("method", name, (x,))
    if name == "T":
        return Step("method", "permute", (x, tuple(range(nd))[::-1]))
    if name in ("cat", "stack"):
        k = dim(d, nd + (name == "stack"))
        same = (lambda u: u.dim() == nd and all(a == b for i, (a, b) in enumerate(zip(u.shape, t.shape))
                                                 if i != k % max(nd, 1))) if name == "cat" else \
            (lambda u: tuple(u.shape) == tuple(t.shape))
        ys = [x] + [var(d, env, same) or x for _ in range(d.integer(0, 2))]
        return Step("fn", name, (ys, k) if d.chance(0.8) else (ys,))
    if name in ("chunk", "split"):
        return Step("method", name, (x, d.integer(1, 3), dim(d, nd)))
    if name == "unbind":
        return Step("method", name, (x, dim(d, nd)))
    if name == "select":
        k = dim(d, nd)
        size = t.shape[k] if -nd <= k < nd and nd else 1
        return Step("method", name, (x, k, d.integer(-size, size - 1) if size and d.chance(0.95) else size))
    if name == "cast":
        return Step("method", d.choice(("float", "double", "long", "bool", "int", "short", "char", "byte", "half")),
                    (x,))
    if name == "to":
        return Step("method", "to", (x, Dt(d.choice(CASTS))))
    # unflatten a dim into two
    k = dim(d, nd)
    size = t.shape[k] if -nd <= k < nd and nd else 1
    a = d.choice([q for q in range(1, size + 1) if size % q == 0] or [1])
    return Step("method", "unflatten", (x, k, (a, -1)))

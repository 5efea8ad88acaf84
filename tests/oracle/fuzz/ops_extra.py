"""The extra fuzz family: products, views, scatter, index_put, rounding, new_*/*_like, aliases, autograd, grad modes."""
import dataclasses

import numpy as np

from .ops import CASTS, dim, operator_step, other, reduction, scalar, shape_op, table, var
from .ops_index import _seed_rng, _target, index_tensor, indexing, inplace, mask
from .program import GRAD_MODES, Dt, Lit, Step

DTYPES = ("float32", "float64", "int64", "bool")


def _array(d, shape, dtype):
    rng = _seed_rng(d)
    if dtype == "bool":
        return rng.random(shape) < 0.5
    if dtype == "int64":
        return rng.integers(-3, 4, shape).astype(np.int64)
    return (rng.standard_normal(shape) * 1.5).astype(dtype)


def _dtype_name(t):
    return str(t.dtype).rsplit(".", 1)[-1]


def _operand(d, env, shape, like):
    """A variable of `shape` (of like's dtype mostly), else a fresh tensor of it; now and then another dtype."""
    dtype = _dtype_name(like) if d.chance(0.85) else d.choice(DTYPES)
    ref = var(d, env, lambda u: tuple(u.shape) == tuple(shape) and _dtype_name(u) == dtype)
    if ref is not None and d.chance(0.7):
        return ref
    return Lit(_array(d, tuple(shape), dtype))


def _size(d):
    return d.choice((0, 1, 2, 3, 3, 4))


PRODUCTS = ("matmul", "matmul_op", "mm", "bmm", "mv", "dot", "outer", "ger")
WANT_DIMS = {"mm": 2, "bmm": 3, "mv": 2, "dot": 1, "outer": 1, "ger": 1}


def _partner_shape(d, name, shape):
    """A shape that `name` accepts with a first operand of `shape` (mostly)."""
    k = shape[-1] if shape else 1
    if d.chance(0.06):
        k = k + 1  # a contraction that does not match
    if name in ("dot", "mv"):
        return (k,)
    if name in ("outer", "ger"):
        return (_size(d),)
    if name == "mm":
        return (k, _size(d))
    if name == "bmm":
        return (shape[0] if shape and d.chance(0.9) else 2, k, _size(d))
    r = d.integer(0, 4)  # matmul: a vector, a matrix, a broadcast batch of matrices
    if r == 0:
        return (k,)
    if r <= 2 or len(shape) < 2:
        return (k, _size(d)) if d.chance(0.9) else (_size(d), k, _size(d))
    batch = tuple(1 if d.chance(0.3) else n for n in shape[:-2])
    return batch[d.integer(0, len(batch)):] + (k, _size(d))


def product(d, env):
    name = d.choice(PRODUCTS)
    want = WANT_DIMS.get(name)
    fits = (lambda u: u.dim() == want if want else u.dim() >= 1)
    # bool operands mostly avoided: torch implements no product for them (one error, compared now and then)
    x = var(d, env, lambda u: fits(u) and (str(u.dtype) != "torch.bool" or d.chance(0.2))) if d.chance(0.9) else None
    x = x or var(d, env)
    t = env[x.i]
    y = _operand(d, env, _partner_shape(d, name, tuple(t.shape)), t)
    if name == "matmul_op":
        return Step("op", "matmul", (x, y) if d.chance(0.8) else (y, x))
    return Step("fn" if d.chance(0.5) else "method", name, (x, y))


def view(d, env):
    x = var(d, env)
    t = env[x.i]
    nd = t.dim()
    name = d.choice(("mT", "swapaxes", "swapdims", "expand_as", "type_as", "split_with_sizes", "split_list",
                     "sum_to_size", "nonzero"))
    if name == "mT":
        return Step("attr", "mT", (x,))
    if name in ("swapaxes", "swapdims"):
        return Step("method", name, (x, dim(d, nd), dim(d, nd)))
    if name == "expand_as":
        target = tuple(d.choice((n, 2, 3)) if n == 1 else n for n in t.shape)
        if d.chance(0.3):
            target = (d.choice((1, 2)),) + target
        if d.chance(0.05):
            target = target[1:]
        y = var(d, env, lambda u: tuple(u.shape) == target) or Lit(_array(d, target, d.choice(DTYPES)))
        return Step("method", name, (x, y))
    if name == "type_as":
        return Step("method", name, (x, var(d, env) if d.chance(0.5) else Lit(_array(d, (1,), d.choice(DTYPES)))))
    if name in ("split_with_sizes", "split_list"):
        k = dim(d, nd)
        size = t.shape[k] if nd and -nd <= k < nd else 1
        parts = []
        while sum(parts) < size:
            parts.append(d.integer(0, size - sum(parts)))
        if not parts or d.chance(0.3):
            parts.append(0)
        if d.chance(0.08):
            parts[-1] += 1  # sizes that do not add up
        if name == "split_with_sizes":
            return Step("method", name, (x, parts, k))
        return Step("fn" if d.chance(0.5) else "method", "split", (x, parts, k))
    if name == "sum_to_size":
        shape = list(t.shape[d.integer(0, nd):])
        shape = [1 if d.chance(0.4) else n for n in shape]
        if d.chance(0.06):
            shape = [n + 1 for n in shape] or [2]
        return Step("method", name, (x, tuple(shape)) if d.chance(0.5) else (x, *shape))
    kw = {"as_tuple": d.choice((True, False))} if d.chance(0.4) else {}
    return Step("fn" if d.chance(0.5) else "method", "nonzero", (x,), kw)


def _scatter_index(d, shape, k, unique):
    """An index for scatter along dim k into `shape`: unique along k when duplicates would be undefined."""
    nd = len(shape)
    if not nd:
        return Lit(np.asarray(0 if d.chance(0.9) else 1, np.int64)) if d.chance(0.8) else \
            Lit(np.zeros((1,), np.int64))
    k %= nd
    size = shape[k]
    ishape = tuple(d.integer(0, n) if d.chance(0.3) else n for n in shape)
    ishape = ishape[:k] + (d.integer(0, size if unique else size + 2),) + ishape[k + 1:]
    rng = _seed_rng(d)
    if unique and size:
        order = np.argsort(rng.random(ishape[:k] + (size,) + ishape[k + 1:]), axis=k)
        a = np.take(order, np.arange(ishape[k]), axis=k)
    else:
        a = rng.integers(0, max(size, 1), ishape)
    if d.chance(0.05) and a.size:
        a.flat[0] = d.choice((size, -1))
    return Lit(np.asarray(a, np.int64))


def scatter(d, env):
    name = d.choice(("scatter", "scatter", "scatter_add", "scatter_", "scatter_add_"))
    x = _target(d, env, ()) if name.endswith("_") else var(d, env)
    t = env[x.i]
    nd = t.dim()
    k = dim(d, nd)
    index = _scatter_index(d, tuple(t.shape), k if -max(nd, 1) <= k < max(nd, 1) else 0,
                           unique=not name.startswith("scatter_add"))
    ishape = index.array.shape
    if name.startswith("scatter") and not name.startswith("scatter_add") and d.chance(0.3):
        args, kw = (x, k, index), {"value": scalar(d)}
    else:
        src_shape = tuple(n + (d.chance(0.2) and d.integer(0, 1)) for n in ishape)
        args, kw = (x, k, index, _operand(d, env, src_shape, t)), {}
    if name.endswith("_"):
        return Step("method", name, args, kw)
    return Step("fn" if d.chance(0.5) else "method", name, args, kw)


def index_put(d, env):
    name = d.choice(("index_put", "index_put_"))
    x = _target(d, env, ()) if name == "index_put_" else var(d, env)
    t = env[x.i]
    shape = tuple(t.shape)
    accumulate = d.choice((True, False, None))
    if shape and d.chance(0.25):
        k = d.integer(1, len(shape))
        indices = (mask(d, env, shape[:k]),)
        picked = None
    else:
        count = d.integer(1, max(1, min(len(shape), 2)))
        n = d.integer(0, 3)
        indices = []
        for j in range(count):
            size = shape[j] if j < len(shape) else 1
            if accumulate or not size:  # duplicates write in an undefined order unless accumulated
                indices.append(index_tensor(d, size, (n,)))
            else:
                rng = _seed_rng(d)
                idx = rng.permutation(size)[:min(n, size)] - (size if d.chance(0.3) else 0)
                indices.append(Lit(np.asarray(idx, np.int64)))
        indices = tuple(indices)
        picked = (min(len(i.array) for i in indices),) + shape[count:]
    if picked is None or d.chance(0.3):
        vshape = () if d.chance(0.7) else (1,)
    else:
        vshape = picked[d.integer(0, len(picked)):]
    values = _operand(d, env, vshape, t)
    kw = {} if accumulate is None else {"accumulate": accumulate}
    if name == "index_put":
        return Step("fn" if d.chance(0.5) else "method", name, (x, indices, values), kw)
    return Step("method", name, (x, indices, values), kw)


def rounding(d, env):
    name = d.choice(("floor", "ceil", "round", "trunc", "square", "clip", "clamp", "clamp_min", "clamp_max"))
    inplace_form = d.chance(0.3)
    x = _target(d, env, ()) if inplace_form else var(d, env)
    args, kw = (x,), {}
    if name == "round" and d.chance(0.5):
        kw["decimals"] = d.choice((0, 1, 2, -1))
    if name in ("clip", "clamp"):
        lo, hi = d.choice((-1, 0, 0.5, -0.5, None)), d.choice((1, 0, 1.5, 3, None))
        if d.chance(0.3):
            lo = _operand(d, env, tuple(env[x.i].shape), env[x.i])
        args = (x, lo, hi)
    if name in ("clamp_min", "clamp_max"):
        args = (x, d.choice((-1, 0, 0.5, 2)) if d.chance(0.7) else _operand(d, env, tuple(env[x.i].shape), env[x.i]))
    if inplace_form:
        return Step("method", name + "_", args, kw)
    return Step("fn" if d.chance(0.5) else "method", name, args, kw)


def _fill(d):
    return d.choice((0, 1, -2, 2.5, -0.5, True, float("inf")))


def creation(d, env):
    x = var(d, env)
    name = d.choice(("new_zeros", "new_ones", "new_full", "new_tensor", "zeros_like", "ones_like", "full_like"))
    kw = {}
    if d.chance(0.3):
        kw["dtype"] = Dt(d.choice(CASTS))
    if d.chance(0.2):
        kw["requires_grad"] = d.choice((True, False))
    if name.startswith("new_"):
        size = tuple(d.choice((0, 1, 2, 3)) for _ in range(d.integer(0, 3)))
        if name == "new_tensor":
            data = _array(d, size, d.choice(DTYPES)).tolist()
            return Step("method", name, (x, data), kw)
        args = (x, size) if d.chance(0.7) or not size else (x, *size)
        if name == "new_full":
            args = (x, size, _fill(d))
        return Step("method", name, args, kw)
    args = (x, _fill(d)) if name == "full_like" else (x,)
    return Step("fn", name, args, kw)


ALIASES_BINARY = ("divide", "multiply", "subtract", "true_divide", "greater", "greater_equal", "less", "less_equal",
                  "not_equal", "pow")
ALIASES_INPLACE = ("floor_divide_", "fmod_", "remainder_", "pow_")


def alias(d, env):
    r = d.integer(0, 3)
    if r == 0:
        x = var(d, env)
        return Step("fn" if d.chance(0.5) else "method", d.choice(("absolute", "negative")), (x,))
    if r == 1:
        x = _target(d, env, ())
        if d.chance(0.3):
            return Step("method", d.choice(("absolute_", "negative_")), (x,))
        return Step("method", d.choice(ALIASES_INPLACE), (x, other(d, env, x)) if d.chance(0.8) else (x, scalar(d)))
    x = var(d, env)
    name = d.choice(ALIASES_BINARY)
    kw = {}
    if name == "divide" and d.chance(0.5):
        kw["rounding_mode"] = d.choice(("trunc", "floor", None))
    if name == "subtract" and d.chance(0.3):
        kw["alpha"] = d.choice((2, 0.5, -1))
    return Step("fn" if d.chance(0.5) else "method", name, (x, other(d, env, x)), kw)


def autograd_step(d, env):
    name = d.choice(("retain_grad", "retain_grad", "detach_", "requires_grad_", "requires_grad_"))
    if name == "retain_grad":
        x = var(d, env, lambda u: u.requires_grad and not u.is_leaf) if d.chance(0.85) else None
        return Step("method", name, (x or var(d, env),))
    if name == "detach_":
        x = var(d, env, lambda u: not u.is_leaf) if d.chance(0.5) else None
        return Step("method", name, (x or var(d, env),))
    x = var(d, env, lambda u: u.is_leaf) if d.chance(0.85) else None
    x = x or var(d, env)
    return Step("method", name, (x,) if d.chance(0.4) else (x, d.choice((True, True, False))))


def grad_mode(d, env):
    """A step of another family run inside no_grad, set_grad_enabled(False) or enable_grad within no_grad: views
    made without grad follow torch's CreationMeta rules (they require grad when their base does, yet are leaves;
    in-place writes to them, or reads after their base was written, are refused in grad mode)."""
    step = d.choice(GRAD_MODE_FAMILIES)(d, env)
    return dataclasses.replace(step, grad_mode=d.choice(tuple(k for k in GRAD_MODES if k)))


GRAD_MODE_FAMILIES = (table, operator_step, reduction, shape_op, indexing, inplace, product, view, scatter, index_put,
                      rounding, creation)
SUBFAMILIES = (product, product, view, scatter, index_put, rounding, creation, alias, autograd_step, grad_mode)


def extra(d, env):
    return d.choice(SUBFAMILIES)(d, env)

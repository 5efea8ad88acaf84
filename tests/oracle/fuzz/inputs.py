"""Drawing a program's inputs: shapes with 0- and 1-sized dims and 0-d, broadcasting partners, the dtypes,
values with ties and (sometimes) signed zeros, infinities and NaN, non-contiguous views, requires_grad."""
import numpy as np

from .program import Input

DTYPES = ("float32", "float64", "int64", "bool")
# drawn now and then: the narrow integer types and float16 (bfloat16 has no NumPy type torch reads)
NARROW = ("int32", "int16", "int8", "uint8", "float16")
SIZES = (0, 1, 1, 2, 2, 3, 3, 4)
SPECIALS = (0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0)


def shape(d, max_ndim=3):
    ndim = d.choice((0, 1, 1, 2, 2, 2, 3, 3)[:2 + 2 * max_ndim])
    return tuple(d.choice(SIZES) for _ in range(ndim))


def partner(d, base):
    """A shape that broadcasts with `base` (leading dims dropped or added, some dims 1), or now and then any."""
    if d.chance(0.05):
        return shape(d)
    dims = list(base[d.integer(0, len(base)):]) if base else []
    dims = [1 if d.chance(0.25) else n for n in dims]
    if d.chance(0.15):
        dims.insert(0, d.choice((1, 2)))
    return tuple(dims)


def values(d, shp, dtype):
    rng = np.random.default_rng(d.integer(0, 2 ** 31))
    if dtype == "bool":
        return rng.random(shp) < 0.5
    if dtype == "uint8":
        return rng.integers(0, 10, shp).astype(np.uint8)
    if dtype.startswith("int"):
        return rng.integers(-4, 6, shp).astype(dtype)
    style = d.choice(("normal", "normal", "halves", "specials"))
    if style == "normal":
        a = rng.standard_normal(shp) * 1.5
    elif style == "halves":  # ties for max/min/sort-like ops and exact zeros
        a = rng.integers(-4, 5, shp) / 2.0
    else:
        a = rng.standard_normal(shp)
        pick = rng.random(shp) < 0.3
        a = np.where(pick, rng.choice(SPECIALS, shp), a)
    return a.astype(dtype)


def one_input(d, shp, dtype):
    """An Input whose variable has shape `shp`; sometimes a transposed, strided or expanded view of its leaf."""
    rg = dtype.startswith("float") and d.chance(0.6)
    kind = d.choice(("none",) * 5 + ("t", "step", "expand", "permute"))
    if kind == "t" and len(shp) >= 2:
        base = (shp[1], shp[0]) + shp[2:]
        return Input(values(d, base, dtype), rg, ("t",))
    if kind == "step" and shp:
        dim = d.integer(0, len(shp) - 1)
        base = shp[:dim] + (2 * shp[dim] - d.integer(0, 1) if shp[dim] else 0,) + shp[dim + 1:]
        return Input(values(d, base, dtype), rg, ("step", dim))
    if kind == "expand" and shp:
        base = tuple(1 if d.chance(0.5) else n for n in shp)
        if base != shp:
            return Input(values(d, base, dtype), rg, ("expand", shp))
    if kind == "permute" and len(shp) == 3:
        perm = d.choice(((1, 2, 0), (2, 0, 1), (2, 1, 0)))
        inv = tuple(perm.index(k) for k in range(3))
        return Input(values(d, tuple(shp[p] for p in inv), dtype), rg, ("permute", perm))
    return Input(values(d, shp, dtype), rg)


def inputs(d):
    """1 to 3 inputs; the later ones mostly broadcast with the first."""
    first = shape(d)
    dtype = d.choice(DTYPES + ("float32", "float64"))
    if d.chance(0.15):
        dtype = d.choice(NARROW)
    out = [one_input(d, first, dtype)]
    for _ in range(d.integer(0, 2)):
        shp = partner(d, first) if d.chance(0.8) else shape(d)
        dt = dtype if d.chance(0.6) else d.choice(DTYPES + NARROW) if d.chance(0.2) else d.choice(DTYPES)
        out.append(one_input(d, shp, dt))
    return out

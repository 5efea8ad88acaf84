"""Fused CPU kernels: one generated loop evaluates a whole region of elementwise ops (optionally summing
it, or producing several outputs such as a region's gradients), reading each input once."""
import math

import numpy as np

from .. import dispatch
from .. import lower
from . import pool, threads
from .threads import PARALLEL_MIN
DECORATOR = "@njit(cache=True, nogil=True, error_model='numpy')"
BROADCAST_MIN = 1 << 14  # below this many elements broadcast inputs are expanded (fewer kernel variants)
LANES = 4  # independent accumulators in a fused sum: they break the chain of dependent adds


SCALAR_TYPES = {"bool_": np.bool_, "int64": np.int64, "float32": np.float32, "float64": np.float64}


class Leaf:
    """A kernel input: an array indexed by the flat position (full), by the position within a row (row),
    by the row (col), or a scalar."""
    __slots__ = ("value", "dtype", "kind")

    def __init__(self, value, dtype, kind):
        self.value, self.dtype, self.kind = value, dtype, kind


class Program:
    """Straight-line code for one element, recorded as hashable steps so that a region seen before finds
    its kernel without generating any source. Each step is (expression in the op-table vocabulary,
    ((name, ref, dtype it is read as), ...), dtype it computes in, result dtype); refs are leaves l0, l1,
    ..., earlier steps v0, v1, ..., or literals. Built by lazy.py and autograd/fused_backward.py."""

    def __init__(self, shape):
        self.shape = shape
        self.target = "cpu"  # "cuda" once a leaf lives on the GPU (cuda_fused.py runs it)
        self.leaves = []
        self.leaf_vars = {}  # id(array) -> leaf var, so one tensor used twice is read once
        self.steps = []
        self.var_dtypes = {}
        self.memo = {}  # id(pending expression) -> var: a value read twice is computed once

    def leaf(self, value, dtype_name):
        """A leaf for an ndarray (broadcastable to the shape) or a scalar; returns its var."""
        if dispatch.on_gpu(value):  # GPU memory: never read here
            key = id(value)
            var = self.leaf_vars.get(key)
            if var is None:
                self.target = "cuda"
                var = self.leaf_vars[key] = self._add_leaf(value, dtype_name, "array")
            return var
        if isinstance(value, np.ndarray):
            key = id(value)
            var = self.leaf_vars.get(key)
            if var is not None:
                return var
            if value.size == 1 or not any(value.strides):  # one value, possibly expanded
                var = self._add_leaf(value.flat[0], dtype_name, "scalar")
            else:
                var = self._add_leaf(value, dtype_name, "array")
            self.leaf_vars[key] = var
            return var
        return self._add_leaf(value, dtype_name, "scalar")

    def _add_leaf(self, value, dtype_name, kind):
        var = f"l{len(self.leaves)}"
        if kind == "scalar":
            value = SCALAR_TYPES[dtype_name](value)
        self.leaves.append(Leaf(value, dtype_name, kind))
        self.var_dtypes[var] = dtype_name
        return var

    def step(self, expr, mapping, compute, dtype_name):
        var = f"v{len(self.steps)}"
        self.steps.append((expr, mapping, compute, dtype_name))
        self.var_dtypes[var] = dtype_name
        return var

    def total(self, refs, dtype_name):
        """A step adding `refs` (read as `dtype_name`)."""
        names = tuple(f"t{k}" for k in range(len(refs)))
        return self.step(" + ".join(names) if refs else "0",
                         tuple((n, r, dtype_name) for n, r in zip(names, refs)), dtype_name, dtype_name)

    def code(self):
        """The steps as kernel source lines (only for a region not seen before)."""
        lines, dtypes = [], {}
        for var, leaf in zip((f"l{k}" for k in range(len(self.leaves))), self.leaves):
            dtypes[var] = leaf.dtype
        for k, (expr, mapping, compute, dtype_name) in enumerate(self.steps):
            reads = tuple((name, ref if want is None or dtypes.get(ref, want) == want else f"np.{want}({ref})")
                          for name, ref, want in mapping)
            var = f"v{k}"
            lines.append((var, f"np.{dtype_name}({lower.substitute(expr, reads, compute, self.target)})"))
            dtypes[var] = dtype_name
        return lines

    # ---- layout ---------------------------------------------------------------------------------
    def layout(self, split=None):
        """Chooses (outer, inner) = (dims before `split`, dims from it), trying every split unless one is
        given, so that every array leaf is full, a row or a column of the region; leaves fitting no
        choice are broadcast into full copies. Returns (outer, inner, args)."""
        shape, nd = self.shape, len(self.shape)
        n = math.prod(shape)
        args = _flat_args(self.leaves, shape)
        if args is not None:  # the usual region: inputs of its own shape
            return (1, n, args) if split is None else (math.prod(shape[:split]), math.prod(shape[split:]), args)
        if n < BROADCAST_MIN and split is None:  # small: copy broadcast inputs, one kernel for every pattern
            for leaf in self.leaves:
                if leaf.kind != "scalar":
                    leaf.kind = "full"
            return 1, n, [np.ascontiguousarray(np.broadcast_to(leaf.value, shape), dtype=leaf.dtype).reshape(-1)
                          if leaf.kind == "full" else leaf.value for leaf in self.leaves]
        effective = []
        for leaf in self.leaves:
            if leaf.kind == "scalar":
                effective.append(None)
                continue
            arr = leaf.value
            arr = arr.reshape((1,) * (nd - arr.ndim) + arr.shape)
            # broadcast (stride 0) dims are read once: index 0
            arr = arr[tuple(slice(0, 1) if st == 0 and d > 1 else slice(None) for st, d in zip(arr.strides, arr.shape))]
            effective.append(arr)
        best_k, best_fit = nd, -1
        for k in range(nd + 1) if split is None else (split,):
            fit = sum(1 for arr in effective if arr is not None and _kind_at(arr.shape, shape, k))
            if fit > best_fit:
                best_k, best_fit = k, fit
        outer, inner = math.prod(shape[:best_k]), math.prod(shape[best_k:])
        if inner == n:
            outer = 1
        if split is not None:  # a fold over rows: columns are scalars per row, rows are read at j
            inner = n if split == 0 else inner
        args = []
        for leaf, arr in zip(self.leaves, effective):
            if arr is None:
                args.append(leaf.value)
                continue
            kind = _kind_at(arr.shape, shape, best_k) if inner != n or arr.shape == shape else None
            if kind is None or (kind != "full" and inner == n):
                kind, arr = "full", np.broadcast_to(arr, shape)
            leaf.kind = kind
            args.append(np.ascontiguousarray(arr, dtype=leaf.dtype).reshape(-1))
        return outer, inner, args

    def key(self, outputs):
        return (self.target, tuple(self.steps), tuple((leaf.kind, leaf.dtype) for leaf in self.leaves), outputs)


def _flat_args(leaves, shape):
    """Kernel arguments when every array leaf already is a C-contiguous array of the region's shape and
    dtype (then all are 'full'); None otherwise."""
    args = []
    for leaf in leaves:
        v = leaf.value
        if leaf.kind == "scalar":
            args.append(v)
        elif v.shape == shape and v.flags.c_contiguous and v.dtype == SCALAR_DTYPES[leaf.dtype]:
            leaf.kind = "full"
            args.append(v.reshape(-1))
        else:
            return None
    return args


SCALAR_DTYPES = {k: np.dtype(v) for k, v in SCALAR_TYPES.items()}


def _kind_at(eff, shape, k):
    if eff == shape:
        return "full"
    if all(d == 1 for d in eff[:k]) and eff[k:] == shape[k:]:
        return "row"
    if eff[:k] == shape[:k] and all(d == 1 for d in eff[k:]):
        return "col"
    return None


# Loops index from 0 into per-row slices: Numba checks every index that might be negative (and wraps
# it), which keeps LLVM from vectorising a loop over range(start, stop); one over range(n) it vectorises.
def _row_slices(program, indent, full, row, read_cols=True):
    """Per-row views: full leaves sliced by `full`, row leaves by `row`, column leaves read once (a
    fold receives them as scalars instead)."""
    pad = " " * indent
    lines = []
    for k, leaf in enumerate(program.leaves):
        if leaf.kind == "full":
            lines.append(f"{pad}R{k} = L{k}[{full}]")
        elif leaf.kind == "row":
            lines.append(f"{pad}R{k} = L{k}[{row}]")
        elif leaf.kind == "col" and read_cols:
            lines.append(f"{pad}l{k} = L{k}[o]")
    return lines


def _element(program, indent):
    """Loads of leaf values at position jj of the row slices, then the steps."""
    pad = " " * indent
    lines = [f"{pad}l{k} = R{k}[jj]" for k, leaf in enumerate(program.leaves) if leaf.kind in ("full", "row")]
    return lines + [f"{pad}{var} = {code}" for var, code in program.code()]


def _params(program):
    return ", ".join(f"L{i}" if leaf.kind != "scalar" else f"l{i}" for i, leaf in enumerate(program.leaves))


def map_source(program, outputs):
    """A loop over rows o and positions j0..j1 within them, writing each output var at o * inner + j."""
    outs = ", ".join(f"O{k}" for k in range(len(outputs)))
    lines = ["    for o in range(o0, o1):", "        base = o * inner"]
    lines += _row_slices(program, 8, "base + j0:base + j1", "j0:j1")
    lines += [f"        S{k} = O{k}[base + j0:base + j1]" for k in range(len(outputs))]
    lines += ["        for jj in range(j1 - j0):"] + _element(program, 12)
    lines += [f"            S{k}[jj] = {var}" for k, (var, _) in enumerate(outputs)]
    return (f"{lower.HEADER}\n\n{DECORATOR}\ndef kernel(o0, o1, j0, j1, inner, {_params(program)}, {outs}):\n"
            + "\n".join(lines) + "\n")


FOLD_BLOCK = 512  # values computed (vectorised) into a buffer, then summed with LANES accumulators


# How a fold starts, folds one buffered value into lane accumulator `s` and lanes into `acc`, and ends.
# max/min ignore NaN in the (vectorised) comparisons and count NaNs on the side: any NaN wins, as in torch.
FOLDS = {
    "sum": dict(init="np.{acc}(0)", lane="s{u} += x", merge="acc += s{u}", result="acc"),
    "max": dict(init="np.{acc}(-np.inf)", lane="s{u} = x if x > s{u} else s{u}\n{pad}q{u} += x != x",
                merge="acc = s{u} if s{u} > acc else acc\n{pad}nans += q{u}", result="np.{acc}(np.nan) if nans else acc"),
    "min": dict(init="np.{acc}(np.inf)", lane="s{u} = x if x < s{u} else s{u}\n{pad}q{u} += x != x",
                merge="acc = s{u} if s{u} < acc else acc\n{pad}nans += q{u}", result="np.{acc}(np.nan) if nans else acc"),
}


def fold_source(program, var, acc_dtype, kind="sum"):
    """fold(i0, i1, buf, ...) folds (sums, or takes the max or min of) `var` over flat positions [i0, i1)
    (full leaves are read at i, row leaves at i - i0, column leaves are scalars): block by block, the
    values go to `buf` in a loop LLVM vectorises (a loop that also folds would run exp and tanh scalar),
    then LANES accumulators fold them. rows(o0, o1, K, ...) (one fold per row of
    length K) gives it a buffer; a whole-region fold gets one from the caller."""
    leaves, f = program.leaves, FOLDS[kind]
    pad = " " * 12
    body = _row_slices(program, 8, "b:e", "b - i0:e - i0", read_cols=False) + ["        for jj in range(e - b):"]
    body += _element(program, 12)
    fold_params = ", ".join(f"L{k}" if leaf.kind in ("full", "row") else f"l{k}" for k, leaf in enumerate(leaves))
    params = ", ".join(f"l{k}" if leaf.kind == "scalar" else f"L{k}" for k, leaf in enumerate(leaves))
    per_row = ", ".join(f"L{k}[o]" if leaf.kind == "col" else (f"L{k}" if leaf.kind != "scalar" else f"l{k}")
                        for k, leaf in enumerate(leaves))
    init = f["init"].format(acc=acc_dtype)
    lanes = "".join(f"            x = buf[k + {u}]\n            " + f["lane"].format(u=u, pad=pad) + "\n"
                    for u in range(LANES))
    starts = "".join(f"        s{u} = {init}\n        q{u} = 0\n" for u in range(LANES))
    merges = "".join("        " + f["merge"].format(u=u, pad="        ") + "\n" for u in range(LANES))
    return (f"{lower.HEADER}\n\n{DECORATOR}\ndef fold(i0, i1, buf, {fold_params}):\n"
            f"    acc = {init}\n    nans = 0\n"
            f"    for b in range(i0, i1, {FOLD_BLOCK}):\n"
            f"        e = min(b + {FOLD_BLOCK}, i1)\n"
            + "\n".join(body) + f"\n{pad}buf[jj] = {var}\n"
            + starts + f"        m = (e - b) // {LANES} * {LANES}\n"
            f"        for k in range(0, m, {LANES}):\n{lanes}"
            f"        for k in range(m, e - b):\n            x = buf[k]\n            "
            + f["lane"].format(u=0, pad=pad) + "\n" + merges
            + f"    return {f['result'].format(acc=acc_dtype)}\n\n\n"
            f"{DECORATOR}\ndef rows(o0, o1, K, {params}, out):\n"
            f"    buf = np.empty({FOLD_BLOCK}, np.{acc_dtype})\n"
            f"    for o in range(o0, o1):\n        out[o] = fold(o * K, o * K + K, buf, {per_row})\n")


_kernels = {}


def compiled(kind, program, outputs, source_fn):
    key = (kind, program.key(outputs))
    module = _kernels.get(key)
    if module is None:
        module = _kernels[key] = lower.load_module(f"fused_{kind}", source_fn())
    return module


# ---- running ------------------------------------------------------------------------------------
def run_map(program, outputs, out_dtypes, outs=None):
    """Evaluates the program over the region; `outputs` are vars. Returns flat arrays (`outs` if given:
    flat arrays to write)."""
    if program.target == "cuda":
        from ..cuda import fused
        return fused.run_map(program, outputs, out_dtypes, outs)
    outer, inner, args = program.layout()
    module = compiled("map", program, tuple(outputs), lambda: map_source(program, [(v, None) for v in outputs]))
    n = outer * inner
    if outs is None:
        outs = [pool.empty(n, d) for d in out_dtypes]
    kernel, parts = module.kernel, threads.count()
    if n < PARALLEL_MIN or parts == 1:
        kernel(0, outer, 0, inner, inner, *args, *outs)
    elif outer >= parts:
        threads.run([lambda a=a, b=b: kernel(a, b, 0, inner, inner, *args, *outs)
                     for a, b in threads.split(outer, parts)])
    else:
        threads.run([lambda a=a, b=b: kernel(0, outer, a, b, inner, *args, *outs)
                     for a, b in threads.split(inner, parts)])
    return outs


_COMBINE = {"sum": sum, "max": lambda parts: _select(parts, max), "min": lambda parts: _select(parts, min)}


def _select(parts, pick):
    return parts[0] * np.nan if any(p != p for p in parts) else pick(parts)


def run_fold(program, var, acc_dtype, split=0, kind="sum"):
    """Folds `var` over the dims of the region from `split` on: a scalar when split is 0, else a flat
    array with one result per position of the dims before it (device arrays for a GPU region)."""
    if program.target == "cuda":
        from ..cuda import fused
        return fused.run_fold(program, var, acc_dtype, split, kind)
    outer, inner, args = program.layout(split)
    module = compiled(f"{kind}", program, (var, acc_dtype, split == 0),
                      lambda: fold_source(program, var, acc_dtype, kind))
    n = outer * inner
    parallel = n >= PARALLEL_MIN and threads.count() > 1
    if split == 0:
        def part(a, b):
            return module.fold(a, b, np.empty(FOLD_BLOCK, acc_dtype), *args)
        if not parallel:
            return part(0, n)
        return _COMBINE[kind](threads.run([lambda a=a, b=b: part(a, b) for a, b in threads.split(n, threads.count())]))
    out = np.empty(outer, acc_dtype)
    threads.over(module.rows, outer, inner, *args, out, parallel=parallel)
    return out

"""Fused CPU kernels: one generated loop evaluates a whole region of elementwise ops (optionally summing
it, or producing several outputs such as a region's gradients), reading each input once."""
import math

import numpy as np

from .. import ir, loader
from ..arrays import length_error
from ...spec.table import REDUCTIONS
from . import pool, threads
from .kernels import ALLOCATING_LOOP_HEADER, HEADER, LOOP_HEADER, bound_replay
from .threads import PARALLEL_MIN

BROADCAST_MIN = 1 << 14  # below this many elements broadcast inputs are expanded (fewer kernel variants)
LANES = 4  # independent accumulators in a fused max or min: they break the chain of dependent comparisons


# ---- layout ---------------------------------------------------------------------------------
def layout(program, split=None):
    """Chooses (outer, inner) = (dims before `split`, dims from it), trying every split unless one is
    given, so that every array leaf is full, a row or a column of the region; leaves fitting no
    choice are broadcast into full copies. Returns (outer, inner, args)."""
    shape, nd = program.shape, len(program.shape)
    n = math.prod(shape)
    args = _flat_args(program.leaves, shape)
    if args is not None:  # the usual region: inputs of its own shape
        return (1, n, args) if split is None else (math.prod(shape[:split]), math.prod(shape[split:]), args)
    if n < BROADCAST_MIN and split is None:  # small: copy broadcast inputs, one kernel for every pattern
        for leaf in program.leaves:
            if leaf.kind != "scalar":
                leaf.kind = "full"
        return 1, n, [np.ascontiguousarray(np.broadcast_to(leaf.value, shape), dtype=leaf.dtype).reshape(-1)
                      if leaf.kind == "full" else leaf.value for leaf in program.leaves]
    if split is None or split == nd - 1:
        args = _row_args(program.leaves, shape)
        if args is not None:  # the next most usual: a bias along the last dim (what the search below finds)
            return n // shape[-1], shape[-1], args
    effective = []
    for leaf in program.leaves:
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
    for leaf, arr in zip(program.leaves, effective):
        if arr is None:
            args.append(leaf.value)
            continue
        kind = _kind_at(arr.shape, shape, best_k) if inner != n or arr.shape == shape else None
        if kind is None or (kind != "full" and inner == n):
            kind, arr = "full", np.broadcast_to(arr, shape)
        leaf.kind = kind
        args.append(np.ascontiguousarray(arr, dtype=leaf.dtype).reshape(-1))
    return outer, inner, args


def _flat_args(leaves, shape):
    """Kernel arguments when every array leaf already is a C-contiguous array of the region's shape and
    dtype (then all are 'full'); None otherwise."""
    args = []
    for leaf in leaves:
        v = leaf.value
        if leaf.kind == "scalar":
            args.append(v)
        elif v.shape == shape and v.flags.c_contiguous and v.dtype == ir.SCALAR_DTYPES[leaf.dtype]:
            leaf.kind = "full"
            args.append(v.reshape(-1))
        else:
            return None
    return args


def _row_args(leaves, shape):
    """Kernel arguments when every array leaf is a C-contiguous array of the region's shape, a 1-d one along
    its last dim (a bias) or one of its trailing dims (a tail: read at the full position modulo its size), of
    its dtype, and the region has two dims or more; None otherwise."""
    if len(shape) < 2 or math.prod(shape[:-1]) < 2:  # (one row: the search makes every leaf full)
        return None
    args = []
    for leaf in leaves:
        v = leaf.value
        if leaf.kind == "scalar":
            args.append(v)
            continue
        if not (v.flags.c_contiguous and v.dtype == ir.SCALAR_DTYPES[leaf.dtype]):
            return None
        if v.shape == shape:
            leaf.kind = "full"
        elif v.ndim == 1 and v.shape[0] == shape[-1]:
            leaf.kind = "row"
        elif 1 < v.ndim < len(shape) and v.shape == shape[-v.ndim:]:
            leaf.kind = "tail"  # the trailing dims, repeated over the leading ones (a causal mask over heads)
        else:
            return None
        args.append(v.reshape(-1))
    return args


def _kind_at(eff, shape, k):
    if eff == shape:
        return "full"
    if all(d == 1 for d in eff[:k]) and eff[k:] == shape[k:]:
        return "row"
    if eff[:k] == shape[:k] and all(d == 1 for d in eff[k:]):
        return "col"
    return None


# The element loops index with unsigned integers: Numba wraps a signed index it cannot prove non-negative,
# which keeps LLVM from vectorising the loop, and never wraps an unsigned one. (Slices per row indexed from 0
# do the same, but a kernel with them took half as long again to compile: 0.45 -> 0.30 s for a two-output
# map, at the same speed.) Offsets and counts are cast once per row: uint64 meeting int64 would give float64.
def element_loop(program, indent, full, row, count, read_cols=True):
    """Lines looping `jj` over [0, count): full leaves read at `full` + jj, row leaves at `row` + jj, tail
    leaves at `full` modulo their size + jj (the count never crosses a row, and a tail holds whole rows),
    column leaves once before the loop (a fold receives them as scalars instead), then the steps; the
    caller's body follows at indent + 4, where `F` + jj is the full position."""
    pad, inner = " " * indent, " " * (indent + 4)
    lines = [f"{pad}F = np.uint64({full})", f"{pad}Q = np.uint64({row})"]
    lines += [f"{pad}l{k} = L{k}[o]" for k, leaf in enumerate(program.leaves) if leaf.kind == "col" and read_cols]
    lines += [f"{pad}P{k} = F % np.uint64(L{k}.size)" for k, leaf in enumerate(program.leaves) if leaf.kind == "tail"]
    lines.append(f"{pad}for jj in range(np.uint64(0), np.uint64({count})):")
    starts = {"full": "F", "row": "Q"}
    lines += [f"{inner}l{k} = L{k}[{starts.get(leaf.kind) or f'P{k}'} + jj]"
              for k, leaf in enumerate(program.leaves) if leaf.kind in ("full", "row", "tail")]
    return lines + [f"{inner}{var} = {code}" for var, code in program.code()]


def params(program):
    return ", ".join(f"L{i}" if leaf.kind != "scalar" else f"l{i}" for i, leaf in enumerate(program.leaves))


def map_source(program, outputs):
    """A loop over rows o and positions j0..j1 within them, writing each output var at o * inner + j."""
    outs = ", ".join(f"O{k}" for k in range(len(outputs)))
    lines = ["    for o in range(o0, o1):"] + element_loop(program, 8, "o * inner + j0", "j0", "j1 - j0")
    lines += [f"            O{k}[F + jj] = {var}" for k, (var, _) in enumerate(outputs)]
    return (f"{HEADER}\n\n{LOOP_HEADER}\ndef kernel(o0, o1, j0, j1, inner, {params(program)}, {outs}):\n"
            + "\n".join(lines) + "\n")


FOLD_BLOCK = 512  # values computed (vectorised) into a buffer, then folded from it


# How a max or min fold (starting from the op table's identity) folds one buffered value into lane accumulator `s` and
# lanes into `acc`, and how a fold ends.
# max/min ignore NaN in the (vectorised) comparisons and count NaNs on the side: any NaN wins, as in torch.
FOLDS = {
    "sum": dict(result="acc"),  # (a loop of its own: see fold_source)
    "max": dict(lane="s{u} = x if x > s{u} else s{u}\n{pad}q{u} += x != x",
                merge="acc = s{u} if s{u} > acc else acc\n{pad}nans += q{u}", result="np.{acc}(np.nan) if nans else acc"),
    "min": dict(lane="s{u} = x if x < s{u} else s{u}\n{pad}q{u} += x != x",
                merge="acc = s{u} if s{u} < acc else acc\n{pad}nans += q{u}", result="np.{acc}(np.nan) if nans else acc"),
}


def fold_source(program, var, acc_dtype, kind="sum"):
    """fold(i0, i1, buf, ...) folds (sums, or takes the max or min of) `var` over flat positions [i0, i1)
    (full leaves are read at i, row leaves at i - i0, column leaves are scalars): block by block, the
    values go to `buf` in a loop LLVM vectorises (a loop that also folds would run exp and tanh scalar),
    then a sum adds them in a loop LLVM may regroup (vectors of partial sums: 4M float32 products summed in
    float64 2.2 -> 1.4 ms on one thread), a max or min compares them in LANES accumulators. rows(o0, o1, K, ...) (one fold per row of
    length K) gives it a buffer; a whole-region fold gets one from the caller."""
    leaves, f = program.leaves, FOLDS[kind]
    pad = " " * 12
    body = element_loop(program, 8, "b", "b - i0", "e - b", read_cols=False)
    fold_params = ", ".join(f"L{k}" if leaf.kind in ("full", "row", "tail") else f"l{k}" for k, leaf in enumerate(leaves))
    per_row = ", ".join(f"L{k}[o]" if leaf.kind == "col" else (f"L{k}" if leaf.kind != "scalar" else f"l{k}")
                        for k, leaf in enumerate(leaves))
    init = f"np.{acc_dtype}({REDUCTIONS[kind].identity})"
    if kind == "sum":  # additions LLVM may regroup: a vector loop (several vectors of partial sums)
        block = (f"        s = {init}\n        for k in range(e - b):\n"
                 "            s = add_reorderable(s, buf[k])\n        acc += s\n")
    else:  # a comparison chain LLVM keeps in order: LANES accumulators break it
        lanes = "".join(f"            x = buf[k + {u}]\n            " + f["lane"].format(u=u, pad=pad) + "\n"
                        for u in range(LANES))
        starts = "".join(f"        s{u} = {init}\n        q{u} = 0\n" for u in range(LANES))
        merges = "".join("        " + f["merge"].format(u=u, pad="        ") + "\n" for u in range(LANES))
        block = (starts + f"        m = (e - b) // {LANES} * {LANES}\n"
                 f"        for k in range(0, m, {LANES}):\n{lanes}"
                 f"        for k in range(m, e - b):\n            x = buf[k]\n            "
                 + f["lane"].format(u=0, pad=pad) + "\n" + merges)
    return (f"{HEADER}from numgrad.kernels.cpu.intrinsics import add_reorderable\n\n\n"
            f"{LOOP_HEADER}\ndef fold(i0, i1, buf, {fold_params}):\n"
            f"    acc = {init}\n    nans = 0\n"
            f"    for b in range(i0, i1, {FOLD_BLOCK}):\n"
            f"        e = min(b + {FOLD_BLOCK}, i1)\n"
            + "\n".join(body) + f"\n{pad}buf[jj] = {var}\n" + block
            + f"    return {f['result'].format(acc=acc_dtype)}\n\n\n"
            f"{ALLOCATING_LOOP_HEADER}\ndef rows(o0, o1, K, {params(program)}, out):\n"
            f"    buf = np.empty({FOLD_BLOCK}, np.{acc_dtype})\n"
            f"    for o in range(o0, o1):\n        out[o] = fold(o * K, o * K + K, buf, {per_row})\n")


def compiled(kind, program, outputs, source_fn):
    return loader.cached((kind, program.key(outputs)), f"fused_{kind}", source_fn)


# ---- running ------------------------------------------------------------------------------------
def run_map(program, outputs, out_dtypes, outs=None):
    """Evaluates the program over the region; `outputs` are vars. Returns flat arrays (`outs` if given:
    flat arrays to write)."""
    if program.sources:
        program.refresh()
    outer, inner, args = layout(program)
    module = _map_module(program, outputs)
    n = outer * inner
    if outs is None:
        outs = [pool.empty(n, d) for d in out_dtypes]
    else:
        for o in outs:  # written at o * inner + j for every position of the region
            if o.size != n:
                raise length_error("fused map", n, o)
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


@np.errstate(all="ignore")  # IEEE results (inf, NaN) without NumPy's warnings: torch is silent
def _combine(kind, parts):
    """The threads' partial folds joined by the reduction's own combine (spec/table.py): np.maximum and
    np.minimum propagate a NaN, as the fold does; the result keeps the partials' scalar type."""
    return type(parts[0])(getattr(np, REDUCTIONS[kind].combine).reduce(parts))


def run_fold(program, var, acc_dtype, split=0, kind="sum", out=None):
    """Folds `var` over the dims of the region from `split` on: a scalar when split is 0, else a flat
    array with one result per position of the dims before it (`out` when given)."""
    if program.sources:
        program.refresh()
    outer, inner, args = layout(program, split)
    module = _fold_module(program, var, acc_dtype, split, kind)
    n = outer * inner
    parallel = n >= PARALLEL_MIN and threads.count() > 1
    if split == 0:
        def part(a, b):
            return module.fold(a, b, np.empty(FOLD_BLOCK, acc_dtype), *args)
        if not parallel:
            return part(0, n)
        return _combine(kind, threads.run([lambda a=a, b=b: part(a, b) for a, b in threads.split(n, threads.count())]))
    if out is None:
        out = np.empty(outer, acc_dtype)
    threads.over(module.rows, outer, inner, *args, out, parallel=parallel)
    return out


def _map_module(program, outputs):
    return compiled("map", program, tuple(outputs), lambda: map_source(program, [(v, None) for v in outputs]))


def _fold_module(program, var, acc_dtype, split, kind):
    return compiled(f"{kind}", program, (var, acc_dtype, split == 0), lambda: fold_source(program, var, acc_dtype, kind))


# ---- replays of a traced program (numgrad.compile): the layout and kernel found once ---------------
def prepared_args(program, split=None):
    """(outer, inner, args, refresh) for a replay, when every array argument is the leaf's own memory
    (not a copy made for this run); refresh lists (argument index, scalar type, source array) of the
    scalars a replay reads again. None when some argument is a copy."""
    outer, inner, args = layout(program, split)
    for leaf, arg in zip(program.leaves, args):
        if leaf.kind != "scalar" and not np.may_share_memory(arg, leaf.value):
            return None
    sources = program.sources or {}
    refresh = [(i, ir.SCALAR_TYPES[program.leaves[i].dtype], src) for i, src in sources.items()]
    return outer, inner, args, refresh


def prepare_map(result, program, outputs, out_dtypes, outs=None):
    """A replay of run_map writing into `result`, the flat arrays the trace got (None: no lean replay)."""
    prepared = prepared_args(program)
    if prepared is None:
        return None
    outer, inner, args, refresh = prepared
    kernel = _map_module(program, outputs).kernel
    n, parts = outer * inner, threads.count()
    if n >= PARALLEL_MIN and parts > 1:
        return None  # the threaded split: run_map itself
    return bound_replay(kernel, [0, outer, 0, inner, inner, *args, *result], 5, refresh,
                        f"fused map kernel {kernel.__module__} ({n} elements, prepared)")


def prepare_fold(result, program, var, acc_dtype, split=0, kind="sum"):
    """A replay of run_fold writing a whole-region fold into 0-d array `result` (None: no lean replay)."""
    if split:
        return None
    prepared = prepared_args(program, split)
    if prepared is None:
        return None
    outer, inner, args, refresh = prepared
    module = _fold_module(program, var, acc_dtype, split, kind)
    n = outer * inner
    if n >= PARALLEL_MIN and threads.count() > 1:
        return None
    bound = [0, n, np.empty(FOLD_BLOCK, acc_dtype), *args]
    fold = module.fold

    def replay():
        for i, to_scalar, src in refresh:
            bound[3 + i] = to_scalar(src.flat[0])
        result[()] = fold(*bound)
    replay.describes = f"fused fold kernel {fold.__module__} ({n} elements, prepared)"
    return replay


run_map.prepare = prepare_map

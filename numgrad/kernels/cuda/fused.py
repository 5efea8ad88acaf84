"""Fused GPU kernels: ir.py's programs (a region of elementwise ops, its gradients) as one grid-stride
loop, and folds of a region as that loop followed by a block reduction."""
import math

import numpy as np

from .. import loader, lower
from ..arrays import length_error
from . import kernels as target, reduce
from .array import DeviceArray, empty
from ...spec.table import REDUCTIONS


def layout(program):
    """Kernel arguments for the program's leaves: a host scalar, one value on the GPU ('one', read at
    0), or a flat array of the region's shape ('full'); broadcast or strided inputs are gathered into a
    contiguous copy on the GPU. GPU results stay in C order (lazy.result_layout is for host results), so
    a GPU program has no order."""
    shape = program.shape
    args = []
    for leaf in program.leaves:
        v = leaf.value
        if leaf.kind == "scalar":
            args.append(v)
            continue
        want = np.dtype(leaf.dtype.rstrip("_"))
        if v.size == 1 or not any(v.strides):
            leaf.kind = "one"
            one = v[(0,) * v.ndim] if v.ndim else v
            args.append(one.contiguous(want).flat_buffer())
        else:
            leaf.kind = "full"
            if v.shape != shape:
                v = v.broadcast_to(shape)
            args.append(v.contiguous(want).flat_buffer())
    return args


def map_source(program, outputs):
    params = ", ".join(f"l{k}" if leaf.kind == "scalar" else f"L{k}" for k, leaf in enumerate(program.leaves))
    outs = ", ".join(f"O{k}" for k in range(len(outputs)))
    loads = [f"        l{k} = L{k}[i]" if leaf.kind == "full" else f"        l{k} = L{k}[0]"
             for k, leaf in enumerate(program.leaves) if leaf.kind != "scalar"]
    steps = [f"        {var} = {code}" for var, code in program.code()]
    stores = [f"        O{k}[i] = {var}" for k, var in enumerate(outputs)]
    return (f"{target.HEADER}\n\n{target.KERNEL_DECORATOR}\ndef kernel(n, {params}, {outs}):\n"
            f"    {target.GRID_LOOP}\n" + "\n".join(loads + steps + stores) + "\n")


def run_map(program, outputs, out_dtypes, outs=None):
    """cpu/fused.run_map on the GPU: returns flat DeviceArrays (`outs` if given)."""
    args = layout(program)
    n = math.prod(program.shape)
    module = loader.cached(("cuda_map", program.key(tuple(outputs))), "fused_cuda_map",
                           lambda: map_source(program, list(outputs)))
    if outs is None:
        outs = [empty((n,), d) for d in out_dtypes]
    for o in outs:
        if o.size != n:
            raise length_error("fused map", n, o)
    outs = [o if isinstance(o, DeviceArray) else DeviceArray(o, (n,)) for o in outs]
    target.launch(module.kernel, n, *args, *[o.flat_buffer() for o in outs])
    return outs


def fold_source(program, var, acc_dtype, kind):
    """fold(rows, K, chunks, leaves..., out): block m folds chunk m % chunks of row m // chunks (positions
    of a row are contiguous, length K), each thread striding over it so that reads coalesce, computing
    the region's value at each position on the way; a shared-memory tree combines the threads, and
    out[m] holds the chunk's result. Nothing of the region is stored."""
    params = ", ".join(f"l{k}" if leaf.kind == "scalar" else f"L{k}" for k, leaf in enumerate(program.leaves))
    pad = " " * 12
    loads = [f"{pad}l{k} = L{k}[i]" if leaf.kind == "full" else f"{pad}l{k} = L{k}[0]"
             for k, leaf in enumerate(program.leaves) if leaf.kind != "scalar"]
    steps = [f"{pad}{v} = {code}" for v, code in program.code()]
    init = f"np.{acc_dtype}({REDUCTIONS[kind].identity})"
    return f"""{target.HEADER}

{target.KERNEL_DECORATOR}
def fold(rows, K, chunks, {params}, out):
    partial = cuda.shared.array({target.BLOCK}, np.{acc_dtype})
    tid = cuda.threadIdx.x
    span = (K + chunks - 1) // chunks
    for m in range(cuda.blockIdx.x, rows * chunks, cuda.gridDim.x):
        r = m // chunks
        start = r * K + (m - r * chunks) * span
        stop = min(start + span, r * K + K)
        acc = {init}
        for i in range(start + tid, stop, cuda.blockDim.x):
{chr(10).join(loads + steps)}
            x_i = np.{acc_dtype}({var})
{lower.fold_statements(REDUCTIONS[kind].update, 12, best=None)}        partial[tid] = acc
        cuda.syncthreads()
        s = cuda.blockDim.x // 2
        while s > 0:
            if tid < s:
                acc = partial[tid]
                x_i = partial[tid + s]
{lower.fold_statements(REDUCTIONS[kind].update, 16, best=None)}                partial[tid] = acc
            cuda.syncthreads()
            s //= 2
        if tid == 0:
            out[m] = partial[0]
        cuda.syncthreads()
"""


def run_fold(program, var, acc_dtype, split=0, kind="sum"):
    """cpu/fused.run_fold on the GPU: one pass computing the region and folding it over the dims from `split`
    on (a long row is split over several blocks whose partial results are folded once more). Returns a
    flat DeviceArray (one element when split is 0): nothing is read back."""
    args = layout(program)
    shape = program.shape
    rows, K = math.prod(shape[:split]), math.prod(shape[split:])
    # enough blocks to fill the GPU: a few hundred, each folding at least 8 elements per thread
    chunks = max(1, min(-(-K // (target.BLOCK * 8)), -(-(4 if target.SIMULATOR else 1024) // rows)))
    module = loader.cached((f"cuda_fold_{kind}", program.key((var, acc_dtype))), f"fused_cuda_fold_{kind}",
                           lambda: fold_source(program, var, acc_dtype, kind))
    partials = empty((rows * chunks,), acc_dtype)
    module.fold[target.blocks_for(rows * chunks, 1), target.BLOCK](rows, K, chunks, *args, partials.flat_buffer())
    if chunks == 1:
        return partials
    out, _ = reduce.run_reduction(kind, REDUCTIONS[kind].update, partials.flat_buffer(), rows, chunks, 1,
                                       acc_dtype)
    return DeviceArray(out, (rows,))

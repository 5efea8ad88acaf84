"""Fused GPU kernels: fused.py's programs (a region of elementwise ops, its gradients) as one grid-stride
loop, and folds of a region as that loop followed by a block reduction."""
import math

import numpy as np

from . import cuda as target
from .fused import compiled


def layout(program):
    """Kernel arguments for the program's leaves: a host scalar, one value on the GPU ('one', read at
    0), or a flat array of the region's shape ('full'); broadcast or strided inputs are gathered into a
    contiguous copy on the GPU."""
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
    """fused.run_map on the GPU: returns flat DeviceArrays (`outs` if given)."""
    from ..cuda.array import DeviceArray, empty
    args = layout(program)
    n = math.prod(program.shape)
    module = compiled("cuda_map", program, tuple(outputs), lambda: map_source(program, list(outputs)))
    if outs is None:
        outs = [empty((n,), d) for d in out_dtypes]
    outs = [o if isinstance(o, DeviceArray) else DeviceArray(o, (n,)) for o in outs]
    target.launch(module.kernel, n, *args, *[o.flat_buffer() for o in outs])
    return outs


def run_fold(program, var, acc_dtype, split=0, kind="sum"):
    """fused.run_fold on the GPU: the region's values, then a block reduction over the dims from
    `split` on. Returns a flat DeviceArray (one element when split is 0): nothing is read back."""
    from ..ops.table import REDUCTIONS
    from . import cuda_reduce
    (values,) = run_map(program, [var], [np.dtype(program.var_dtypes[var].rstrip("_"))])
    shape = program.shape
    outer, K = math.prod(shape[:split]), math.prod(shape[split:])
    out, _ = cuda_reduce.run_reduction(kind, REDUCTIONS[kind].update, values.flat_buffer(), outer, K, 1, acc_dtype)
    from ..cuda.array import DeviceArray
    return DeviceArray(out, (outer,))

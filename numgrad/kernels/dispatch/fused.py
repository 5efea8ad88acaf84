"""Runs a fused program (ir.py) on its target: CPU loops here, CUDA kernels once a leaf is on the GPU."""
import numpy as np

from ..cpu import fused as cpu_fused
from ..ir import Program  # noqa: F401  (built by lazy.py and autograd/fused_backward.py)
from .. import tape
from .lazy_cuda import cuda

BROADCAST_MIN = cpu_fused.BROADCAST_MIN  # from this many elements a host kernel reads broadcast inputs in place


def run_map(program, outputs, out_dtypes, outs=None):
    """Evaluates the program over the region; `outputs` are vars. Returns flat arrays (`outs` if given:
    flat arrays to write), device arrays for a GPU region."""
    if program.target == "cuda":
        return tape.call_into("outs", cuda().fused.run_map, program, outputs, out_dtypes, outs=outs)
    return tape.call_into("outs", cpu_fused.run_map, program, outputs, out_dtypes, outs=outs)


def run_fold(program, var, acc_dtype, split=0, kind="sum"):
    """Folds `var` over the dims of the region from `split` on: a scalar when split is 0, else a flat
    array with one result per position of the dims before it (device arrays for a GPU region)."""
    if program.target == "cuda":
        return tape.call(cuda().fused.run_fold, program, var, acc_dtype, split, kind)
    return tape.call_into("out", _host_fold, program, var, acc_dtype, split, kind)


def _host_fold(program, var, acc_dtype, split, kind, out=None):
    """The CPU fold, a whole-region result as a 0-d array; into `out` when given (a replay writes the trace's
    buffer in place)."""
    result = cpu_fused.run_fold(program, var, acc_dtype, split, kind, out if split else None)
    if split:
        return result
    if out is None:
        return np.asarray(result)
    out[()] = result
    return out


_host_fold.prepare = cpu_fused.prepare_fold

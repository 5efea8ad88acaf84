"""Runs one program in torch and in numgrad (fusion on, fusion off) and compares what each did: the error (type,
first line, step), every variable's dtype, shape, requires_grad and values, and every input's .grad."""
import contextlib
import dataclasses
import math
import warnings
from dataclasses import dataclass, field

import numpy as np
import torch

import numgrad
from helpers.fusion import fused_at_every_size

from .program import Interpreter, Ref

# float tolerances: relative, and absolute scaled by the largest finite magnitude of the reference
TOL = {"float16": (1e-2, 1e-3), "float32": (1e-4, 1e-5), "float64": (1e-7, 1e-9)}
MESSAGE_TYPES = (RuntimeError, IndexError, ValueError, TypeError)


@dataclass
class Outcome:
    error: tuple = None  # (where: a step index or "backward", exception type, first line of its message)
    values: list = field(default_factory=list)  # per variable: (dtype name, shape, requires_grad, array)
    grads: list = field(default_factory=list)  # per input: None or (dtype name, shape, array)


def _first_line(exc):
    text = str(exc)
    return text.splitlines()[0] if text else ""


def _describe(t):
    return (str(t.dtype).rsplit(".", 1)[-1], tuple(int(n) for n in t.shape), bool(t.requires_grad),
            np.array(t.detach().numpy(), copy=True))


def execute(lib, program):
    out = Outcome()
    try:
        run = Interpreter(lib, program)
    except Exception as exc:
        out.error = ("inputs", type(exc), _first_line(exc))
        return out
    retained = []  # the variables retain_grad was called on: their .grad is compared after the backward
    for k, s in enumerate(program.steps):
        try:
            run.step(s)
        except Exception as exc:
            out.error = (k, type(exc), _first_line(exc))
            break
        if s.name == "retain_grad" and isinstance(s.args[0], Ref):
            retained.append(run.env[s.args[0].i])
    else:
        if program.backward is not None:
            try:
                run.backward(program.backward)
            except Exception as exc:
                out.error = ("backward", type(exc), _first_line(exc))
    for t in run.env:
        try:
            out.values.append(_describe(t))
        except Exception as exc:  # reading the values failed: a failure of its own
            out.values.append(("unreadable", type(exc).__name__, str(exc)[:200], None))
    for leaf in run.leaves + retained:
        with warnings.catch_warnings():  # an in-place op may have made a leaf a non-leaf: its .grad warns
            warnings.simplefilter("ignore")
            g = leaf.grad
        out.grads.append(None if g is None else _describe(g)[:2] + (_describe(g)[3],))
    return out


def run_numgrad(program, fused):
    """The program in numgrad fused (at every size: the programs' tensors are small, which would otherwise
    compute at once) or unfused (small results then take the small-tensor path, lazy.compute_small)."""
    with numgrad.fusion(fused), fused_at_every_size() if fused else contextlib.nullcontext():
        return execute(numgrad, program)


def values_differ(dtype, ref, got, computed_in=None):
    """None when equal for the dtype (floats: within tolerance, NaN where NaN, infinities equal), else a reason.
    `computed_in` "float32" when the program computed in float32 anywhere: a float64 result may carry float32
    rounding (x.double() of a float32 result), so it gets float32's tolerance."""
    if ref.shape != got.shape:
        return f"array shapes {ref.shape} != {got.shape}"
    if dtype in TOL:
        rtol, atol = TOL[computed_in or dtype]
        finite = np.abs(ref[np.isfinite(ref)])
        atol *= max(1.0, float(finite.max()) if finite.size else 1.0)
        ref64, got64 = ref.astype(np.float64), got.astype(np.float64)
        nan_r, nan_g = np.isnan(ref64), np.isnan(got64)
        bad = (nan_r != nan_g) | (~nan_r & ~nan_g & ~np.isclose(got64, ref64, rtol=rtol, atol=atol))
        bad &= ~(np.isinf(ref64) & (ref64 == got64))
    else:
        bad = ref != got
    if not bad.any():
        return None
    i = tuple(int(k) for k in np.argwhere(bad)[0])
    return f"{int(bad.sum())} of {bad.size} differ; first at {i}: torch {ref[i]!r}, numgrad {got[i]!r}"


def _rounding_carried(program, ref, got, k, i, low):
    """Whether variable i, made by single-output step k from inputs that differ from torch's only within
    tolerance (not bit for bit), equals what torch's own op gives on numgrad's inputs: a rounding difference
    carried through the step, not a wrong result. A discontinuous op moves a whole step on a last-place
    difference (fmod of a large quotient, a comparison); an ill-conditioned one multiplies it (tan of a large
    argument: torch sums float32 in float32 in an order set by the CPU's vector width, numgrad in double, and
    both agree within tolerance until such a step). Either way the step itself computes what torch computes."""
    if not isinstance(k, int) or program.steps[k].outs != 1:
        return False
    step = program.steps[k]
    refs = [a.i for a in (*step.args, *step.kwargs.values()) if isinstance(a, Ref)]
    if not refs or all(np.array_equal(ref.values[j][3], got.values[j][3], equal_nan=True) for j in refs):
        return False  # the same inputs: a real difference
    replay = Interpreter.__new__(Interpreter)
    replay.lib, replay.leaves = torch, []
    replay.env = [torch.tensor(v[3]) if v[0] != "unreadable" else None for v in got.values[:i]]
    try:
        replay.step(step)
    except Exception:
        return False
    out = replay.env[-1]
    return values_differ(got.values[i][0], out.detach().numpy(), got.values[i][3], low) is None


def relative_gap(ref, got):
    """The largest |got - ref| / |ref| over the elements finite in both (0.0 when none differ): how far a float
    result moved."""
    ref64, got64 = np.asarray(ref, np.float64), np.asarray(got, np.float64)
    both = np.isfinite(ref64) & np.isfinite(got64) & (ref64 != got64)
    if not both.any():
        return 0.0
    return float((np.abs(got64[both] - ref64[both]) / np.maximum(np.abs(ref64[both]), 1e-30)).max())


def var_steps(program, ref):
    """The step that made each variable (None for the inputs), by the counts of torch's run."""
    owners = [None] * len(program.inputs)
    for k, s in enumerate(program.steps):
        owners += [k] * s.outs
    return owners


@dataclass
class Failure:
    kind: str  # error-type, error-message, error-step, structure, dtype, shape, requires_grad, value, grad
    step: object  # the step index (or "backward", "inputs") it concerns, None for a grad
    detail: str
    mode: str = ""  # "fused" or "unfused"
    # the largest relative difference of a forward value accepted as carried rounding in this run, and this
    # failure's own (grads): what known.py needs to tell an amplified rounding from a wrong gradient
    carried: float = 0.0
    gap: float = 0.0


def compare(program, ref, got, mode):
    """The differences of numgrad's outcome `got` from torch's `ref`, as Failures (empty when none)."""
    fails = []
    if (ref.error is None) != (got.error is None) or (ref.error and ref.error[1] is not got.error[1]):
        # the earlier of the two errors is where the runs part (an int step, else "backward" or "inputs")
        steps = [e[0] for e in (ref.error, got.error) if e is not None]
        where = min((k for k in steps if isinstance(k, int)), default=steps[0])
        fails.append(Failure("error-type", where, f"torch {_err(ref.error)}; numgrad {_err(got.error)}", mode))
        return fails
    if ref.error:
        if ref.error[0] != got.error[0]:
            steps = (ref.error[0], got.error[0])
            where = min((k for k in steps if isinstance(k, int)), default=steps[0])
            fails.append(Failure("error-step", where, f"torch {_err(ref.error)}; numgrad {_err(got.error)}",
                                 mode))
            return fails  # the runs part at different steps: their variables do not line up
        elif issubclass(ref.error[1], MESSAGE_TYPES) and ref.error[2] != got.error[2]:
            fails.append(Failure("error-message", ref.error[0], f"torch {ref.error[2]!r}; numgrad {got.error[2]!r}",
                                 mode))
    owners = var_steps(program, ref)
    low = next((d for d in ("float16", "float32") if any(v[0] == d for v in ref.values)), None)
    if len(ref.values) != len(got.values):
        fails.append(Failure("structure", None, f"{len(ref.values)} variables in torch, {len(got.values)} in numgrad",
                             mode))
        return fails
    carried = 0.0
    for i, (r, g) in enumerate(zip(ref.values, got.values)):
        where = owners[i] if i < len(owners) else None
        if g[0] == "unreadable":
            fails.append(Failure("unreadable", where, f"v{i}: {g[1]}: {g[2]}", mode))
        elif r[0] != g[0]:
            fails.append(Failure("dtype", where, f"v{i}: torch {r[0]}, numgrad {g[0]}", mode))
        elif r[1] != g[1]:
            fails.append(Failure("shape", where, f"v{i}: torch {r[1]}, numgrad {g[1]}", mode))
        elif r[2] != g[2]:
            fails.append(Failure("requires_grad", where, f"v{i}: torch {r[2]}, numgrad {g[2]}", mode))
        else:
            why = values_differ(r[0], r[3], g[3], low)
            if why and _rounding_carried(program, ref, got, where, i, low):
                carried = max(carried, relative_gap(r[3], g[3]))
            elif why:
                fails.append(Failure("value", where, f"v{i} ({r[0]}{list(r[1])}): {why}", mode))
    if len(ref.grads) != len(got.grads):
        fails.append(Failure("structure", None, f"{len(ref.grads)} grads in torch, {len(got.grads)} in numgrad", mode))
    for j, (r, g) in enumerate(zip(ref.grads, got.grads)):
        name = f"leaf{j}" if j < len(program.inputs) else f"retained grad {j - len(program.inputs)}"
        if (r is None) != (g is None):
            fails.append(Failure("grad", "backward", f"{name}.grad: torch {_none(r)}, numgrad {_none(g)}", mode))
        elif r is not None:
            why = (f"dtype {r[0]} != {g[0]}" if r[0] != g[0] else f"shape {r[1]} != {g[1]}" if r[1] != g[1]
                   else values_differ(r[0], r[2], g[2], low))
            if why:
                gap = relative_gap(r[2], g[2]) if r[0] == g[0] and r[1] == g[1] else math.inf
                fails.append(Failure("grad", "backward", f"{name}.grad: {why}", mode, carried, gap))
    return fails


def _err(e):
    return "no error" if e is None else f"{e[1].__name__}({e[2]!r}) at step {e[0]}"


def _none(x):
    return "None" if x is None else "a tensor"


def torch_reference(program):
    """torch's outcome. Where torch fails an internal assert of its own (its backward of `False ** x` reads a
    bool Scalar it cannot hold: 'unknown ivalue tag'), the reference is the same program with the Python bool
    operands of its powers written as ints, which is the same math and which torch can run; numgrad must give that."""
    ref = execute(torch, program)
    if ref.error is not None and "INTERNAL ASSERT FAILED" in ref.error[2]:
        steps = [dataclasses.replace(s, args=tuple(int(a) if isinstance(a, bool) else a for a in s.args))
                 if "pow" in s.name else s for s in program.steps]
        ref = execute(torch, dataclasses.replace(program, steps=steps))
    return ref


def check_program(program):
    """(torch's outcome, the failures of numgrad fused and unfused)."""
    ref = torch_reference(program)
    fails = []
    for fused in (True, False):
        fails += compare(program, ref, run_numgrad(program, fused), "fused" if fused else "unfused")
    return ref, fails

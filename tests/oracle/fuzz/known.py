"""Failures recognized as a known item, counted apart in reports (still counted, never skipped).

Issue 13's items that the first fuzz runs met are fixed, so the only item is one where torch defines no result:
an in-place op whose tensor operand shares memory with the tensor it writes, in a layout torch's overlap check
cannot judge (either is not dense: its get_overlap_status says TOO_HARD and it goes on). The values then depend
on the order torch's loops read and write memory (vector widths, unrolling), which its documentation leaves
undefined; numgrad reads every input before it writes. Only value and gradient differences are recognized, and
only in a program that made such a write."""
import numpy as np
import torch

from .program import Interpreter, Ref

ALIASED_WRITE = "in-place write through an operand aliasing it in a layout torch does not check (undefined values)"


def known_issue(program, ref, failure):
    """A short name of the known item this failure is, or None."""
    if failure.kind in ("value", "grad") and _writes_through_an_alias(program):
        return ALIASED_WRITE
    return None


def _dense(t):
    """torch's is_non_overlapping_and_dense."""
    order = sorted(range(t.dim()), key=lambda d: t.stride(d))
    acc = 1
    for d in order:
        if t.shape[d] != 1:
            if t.stride(d) != acc:
                return False
            acc *= t.shape[d]
    return True


def _writes_through_an_alias(program):
    """Whether torch, running `program`, makes an in-place write (a method ending in '_') whose tensor operand
    shares memory with the target where torch's overlap check cannot tell (one of them is not dense)."""
    try:
        run = Interpreter(torch, program)
        for s in program.steps:
            if s.kind == "method" and s.name.endswith("_") and s.args and isinstance(s.args[0], Ref):
                target = run.env[s.args[0].i]
                for a in s.args[1:]:
                    if isinstance(a, Ref):
                        other = run.env[a.i]
                        if other is not target and np.shares_memory(target.detach().numpy(), other.detach().numpy()) \
                                and not (_dense(target) and _dense(other)):
                            return True
            run.step(s)
    except Exception:  # the program's own error ends it; what ran before counts
        return False
    return False

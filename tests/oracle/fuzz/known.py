"""Failures recognized as a known item, counted apart in reports (still counted, never skipped).

Issue 13's items that the first fuzz runs met are fixed; the first item left is one where torch defines no result:
an in-place op whose tensor operand shares memory with the tensor it writes, in a layout torch's overlap check
cannot judge (either is not dense: its get_overlap_status says TOO_HARD and it goes on). The values then depend
on the order torch's loops read and write memory (vector widths, unrolling), which its documentation leaves
undefined; numgrad reads every input before it writes. Only value and gradient differences are recognized, and
only in a program that made such a write.

The second is also undefined in torch: an in-place integer division or remainder (floor_divide_, remainder_, fmod_)
by zero raises ZeroDivisionError from inside its kernel, after writing part of the result (how much depends on its
loop chunking); numgrad checks the divisor before writing. Only value differences of the variables sharing the
target's memory are recognized, and only when torch raised that error at that step.

The third is rounding: torch sums float32 in float32 in an order set by the CPU's vector width (AVX2 or AVX512),
numgrad in double, so a sum may differ in its last place; an ill-conditioned later step (tan of 186, exp of a
large value) multiplies that beyond the tolerance. The runner accepts such a forward value when torch's own op
on numgrad's inputs gives numgrad's result (rounding carried); the gradient through the same step is amplified
alike, so a grad difference is this item when the same run carried a forward difference at least a tenth as
large as the grad's (a wrong gradient is off by far more than the rounding it carries).

The fourth is the sign bit of a NaN that an invalid operation made (the log of a negative number, 0/0): IEEE 754
leaves it unspecified, and it differs between torch's own vectorized (Sleef: +NaN) and scalar (libm: -NaN on x86)
loops; numgrad's kernels call libm. Only signbit reads it: a value difference of a signbit step is this item when
torch's input to it is NaN at the first position that differs.

The fifth is torch's own bug: an internal assert that fails ("INTERNAL ASSERT FAILED ... please report a bug to
PyTorch", index_reduce's float16 product without self, say) where numgrad computes the result. Only an error-type
difference where numgrad raised nothing is recognized.

The sixth is torch's gradient of hardtanh, relu6, hardshrink and softshrink at a NaN input: its vectorized loop's
compare and blend give 0, its scalar loop (the tail past the last full vector) gives the incoming gradient, so the
value depends on the element's position and the CPU's vector width (8 NaNs of float64 under AVX512: all 0; 7: all
passed on; 24 float32: 16 zeros, then 8 passed on). numgrad passes the gradient on everywhere, the scalar rule
(and torch's CUDA kernels'). Only a grad difference is recognized, and only in a program with one of these steps
whose input in torch holds a NaN."""
import ast
import re

import numpy as np
import torch

from .program import Interpreter, Ref

ALIASED_WRITE = "in-place write through an operand aliasing it in a layout torch does not check (undefined values)"
PARTIAL_WRITE = "in-place integer division by zero: torch raises after writing part of the result (undefined values)"
AMPLIFIED_ROUNDING = "a last-place difference (torch sums float32 in float32) amplified by an ill-conditioned step"
NAN_SIGN = "signbit of a NaN made by an invalid operation (its sign is unspecified, torch's loops differ)"
TORCH_ASSERT = "torch fails an internal assert (a bug torch asks to be reported); numgrad computes the result"
NAN_CLAMP_GRADIENT = "hardtanh's or a shrink's gradient at a NaN input (torch's vectorized loop gives 0, its scalar " \
    "tail g)"


def known_issue(program, ref, failure):
    """A short name of the known item this failure is, or None."""
    if failure.kind in ("value", "grad") and _writes_through_an_alias(program):
        return ALIASED_WRITE
    if failure.kind == "value" and _partly_written_before_error(program, ref, failure):
        return PARTIAL_WRITE
    if failure.kind == "grad" and failure.carried > 0 and failure.gap <= 10 * failure.carried:
        return AMPLIFIED_ROUNDING
    if failure.kind == "value" and _signbit_of_nan(program, failure):
        return NAN_SIGN
    if failure.kind == "error-type" and "INTERNAL ASSERT FAILED" in failure.detail and \
            failure.detail.endswith("numgrad no error"):
        return TORCH_ASSERT
    if failure.kind == "grad" and _hardtanh_of_nan(program):
        return NAN_CLAMP_GRADIENT
    return None


def _hardtanh_of_nan(program):
    """Whether a hardtanh, relu6, hardshrink or softshrink step (function, method or in-place form) reads a NaN in
    torch's run."""
    try:
        run = Interpreter(torch, program)
        for s in program.steps:
            if s.name.split(".")[-1].rstrip("_") in _NAN_BLENDING and s.args and isinstance(s.args[0], Ref) \
                    and bool(torch.isnan(run.env[s.args[0].i].detach()).any()):
                return True
            run.step(s)
    except Exception:  # noqa: BLE001 - the program's own error ends it; what ran before counts
        return False
    return False


_NAN_BLENDING = ("hardtanh", "relu6", "hardshrink", "softshrink")  # the sixth item's ops


def _signbit_of_nan(program, failure):
    """Whether the differing value is a signbit step's and torch's input to it is NaN where they first differ."""
    m = re.match(r"v\d+ \(.*first at (\([\d, ]*\))", failure.detail)
    k = failure.step
    if not m or not isinstance(k, int) or program.steps[k].name != "signbit" or \
            not isinstance(program.steps[k].args[0], Ref):
        return False
    try:
        run = Interpreter(torch, program)
        for step in program.steps[:k]:
            run.step(step)
        return bool(torch.isnan(run.env[program.steps[k].args[0].i].detach()[ast.literal_eval(m.group(1))]))
    except Exception:  # noqa: BLE001 - a program torch cannot replay is not this item
        return False


def _partly_written_before_error(program, ref, failure):
    """Whether torch's run ended with ZeroDivisionError at an in-place step and the differing variable shares
    memory with that step's target."""
    if ref.error is None or ref.error[1] is not RuntimeError or ref.error[2] != "ZeroDivisionError":
        return False
    k = ref.error[0]
    if not isinstance(k, int):
        return False
    s = program.steps[k]
    m = re.match(r"v(\d+) ", failure.detail)
    if not (s.kind == "method" and s.name.endswith("_") and isinstance(s.args[0], Ref) and m):
        return False
    try:
        run = Interpreter(torch, program)
        for step in program.steps[:k]:
            run.step(step)
        target, var = run.env[s.args[0].i], run.env[int(m.group(1))]
        return np.shares_memory(target.detach().numpy(), var.detach().numpy())
    except Exception:  # noqa: BLE001 - a program torch cannot replay is not this item
        return False


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

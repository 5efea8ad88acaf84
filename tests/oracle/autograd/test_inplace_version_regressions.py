"""Regressions found by the hardening probe, each against torch, fused and unfused: an in-place op whose
other operand is the tensor it overwrites (a.mul_(a), a.div_(a[0])) saved that operand at its old version,
so backward raises torch's "modified by an inplace operation" error instead of giving a number; a fresh
no_grad()'s __exit__ turns grad mode off, as torch's does."""
import pytest
import torch

import numgrad
from helpers.outcomes import outcome


def _grad_of(op):
    def run(L):
        x = L.tensor([1.0, 2.0, 3.0], requires_grad=True)
        op(x * 1).sum().backward()
        return x.grad
    return run


CASES = {
    "a.mul_(a)": _grad_of(lambda a: a.mul_(a)),
    "a.div_(a[0])": _grad_of(lambda a: a.div_(a[0])),
    "a.mul_(a.view(3))": _grad_of(lambda a: a.mul_(a.view(3))),
    "a.add_(a) * a": _grad_of(lambda a: a.add_(a) * a),
    "a.mul_(b) then b used": _grad_of(lambda a: a.mul_(a * 2)),
    "a.pow_(a)": _grad_of(lambda a: a.pow_(a)),
}


@pytest.mark.parametrize("fusion", [True, False])
@pytest.mark.parametrize("case", sorted(CASES))
def test_in_place_op_reading_its_own_target(case, fusion):
    with numgrad.fusion(fusion):
        got = outcome(CASES[case], numgrad)
    assert got == outcome(CASES[case], torch)


def test_exit_of_a_fresh_no_grad_turns_grad_mode_off():
    for lib in (numgrad, torch):
        lib.no_grad().__exit__(None, None, None)
        assert not lib.is_grad_enabled()
        lib.set_grad_enabled(True)
        assert lib.is_grad_enabled()


def _stale_view(write):
    def run(L):
        x = L.tensor([1.0, 2.0, 3.0], requires_grad=True)
        a = x * 1
        v = a[0:2]
        write(L, a)
        seen = [v.grad_fn.name(), v.requires_grad, v.tolist()]
        (v * v).sum().backward()
        return seen + [x.grad.tolist()]
    return run


def _no_grad_write(L, a):
    with L.no_grad():
        a.mul_(10)


def _base_gains_history(L):
    b = L.zeros(3)
    w = b[1:]
    x = L.ones(3, requires_grad=True)
    b.copy_(x * 2)
    seen = [w.requires_grad, w.grad_fn.name()]
    (w * 3).sum().backward()
    return seen + [x.grad.tolist()]


def _param_view_after_a_step(L):
    p = L.nn.Parameter(L.tensor([1.0, 2.0, 3.0]))
    t = p.view(3, 1)
    with L.no_grad():
        p.sub_(0.5)
    (t * t).sum().backward()
    return [t.grad_fn.name(), p.grad.tolist()]


STALE_VIEWS = {
    "base multiplied in place": _stale_view(lambda L, a: a.mul_(2)),
    "base exp_": _stale_view(lambda L, a: a.exp_()),
    "another view written": _stale_view(lambda L, a: a[1:].mul_(3)),
    "base written under no_grad": _stale_view(_no_grad_write),
    "base copied from a tensor needing grad": _base_gains_history,
    "a view of a parameter after an optimizer-like step": _param_view_after_a_step,
}


@pytest.mark.parametrize("fusion", [True, False])
@pytest.mark.parametrize("case", sorted(STALE_VIEWS))
def test_a_view_differentiates_its_memory_as_written_since(case, fusion):
    """A view made before its base (or another view of it) was written in place kept its old grad_fn and
    differentiated the values from before the write: a silently wrong gradient."""
    with numgrad.fusion(fusion):
        got = outcome(STALE_VIEWS[case], numgrad)
    assert got == outcome(STALE_VIEWS[case], torch)

"""Regressions found by the random nn.functional probe, one test per root cause, each against torch with
numgrad's fusion on and off."""
import pytest
import torch

import numgrad
from helpers.outcomes import outcome


def F(L):
    return L.nn.functional


def _with_grads(fn, *values, dtype=None):
    """fn over float leaves made from `values`; the result, then each leaf's gradient of its sum."""
    def run(L):
        xs = [L.tensor(v, dtype=dtype or L.float32, requires_grad=True) for v in values]
        out = fn(L, *xs)
        out.sum().backward()
        return (out.detach(),) + tuple(x.grad for x in xs)
    return run


def _same_as_torch(cases, name):
    for fusion in (True, False):
        with numgrad.fusion(fusion):
            got = outcome(cases[name], numgrad)
        assert got == outcome(cases[name], torch), (name, fusion)


LINEAR = {
    "(3, 1, 0) input, (0, 0) weight": _with_grads(lambda L, x, w, b: F(L).linear(x, w, b),
                                                  [[[]]] * 3, [], []),
    "(0, 3, 1) input": _with_grads(lambda L, x, w, b: F(L).linear(x, w, b), [[[1.0]] * 3][:0], [[1.0]] * 2,
                                   [1.0, 2.0]),
    "(2, 2, 0) input, (3, 0) weight": _with_grads(lambda L, x, w, b: F(L).linear(x, w, b), [[[], []]] * 2,
                                                  [[], [], []], [1.0, 2.0, 3.0]),
    "int (0, 3, 1) input": lambda L: F(L).linear(L.zeros(0, 3, 1, dtype=L.int64), L.ones(2, 1, dtype=L.int64),
                                                 L.ones(2, dtype=L.int64)),
    "1-d input, (1, 2) bias folds as torch's addmm": _with_grads(lambda L, x, b: F(L).linear(x, L.ones(2, 3), b),
                                                                [1.0, 2.0, 3.0], [[1.0, 2.0]]),
    "1-d input, (2, 1) bias": lambda L: F(L).linear(L.ones(3), L.ones(2, 3), L.ones(2, 1)),
    "bias of another dtype than the weight": lambda L: F(L).linear(L.ones(2, 3), L.ones(2, 3),
                                                                   L.ones(2, dtype=L.float64)),
    "1-d weight with a bias": lambda L: F(L).linear(L.ones(2, 3), L.ones(3), L.ones(2)),
    "3-d weight with a bias": lambda L: F(L).linear(L.ones(2, 3), L.ones(2, 2, 3), L.ones(2)),
    "0-d input": lambda L: F(L).linear(L.ones(()), L.ones(2, 3)),
}


@pytest.mark.parametrize("case", sorted(LINEAR))
def test_linear_folds_leading_dims_by_their_product_and_checks_as_addmm(case):
    """linear folded an input's leading dims with reshape(-1, k), which fails for k = 0 (torch multiplies the
    sizes out and computes an empty result and its gradients); a bias with one non-unit dim takes torch's
    addmm path for every rank (not an in-place add); addmm's dtype and rank checks come in its order."""
    _same_as_torch(LINEAR, case)

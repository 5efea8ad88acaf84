"""Regressions found by the hardening probe, each against torch: cross_entropy/nll_loss give ignored targets a
zero gradient (not NaN when all are ignored, nor -0.0) and take empty batches; softmax, log_softmax and
logsumexp over empty tensors; binary_cross_entropy refuses NaN inputs; mse_loss refuses integer and bool
operands; linear checks and broadcasts its bias as torch's; conv2d's padding='same' pads an odd total."""
import math
import os
import subprocess
import sys

import pytest
import torch

import numgrad
from helpers.outcomes import outcome


def _with_grads(loss_fn, *values):
    def run(L):
        xs = [L.tensor(v, requires_grad=True) for v in values]
        out = loss_fn(L, *xs)
        out.sum().backward()
        return (out.detach(),) + tuple(x.grad for x in xs)
    return run


def F(L):
    return L.nn.functional


CASES = {
    "cross_entropy, every target ignored": _with_grads(
        lambda L, x: F(L).cross_entropy(x, L.tensor([-100, -100])), [[1.0, 0.0], [0.0, 1.0]]),
    "cross_entropy, one target ignored": _with_grads(
        lambda L, x: F(L).cross_entropy(x, L.tensor([1, 0]), ignore_index=0), [[1.0, 0.0], [0.0, 1.0]]),
    "nll_loss sum, one ignored": _with_grads(
        lambda L, x: F(L).nll_loss(x, L.tensor([1, 0]), ignore_index=0, reduction="sum"), [[1.0, 0.0], [0.0, 1.0]]),
    "cross_entropy, empty batch": lambda L: F(L).cross_entropy(L.zeros(0, 3), L.zeros(0, dtype=L.int64)),
    "cross_entropy, empty batch, sum": lambda L: F(L).cross_entropy(L.zeros(0, 3), L.zeros(0, dtype=L.int64),
                                                                    reduction="sum"),
    "log_softmax of no rows": lambda L: L.zeros(0, 3).log_softmax(1),
    "softmax of empty rows": lambda L: L.zeros(3, 0).softmax(1),
    "softmax across no rows": lambda L: L.zeros(3, 0).softmax(0),
    "softmax gradient, empty": _with_grads(lambda L, x: x.softmax(1), [[], []]),
    "logsumexp of nothing": lambda L: L.zeros(0).logsumexp(0),
    "logsumexp of empty rows": lambda L: L.zeros(2, 0).logsumexp(1, keepdim=True),
    "logsumexp of no rows": lambda L: L.zeros(0, 2).logsumexp(1),
    "logsumexp of an empty int tensor": lambda L: L.zeros(0, dtype=L.int64).logsumexp(0),
    "binary_cross_entropy of NaN": lambda L: F(L).binary_cross_entropy(L.tensor([math.nan]), L.tensor([1.0])),
    "mse_loss of ints": lambda L: F(L).mse_loss(L.ones(2, dtype=L.int64), L.ones(2, dtype=L.int64)),
    "mse_loss of bools": lambda L: F(L).mse_loss(L.ones(2, dtype=L.bool), L.ones(2, dtype=L.bool)),
    "mse_loss float and int": lambda L: F(L).mse_loss(L.ones(2), L.ones(2, dtype=L.int64)),
    "linear, bias of the input's width": lambda L: F(L).linear(L.ones(2, 3), L.ones(2, 3), L.ones(3)),
    "linear, 1-d input, (1,) bias": lambda L: F(L).linear(L.ones(3), L.ones(2, 3), L.ones(1)),
    "linear, 1-d input, 2-d bias": lambda L: F(L).linear(L.ones(3), L.ones(2, 3), L.ones(2, 2)),
    "linear, per-row bias": _with_grads(lambda L, b: F(L).linear(L.ones(4, 3), L.ones(2, 3), b), [[1.0, 2.0]] * 4),
    "linear, (1,) bias": _with_grads(lambda L, b: F(L).linear(L.ones(4, 3), L.ones(2, 3), b), [1.0]),
    "linear, 3-d input, 2-d bias": _with_grads(lambda L, b: F(L).linear(L.ones(2, 4, 3), L.ones(2, 3), b),
                                               [[1.0, 2.0]] * 4),
    "linear, 0-d bias": _with_grads(lambda L, b: F(L).linear(L.ones(3), L.ones(2, 3), b), 1.0),
    "linear, 3-d input, wrong bias": lambda L: F(L).linear(L.ones(2, 2, 3), L.ones(2, 3), L.ones(3)),
    "conv2d same, even kernel": _with_grads(
        lambda L, x, w: F(L).conv2d(x, w, padding="same"),
        [[[[float(i + 4 * j) for i in range(4)] for j in range(4)]]], [[[[1.0, 2.0], [3.0, 4.0]]]]),  # integers: sums exact in any order
    "conv2d same, even kernel, dilation": lambda L: F(L).conv2d(L.arange(32.0).view(1, 2, 4, 4), L.ones(1, 2, 3, 2),
                                                                padding="same", dilation=(1, 2)),
    "Conv2d module same, (2, 4) kernel": lambda L: L.nn.Conv2d(2, 3, (2, 4), padding="same")(L.ones(1, 2, 5, 5)).shape,
}


@pytest.mark.parametrize("fusion", [True, False])
@pytest.mark.parametrize("case", sorted(CASES))
def test_nn_edges_as_torch(case, fusion):
    with numgrad.fusion(fusion):
        got = outcome(CASES[case], numgrad)
    assert got == outcome(CASES[case], torch)


@pytest.mark.parametrize("lib", ["numgrad", "torch"])
def test_same_padding_with_an_odd_total_warns_once_per_process_as_torch(lib):
    """In a fresh process: the first such convolution warns, the second does not (TORCH_WARN_ONCE)."""
    code = (f"import warnings, {lib} as L\n"
            "counts = []\n"
            "for _ in range(2):\n"
            "    with warnings.catch_warnings(record=True) as w:\n"
            "        warnings.simplefilter('always')\n"
            "        L.nn.functional.conv2d(L.ones(1, 1, 4, 4), L.ones(1, 1, 2, 2), padding='same')\n"
            "    counts.append(sum('even kernel lengths and odd dilation may require a zero-padded' in str(x.message)"
            " for x in w))\n"
            "print(counts)\n")
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=root,
                         env=dict(os.environ, PYTHONPATH=root))
    assert out.stdout.strip() == "[1, 0]"

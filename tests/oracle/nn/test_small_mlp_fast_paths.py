"""The small MLP step's shortcuts against torch at their edges: nll_loss and Linear skip checks their usual
arguments pass (each broken condition still raises torch's error, in torch's order), log_softmax's float32 and
float64 rows skip no_grad and the dtype conversion (half types, other dims and create_graph take the general
path), with fusion on and off."""
import numpy as np
import pytest
import torch

import numgrad
from helpers.outcomes import outcome


def F(L):
    return L.nn.functional


NLL = {
    "int32 target": lambda L: F(L).nll_loss(L.zeros(2, 3), L.tensor([0, 1], dtype=L.int32)),
    "float target": lambda L: F(L).nll_loss(L.zeros(2, 3), L.tensor([0.0, 1.0])),
    "target batch of 3 for 2 rows": lambda L: F(L).nll_loss(L.zeros(2, 3), L.tensor([0, 1, 2])),
    "2-d target": lambda L: F(L).nll_loss(L.zeros(2, 3), L.tensor([[0], [1]])),
    "weight of 2 for 3 classes": lambda L: F(L).nll_loss(L.zeros(2, 3), L.tensor([0, 1]), L.ones(2)),
    "weight of another dtype": lambda L: F(L).nll_loss(L.zeros(2, 3), L.tensor([0, 1]), L.ones(3).double()),
    "int64 input": lambda L: F(L).nll_loss(L.zeros(2, 3, dtype=L.int64), L.tensor([0, 1])),
    "target out of bounds": lambda L: F(L).nll_loss(L.zeros(2, 3), L.tensor([0, 3])),
    "weighted": lambda L: F(L).nll_loss(L.tensor([[-1.0, -2.0, -0.5], [-0.25, -3.0, -1.5]]), L.tensor([2, 0]),
                                        L.tensor([0.5, 2.0, 3.0])),
}

LINEAR = {
    "float64 bias": lambda L: F(L).linear(L.ones(2, 3), L.ones(4, 3), L.ones(4).double()),
    "float64 input": lambda L: F(L).linear(L.ones(2, 3).double(), L.ones(4, 3), L.ones(4)),
    "in_features 3 against 2": lambda L: F(L).linear(L.ones(2, 3), L.ones(4, 2), L.ones(4)),
    "3-d weight": lambda L: F(L).linear(L.ones(2, 3), L.ones(4, 3, 1), L.ones(4)),
    "1-d weight": lambda L: F(L).linear(L.ones(2, 3), L.ones(3), L.ones(1)),
    "bias of 3 for 4 outputs": lambda L: F(L).linear(L.ones(2, 3), L.ones(4, 3), L.ones(3)),
}


@pytest.mark.parametrize("case", sorted(NLL))
def test_nll_loss_outside_its_usual_arguments_is_torchs(case):
    _same_as_torch(NLL, case)


@pytest.mark.parametrize("case", sorted(LINEAR))
def test_linear_outside_its_usual_arguments_is_torchs(case):
    _same_as_torch(LINEAR, case)


def _softmax_step(L, dtype_name, dim, log, create_graph):
    """A softmax (log_softmax) of a leaf and the leaf's gradient of a weighted sum, with create_graph a second
    derivative too: [values, dtype names, the output's grad_fn name]."""
    dtype = getattr(L, dtype_name)
    x = L.tensor([[0.5, -1.25, 2.0, 0.0], [3.0, 1.0, -2.5, 0.75], [-0.5, -0.5, 4.0, 1.5]], dtype=dtype,
                 requires_grad=True)
    w = L.tensor([[1.0, -2.0, 0.5, 3.0]] * 3, dtype=dtype)
    out = (F(L).log_softmax if log else F(L).softmax)(x, dim)
    (g,) = L.autograd.grad((out * w).sum(), x, create_graph=create_graph)
    results = [out, g]
    if create_graph:
        results.append(L.autograd.grad((g * g).sum(), x)[0])
    return [r.detach().float().numpy() for r in results], [str(r.dtype) for r in results], out.grad_fn.name()


# torch's CPU kernels and numgrad's round a last bit differently here and there (a second derivative; a half
# type's gradient, whose sums cancel): each value within a few units of its dtype's last place at the values' scale
# (about 1)
_RTOL = {"float32": 1e-6, "float64": 1e-14, "float16": 4e-3, "bfloat16": 3e-2}


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
@pytest.mark.parametrize("dim", [1, 0])
@pytest.mark.parametrize("log", [True, False])
@pytest.mark.parametrize("create_graph", [False, True])
@pytest.mark.parametrize("fusion", [True, False])
def test_softmax_values_and_gradients_are_torchs(dtype, dim, log, create_graph, fusion):
    with numgrad.fusion(fusion):
        got = _softmax_step(numgrad, dtype, dim, log, create_graph)
    want = _softmax_step(torch, dtype, dim, log, create_graph)
    assert [d.replace("numgrad", "torch") for d in got[1]] == want[1] and got[2] == want[2]
    for g, w in zip(got[0], want[0]):
        np.testing.assert_allclose(g, w, rtol=_RTOL[dtype], atol=_RTOL[dtype])


def test_cross_entropy_step_names_torchs_nodes_and_values():
    def run(L):
        x = L.tensor([[0.5, -1.25, 2.0], [3.0, 1.0, -2.5], [-0.5, -0.5, 4.0], [1e-3, 7.0, -7.0]],
                     dtype=L.float64, requires_grad=True)
        loss = F(L).cross_entropy(x, L.tensor([2, 0, 1, 1]))
        loss.backward()
        return loss.detach().numpy(), x.grad.numpy(), loss.grad_fn.name(), loss.grad_fn.next_functions[0][0].name()
    got, want = run(numgrad), run(torch)
    assert got[2:] == want[2:] == ("NllLossBackward0", "LogSoftmaxBackward0")
    for g, w in zip(got[:2], want[:2]):
        np.testing.assert_allclose(g, w, rtol=1e-14, atol=0)


def _same_as_torch(cases, name):
    for fusion in (True, False):
        with numgrad.fusion(fusion):
            got = outcome(cases[name], numgrad)
        assert got == outcome(cases[name], torch), (name, fusion)

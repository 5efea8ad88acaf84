"""Second derivatives of the new ops: their backward formulas are tensor ops, so gradgradcheck holds in float64
(numgrad's own finite differences) and the double-backward values equal torch's."""
import numpy as np
import pytest
import torch

import numgrad

from helpers.op_compare import F64, rand

IDX = [[0, 1, 0, 2], [2, 2, 1, 0]]
OPS = [
    lambda lib, x: lib.cumsum(x, 1), lambda lib, x: lib.cumprod(x, 0), lambda lib, x: lib.logcumsumexp(x, 1),
    lambda lib, x: lib.cummax(x, 1).values, lambda lib, x: lib.diff(x, 2), lambda lib, x: lib.tril(x),
    lambda lib, x: lib.roll(x, 1, 1), lambda lib, x: lib.flip(x, (0,)), lambda lib, x: lib.rot90(x),
    lambda lib, x: x.repeat(2, 1), lambda lib, x: lib.diagonal(x, 1), lambda lib, x: lib.diag_embed(x),
    lambda lib, x: lib.trace(x[:, :3]), lambda lib, x: lib.sort(x, 1).values, lambda lib, x: lib.topk(x, 2).values,
    lambda lib, x: lib.median(x, 1).values, lambda lib, x: lib.einsum("ij,kj->ik", x, x),
    lambda lib, x: lib.kron(x, x[:1]), lambda lib, x: lib.cross(x[:, :3], x[:, 1:], dim=1),
    lambda lib, x: x[:, :3].scatter_reduce(1, lib.tensor(IDX), x, "mean"),
    lambda lib, x: x[:, :3].scatter_reduce(1, lib.tensor(IDX), x, "amax", include_self=False),
    lambda lib, x: x.index_add(1, lib.tensor([0, 2]), x[:, :2] * 2), lambda lib, x: lib.take(x, lib.tensor([0, 5, 5])),
    lambda lib, x: x.masked_scatter(x > 0, x * 3), lambda lib, x: x.index_fill(0, lib.tensor([1]), 2.0),
]


@pytest.mark.parametrize("fn", OPS)
def test_double_backward(fn):
    x = rand(2, 4, dtype=F64, seed=3) + np.array([[0.0, 0.1, 0.2, 0.3]])  # distinct values: ties have no 2nd order
    assert numgrad.testing.gradgradcheck(lambda t: fn(numgrad, t), (numgrad.tensor(x, requires_grad=True),))
    grads = []
    for lib in (torch, numgrad):
        t = lib.tensor(x, requires_grad=True)
        out = fn(lib, t)
        w = lib.tensor(rand(*out.shape, dtype=F64, seed=1))
        (g,) = lib.autograd.grad((out * out * w).sum(), t, create_graph=True)  # squared: g depends on t
        (gg,) = lib.autograd.grad((g * g).sum(), t, allow_unused=True)
        grads.append(None if gg is None else gg.detach().numpy())
    assert (grads[0] is None) == (grads[1] is None)
    if grads[0] is not None:
        np.testing.assert_allclose(grads[1], grads[0], rtol=1e-9, atol=1e-10)

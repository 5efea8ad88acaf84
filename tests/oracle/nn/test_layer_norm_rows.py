"""layer_norm's Numba row kernels against torch on both sides of their limit: rows whose sum of squares passes
it (1e30 in float32) take the NumPy path in torch's Welford order, the rest the vectorised row loops."""
import numpy as np
import pytest
import torch

import numgrad
from numgrad.kernels.dispatch import norm as dispatch_norm


def _rows(scale, dtype):
    rng = np.random.default_rng(7)
    return (rng.standard_normal((6, 64)) * scale).astype(dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("scale, kernel", [(1.0, True), (1e13, True), (1e15, False), (1e16, False)])
def test_layer_norm_matches_torch_on_either_side_of_the_row_limit(dtype, scale, kernel):
    x = _rows(scale, dtype)
    if dtype is np.float32:  # the limit is 1e300 in float64: every row here takes the kernel
        assert (dispatch_norm.layer_norm_rows(x, None, None, 1e-5) is not None) == kernel
    w = np.linspace(0.5, 1.5, 64).astype(dtype)
    b = np.linspace(-0.2, 0.2, 64).astype(dtype)
    g = np.random.default_rng(8).standard_normal(x.shape).astype(dtype)
    results = []
    for lib in (numgrad, torch):
        xs, ws, bs = (lib.tensor(a.copy(), requires_grad=True) for a in (x, w, b))
        out = lib.nn.functional.layer_norm(xs, (64,), ws, bs)
        out.backward(lib.tensor(g))
        results.append([t.detach().numpy().astype(np.float64) for t in (out, xs.grad, ws.grad, bs.grad)])
    tol = 2e-5 if dtype is np.float32 else 1e-12
    for ours, theirs in zip(*results):
        np.testing.assert_allclose(ours, theirs, rtol=tol, atol=tol * np.abs(theirs).max())

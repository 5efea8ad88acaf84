"""The softmax row kernels against torch: rows of every length around the vector width, nan, inf and
-inf rows, float64, and the same bits whatever the thread split."""
import numpy as np
import pytest
import torch

from numgrad.kernels.cpu import softmax, threads


def _rows(K, dtype, seed=0):
    return np.random.default_rng(seed).standard_normal((37, K)).astype(dtype) * 4


@pytest.mark.parametrize("log", [False, True])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("K", [1, 3, 15, 16, 17, 64, 1000, 1031])
def test_forward_and_backward_match_torch(K, dtype, log):
    x, g = _rows(K, dtype), _rows(K, dtype, 1)
    tx = torch.tensor(x, requires_grad=True)
    ty = (torch.log_softmax if log else torch.softmax)(tx, -1)
    ty.backward(torch.tensor(g))
    y = softmax.forward(x, log)
    tol = dict(rtol=2e-6, atol=1e-6) if dtype == np.float32 else dict(rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(y, ty.detach().numpy(), **tol)
    np.testing.assert_allclose(softmax.backward(g, y, log), tx.grad.numpy(), **{k: v * 8 for k, v in tol.items()})


@pytest.mark.parametrize("log", [False, True])
def test_nonfinite_rows_as_torch(log):
    x = _rows(40, np.float32)[:5].copy()
    x[0, 7] = np.nan
    x[1, :] = -np.inf
    x[2, 3] = np.inf
    x[3, 5] = -np.inf  # one -inf among finite values: a zero (or -inf) there, the rest as usual
    want = (torch.log_softmax if log else torch.softmax)(torch.tensor(x), -1).numpy()
    np.testing.assert_allclose(softmax.forward(x, log), want, rtol=2e-6, atol=2e-7)


def test_thread_split_does_not_change_bits(monkeypatch):
    x, g = _rows(1031, np.float32), _rows(1031, np.float32, 1)
    monkeypatch.setattr(threads, "PARALLEL_MIN", 1 << 40)
    y1, d1 = softmax.forward(x, False).copy(), softmax.backward(g, x, False).copy()
    monkeypatch.setattr(threads, "PARALLEL_MIN", 1)
    assert np.array_equal(softmax.forward(x, False), y1)
    assert np.array_equal(softmax.backward(g, x, False), d1)

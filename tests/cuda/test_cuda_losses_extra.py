"""The further losses on the GPU (Numba's simulator): values and gradients as on the CPU, results and gradients
on the GPU."""
import numpy as np
import pytest

import numgrad

F = numgrad.nn.functional
RNG = np.random.default_rng(0)
X, Y = RNG.normal(size=(4, 5)).astype(np.float32), RNG.normal(size=(4, 5)).astype(np.float32)
CLASSES = np.array([1, 4, 0, 2])
SIGNS = np.array([1.0, -1.0, 1.0, -1.0], np.float32)

CASES = {
    "smooth_l1": lambda a, b: F.smooth_l1_loss(a, b, beta=0.5),
    "huber": lambda a, b: F.huber_loss(a, b, reduction="sum", delta=0.7),
    "kl_div": lambda a, b: F.kl_div(a, b.exp(), reduction="batchmean"),
    "poisson": lambda a, b: F.poisson_nll_loss(a, b.abs(), full=True),
    "gaussian": lambda a, b: F.gaussian_nll_loss(a, b, b.abs() + 0.1),
    "cosine": lambda a, b: F.cosine_embedding_loss(a, b, numgrad.tensor(SIGNS, device=a.device)),
    "ranking": lambda a, b: F.margin_ranking_loss(a[:, 0], b[:, 0], numgrad.tensor(SIGNS, device=a.device)),
    "triplet": lambda a, b: F.triplet_margin_loss(a, b, b * 2),
    "multi_margin": lambda a, b: F.multi_margin_loss(a, numgrad.tensor(CLASSES, device=a.device), p=2),
    "ctc": lambda a, b: F.ctc_loss(a.reshape(4, 1, 5).log_softmax(2), numgrad.tensor([[1, 2]], device=a.device),
                                   [4], [2]),
}


@pytest.mark.parametrize("name", list(CASES))
def test_loss_on_the_gpu_matches_the_cpu(name):
    results = []
    for device in ("cpu", "cuda"):
        a = numgrad.tensor(X, device=device, requires_grad=True)
        b = numgrad.tensor(Y, device=device, requires_grad=True)
        loss = CASES[name](a, b)
        assert loss.device == a.device
        loss.backward()
        assert a.grad.device == a.device
        results.append((loss.detach().cpu().numpy(), a.grad.cpu().numpy()))
    for ours, theirs in zip(*results):
        np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=1e-6)

"""nn layers and losses on device='cuda' (Numba's simulator) against the same layers on the CPU: outputs,
grad_fn names, input and parameter gradients, running statistics; and the layers not ported yet."""
import numpy as np
import pytest

import numgrad
from numgrad import nn

F = nn.functional
LAYERS = [
    ("LayerNorm", lambda: nn.LayerNorm(6), (4, 6)),
    ("BatchNorm1d train", lambda: nn.BatchNorm1d(6), (4, 6)),
    ("BatchNorm1d eval", lambda: nn.BatchNorm1d(6).eval(), (4, 6)),
    ("Linear+GELU", lambda: nn.Sequential(nn.Linear(6, 5), nn.GELU()), (4, 6)),
    ("Linear+Tanh+Softmax", lambda: nn.Sequential(nn.Linear(6, 5), nn.Tanh(), nn.Softmax(1)), (4, 6)),
    ("LogSoftmax", lambda: nn.LogSoftmax(-1), (3, 6)),
    ("Sigmoid+Flatten", lambda: nn.Sequential(nn.Sigmoid(), nn.Flatten()), (2, 3, 2)),
]


def _pair(make, shape, seed=0):
    numgrad.manual_seed(seed)
    cpu = make()
    numgrad.manual_seed(seed)
    gpu = make().cuda()
    x = np.random.default_rng(seed).standard_normal(shape).astype(np.float32)
    return cpu, gpu, numgrad.tensor(x, requires_grad=True), numgrad.tensor(x, requires_grad=True, device="cuda")


def _close(gpu, cpu, rtol=1e-5, atol=1e-6):
    assert gpu.is_cuda and gpu.shape == cpu.shape and gpu.dtype == cpu.dtype
    np.testing.assert_allclose(gpu.detach().cpu().numpy(), cpu.detach().numpy(), rtol=rtol, atol=atol)


@pytest.mark.parametrize("label,make,shape", LAYERS, ids=[layer[0] for layer in LAYERS])
def test_layer_on_cuda_matches_the_cpu(label, make, shape):
    cpu, gpu, xc, xg = _pair(make, shape)
    yc, yg = cpu(xc), gpu(xg)
    _close(yg, yc)
    assert type(yg.grad_fn).__name__ == type(yc.grad_fn).__name__
    w = np.linspace(-1, 1, yc.numel(), dtype=np.float32).reshape(yc.shape)
    (yc * numgrad.tensor(w)).sum().backward()
    (yg * numgrad.tensor(w, device="cuda")).sum().backward()
    _close(xg.grad, xc.grad)
    for pc, pg in zip(cpu.parameters(), gpu.parameters()):
        _close(pg.grad, pc.grad)
    for bc, bg in zip(cpu.buffers(), gpu.buffers()):  # running statistics, updated on the GPU
        assert bg.is_cuda
        _close(bg, bc)


LOSSES = [
    ("mse_loss", lambda x, t: F.mse_loss(x, t)),
    ("l1_loss sum", lambda x, t: F.l1_loss(x, t, reduction="sum")),
    ("binary_cross_entropy", lambda x, t: F.binary_cross_entropy(x.sigmoid(), (t > 0).float())),
    ("binary_cross_entropy_with_logits", lambda x, t: F.binary_cross_entropy_with_logits(x, (t > 0).float())),
    ("smooth region", lambda x, t: ((x - t) ** 2).mean() + x.var() + x.std(0).sum()),
]


@pytest.mark.parametrize("label,loss", LOSSES, ids=[c[0] for c in LOSSES])
def test_loss_on_cuda_matches_the_cpu(label, loss):
    rng = np.random.default_rng(1)
    x, t = rng.standard_normal((5, 3)).astype(np.float32), rng.standard_normal((5, 3)).astype(np.float32)
    results = []
    for device in ("cpu", "cuda"):
        xt = numgrad.tensor(x, requires_grad=True, device=device)
        out = loss(xt, numgrad.tensor(t, device=device))
        out.backward()
        results.append((out, xt.grad))
    (oc, gc), (og, gg) = results
    _close(og, oc)
    assert type(og.grad_fn).__name__ == type(oc.grad_fn).__name__
    _close(gg, gc)


def test_dropout_on_cuda_keeps_or_scales_each_element():
    x = numgrad.ones(200, device="cuda", requires_grad=True)
    y = F.dropout(x, 0.25)
    assert y.is_cuda and type(y.grad_fn).__name__ == "MulBackward0"
    values = set(y.detach().cpu().numpy().tolist())
    assert values == {0.0, float(np.float32(1 / 0.75))}
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.cpu().numpy(), y.detach().cpu().numpy())


def test_prod_without_zeros_on_cuda():
    rng = np.random.default_rng(2)
    x = rng.uniform(0.5, 1.5, (3, 4))
    results = []
    for device in ("cpu", "cuda"):
        t = numgrad.tensor(x, requires_grad=True, device=device)
        out = t.prod(1)
        out.sum().backward()
        results.append((out, t.grad))
    _close(results[1][0], results[0][0], rtol=1e-12)
    _close(results[1][1], results[0][1], rtol=1e-12)


@pytest.mark.parametrize("make,shape", [(lambda: nn.Conv2d(1, 2, 3), (1, 1, 5, 5)),
                                        (lambda: nn.MaxPool2d(2), (1, 1, 4, 4))], ids=["Conv2d", "MaxPool2d"])
def test_layers_not_ported_raise_a_clear_error(make, shape):
    layer = make().cuda()
    with pytest.raises(NotImplementedError, match="not implemented for CUDA tensors yet"):
        layer(numgrad.randn(*shape, device="cuda"))

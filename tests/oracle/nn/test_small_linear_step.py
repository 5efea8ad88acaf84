"""The small first-order paths of a classifier's training step against torch and against numgrad's general path:
AddmmBackward0's products and bias sum handed straight to the kernels (ops.linalg.backward_mm,
nn/_linear._column_sums), NllLossBackward0's scaling by NumPy's product (nn/_loss._times_scalar), and the
optimizer's reads of .grad and of the arrays through their slots (optim/_foreach._arrays)."""
import warnings

import numpy as np
import pytest
import torch

import numgrad
from tests.helpers.fusion import fused_at_every_size

# (batch, in, out): the usual sizes, and the products with an inner size of 1 (mm's single products) in each
# gradient: batch 1 (the weight's), out 1 (the input's), in 1
SHAPES = [(32, 64, 10), (1, 5, 3), (4, 6, 1), (5, 1, 4)]


def _step_grads(lib, x, w, b, y, backward="backward"):
    """The loss of cross_entropy(linear(x)) and the gradients of x, w and b; `backward`: "backward" (first
    order), or "create_graph" (autograd.grad with create_graph: the general path, a recorded graph)."""
    xs, ws, bs = (lib.tensor(a, requires_grad=True) for a in (x, w, b))
    loss = lib.nn.functional.cross_entropy(lib.nn.functional.linear(xs, ws, bs), lib.tensor(y))
    if backward == "backward":
        loss.backward()
        return loss, [xs.grad, ws.grad, bs.grad]
    return loss, list(lib.autograd.grad(loss, [xs, ws, bs], create_graph=True))


def _arrays(rng, shape, dtype, scale=1.0):
    n, k, m = shape
    x, w, b = (rng.standard_normal(s).astype(dtype) * scale for s in ((n, k), (m, k), (m,)))
    return x, w, b, rng.integers(0, m, n)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", SHAPES)
def test_first_order_step_matches_torch_and_the_general_path(dtype, shape):
    x, w, b, y = _arrays(np.random.default_rng(3), shape, dtype)
    loss, grads = _step_grads(numgrad, x, w, b, y)
    t_loss, t_grads = _step_grads(torch, x, w, b, y)
    assert loss.grad_fn.name() == t_loss.grad_fn.name() == "NllLossBackward0"
    assert [f.name() for f, _ in loss.grad_fn.next_functions] == ["LogSoftmaxBackward0"]
    tol = 1e-6 if dtype == np.float32 else 1e-14
    for g, t in zip(grads, t_grads):
        assert g.dtype == getattr(numgrad, str(t.dtype).split(".")[-1]) and g.shape == t.shape
        assert g.is_contiguous() and g.grad_fn is None and not g.requires_grad
        np.testing.assert_allclose(g.numpy(), t.numpy(), rtol=tol, atol=tol)
    # the general path (a recorded graph) computes each gradient with the same kernels: the same bits
    _, general = _step_grads(numgrad, x, w, b, y, backward="create_graph")
    for g, h in zip(grads, general):
        assert g.detach().numpy().tobytes() == h.detach().numpy().tobytes()


@pytest.mark.parametrize("shape", SHAPES[:2])
def test_first_order_step_is_silent_past_float32_range_as_torch(shape):
    # inf and NaN in the products, the bias sums and the loss's scaling: IEEE values, no NumPy warning
    x, w, b, y = _arrays(np.random.default_rng(5), shape, np.float32, scale=1e20)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        loss, grads = _step_grads(numgrad, x, w, b, y)
    t_loss, t_grads = _step_grads(torch, x, w, b, y)
    np.testing.assert_array_equal(loss.detach().numpy(), t_loss.detach().numpy())
    for g, t in zip(grads, t_grads):
        np.testing.assert_array_equal(np.isnan(g.numpy()), np.isnan(t.numpy()))


def test_a_gradient_hook_scales_the_loss_gradient_as_torch():
    # the reduced loss's incoming gradient is not always 1: a hook on the loss doubles it
    x, w, b, y = _arrays(np.random.default_rng(8), (6, 4, 3), np.float64)
    results = []
    for lib in (numgrad, torch):
        xs, ws, bs = (lib.tensor(a, requires_grad=True) for a in (x, w, b))
        loss = lib.nn.functional.cross_entropy(lib.nn.functional.linear(xs, ws, bs), lib.tensor(y))
        loss.register_hook(lambda g: g * 2)
        loss.backward()
        results.append([t.grad.numpy() for t in (xs, ws, bs)])
    for ours, theirs in zip(*results):
        np.testing.assert_allclose(ours, theirs, rtol=1e-14, atol=1e-14)


@pytest.mark.parametrize("fused", [False, True])
def test_sgd_steps_match_torch_with_and_without_pending_readers(fused):
    # with fusion at every size, the step reads a parameter that a pending result reads (lazy.READERS): the
    # step's arrays come through _data, which computes that result first; it keeps the values from before
    rng = np.random.default_rng(11)
    x, w, b, y = _arrays(rng, (8, 5, 3), np.float32)
    results = []
    for lib in (numgrad, torch):
        model = lib.nn.Linear(5, 3)
        with lib.no_grad():
            model.weight.copy_(lib.tensor(w))
            model.bias.copy_(lib.tensor(b))
        opt = lib.optim.SGD(model.parameters(), lr=0.1)
        with fused_at_every_size() if fused and lib is numgrad else warnings.catch_warnings():
            for _ in range(3):
                opt.zero_grad()
                lib.nn.functional.cross_entropy(model(lib.tensor(x)), lib.tensor(y)).backward()
                with lib.no_grad():
                    reader = model.weight * 2  # pending under fusion: it reads the weight's memory
                opt.step()
                assert all(p.grad is not None for p in model.parameters())
                read = reader.numpy().copy()
            opt.zero_grad()
        assert all(p.grad is None for p in model.parameters())
        results.append((read, model.weight.detach().numpy(), model.bias.detach().numpy()))
    for ours, theirs in zip(*results):
        np.testing.assert_allclose(ours, theirs, rtol=1e-6, atol=1e-6)

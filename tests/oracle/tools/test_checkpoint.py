"""numgrad.utils.checkpoint against torch.utils.checkpoint: the same gradients as without checkpointing (both
variants, dropout's mask redrawn alike), torch's node names, warnings and errors, and a lower peak of host
memory on a deep MLP."""
import os
import pathlib
import subprocess
import sys
import warnings

import numpy as np
import pytest
import torch

import numgrad
from numgrad.utils.checkpoint import CheckpointError, checkpoint, checkpoint_sequential


def _mlp(lib, depth=6, width=16, dropout=0.0):
    layers = []
    for _ in range(depth):
        layers += [lib.nn.Linear(width, width), lib.nn.Tanh()]
    layers.append(lib.nn.Dropout(dropout))
    return lib.nn.Sequential(*layers)


def _copy_weights(src, dst):
    with torch.no_grad():
        for (_, p), (_, q) in zip(src.named_parameters(), dst.named_parameters()):
            q.copy_(torch.tensor(p.detach().numpy()))


@pytest.mark.parametrize("use_reentrant", [False, True])
def test_gradients_equal_torchs_and_the_unchekpointed_run(use_reentrant):
    ng_model, t_model = _mlp(numgrad), _mlp(torch)
    _copy_weights(ng_model, t_model)
    x = np.random.default_rng(0).standard_normal((4, 16)).astype(np.float32)
    xs = numgrad.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    for lib, model, inp in ((numgrad, ng_model, xs[0]), (torch, t_model, xs[1])):
        out = lib.utils.checkpoint.checkpoint_sequential(model, 3, inp, use_reentrant=use_reentrant)
        (out * out).sum().backward()
    np.testing.assert_allclose(xs[0].grad.numpy(), xs[1].grad.numpy(), rtol=1e-5, atol=1e-6)
    for p, q in zip(ng_model.parameters(), t_model.parameters()):
        np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("use_reentrant", [False, True])
def test_dropout_recomputes_the_same_mask(use_reentrant):
    def grads(ckpt):
        numgrad.manual_seed(3)
        model = _mlp(numgrad, depth=2, dropout=0.5)
        x = numgrad.randn(8, 16, requires_grad=True)
        numgrad.manual_seed(4)
        out = checkpoint(model, x, use_reentrant=use_reentrant) if ckpt else model(x)
        after = numgrad.rand(3)  # the caller's random stream goes on as if nothing was recomputed
        out.sum().backward()
        return x.grad.numpy(), out.detach().numpy(), after.numpy()

    for a, b in zip(grads(True), grads(False)):
        np.testing.assert_array_equal(a, b)


def test_node_names_outputs_and_keyword_arguments_as_torchs():
    for lib in (numgrad, torch):
        x = lib.ones(3, requires_grad=True)
        y, n = lib.utils.checkpoint.checkpoint(lambda a: (a.sin(), 5), x, use_reentrant=True)
        assert type(y.grad_fn).__name__ == "CheckpointFunctionBackward" and n == 5
        y, n = lib.utils.checkpoint.checkpoint(lambda a: (a.sin(), 5), x, use_reentrant=False)
        assert y.grad_fn.name() == "SinBackward0"
        z = lib.utils.checkpoint.checkpoint(lambda a, scale: a.exp() * scale, x, use_reentrant=False, scale=2.0)
        z.sum().backward()
        np.testing.assert_allclose(x.grad.numpy(), 2 * np.e * np.ones(3), rtol=1e-6)
        with pytest.raises(ValueError, match="Unexpected keyword arguments: foo"):
            lib.utils.checkpoint.checkpoint(lambda a: a, x, use_reentrant=True, foo=1)


def test_warnings_as_torchs():
    for lib in (numgrad, torch):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            lib.utils.checkpoint.checkpoint(lambda a: a * 2, lib.ones(2, requires_grad=True))
            lib.utils.checkpoint.checkpoint(lambda a: a * 2, lib.ones(2), use_reentrant=True)
        messages = [str(w.message) for w in caught]
        assert any("the use_reentrant parameter should be passed explicitly" in m for m in messages), lib
        assert "None of the inputs have requires_grad=True. Gradients will be None" in messages, lib


def test_a_recomputation_that_saves_otherwise_raises():
    calls = []

    def unsteady(a):
        calls.append(1)
        return a.sin() if len(calls) == 1 else (a[:2] * a[:2]).sum() + a.sum()

    out = checkpoint(unsteady, numgrad.ones(3, requires_grad=True), use_reentrant=False)
    with pytest.raises(CheckpointError, match="Recomputed values for the following tensors have different metadata"):
        out.sum().backward()
    assert issubclass(CheckpointError, RuntimeError)


PEAK_PROBE = """
import sys, tracemalloc, numgrad
from numgrad.utils.checkpoint import checkpoint_sequential

def peak(segments):
    numgrad.manual_seed(0)
    model = numgrad.nn.Sequential(*[m for _ in range(16) for m in (numgrad.nn.Linear(256, 256), numgrad.nn.Tanh())])
    x = numgrad.randn(4096, 256, requires_grad=True)
    tracemalloc.start()
    out = checkpoint_sequential(model, segments, x, use_reentrant=False) if segments else model(x)
    out.sum().backward()
    high = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return high, float(x.grad.abs().sum())

peak(int(sys.argv[1]))  # kernels compile (and allocate) on the first run
print(*peak(int(sys.argv[1])))
"""


def test_checkpointing_lowers_the_peak_memory_of_a_deep_mlp():
    """16 Linear(256)+Tanh layers on a batch of 4096, peak host memory of forward + backward (tracemalloc,
    the buffer pool off so that every array counts): 72 MB plain, 39 MB in 4 checkpointed segments."""
    env = dict(os.environ, NUMGRAD_POOL_MAX_BYTES="0", PYTHONPATH=str(pathlib.Path(numgrad.__file__).parents[1]))
    runs = {}
    for segments in (0, 4):
        out = subprocess.run([sys.executable, "-c", PEAK_PROBE, str(segments)], capture_output=True, text=True,
                             env=env, timeout=300)
        assert out.returncode == 0, out.stderr
        high, grad = out.stdout.split()
        runs[segments] = int(high), float(grad)
    assert runs[4][1] == pytest.approx(runs[0][1], rel=1e-5)
    assert runs[4][0] < 0.6 * runs[0][0], {k: v[0] / 2**20 for k, v in runs.items()}

"""pytest-benchmark: one training step (forward, cross-entropy, backward, optimizer step) of an MLP and of a
small CNN, numgrad and torch eager side by side on the same weights and data (compare by group).

Three thread pools share the cores in one process (numpy's OpenBLAS, Numba's OpenMP layer, torch's OpenMP);
with the default spin-waiting they slow each other, torch most. Measured on 2 cores (median ms, numgrad/torch):
default env: MLP+SGD 212/194 (1.09x), MLP+Adam 208/280 (0.74x), CNN+SGD 428/260 (1.65x);
OMP_WAIT_POLICY=passive OPENBLAS_NUM_THREADS=1: MLP+SGD 20.1/13.5 (1.49x), CNN+SGD 79/32 (2.48x).
Report both; the second is the fair comparison."""
import numpy as np
import pytest


def mlp(lib):
    nn = lib.nn
    return nn.Sequential(nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(), nn.Linear(512, 10))


def cnn(lib):
    nn = lib.nn
    return nn.Sequential(nn.Conv2d(1, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Flatten(), nn.Linear(32 * 7 * 7, 10))


MODELS = {
    # name: (builder, input shape)
    "MLP step (batch 256, 784-512-512-10)": (mlp, (256, 784)),
    "CNN step (batch 64, 1x28x28, two conv layers)": (cnn, (64, 1, 28, 28)),
}


def _same_model(lib, build):
    """The model with torch's initial weights for a fixed seed, in either library."""
    import torch
    torch.manual_seed(0)
    reference = build(torch)
    model = build(lib)
    if lib is not torch:
        model.load_state_dict({k: v.numpy() for k, v in reference.state_dict().items()})
    return model


@pytest.mark.parametrize("optimizer", ["SGD", "Adam"])
@pytest.mark.parametrize("workload", list(MODELS))
def test_training_step(benchmark, lib, workload, optimizer):
    build, shape = MODELS[workload]
    model = _same_model(lib, build)
    rng = np.random.default_rng(0)
    x = lib.tensor(rng.standard_normal(shape).astype(np.float32))
    y = lib.tensor(rng.integers(0, 10, shape[0]))
    opt = lib.optim.SGD(model.parameters(), lr=0.01, momentum=0.9) if optimizer == "SGD" else \
        lib.optim.Adam(model.parameters(), lr=1e-3)
    benchmark.group = f"{workload}, {optimizer}"

    def step():
        opt.zero_grad()
        loss = lib.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return loss

    loss = benchmark(step)
    assert np.isfinite(loss.item())

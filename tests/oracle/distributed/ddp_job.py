"""Run by test_distributed.py under `mpiexec -n 2 python -m mpi4py`: DDP on half batches gives the parameters
that one process gets on the full batch (an MLP with SGD momentum, a convnet with Adam), also with no_sync
gradient accumulation and unused parameters; rank 0 checks."""
import sys

import numpy as np

import numgrad
import numgrad.distributed as dist
import numgrad.nn as nn
import numgrad.nn.functional as F
from numgrad.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group("gloo")
rank, size = dist.get_rank(), dist.get_world_size()


class Branchy(nn.Module):
    """An MLP with a head that only some steps use (find_unused_parameters)."""

    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(6, 16), nn.Tanh(), nn.Linear(16, 3))
        self.spare = nn.Linear(6, 3)

    def forward(self, x, use_spare=False):
        y = self.body(x)
        return y + self.spare(x) if use_spare else y


def convnet():
    return nn.Sequential(nn.Conv2d(1, 4, 3), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(), nn.Linear(4 * 3 * 3, 3))


def batches(shape, steps, seed):
    rng = np.random.default_rng(seed)
    return [(rng.standard_normal((8,) + shape).astype(np.float32), rng.integers(0, 3, 8)) for _ in range(steps)]


def train(make, opt, data, distributed, accumulate=1, spare_steps=(), **ddp):
    numgrad.manual_seed(rank if distributed else 0)  # ranks start apart: DDP broadcasts rank 0's weights
    model = make()
    if distributed:
        numgrad.manual_seed(0)
        model = make() if rank == 0 else model
        model = DDP(model, **ddp)
    optimizer = opt(model.parameters())
    for step, (x, y) in enumerate(data):
        optimizer.zero_grad()
        chunks = np.array_split(np.arange(len(x)), accumulate)
        for k, idx in enumerate(chunks):
            if distributed:
                idx = np.array_split(idx, size)[rank]
            xs, ys = numgrad.tensor(x[idx]), numgrad.tensor(y[idx])
            last = k == len(chunks) - 1
            ctx = model.no_sync() if distributed and not last else _nothing()
            with ctx:
                kw = {"use_spare": step in spare_steps} if spare_steps else {}
                loss = F.cross_entropy(model(xs, **kw), ys) / accumulate
                loss.backward()
        optimizer.step()
    module = model.module if distributed else model
    return {name: p.detach().numpy().copy() for name, p in module.named_parameters()}


class _nothing:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def compare(name, got, want):
    if rank != 0:
        return
    for key in want:
        np.testing.assert_allclose(got[key], want[key], rtol=2e-5, atol=2e-6, err_msg=f"{name}: {key}")
    print(f"{name}: 2 ranks on half batches == 1 process on the full batch", flush=True)


mlp = lambda: nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 3))  # noqa: E731
sgd = lambda ps: numgrad.optim.SGD(ps, lr=0.1, momentum=0.9)  # noqa: E731
adam = lambda ps: numgrad.optim.Adam(ps, lr=1e-2)  # noqa: E731
data = batches((6,), 4, 1)
compare("MLP SGD", train(mlp, sgd, data, True), train(mlp, sgd, data, False) if rank == 0 else None)
compare("MLP no_sync x2", train(mlp, sgd, data, True, accumulate=2), train(mlp, sgd, data, False, accumulate=2)
        if rank == 0 else None)
cdata = batches((1, 8, 8), 3, 2)
compare("convnet Adam", train(convnet, adam, cdata, True, bucket_cap_mb=0.0005),
        train(convnet, adam, cdata, False) if rank == 0 else None)
compare("unused head", train(Branchy, sgd, data, True, spare_steps=(1, 3), find_unused_parameters=True),
        train(Branchy, sgd, data, False, spare_steps=(1, 3)) if rank == 0 else None)
# without find_unused_parameters a parameter left out of the loss stops the next forward with torch's error
model = DDP(Branchy())
F.cross_entropy(model(numgrad.ones(2, 6)), numgrad.tensor([0, 1])).backward()
try:
    model(numgrad.ones(2, 6))
except RuntimeError as e:
    assert "Expected to have finished reduction in the prior iteration" in str(e)
else:
    raise AssertionError("an unused parameter went unnoticed")
assert list(model.state_dict())[0].startswith("module.")
dist.destroy_process_group()
print(f"rank {rank}: DDP OK", flush=True)
sys.exit(0)

"""The benchmark's workloads, each written once for any library with torch's API (torch or numgrad)."""
import typing

import numpy as np


def chain(lib, x):
    y = x * x
    z = (y + 1) * y
    s = z.sum()
    s.backward()
    return s


def gelu_tanh(lib, x):
    g = 0.5 * x * (1 + lib.tanh(0.79788456 * (x + 0.044715 * x ** 3)))
    s = g.sum()
    s.backward()
    return s


def reductions(lib, x):
    s = (x.sum(1) ** 2).mean() + x.max()
    s.backward()
    return s


def softmax(lib, x, w):
    s = (lib.softmax(x, -1) * w).sum()
    s.backward()
    return s


def _cross_entropy(lib, logits, y):
    nn = getattr(lib, "nn", None)
    if nn is not None and hasattr(nn, "functional") and hasattr(nn.functional, "cross_entropy"):
        return nn.functional.cross_entropy(logits, y)
    return -logits.log_softmax(1).gather(1, y.reshape(-1, 1)).mean()


def mlp_step(lib, x, y, *params, lr=0.01):
    """One SGD step of a 784-512-512-10 ReLU MLP with cross-entropy."""
    w1, b1, w2, b2, w3, b3 = params
    h = (x @ w1 + b1).relu()
    h = (h @ w2 + b2).relu()
    loss = _cross_entropy(lib, h @ w3 + b3, y)
    for p in params:
        p.grad = None
    loss.backward()
    with lib.no_grad():
        for p in params:
            p.sub_(p.grad * lr)
    return loss


def _mlp_inputs(rng):
    def uniform(fan_in, shape):  # torch's Linear init bounds
        bound = 1 / np.sqrt(fan_in)
        return rng.uniform(-bound, bound, shape).astype(np.float32)
    x = rng.standard_normal((256, 784)).astype(np.float32)
    y = rng.integers(0, 10, 256).astype(np.int64)
    params = [uniform(784, (784, 512)), uniform(784, 512), uniform(512, (512, 512)), uniform(512, 512),
              uniform(512, (512, 10)), uniform(512, 10)]
    return [x, y] + params


class Workload(typing.NamedTuple):
    fn: typing.Callable
    inputs: typing.Callable  # rng -> numpy arrays (the float32 ones after the first `plain` require grad)
    plain: int  # how many leading inputs need no gradient
    reps: int
    quick_reps: int


WORKLOADS = {
    "chain 10M": Workload(chain, lambda r: [r.standard_normal(10_000_000).astype(np.float32)], 0, 10, 3),
    "gelu-tanh 10M": Workload(gelu_tanh, lambda r: [r.standard_normal(10_000_000).astype(np.float32)], 0, 10, 3),
    "chain 3 (tiny)": Workload(chain, lambda r: [r.standard_normal(3).astype(np.float32)], 0, 3000, 500),
    "reductions 4096x4096": Workload(reductions, lambda r: [r.standard_normal((4096, 4096)).astype(np.float32)],
                                     0, 10, 3),
    "MLP step 256x784": Workload(mlp_step, _mlp_inputs, 2, 50, 10),
    "softmax 4096x1024": Workload(softmax, lambda r: [r.standard_normal((4096, 1024)).astype(np.float32),
                                                      r.standard_normal((4096, 1024)).astype(np.float32)], 0, 20, 5),
}


def make_inputs(lib, workload, seed=0):
    arrays = workload.inputs(np.random.default_rng(seed))
    return [lib.tensor(a) if i < workload.plain or a.dtype != np.float32 else lib.tensor(a, requires_grad=True)
            for i, a in enumerate(arrays)]


def run_step(lib, workload, inputs):
    for t in inputs:
        if t.requires_grad:
            t.grad = None
    return workload.fn(lib, *inputs)

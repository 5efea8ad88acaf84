"""A program gives the same bits on any thread and beside any number of other threads: 2, 4 and 8 user
threads, fusion on and off (set the usual way, in the main thread, before the threads start), forward-only
and training programs, each compared bit for bit with the serial run in the main thread."""
import threading

import numpy as np
import pytest

import numgrad

SIZE = 520  # 520 x 520 elements: above threads.PARALLEL_MIN, so the kernels split over the pool's threads


def _inputs():
    rng = np.random.default_rng(36)
    return (rng.standard_normal((SIZE, SIZE)).astype(np.float32), rng.standard_normal((SIZE, SIZE)),
            rng.standard_normal((7, 5)))


def _forward(x32, x64, small):
    """The probe's program: elementwise chains and folds, row sums, mean, max, in-place mul_/add_, and a
    small float64 tensor through .numpy() and from_numpy; float64 folds too (their order is the first to
    show a different kernel)."""
    x = numgrad.from_numpy(x32.copy())
    y = (x * 1.5 + 0.25).tanh() * x.exp().clamp(max=5.0) - x.sigmoid()
    outs = [y.sum(dim=1), y.mean(), (y * 2).max(), y.sum(dim=0), y.var(dim=1), y.norm()]
    y.mul_(1.0001).add_(x)
    outs += [y, y.sum()]
    d = numgrad.from_numpy(x64.copy())
    e = (d * 0.5).tanh() + d.sigmoid()
    outs += [e.sum(), e.mean(dim=1), e.std(dim=1), e.logsumexp(dim=1)]
    s = numgrad.from_numpy(small.copy())
    outs.append(numgrad.from_numpy(s.numpy() * 2).exp().sum())
    return [t.numpy().copy() for t in outs]


def _training(x32, x64, small):
    """A step of a small model's training, and the loss and gradients of the next one."""
    w = numgrad.from_numpy(x32[0].copy()).requires_grad_(True)
    v = numgrad.from_numpy(x64[:, 0].copy()).requires_grad_(True)
    x = numgrad.from_numpy(x32.copy())
    d = numgrad.from_numpy(x64.copy())
    seen = []
    for step in range(2):
        h = (x * w).tanh()  # a weight per column: broadcast elementwise work and its folds, no BLAS
        loss = h.square().mean() + (h * 0.5).sigmoid().sum(dim=1).var() + ((d * v).sin() * d).sum()
        loss.backward()
        seen += [loss.detach().numpy().copy(), w.grad.numpy().copy(), v.grad.numpy().copy()]
        with numgrad.no_grad():
            w.sub_(w.grad * 0.01)
            v.sub_(v.grad * 0.01)
        w.grad, v.grad = None, None
    return seen


def _on_threads(program, inputs, count):
    results, errors = [None] * count, []
    start = threading.Barrier(count)

    def run(k):
        try:
            start.wait()
            results[k] = program(*inputs)
        except Exception as exc:  # noqa: BLE001  re-raised in the test's thread
            errors.append(exc)

    workers = [threading.Thread(target=run, args=(k,)) for k in range(count)]
    for t in workers:
        t.start()
    for t in workers:
        t.join()
    if errors:
        raise errors[0]
    return results


@pytest.mark.parametrize("program", [_forward, _training], ids=["forward", "training"])
@pytest.mark.parametrize("fusion", [True, False], ids=["fused", "unfused"])
def test_threads_give_the_serial_runs_bits(program, fusion):
    inputs = _inputs()
    previous = numgrad.set_fusion(fusion)
    try:
        serial = program(*inputs)
        for count in (2, 4, 8):
            for k, result in enumerate(_on_threads(program, inputs, count)):
                differ = [i for i, (a, b) in enumerate(zip(serial, result)) if a.tobytes() != b.tobytes()]
                assert not differ, f"{count} threads: thread {k}'s results {differ} differ from the serial run's"
    finally:
        numgrad.set_fusion(previous)


def test_a_block_switches_fusion_in_its_thread_only():
    """`with numgrad.fusion(...)` is the current thread's; set_fusion also sets what new threads start with."""
    previous = numgrad.set_fusion(True)
    try:
        seen = {}
        with numgrad.fusion(False):
            worker = threading.Thread(target=lambda: seen.update(block=numgrad.is_fusion_enabled()))
            worker.start()
            worker.join()
            assert numgrad.is_fusion_enabled() is False
        numgrad.set_fusion(False)
        worker = threading.Thread(target=lambda: seen.update(set=numgrad.is_fusion_enabled()))
        worker.start()
        worker.join()
        assert seen == {"block": True, "set": False}
    finally:
        numgrad.set_fusion(previous)

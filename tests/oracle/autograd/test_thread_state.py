"""Grad mode, inference mode and saved-tensor hooks are per thread, as in torch: a mode entered in one
thread is not seen in another, and a new thread starts with torch's defaults. A fusion block (numgrad's own
switch) is per thread too; a new thread starts with set_fusion's last choice."""
import threading

import numpy as np
import torch

import numgrad


def _in_thread(fn):
    result, errors = {}, []

    def run():
        try:
            result.update(fn())
        except Exception as exc:  # noqa: BLE001  re-raised in the calling thread
            errors.append(exc)

    t = threading.Thread(target=run)
    t.start()
    t.join()
    if errors:
        raise errors[0]
    return result


def _observe(lib):
    def worker():
        x = lib.ones(2, requires_grad=True)
        seen = {"grad": lib.is_grad_enabled(), "inference": lib.is_inference_mode_enabled(),
                "records": (x * 2).requires_grad}
        with lib.no_grad():
            seen["inner"] = lib.is_grad_enabled()
        return seen

    seen = {}
    with lib.no_grad():
        seen["under_no_grad"] = _in_thread(worker)
        seen["main_after"] = lib.is_grad_enabled()
    with lib.inference_mode():
        seen["under_inference"] = _in_thread(worker)
        seen["main_inference"] = lib.is_inference_mode_enabled()
    lib.set_grad_enabled(False)
    try:
        seen["under_set_grad_enabled"] = _in_thread(worker)
    finally:
        lib.set_grad_enabled(True)
    return seen


def test_modes_are_per_thread_and_new_threads_start_with_defaults():
    assert _observe(numgrad) == _observe(torch)


def _hooks_seen(lib):
    packed = []

    def pack(t):
        packed.append(threading.current_thread().name)
        return t

    def worker():
        x = lib.ones(3, requires_grad=True)
        (x * x).sum().backward()
        return {"grad": x.grad.tolist()}

    with lib.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        out = _in_thread(worker)
        x = lib.ones(3, requires_grad=True)
        (x * x).sum().backward()
    return out, packed == [threading.current_thread().name] * len(packed) and len(packed) > 0


def test_saved_tensor_hooks_are_per_thread():
    ours, theirs = _hooks_seen(numgrad), _hooks_seen(torch)
    assert ours == theirs and ours[1]


def test_fusion_block_is_per_thread():
    """`with numgrad.fusion(...)` is this thread's; set_fusion also sets what new threads start with (so that a
    program gives the same bits on any thread: tests/oracle/autograd/test_thread_bits.py)."""
    with numgrad.fusion(not numgrad.is_fusion_enabled()):
        inside = numgrad.is_fusion_enabled()
        seen = _in_thread(lambda: {"fusion": numgrad.is_fusion_enabled()})
    assert seen == {"fusion": not inside}
    previous = numgrad.set_fusion(False)
    try:
        seen = _in_thread(lambda: {"fusion": numgrad.is_fusion_enabled()})
    finally:
        numgrad.set_fusion(previous)
    assert seen == {"fusion": False}


def test_threads_training_under_different_modes_match_their_single_thread_runs():
    def train(grad_enabled, seed):
        rng = np.random.default_rng(seed)
        w = numgrad.tensor(rng.standard_normal((4, 3)).astype(np.float32), requires_grad=True)
        x = numgrad.tensor(rng.standard_normal((8, 4)).astype(np.float32))
        losses = []
        with numgrad.set_grad_enabled(grad_enabled):
            for _ in range(20):
                loss = ((x @ w).tanh() ** 2).mean()
                losses.append(loss.item())
                if grad_enabled:
                    loss.backward()
                    with numgrad.no_grad():
                        w -= 0.1 * w.grad
                    w.grad = None
        return {"losses": losses, "w": w.detach().numpy().copy()}

    alone = [train(mode, seed) for seed, mode in enumerate((True, False, True, False))]
    results, errors = [None] * 4, []

    def run(i, mode):
        try:
            results[i] = train(mode, i)
        except Exception as exc:  # noqa: BLE001
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(i, mode)) for i, mode in enumerate((True, False, True, False))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    for got, want in zip(results, alone):
        assert got["losses"] == want["losses"]
        np.testing.assert_array_equal(got["w"], want["w"])

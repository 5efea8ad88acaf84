""".grad tensors a compiled step assigns (backward after zero_grad's set_to_none) and does not return, while the
caller keeps earlier ones: as in eager and torch, each call's .grad is a new tensor and every one kept keeps its
values; a .grad accumulated in place stays the same tensor. The replay writes a new .grad into memory nobody
holds (compile/slots.py) with no copy, and runs eager where it cannot (a .grad other recorded work reads)."""
import gc

import numpy as np
import pytest
import torch

import numgrad

SMALL, LARGE = 16, 1 << 15  # float32: 64 bytes, and 128 KiB (slots.MIN_BYTES for results is 64 KiB)


def _training(lib, n, zero, clip=False):
    """(w, opt, step): a step of (x * w).tanh().sum() and SGD; `zero` "inside" clears .grad in the step, "outside"
    leaves it to the caller; with `clip` the step clips the gradient (recorded work reading .grad)."""
    w = lib.tensor(np.linspace(-1, 1, n).astype(np.float32), requires_grad=True)
    opt = lib.optim.SGD([w], lr=0.1)

    def step(x):
        if zero == "inside":
            opt.zero_grad()
        loss = (x * w).tanh().sum()
        loss.backward()
        if clip:
            lib.nn.utils.clip_grad_norm_([w], 0.5)
        opt.step()
        return loss
    return w, opt, step


def _values(kept):
    return kept if isinstance(kept, np.ndarray) else kept.detach().numpy()


def _calls(lib, compiled, n, zero, hold, clip=False, calls=5):
    """Runs the step `calls` times keeping .grad as `hold` says (the last "tensor", its "numpy" array, "all" of
    them, or "none"); per call: (loss, w.grad's values, whether each .grad kept still has the values it had when
    kept, whether w.grad is one of them)."""
    w, opt, step = _training(lib, n, zero, clip)
    fn = numgrad.compile(step) if compiled else step
    kept, out = [], []  # [(the object kept, its values then)]
    for k in range(calls):
        if zero == "outside":
            opt.zero_grad()
        loss = fn(lib.tensor(np.linspace(0, 0.2 * (k + 1), n).astype(np.float32)))
        grad = w.grad
        out.append((loss.item(), grad.detach().numpy().copy(),
                    [np.array_equal(_values(obj), values) for obj, values in kept],
                    any(obj is grad for obj, _ in kept)))
        if hold != "none":
            obj = grad.numpy() if hold == "numpy" else grad
            kept = (kept if hold == "all" else []) + [(obj, grad.detach().numpy().copy())]
        del grad
    return fn, out


@pytest.mark.parametrize("hold", ["tensor", "numpy", "all"])
@pytest.mark.parametrize("zero", ["inside", "outside"])
@pytest.mark.parametrize("n", [SMALL, LARGE])
def test_a_kept_grad_keeps_its_values_and_each_call_gets_a_new_one(n, zero, hold):
    fn, got = _calls(numgrad, True, n, zero, hold)
    _, want = _calls(numgrad, False, n, zero, hold)
    _, ref = _calls(torch, False, n, zero, hold)
    for (loss, grad, unchanged, same), (e_loss, e_grad, e_unchanged, e_same), (t_loss, t_grad, *_) in \
            zip(got, want, ref):
        assert loss == e_loss and unchanged == e_unchanged and same == e_same
        np.testing.assert_array_equal(grad, e_grad)
        assert all(unchanged) and not same
        np.testing.assert_allclose(grad, t_grad, rtol=1e-5, atol=1e-7)
    (variant,) = fn.variants
    assert variant.hits == len(got) - 1, fn.eager_reason  # every call after the trace replays
    names = [getattr(getattr(e, "func", e), "__name__", "") for e in variant.entries]
    assert "_copy_into" not in names and "_host_copy" not in names  # the .grad is written, never copied


@pytest.mark.parametrize("n", [SMALL, LARGE])
def test_memory_is_reused_when_nobody_keeps_the_grad(n):
    fn, got = _calls(numgrad, True, n, "inside", "none")
    _, want = _calls(numgrad, False, n, "inside", "none")
    for (loss, grad, *_), (e_loss, e_grad, *_) in zip(got, want):
        assert loss == e_loss
        np.testing.assert_array_equal(grad, e_grad)
    (variant,) = fn.variants
    (slot,) = variant.slots
    assert len(slot.buffers) == 1  # (the trace's own buffer stays the leaf's first .grad)


def test_a_grad_accumulated_in_place_stays_the_same_tensor():
    results = []
    for compiled in (True, False):
        w, opt, step = _training(numgrad, LARGE, "none")
        fn = numgrad.compile(step) if compiled else step
        kept = None
        for k in range(4):
            opt.zero_grad(set_to_none=False)  # zeros in place: backward accumulates into the same tensor
            fn(numgrad.tensor(np.full(LARGE, 0.1 * (k + 1), np.float32)))
            if kept is not None:
                assert w.grad is kept  # as eager and torch: the .grad kept is the .grad, with the new values
            kept = w.grad
            results.append(w.grad.numpy().copy())
    for a, b in zip(results[:4], results[4:]):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("hold", ["tensor", "all"])
def test_a_grad_other_recorded_work_reads_runs_eager_while_kept(hold):
    fn, got = _calls(numgrad, True, SMALL, "outside", hold, clip=True)
    _, want = _calls(numgrad, False, SMALL, "outside", hold, clip=True)
    for (loss, grad, unchanged, same), (e_loss, e_grad, e_unchanged, e_same) in zip(got, want):
        assert (loss, unchanged, same) == (e_loss, e_unchanged, e_same)
        np.testing.assert_array_equal(grad, e_grad)
        assert all(unchanged)


def test_memory_filled_by_the_step_gets_its_value_in_every_buffer():
    """A prepared fill takes its value from its result as the trace left it: a result the user wrote in place,
    or a .grad of zeros (sign's backward) kept and written, leaves the next buffers' fills as eager's."""
    fill = numgrad.compile(lambda x: numgrad.full((LARGE,), 2.5))
    kept = []
    for k in range(4):
        out = fill(numgrad.tensor([1.0]))
        assert out.tolist() == numgrad.full((LARGE,), 2.5).tolist()
        out.mul_(k)  # the user's write into what they were given (the trace's own buffer first)
        kept.append(out)
    assert fill.variants[0].hits == 3
    for n in (SMALL, LARGE):
        w = numgrad.tensor(np.linspace(-1, 1, n).astype(np.float32), requires_grad=True)

        def step(w=w):
            w.grad = None
            w.sign().sum().backward()
        fn = numgrad.compile(step)
        grads = []
        for _ in range(4):
            fn()
            assert w.grad.tolist() == [0.0] * n
            grads.append(w.grad)
            w.grad.add_(7)  # kept and written: the next call's .grad is a new one, zeros again
        assert fn.variants[0].hits == 3
        assert all(g.tolist() == [7.0] * n for g in grads)


def test_a_kept_grad_keeps_its_values_whenever_the_garbage_collector_runs():
    """The trace's recorder held the arrays its recipes read through a reference cycle (a closure calling
    itself), so a .grad's reference count at the end of the trace depended on whether the cyclic garbage
    collector had run yet: when it ran after the trace, a .grad the caller kept looked free and a replay
    overwrote it (the test above failed now and then). Here it runs after each call, never during one."""
    w, opt, step = _training(numgrad, SMALL, "outside", clip=True)
    fn = numgrad.compile(step)
    kept = []
    gc.disable()
    try:
        for k in range(5):
            opt.zero_grad()
            fn(numgrad.tensor(np.linspace(0, 0.2 * (k + 1), SMALL).astype(np.float32)))
            kept.append((w.grad, w.grad.detach().numpy().copy()))
            gc.collect()
    finally:
        gc.enable()
    assert all(np.array_equal(g.detach().numpy(), values) for g, values in kept)
    assert len({id(g) for g, _ in kept}) == len(kept)  # a new .grad each call, as eager's

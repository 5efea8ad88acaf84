"""Prepared replays (numgrad.compile): kernels bound to the trace's arrays once, with no Python per replay but the
call. Each must give what eager gives on new values: one-element inputs read again, layer_norm's exact path
where a new row needs it, strided or cast inputs left to the recorded call."""
import numpy as np

import numgrad
from numgrad.compile.compiled import describe


def test_prepared_elementwise_replays_read_one_element_inputs_again():
    """Kernels bound once at the trace (an op's own kernel, a node's backward kernel) read a one-element input's
    new value at each replay, as eager does."""
    def step(lib, x, w, v, s):
        h = (x @ w) * s  # pending, then read by a matmul alone: the mul's own kernel
        loss = lib.relu(h @ v).sum()  # the mul's gradient comes from a matmul: its own backward kernel, g * s
        loss.backward()
        return loss

    rng = np.random.default_rng(8)
    x = numgrad.tensor(rng.standard_normal((16, 8)).astype(np.float32))
    arrays = [rng.standard_normal((8, 8)).astype(np.float32), rng.standard_normal((8, 3)).astype(np.float32)]
    fn = numgrad.compile(lambda *a: step(numgrad, *a))
    w, v, we, ve = (numgrad.tensor(a, requires_grad=True) for a in arrays + arrays)
    for value in [1.5, -0.5, 2.0, 0.25]:
        s = numgrad.tensor(np.array([value], np.float32))
        for t in (w, v, we, ve):
            t.grad = None
        a, e = fn(x, w, v, s), step(numgrad, x, we, ve, s)
        assert a.item() == e.item()
        np.testing.assert_array_equal(w.grad.numpy(), we.grad.numpy())
        np.testing.assert_array_equal(v.grad.numpy(), ve.grad.numpy())
    assert fn.variants[0].hits == 3, fn.eager_reason
    tape = describe(fn.variants[0], "step")
    assert "elementwise kernel mul (" in tape and "elementwise kernel mul_backward (" in tape, tape


def _load(x0, x, xe, *params):
    """New values for the compiled call's x and eager's (arguments that require grad, guarded by identity, so
    changed in place), and no gradients."""
    with numgrad.no_grad():
        x.copy_(numgrad.tensor(x0))
        xe.copy_(numgrad.tensor(x0))
    for t in (x, xe, *params):
        t.grad = None


def _norm_step(lib, x, w, b):
    loss = (lib.nn.functional.layer_norm(x, (32,), w, b) ** 2).sum()
    loss.backward()
    return loss


def test_layer_norm_replays_bound_rows_and_takes_the_exact_path_for_a_row_that_needs_it():
    rng = np.random.default_rng(9)
    params = [np.linspace(0.5, 1.5, 32).astype(np.float32), np.linspace(-0.2, 0.2, 32).astype(np.float32)]
    fn = numgrad.compile(lambda *a: _norm_step(numgrad, *a))
    w, b, we, be = (numgrad.tensor(a, requires_grad=True) for a in params + params)
    # x requires grad: an argument guarded by identity (as a parameter), its values changed in place
    x, xe = (numgrad.tensor(np.zeros((12, 32), np.float32), requires_grad=True) for _ in range(2))
    for k in range(4):
        x0 = rng.standard_normal((12, 32)).astype(np.float32)
        if k == 2:
            x0[3] *= 1e16  # past the kernel's limit: torch's Welford order, in eager and in the replay
        _load(x0, x, xe, w, b, we, be)
        a, e = fn(x, w, b), _norm_step(numgrad, xe, we, be)
        assert a.item() == e.item()
        for ours, eager in ((x, xe), (w, we), (b, be)):
            np.testing.assert_array_equal(ours.grad.numpy(), eager.grad.numpy())
    assert fn.variants[0].hits == 3, fn.eager_reason
    tape = describe(fn.variants[0], "step")
    assert "layer_norm rows" in tape and "layer_norm backward rows" in tape, tape


def test_strided_input_replays_the_recorded_call():
    """A transposed input would be bound as a copy of the trace's values: no prepared kernel then."""
    def step(lib, x, w, b):
        loss = (lib.nn.functional.layer_norm(x.t(), (16,), w, b) ** 2).sum()
        loss.backward()
        return loss

    rng = np.random.default_rng(10)
    params = [np.ones(16, np.float32), np.zeros(16, np.float32)]
    fn = numgrad.compile(lambda *a: step(numgrad, *a))
    w, b, we, be = (numgrad.tensor(a, requires_grad=True) for a in params + params)
    x, xe = (numgrad.tensor(np.zeros((16, 8), np.float32), requires_grad=True) for _ in range(2))
    for k in range(3):
        x0 = rng.standard_normal((16, 8)).astype(np.float32)
        _load(x0, x, xe, w, b, we, be)
        a, e = fn(x, w, b), step(numgrad, xe, we, be)
        assert a.item() == e.item()
        np.testing.assert_array_equal(x.grad.numpy(), xe.grad.numpy())
    assert fn.variants[0].hits == 2, fn.eager_reason
    assert "layer_norm rows" not in describe(fn.variants[0], "step")


def test_softmax_rows_replay_bound_forward_and_backward():
    def step(lib, x, w, mask):
        att = lib.softmax((x @ w).masked_fill(mask, float("-inf")), -1)  # a stored input: the plain row kernels
        loss = (lib.log_softmax(att @ w, -1) * 0.5).sum()  # att's gradient comes from a matmul: stored
        loss.backward()
        return loss

    rng = np.random.default_rng(12)
    mask = numgrad.tensor(np.triu(np.ones((6, 6), bool), 1))
    fn = numgrad.compile(lambda *a: step(numgrad, *a))
    x, xe = (numgrad.tensor(np.zeros((6, 6), np.float32), requires_grad=True) for _ in range(2))
    w, we = (numgrad.tensor(np.eye(6, dtype=np.float32), requires_grad=True) for _ in range(2))
    for k in range(3):
        x0 = rng.standard_normal((6, 6)).astype(np.float32)
        _load(x0, x, xe, w, we)
        a, e = fn(x, w, mask), step(numgrad, xe, we, mask)
        assert a.item() == e.item()
        np.testing.assert_array_equal(x.grad.numpy(), xe.grad.numpy())
        np.testing.assert_array_equal(w.grad.numpy(), we.grad.numpy())
    assert fn.variants[0].hits == 2, fn.eager_reason
    tape = describe(fn.variants[0], "step")
    assert "softmax (6 rows of 6, prepared)" in tape and "softmax backward (6 rows of 6, prepared)" in tape, tape

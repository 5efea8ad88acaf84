"""numgrad.compile hands a large result out in memory of its own (compile/slots.py), not as a copy of a tape
buffer: no copy per call, and a result the user still holds from an earlier call never changes (as in eager
and torch), whether held as a tensor, a view, a NumPy array or a leaf's .grad."""
import numpy as np
import pytest
import torch

import numgrad

N = 1 << 15  # float32: 128 KiB, above slots.MIN_BYTES


def _inputs(count, n=N, seed=0):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(n).astype(np.float32) for _ in range(count)]


def _forward(lib, x):
    return (x * 2 + 1).exp()


def _expected_forward(a):
    return torch.exp(torch.tensor(a) * 2 + 1).numpy()


def _slots(fn):
    (variant,) = fn.variants
    return variant.slots


def test_held_results_keep_their_values_and_memory_is_reused_once_dropped():
    fn = numgrad.compile(lambda x: _forward(numgrad, x))
    arrays = _inputs(6)
    out = None
    pointers = []
    for a in arrays:
        previous, previous_values = out, None if out is None else out.numpy().copy()
        out = fn(numgrad.tensor(a))  # `previous` is still held during the call, as in `out = step(x)` loops
        np.testing.assert_allclose(out.numpy(), _expected_forward(a), rtol=1e-6)
        if previous is not None:
            np.testing.assert_array_equal(previous.numpy(), previous_values)
            assert not np.shares_memory(previous.numpy(), out.numpy())
        pointers.append(out.data_ptr())
    (slot,) = _slots(fn)
    assert len(slot.buffers) == 2  # two buffers in turn: the held one and the one written
    assert len(set(pointers[1:])) == 2


def test_every_result_kept_in_a_list_stays_as_it_was():
    fn = numgrad.compile(lambda x: _forward(numgrad, x))
    arrays = _inputs(9, seed=1)
    kept = [fn(numgrad.tensor(a)) for a in arrays]
    for t, a in zip(kept, arrays):
        np.testing.assert_allclose(t.numpy(), _expected_forward(a), rtol=1e-6)
    pointers = {t.data_ptr() for t in kept}
    assert len(pointers) == len(kept)


@pytest.mark.parametrize("hold", ["numpy", "view", "slice"])
def test_a_result_held_through_an_array_or_a_view_is_not_overwritten(hold):
    fn = numgrad.compile(lambda x: _forward(numgrad, x))
    a, b, c = _inputs(3, seed=2)
    fn(numgrad.tensor(a))
    out = fn(numgrad.tensor(b))
    held = {"numpy": lambda t: t.numpy(), "view": lambda t: t.view(-1, 8), "slice": lambda t: t[5:9]}[hold](out)
    expected = np.array(held).copy()
    del out
    for x in (c, a, b, c):
        fn(numgrad.tensor(x))
    np.testing.assert_array_equal(np.array(held), expected)


def test_a_result_written_in_place_by_the_user_then_dropped_is_rewritten_whole():
    fn = numgrad.compile(lambda x: _forward(numgrad, x))
    arrays = _inputs(5, seed=3)
    for a in arrays:
        out = fn(numgrad.tensor(a))
        np.testing.assert_allclose(out.numpy(), _expected_forward(a), rtol=1e-6)
        out.mul_(0).add_(7)  # the user's own writes into the memory they were given


def _chain_returning_grad(lib, x):
    y = x * x
    s = ((y + 1) * y).sum()
    s.backward()
    return s, x.grad


def test_a_returned_grad_is_the_leaf_grad_itself_and_earlier_ones_stay_unchanged():
    fn = numgrad.compile(lambda x: _chain_returning_grad(numgrad, x))
    arrays = _inputs(5, seed=4)
    x = numgrad.tensor(arrays[0], requires_grad=True)
    held = None
    for a in arrays:
        with numgrad.no_grad():
            x.copy_(numgrad.tensor(a))  # new values in the same leaf: each call's gradient differs
        xt = torch.tensor(a, requires_grad=True)
        _chain_returning_grad(torch, xt)
        x.grad = None
        previous = None if held is None else (held, held.numpy().copy())
        s, g = fn(x)
        assert g is x.grad  # as eager returns it
        np.testing.assert_allclose(g.numpy(), xt.grad.numpy(), rtol=1e-5)
        if previous is not None:  # the grad of the call before, still held, is as that call left it
            assert not np.shares_memory(previous[0].numpy(), g.numpy())
            np.testing.assert_array_equal(previous[0].numpy(), previous[1])
        held = g
    (slot,) = _slots(fn)
    assert slot.assigns and len(slot.buffers) == 2


def test_replay_matches_eager_bit_for_bit_with_slots():
    arrays = _inputs(4, seed=5)
    fn = numgrad.compile(lambda x: _forward(numgrad, x))
    for a in arrays:
        np.testing.assert_array_equal(fn(numgrad.tensor(a)).numpy(), _forward(numgrad, numgrad.tensor(a)).numpy())


def test_small_results_and_results_with_a_graph_take_no_slot():
    small = numgrad.compile(lambda x: _forward(numgrad, x))
    small(numgrad.tensor(_inputs(1, n=16)[0]))
    assert _slots(small) == []
    w = numgrad.tensor(_inputs(1, seed=6)[0], requires_grad=True)
    with_graph = numgrad.compile(lambda x: x * w)
    x = numgrad.tensor(_inputs(1, seed=7)[0])
    for _ in range(3):
        out = with_graph(x)
        out.sum().backward()
    assert _slots(with_graph) == []
    np.testing.assert_array_equal(w.grad.numpy(), 3 * x.numpy())


def test_one_buffer_returned_twice_is_copied_for_both():
    fn = numgrad.compile(lambda x: (lambda y: (y, y))(_forward(numgrad, x)))
    for a in _inputs(3, seed=8):
        first, second = fn(numgrad.tensor(a))
        np.testing.assert_allclose(first.numpy(), _expected_forward(a), rtol=1e-6)
        np.testing.assert_allclose(second.numpy(), _expected_forward(a), rtol=1e-6)
    assert _slots(fn) == []

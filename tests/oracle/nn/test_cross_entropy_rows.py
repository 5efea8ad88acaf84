"""The cross-entropy path's row kernels against torch: softmax/log_softmax computing a pending input (a
logits bias add) inside the row loop (cpu/softmax.forward_pending), nll_loss's one-loop forward with torch's
cascade sum (cpu/loss.nll_forward: torch's value to the bit), and the bias gradient's column sum in one call
(dispatch.float_sum); and that a compiled step replays them as eager computes them."""
import warnings

import numpy as np
import pytest
import torch

import numgrad
import numgrad.lazy
from numgrad.compile.compiled import describe

# the fused kernels are what these tests are about: small tensors go through fusion too (tests/helpers/fusion.py)
pytestmark = pytest.mark.usefixtures("fused_everywhere")


@pytest.fixture
def forward_calls(monkeypatch):
    calls = []
    original = numgrad.lazy.softmax_rows_forward

    def counting(t, log):
        calls.append(log)
        return original(t, log)
    monkeypatch.setattr(numgrad.lazy, "softmax_rows_forward", counting)
    return calls


@pytest.mark.parametrize("log", [False, True])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(256, 10), (4, 5, 6), (1, 1), (3, 300)])
def test_softmax_of_a_pending_input_matches_torch_and_leaves_the_input_pending(forward_calls, log, dtype, shape):
    rng = np.random.default_rng(7)
    x, b, w = (rng.standard_normal(s).astype(dtype) * 3 for s in (shape, shape[-1:], shape))
    f = (lambda lib, t: lib.log_softmax(t, -1)) if log else (lambda lib, t: lib.softmax(t, -1))
    results = {}
    for lib in (numgrad, torch):
        xs, bs = lib.tensor(x, requires_grad=True), lib.tensor(b, requires_grad=True)
        z = xs + bs
        y = f(lib, z)
        if lib is numgrad:
            assert numgrad.lazy.pending(z) is not None  # computed in the row loop, never stored
        (y * lib.tensor(w)).sum().backward()
        results[lib] = (y, xs.grad, bs.grad)
    assert forward_calls == [log]
    ours, theirs = results[numgrad], results[torch]
    assert ours[0].grad_fn.name() == theirs[0].grad_fn.name()
    assert ours[0].dtype == getattr(numgrad, str(theirs[0].dtype).split(".")[-1])
    # The bias gradient sums 256 rows whose terms cancel (a column of 0.12 from terms up to 16), in an order that
    # depends on torch's vector width: on an AVX-512 machine torch's float32 result is 3.1e-6 from the float64
    # one and ours 1.3e-6, 3.5e-6 apart. So the absolute tolerance scales with the largest value of the result
    tol = 2e-6 if dtype == np.float32 else 1e-14
    for a, t in zip(ours, theirs):
        t = t.detach().numpy()
        np.testing.assert_allclose(a.detach().numpy(), t, rtol=tol, atol=tol * max(1.0, np.abs(t).max()))


def test_softmax_of_a_pending_input_keeps_nan_and_inf_as_torch():
    x = np.array([[0.0, np.inf, 1.0], [np.nan, 1.0, 2.0], [-np.inf, -np.inf, -np.inf]], np.float32)
    for name in ("softmax", "log_softmax"):
        ours, theirs = (getattr(lib, name)(lib.tensor(x) + 0.5, -1) for lib in (numgrad, torch))
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


NLL_CASES = [(reduction, weighted, ignore, one)
             for reduction in ("mean", "sum", "none") for weighted in (False, True)
             for ignore in (-100, 2) for one in (False, True)]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("reduction,weighted,ignore,one", NLL_CASES)
def test_nll_loss_is_torchs_value_to_the_bit(dtype, reduction, weighted, ignore, one):
    rng = np.random.default_rng(11)
    n, c = 300, 7  # past one cascade level (16 rows) and a second (256)
    x = (rng.standard_normal((n, c)) * 3).astype(dtype)
    x[5] = 0.0  # a zero log-probability: -0.0 in a row's loss, +0.0 in a 1-d input's (torch's sum of one row)
    t = rng.integers(0, c, n)
    t[5] = 0
    w = rng.uniform(0.2, 2, c).astype(dtype) if weighted else None
    if one:
        x, t = x[5], t[5:6].reshape(())
    values, grads = [], []
    for lib in (numgrad, torch):
        xs = lib.tensor(x, requires_grad=True)
        loss = lib.nn.functional.nll_loss(xs, lib.tensor(t), None if w is None else lib.tensor(w), ignore_index=ignore,
                                          reduction=reduction)
        loss.backward(lib.ones_like(loss))
        values.append(loss.detach().numpy())
        grads.append(xs.grad.numpy())
    assert values[0].shape == values[1].shape and values[0].dtype == values[1].dtype
    np.testing.assert_array_equal(values[0], values[1])
    np.testing.assert_array_equal(np.signbit(values[0]), np.signbit(values[1]))
    np.testing.assert_array_equal(grads[0], grads[1])


def test_nll_loss_of_an_empty_batch_and_of_all_ignored_targets():
    for lib in (numgrad, torch):
        empty = lib.tensor(np.zeros((0, 3), np.float32))
        none = lib.tensor(np.zeros(0, np.int64))
        assert np.isnan(lib.nn.functional.nll_loss(empty, none).item())
        assert lib.nn.functional.nll_loss(empty, none, reduction="sum").item() == 0
        ignored = lib.nn.functional.nll_loss(lib.tensor(np.ones((2, 3), np.float32)), lib.tensor(np.array([1, 1])),
                                             ignore_index=1)
        assert np.isnan(ignored.item())


def test_nll_loss_names_the_first_target_out_of_bounds():
    x = numgrad.tensor(np.zeros((4, 3), np.float32))
    with pytest.raises(IndexError, match="Target 5 is out of bounds."):
        numgrad.nn.functional.nll_loss(x, numgrad.tensor(np.array([0, 5, -1, 7])))
    with pytest.raises(IndexError, match="Target -1 is out of bounds."):
        numgrad.nn.functional.nll_loss(x, numgrad.tensor(np.array([0, -100, -1, 7])), reduction="none")


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_column_sum_is_one_call_into_the_result_dtype(dtype):
    rng = np.random.default_rng(2)
    x = rng.standard_normal((64, 5)).astype(dtype)
    x[:, 0] = -0.0
    x[0, 1], x[1, 1] = 3e38, 3e38  # past float32: inf, without NumPy's warning
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ours = numgrad.tensor(x).sum(0)
    theirs = torch.tensor(x).sum(0)
    assert ours.numpy().dtype == dtype and ours.shape == tuple(theirs.shape)
    assert not np.signbit(ours.numpy()[0])  # +0.0, as torch's sum of -0.0s
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-6)
    kept = numgrad.tensor(x).sum(0, keepdim=True)
    assert kept.shape == (1, 5) and kept.is_contiguous()


def test_bias_gradient_is_kept_as_grad_without_a_copy():
    """The column sum's result is nobody's view, so AccumulateGrad keeps it (a view would be copied)."""
    x = numgrad.tensor(np.ones((8, 4), np.float32))
    w = numgrad.tensor(np.ones((3, 4), np.float32), requires_grad=True)
    b = numgrad.tensor(np.ones(3, np.float32), requires_grad=True)
    numgrad.nn.functional.linear(x, w, b).sum().backward()
    assert b.grad._data.base is None
    np.testing.assert_array_equal(b.grad.numpy(), np.full(3, 8, np.float32))


def _classifier_step(lib, w, b, x, y):
    loss = lib.nn.functional.cross_entropy(lib.nn.functional.linear(x, w, b), y)
    loss.backward()
    return loss


def test_compiled_classifier_step_replays_the_row_kernels_as_eager_computes_them():
    rng = np.random.default_rng(5)
    arrays = [rng.standard_normal((10, 32)).astype(np.float32), rng.standard_normal(10).astype(np.float32)]
    x = numgrad.tensor(rng.standard_normal((64, 32)).astype(np.float32))
    fn = numgrad.compile(lambda w, b, x, y: _classifier_step(numgrad, w, b, x, y))
    w, b, we, be = (numgrad.tensor(a, requires_grad=True) for a in arrays + arrays)
    for k in range(4):
        y = numgrad.tensor(rng.integers(0, 10, 64))  # new targets each step
        for t in (w, b, we, be):
            t.grad = None
        a, e = fn(w, b, x, y), _classifier_step(numgrad, we, be, x, y)
        assert a.item() == e.item()
        np.testing.assert_array_equal(w.grad.numpy(), we.grad.numpy())
        np.testing.assert_array_equal(b.grad.numpy(), be.grad.numpy())
    assert fn.variants[0].hits == 3, fn.eager_reason
    tape = describe(fn.variants[0], "step")
    assert "softmax forward pending" in tape and "softmax backward pending" in tape
    assert "nll_loss loop" in tape and "float sum" in tape  # (bound once: no Python per replay but the call)
    # and against torch
    tw, tb = (torch.tensor(a, requires_grad=True) for a in arrays)
    loss = _classifier_step(torch, tw, tb, torch.tensor(x.numpy()), torch.tensor(y.numpy()))
    np.testing.assert_allclose(e.item(), loss.item(), rtol=1e-6)
    np.testing.assert_allclose(be.grad.numpy(), tb.grad.numpy(), rtol=1e-5, atol=1e-7)

"""The small-tensor path (lazy.SMALL_MAX): small results compute at once, with the same kernels and bits as the
fused path; large ones still fuse; the engine fuses no small region; NUMGRAD_SMALL_MAX is read and checked."""
import os
import subprocess
import sys

import numpy as np
import pytest
import torch

import numgrad
from numgrad import lazy
from numgrad.autograd import fused_backward
from helpers.fusion import fused_at_every_size


def _chain(lib, x, w):
    y = x * x
    z = (y + 1) * y
    return (lib.tanh(z) * w - z.exp() / 3).sum()


def _run(x0, w0):
    x = numgrad.tensor(x0, requires_grad=True)
    w = numgrad.tensor(w0, requires_grad=True)
    s = _chain(numgrad, x, w)
    s.backward()
    return s.detach().numpy(), x.grad.numpy(), w.grad.numpy()


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(3,), (4, 5), (2, 3, 4)])
def test_small_results_match_the_fused_path_bitwise_and_torch(shape, dtype):
    rng = np.random.default_rng(0)
    x0, w0 = rng.standard_normal(shape).astype(dtype), rng.standard_normal(shape).astype(dtype)
    small = _run(x0, w0)
    with fused_at_every_size():
        fused = _run(x0, w0)
    # the same kernels: equal gradients; the sum may add in another order (the fused fold keeps several
    # accumulators), so its last bit may differ, as with fusion off
    np.testing.assert_allclose(small[0], fused[0], rtol=1e-6 if dtype == np.float32 else 1e-15)
    for a, b in zip(small[1:], fused[1:]):
        np.testing.assert_array_equal(a, b)
    tx, tw = torch.tensor(x0, requires_grad=True), torch.tensor(w0, requires_grad=True)
    s = _chain(torch, tx, tw)
    s.backward()
    tol = 1e-5 if dtype == np.float32 else 1e-12
    for a, b in zip(small, (s.detach().numpy(), tx.grad.numpy(), tw.grad.numpy())):
        np.testing.assert_allclose(a, b, rtol=tol, atol=tol)


def test_a_small_result_is_computed_at_once_and_a_large_one_stays_pending():
    small = numgrad.ones(lazy.SMALL_MAX) * 2
    large = numgrad.ones(lazy.SMALL_MAX + 1) * 2
    assert lazy.pending(small) is None
    assert lazy.pending(large) is not None
    with fused_at_every_size():
        assert lazy.pending(numgrad.ones(3) * 2) is not None
    with numgrad.fusion(False):  # fusion off: computed at once at every size
        assert lazy.pending(numgrad.ones(lazy.SMALL_MAX + 1) * 2) is None


def test_the_engine_fuses_no_small_region(monkeypatch):
    regions = []
    real = fused_backward.run
    monkeypatch.setattr(fused_backward, "run", lambda region, *a: regions.append(len(region)) or real(region, *a))
    for n in (3, lazy.SMALL_MAX + 1):
        x = numgrad.ones(n, requires_grad=True)
        (numgrad.exp(x * 2) + x).sum().backward()
        np.testing.assert_allclose(x.grad.numpy(), 2 * np.exp(2.0) + 1, rtol=1e-6)
    assert regions == [3]  # the large one's Add, Exp and Mul nodes in one kernel; the small one node by node


def test_a_small_grad_accumulates_in_place():
    x = numgrad.ones(3, requires_grad=True)
    (x * 2).sum().backward()
    grad = x.grad
    (x * 3).sum().backward()
    assert x.grad is grad and grad.tolist() == [5.0, 5.0, 5.0]


def test_a_small_op_inside_a_compiled_call_replays():
    x = numgrad.tensor([1.0, 2.0, 3.0])

    @numgrad.compile
    def f(x):
        return (x * x + 1).sum()
    results = [f(x).item() for _ in range(3)]
    x.copy_(numgrad.tensor([2.0, 2.0, 2.0]))
    assert results == [17.0] * 3 and f(x).item() == 15.0


def test_the_profiler_times_small_kernels():
    x = numgrad.ones(4, requires_grad=True)
    with numgrad.profiler.profile() as prof:
        (x * 3).sum().backward()
    names = [e.name for e in prof.events() if e.kind == "kernel"]
    assert any("mul" in n for n in names), names


@pytest.mark.parametrize("value, ok", [("0", True), ("100", True), ("lots", False), ("-1", False)])
def test_numgrad_small_max_is_read_and_checked(value, ok):
    env = dict(os.environ, NUMGRAD_SMALL_MAX=value)
    out = subprocess.run([sys.executable, "-c", "import numgrad; print(numgrad.lazy.SMALL_MAX)"], env=env,
                         capture_output=True, text=True, timeout=300)
    if ok:
        assert out.returncode == 0 and out.stdout.strip() == value, out.stderr
    else:
        assert out.returncode != 0 and "ValueError: NUMGRAD_SMALL_MAX must be a whole number" in out.stderr


def test_a_compiled_step_fuses_small_work_as_before(monkeypatch):
    """While numgrad.compile traces, small work fuses (lazy.fuses): the tiny chain's backward is one region."""
    regions = []
    real = fused_backward.run
    monkeypatch.setattr(fused_backward, "run", lambda region, *a: regions.append(len(region)) or real(region, *a))
    x = numgrad.tensor([1.0, 2.0, 3.0], requires_grad=True)

    @numgrad.compile
    def step(x):
        y = x * x
        s = ((y + 1) * y).sum()
        s.backward()
        return s
    x.grad = None
    step(x)  # the trace
    assert regions == [3] and x.grad.tolist() == [6.0, 36.0, 114.0]


# ---- a repeated signature (lazy.SmallCall): what the first call worked out, reused ----------------
def _signature_cases():
    rng = np.random.default_rng(1)
    f32 = rng.standard_normal((3, 4)).astype(np.float32)
    return [
        ("mul", lambda t: (t(f32), t(f32[::-1].copy()))),  # same shapes
        ("add", lambda t: (t(f32), t(f32[0]))),  # a broadcast row
        ("mul", lambda t: (t(f32), 2)),  # a Python int, a Python float: each its own signature
        ("mul", lambda t: (t(f32), 2.5)),
        ("sub", lambda t: (t(f32), t(np.float32(3.0)))),  # a 0-d tensor
        ("add", lambda t: (t(f32), t(np.ones((1, 1), np.float32)))),  # one element, broadcast
        ("mul", lambda t: (t(f32.T.copy()).t(), t(f32))),  # a transposed input: the general path
        ("add", lambda t: (t(np.arange(12, dtype=np.int32).reshape(3, 4)), t(f32))),  # promotion
        ("add", lambda t: (t(np.arange(4, dtype=np.int64)), 1)),  # an integer result
        ("where", lambda t: (t(f32 > 0), t(f32), 0.0)),  # a bool input
        ("mul", lambda t: (t(f32[:, 1]), t(f32[:, 2]))),  # strided one-dim views
    ]


@pytest.mark.parametrize("case", range(len(_signature_cases())))
def test_a_repeated_signature_computes_what_the_first_call_did(case):
    name, make = _signature_cases()[case]
    ops = {"mul": lambda lib, a, b: lib.mul(a, b), "add": lambda lib, a, b: lib.add(a, b),
           "sub": lambda lib, a, b: lib.sub(a, b), "where": lambda lib, c, a, b: lib.where(c, a, b)}[name]
    expected = ops(torch, *make(torch.tensor))
    for _ in range(3):  # the first call works the signature out, the next ones reuse it
        got = ops(numgrad, *make(numgrad.tensor))
        assert str(got.dtype) == str(expected.dtype) and tuple(got.shape) == tuple(expected.shape)
        assert got.stride() == expected.stride()
        np.testing.assert_array_equal(got.numpy(), expected.numpy())


def test_a_repeated_signature_records_the_same_node():
    rng = np.random.default_rng(2)
    x0 = rng.standard_normal(5).astype(np.float32)
    grads = []
    for _ in range(3):
        x = numgrad.tensor(x0, requires_grad=True)
        y = x * x * 3.0
        assert y.grad_fn.name() == "MulBackward0"
        y.sum().backward()
        grads.append(x.grad.numpy())
    with numgrad.no_grad():  # the same signature without grad mode records nothing
        assert (numgrad.tensor(x0, requires_grad=True) * 3.0).grad_fn is None
    tx = torch.tensor(x0, requires_grad=True)
    (tx * tx * 3.0).sum().backward()
    for g in grads:
        np.testing.assert_array_equal(g, tx.grad.numpy())


def test_a_refused_signature_raises_every_time():
    a, b = numgrad.ones(3, dtype=numgrad.bool), numgrad.ones(3, dtype=numgrad.bool)
    for _ in range(2):
        with pytest.raises(RuntimeError, match="Subtraction, the `-` operator, with two bool tensors"):
            a - b


def test_a_repeated_signature_reads_a_pending_input_through_the_general_path():
    big = numgrad.ones(lazy.SMALL_MAX + 1) * 2  # pending: no host array to read
    assert lazy.pending(big) is not None
    for _ in range(2):
        r = numgrad.ones(3) + 1.0
        assert r.tolist() == [2.0, 2.0, 2.0]
    assert (big[:3] + 1.0).tolist() == [3.0, 3.0, 3.0]


def test_a_repeated_signature_fuses_once_the_small_path_is_off():
    assert lazy.pending(numgrad.ones(3) * 2) is None  # (twice: the second call reuses the signature)
    assert lazy.pending(numgrad.ones(3) * 2) is None
    with fused_at_every_size():
        assert lazy.pending(numgrad.ones(3) * 2) is not None


def test_a_repeated_signature_follows_the_default_dtype():
    previous = numgrad.get_default_dtype()
    try:
        for default in (numgrad.float32, numgrad.float64, numgrad.float32):
            numgrad.set_default_dtype(default)
            assert (numgrad.arange(3) * 2.5).dtype is default
    finally:
        numgrad.set_default_dtype(previous)


# ---- a small backward (ElementwiseBackward._small_gradients) and a small whole sum -------------------
def _backward_cases():
    rng = np.random.default_rng(3)
    f32 = rng.standard_normal((3, 4)).astype(np.float32)
    g32 = rng.standard_normal((3, 4)).astype(np.float32)
    return [
        ("x * x", lambda lib, a, b: a * a),  # one operand twice: one gradient of two terms
        ("(x + 1) * y", lambda lib, a, b: (a + 1) * b),  # two gradients from one kernel
        ("broadcast row", lambda lib, a, b: a * b[0]),  # b's gradient summed back to its shape
        ("float64 * float32", lambda lib, a, b: a.double() * b),  # gradients cast back to each input's dtype
        ("pow by a number", lambda lib, a, b: a.abs() ** 1.5 + b ** 2),  # a Python number among the operands
        ("where", lambda lib, a, b: lib.where(a > 0, a, b)),  # a bool operand
        ("sum's expanded gradient", lambda lib, a, b: a * b),  # g of one value read as a scalar
        ("transposed", lambda lib, a, b: a.t() * b.t()),  # strided operands: the general path
        ("add: g passed on", lambda lib, a, b: a.double() + b[0] - a),  # summed back and cast where needed
    ], f32, g32


@pytest.mark.parametrize("case", range(len(_backward_cases()[0])))
def test_a_small_backward_matches_the_fused_path_bitwise_and_torch(case):
    cases, a0, b0 = _backward_cases()
    name, fn = cases[case]

    def run(lib):
        a, b = lib.tensor(a0, requires_grad=True), lib.tensor(b0, requires_grad=True)
        out = fn(lib, a, b)
        (out.sum() if name == "sum's expanded gradient" else (out * out).sum()).backward()
        return a.grad, b.grad

    for _ in range(2):  # a repeated signature too
        small = run(numgrad)
        with fused_at_every_size():
            fused = run(numgrad)
        expected = run(torch)
        for s, f, t in zip(small, fused, expected):
            if t is None:  # an input the output does not read
                assert s is None and f is None
                continue
            assert str(s.dtype) == str(t.dtype) and s.stride() == t.stride()
            np.testing.assert_array_equal(s.numpy(), f.numpy())
            np.testing.assert_allclose(s.numpy(), t.numpy(), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("values", [
    [1.5, -2.25, 3.0], [-0.0, -0.0], [3e38, 3e38, -1.0], [np.inf, -np.inf], [np.nan, 1.0], [7.0],
    np.random.default_rng(4).standard_normal((5, 6)).tolist(), 2.5])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_a_small_whole_sum_is_the_general_folds_and_torchs(values, dtype):
    x0 = np.array(values, dtype)
    x = numgrad.tensor(x0, requires_grad=True)
    s = x.sum()
    general = x.sum(dim=tuple(range(x.dim())))  # the general path's fold over every dim
    tx = torch.tensor(x0, requires_grad=True)
    ts = tx.sum()
    assert s.grad_fn.name() == "SumBackward0" and str(s.dtype) == str(ts.dtype) and s.shape == ts.shape
    np.testing.assert_array_equal(s.detach().numpy(), general.detach().numpy())
    assert np.signbit(s.item()) == np.signbit(ts.item()) or np.isnan(ts.item())  # a sum of -0.0s is +0.0
    np.testing.assert_allclose(s.item(), ts.item(), rtol=1e-6 if dtype == np.float32 else 1e-15)
    s.backward()
    ts.backward()
    np.testing.assert_array_equal(x.grad.numpy(), tx.grad.numpy())


def test_a_small_whole_sum_of_a_strided_or_half_tensor():
    x0 = np.arange(12, dtype=np.float32).reshape(3, 4)
    for t, expected in ((numgrad.tensor(x0).t(), 66.0), (numgrad.tensor(x0)[:, ::2], 30.0),
                        (numgrad.tensor(x0, dtype=numgrad.float16), 66.0),
                        (numgrad.tensor(x0, dtype=numgrad.bfloat16), 66.0)):
        s = t.sum()
        assert s.item() == expected and s.dtype is t.dtype

"""An elementwise node whose gradient goes to softmax's (log_softmax's) backward leaves it pending, and the
row kernel computes it in its loop (ops/elementwise.py, cpu/softmax.backward_pending): gradients against
torch and against the unfused path, for whole, per-row, per-column and scalar operands, and that the pending
path ran. A leaf's gradient from the same node (w's in softmax(x) * w) rides along: the row kernel writes it too
(lazy.take_riders), and no backward leaves it pending."""
import numpy as np
import pytest
import torch

import numgrad
import numgrad.lazy
from numgrad.compile.compiled import describe

# the fused kernels are what these tests are about: small tensors go through fusion too (tests/helpers/fusion.py)
pytestmark = pytest.mark.usefixtures("fused_everywhere")


@pytest.fixture
def pending_calls(monkeypatch):
    calls = []
    original = numgrad.lazy.softmax_rows_backward

    def counting(*args):
        calls.append(args[2])
        return original(*args)
    monkeypatch.setattr(numgrad.lazy, "softmax_rows_backward", counting)
    return calls


def _grads(lib, f, arrays, fusion=True):
    tensors = [lib.tensor(a, requires_grad=True) for a in arrays]
    if lib is numgrad:
        with numgrad.fusion(fusion):
            f(lib, *tensors).sum().backward()
    else:
        f(lib, *tensors).sum().backward()
    return [t.grad.numpy() for t in tensors]


CONSUMERS = {
    "times a tensor": (lambda lib, x, w: lib.softmax(x, -1) * w, lambda s: [s]),
    "times a row": (lambda lib, x, w: lib.softmax(x, -1) * w, lambda s: [s[-1:]]),
    "times a column": (lambda lib, x, w: w * lib.softmax(x, -1), lambda s: [s[:-1] + (1,)]),
    "divided by a tensor": (lambda lib, x, w: lib.softmax(x, -1) / (w.abs() + 1), lambda s: [s]),
    "times a number": (lambda lib, x: lib.softmax(x, -1) * 3.0, lambda s: []),
    "log, times a tensor": (lambda lib, x, w: lib.log_softmax(x, -1) * w, lambda s: [s]),
    "log, minus a tensor": (lambda lib, x, w: w - lib.log_softmax(x, -1), lambda s: [s]),
}


PENDING = {"times a tensor", "times a row", "times a column", "times a number", "log, times a tensor"}


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(7,), (5, 33), (2, 3, 64)])
@pytest.mark.parametrize("consumer", sorted(CONSUMERS))
def test_gradients_match_torch_and_the_unfused_path(consumer, shape, dtype, pending_calls):
    f, extra = CONSUMERS[consumer]
    rng = np.random.default_rng(len(consumer) + len(shape))
    arrays = [rng.standard_normal(shape).astype(dtype)] + [rng.standard_normal(s).astype(dtype) for s in extra(shape)]
    ours = _grads(numgrad, f, arrays)
    # (a gradient that another node's backward also reads, or one made by a fused region, is stored as before)
    assert bool(pending_calls) is (consumer in PENDING), pending_calls
    unfused = _grads(numgrad, f, arrays, fusion=False)
    reference = _grads(torch, f, arrays)
    tol = dict(rtol=2e-5, atol=1e-6) if dtype == np.float32 else dict(rtol=1e-12, atol=1e-14)
    for a, b, c in zip(ours, unfused, reference):
        assert a.dtype == c.dtype and a.shape == c.shape
        np.testing.assert_allclose(a, b, **tol)
        np.testing.assert_allclose(a, c, **tol)


def test_dropout_after_softmax_takes_the_pending_path(pending_calls):
    x = np.random.default_rng(0).standard_normal((4, 50)).astype(np.float32)
    numgrad.manual_seed(0)
    t = numgrad.tensor(x, requires_grad=True)
    y = numgrad.nn.functional.dropout(numgrad.softmax(t, -1), 0.3)
    y.sum().backward()
    assert pending_calls
    s = numgrad.softmax(numgrad.tensor(x), -1).numpy()
    g = np.where(y.detach().numpy() != 0, np.float32(1 / 0.7), 0).astype(np.float32)  # dropout's mask, scaled
    expected = s * (g - (g * s).sum(-1, keepdims=True))
    np.testing.assert_allclose(t.grad.numpy(), expected, rtol=1e-5, atol=1e-7)


def test_a_gradient_reading_the_softmax_output_itself_is_still_right():
    """softmax(x) * softmax(x): the pending gradient reads y's storage, which the backward reads too."""
    x = np.random.default_rng(1).standard_normal((6, 9)).astype(np.float32)
    ours = _grads(numgrad, lambda lib, t: lib.softmax(t, -1) * lib.softmax(t, -1).detach(), [x])
    reference = _grads(torch, lambda lib, t: lib.softmax(t, -1) * lib.softmax(t, -1).detach(), [x])
    np.testing.assert_allclose(ours[0], reference[0], rtol=1e-5, atol=1e-7)


def test_nonfinite_rows_as_torch():
    x = np.random.default_rng(2).standard_normal((4, 8)).astype(np.float32)
    x[0, 3], x[1, :], x[2, 5] = np.nan, -np.inf, np.inf
    w = np.random.default_rng(3).standard_normal((4, 8)).astype(np.float32)
    for log in (False, True):
        def f(lib, a, b):
            return (lib.log_softmax if log else lib.softmax)(a, -1) * b
        ours, reference = _grads(numgrad, f, [x, w]), _grads(torch, f, [x, w])
        for a, b in zip(ours, reference):
            np.testing.assert_array_equal(np.isnan(a), np.isnan(b))
            np.testing.assert_allclose(np.nan_to_num(a), np.nan_to_num(b), rtol=1e-5, atol=1e-7)


def test_compiled_step_replays_the_pending_kernel_bitwise_as_eager():
    def step(lib, x, w):
        s = (lib.softmax(x, -1) * w).sum()
        s.backward()
        return s

    fn = numgrad.compile(lambda x, w: step(numgrad, x, w))
    rng = np.random.default_rng(4)
    # (no .numpy() of x or w: an array handed to NumPy is read at once, never by a pending expression)
    arrays = [rng.standard_normal((16, 40)).astype(np.float32) for _ in range(2)]
    x, w, xe, we = (numgrad.tensor(a, requires_grad=True) for a in arrays + arrays)
    for k in range(4):
        with numgrad.no_grad():
            for t in (x, w, xe, we):
                t.mul_(1.1)
                t.grad = None
        a, b = fn(x, w), step(numgrad, xe, we)
        assert a.item() == b.item()
        np.testing.assert_array_equal(x.grad.numpy(), xe.grad.numpy())
        np.testing.assert_array_equal(w.grad.numpy(), we.grad.numpy())
    assert fn.variants[0].hits == 3, fn.eager_reason
    assert any("softmax backward pending" in line for line in describe(fn.variants[0], "step").splitlines())


def _edge_run(lib, mode, x0, w0):
    x, w = lib.tensor(x0, requires_grad=True), lib.tensor(w0, requires_grad=True)
    seen = {}
    y = lib.softmax(x, -1)
    if mode == "retain_grad":
        y.retain_grad()
    elif mode == "hook":
        y.register_hook(lambda g: g * 2)
    elif mode == "hook reads":
        y.register_hook(lambda g: seen.setdefault("g", g.detach().clone()))
    if mode == "saved-tensor hooks":
        with lib.autograd.graph.saved_tensors_hooks(lambda t: t * 1, lambda t: t):
            z = y * w
    else:
        z = y * w
    if mode == "create_graph":
        (gx,) = lib.autograd.grad(z.sum(), x, create_graph=True)
        gx.sum().backward()
        return [x.grad, w.grad]
    if mode == "autograd.grad":
        return list(lib.autograd.grad(z.sum(), (x, w)))
    z.sum().backward(retain_graph=mode == "retain_graph")
    if mode == "retain_graph":
        z.sum().backward()
    if lib is numgrad:  # a rider no kernel took is computed before backward returns
        assert numgrad.lazy.pending(w.grad) is None and numgrad.lazy.pending(x.grad) is None
    out = [x.grad, w.grad]
    if mode == "retain_grad":  # the retained gradient keeps its values through a later write to w
        with lib.no_grad():
            w.mul_(3)
        out += [y.grad, w]
    if mode == "hook reads":
        out.append(seen["g"])
    return out


@pytest.mark.parametrize("mode", ["retain_grad", "hook", "hook reads", "saved-tensor hooks", "create_graph",
                                  "autograd.grad", "retain_graph"])
def test_hooks_retained_gradients_and_graph_modes_as_torch(mode):
    rng = np.random.default_rng(5)
    x0, w0 = (rng.standard_normal((4, 9)).astype(np.float32) for _ in range(2))
    ours, reference = _edge_run(numgrad, mode, x0, w0), _edge_run(torch, mode, x0, w0)
    assert len(ours) == len(reference)
    for a, b in zip(ours, reference):
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-5, atol=1e-7)


@pytest.fixture
def forces(monkeypatch):
    """The pending expressions computed by a pass of their own (not inside another kernel)."""
    forced = []
    original = numgrad.lazy.LazyExpr.force

    def counting(self):
        if self.arr is None:
            forced.append(self)
        return original(self)
    monkeypatch.setattr(numgrad.lazy.LazyExpr, "force", counting)
    return forced


@pytest.mark.parametrize("log", [False, True])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_the_leafs_gradient_is_written_by_the_row_kernel(log, dtype, forces, pending_calls):
    rng = np.random.default_rng(6)
    arrays = [rng.standard_normal((6, 70)).astype(dtype) for _ in range(2)]

    def f(lib, x, w):
        return (lib.log_softmax if log else lib.softmax)(x, -1) * w
    x, w = (numgrad.tensor(a, requires_grad=True) for a in arrays)
    f(numgrad, x, w).sum().backward()
    assert pending_calls and not forces  # one kernel wrote both gradients
    assert numgrad.lazy.pending(w.grad) is None and numgrad.lazy.STATE.riders is None
    tx, tw = (torch.tensor(a, requires_grad=True) for a in arrays)
    f(torch, tx, tw).sum().backward()
    for ours, theirs in ((x.grad, tx.grad), (w.grad, tw.grad)):
        assert ours.stride() == theirs.stride() and str(ours.dtype) == str(theirs.dtype)
        np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("case", ["accumulates", "transposed leaf", "leaf hook", "x needs no grad"])
def test_a_leafs_gradient_that_cannot_ride_along_is_right(case):
    rng = np.random.default_rng(7)
    x0, w0 = (rng.standard_normal((5, 12)).astype(np.float32) for _ in range(2))

    def run(lib):
        x = lib.tensor(x0, requires_grad=case != "x needs no grad")
        w = lib.tensor(w0.T.copy()).t().detach().requires_grad_() if case == "transposed leaf" else \
            lib.tensor(w0, requires_grad=True)
        if case == "leaf hook":
            w.register_hook(lambda g: g * 3)
        for _ in range(2 if case == "accumulates" else 1):
            (lib.softmax(x, -1) * w).sum().backward()
        return [t for t in (x.grad, w.grad) if t is not None]
    ours, reference = run(numgrad), run(torch)
    assert len(ours) == len(reference)
    for a, b in zip(ours, reference):
        assert a.stride() == b.stride()
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("log", [False, True])
@pytest.mark.parametrize("K", [4, 7, 33])
def test_the_pending_kernel_gives_the_same_bits_wherever_its_arrays_lie(log, K, monkeypatch):
    """LLVM vectorises a loop that stores behind a check of the arrays' distance in memory, and runs the
    scalar loop when they lie close. The kernel summed the row in its storing loop, so the sum's order (its
    last bit) depended on where malloc had put the output: gradcheck's two identical backward calls of a
    cross_entropy with probabilities differed in one of three full test runs. Here the output is placed at
    every distance before and after the leaf the gradient reads and the softmax output y."""
    from numgrad.kernels.cpu import softmax
    calls = []
    original = softmax.backward_pending

    def recording(*args, **kwargs):
        calls.append(args)
        return original(*args, **kwargs)
    monkeypatch.setattr(softmax, "backward_pending", recording)
    n = 3 * K
    memory = np.zeros(24 * n)
    rng = np.random.default_rng(8)
    w_at, y_at = 8 * n, 16 * n
    x, w = (numgrad.tensor(rng.standard_normal((3, K)), requires_grad=k == 0) for k in range(2))
    ((numgrad.log_softmax if log else numgrad.softmax)(x, -1) * w).sum().backward()
    (program, var, y, log_, riders), = calls
    (leaf,) = [leaf for leaf in program.leaves if leaf.kind != "scalar"]  # w's array, which the kernel reads
    for at, arr in ((w_at, leaf.value), (y_at, y)):  # both moved into `memory`
        memory[at:at + n] = arr.reshape(-1)
    leaf.value, y = memory[w_at:w_at + n].reshape(3, K), memory[y_at:y_at + n].reshape(3, K)
    results = {}
    for anchor in (w_at, y_at):
        for start in range(anchor - 3 * n, anchor + 3 * n):
            if start + n > w_at and start < w_at + n or start + n > y_at and start < y_at + n:
                continue  # (an output overlapping what the kernel reads is never handed to it)
            out = memory[start:start + n].reshape(y.shape)
            got = original(program, var, y, log_, riders, out=[out])
            results.setdefault(got[0].tobytes(), []).append(start - anchor)
    assert len(results) == 1, list(results.values())  # the offsets of each distinct result
    assert next(iter(results)) == x.grad.numpy().tobytes()

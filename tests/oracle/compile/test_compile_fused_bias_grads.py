"""numgrad.compile's rewrites of a Linear's bias and its gradient (compile/fuse.py): the bias added to the product's
rows by one kernel call, a ReLU's backward fused with its result's column sums, and other float sums over the
rows of a 2-d array as the column sums kernel. The compiled MLP step gives
eager's values bit for bit (which match torch's), the kernels match the calls they replace on special values,
and the cases they must leave alone (no sum next, a sum over another dim, other ranks and dtypes, a split
range) replay as before; a kept .grad keeps its values."""
import numpy as np
import pytest
import torch

import numgrad
from numgrad.bench.workloads import train_step  # (the benchmark's step: zero_grad, cross-entropy, step)
from numgrad.compile.compiled import describe
from numgrad.kernels.cpu.bias import add_to_rows, relu_backward_column_sums
from numgrad.kernels.cpu.kernels import column_sums
from numgrad.kernels.cpu.threads import PARALLEL_MIN

FUSED = "relu backward + column sums"
SUMS = "by the column sums kernel"
ADD = "bias added to the rows"


def _mlp(lib, sizes, dtype, bias=True):
    rng = np.random.default_rng(3)
    layers = []
    for a, b in zip(sizes[:-1], sizes[1:]):
        layers += [lib.nn.Linear(a, b, bias=bias), lib.nn.ReLU()]
    model = lib.nn.Sequential(*layers[:-1])
    if dtype == np.float64:
        model = model.double()
    with lib.no_grad():
        for p in model.parameters():
            p.copy_(lib.tensor(rng.uniform(-0.3, 0.3, tuple(p.shape)).astype(dtype)))
    return model


def _run(lib, compiled, sizes, dtype, steps=4, bias=True, optimizer="sgd"):
    """Per step: the loss, then each parameter's gradient and new value."""
    model = _mlp(lib, sizes, dtype, bias)
    opt = lib.optim.SGD(model.parameters(), lr=0.1, momentum=0.9) if optimizer == "sgd" else \
        lib.optim.Adam(model.parameters(), lr=1e-2)
    fn = numgrad.compile(train_step) if compiled else train_step
    rng = np.random.default_rng(4)
    out = []
    for _ in range(steps):
        x = lib.tensor(rng.standard_normal((24, sizes[0])).astype(dtype))
        y = lib.tensor(rng.integers(0, sizes[-1], 24))
        loss = fn(lib, model, opt, x, y)
        out.append([loss.item()] + [a for p in model.parameters()
                                    for a in (p.grad.detach().numpy().copy(), p.detach().numpy().copy())])
    return out, fn


@pytest.mark.parametrize("optimizer", ["sgd", "adam"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_compiled_mlp_step_fuses_and_matches_eager_bitwise_and_torch(dtype, optimizer):
    sizes = (20, 48, 32, 5)
    got, fn = _run(numgrad, True, sizes, dtype, optimizer=optimizer)
    want, _ = _run(numgrad, False, sizes, dtype, optimizer=optimizer)
    for a, b in zip(got, want):
        assert a[0] == b[0]
        for x, y in zip(a[1:], b[1:]):
            np.testing.assert_array_equal(x, y)
    (variant,) = fn.variants
    assert variant.hits == 3
    assert describe(variant, "step").count(FUSED) == 2  # both hidden layers' bias gradients
    assert describe(variant, "step").count(SUMS) == 1  # and the last layer's, the column sums alone
    # every layer's bias (products this small are added to at once; a large one's bias goes into the ReLU's kernel)
    assert describe(variant, "step").count(ADD) == 3
    oracle, _ = _run(torch, False, sizes, dtype, optimizer=optimizer)
    tol = 1e-5 if dtype == np.float32 else 1e-12
    for a, b in zip(got, oracle):
        assert a[0] == pytest.approx(b[0], rel=tol)
        for x, y in zip(a[1:], b[1:]):
            np.testing.assert_allclose(x, y, rtol=tol * 10, atol=tol)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("rows", [1, 2, 7])
def test_kernel_matches_relu_backward_then_column_sums_on_special_values(dtype, rows):
    specials = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e-45, -3.5, np.finfo(dtype).max], dtype)
    rng = np.random.default_rng(rows)
    g = rng.choice(specials, (rows, 9)).astype(dtype)
    g[:, 0] = np.finfo(dtype).max  # a column summing past the type's range: inf, as sum's float64 fold rounds it
    out = rng.choice(specials, (rows, 9)).astype(dtype)
    out[:, 0] = 1.0
    grad, sums = np.empty_like(g), np.empty(9, dtype)
    relu_backward_column_sums(g, out, grad, np.empty(9), sums)
    expected = np.where(out <= 0, dtype(0), g)
    np.testing.assert_array_equal(grad.view(np.uint8), expected.view(np.uint8))  # signed zeros too
    want = np.empty(9, dtype)
    column_sums(expected, np.empty(9), want)
    _same(sums, want)
    # and as eager computes them: ReLU's backward and the bias's sum, through autograd
    h = numgrad.tensor(out, requires_grad=True)
    grad_eager = numgrad.autograd.grad(numgrad.relu(h), h, numgrad.tensor(g))[0]
    np.testing.assert_array_equal(grad_eager.numpy().view(np.uint8), grad.view(np.uint8))
    _same(numgrad.tensor(grad).sum(0).numpy(), sums)


def _same(a, b):
    """Equal values, zeros with their signs (a NaN's sign bit is not a value: sums reach NaN in either order)."""
    np.testing.assert_array_equal(a, b)
    assert np.array_equal(np.signbit(a) | np.isnan(a), np.signbit(b) | np.isnan(b))


def _tape(fn):
    (variant,) = fn.variants
    return describe(variant, "step")


def test_no_bias_leaves_the_relu_backward_alone():
    sizes = (12, 16, 3)
    got, fn = _run(numgrad, True, sizes, np.float32, bias=False)
    want, _ = _run(numgrad, False, sizes, np.float32, bias=False)
    for a, b in zip(got, want):
        assert a[0] == b[0]
        for x, y in zip(a[1:], b[1:]):
            np.testing.assert_array_equal(x, y)
    assert FUSED not in _tape(fn) and "relu_backward" in _tape(fn)


def _relu_sum_step(dim):
    def step(x, w):
        h = numgrad.relu(x @ w)
        loss = (h * h).sum(dim).sum() + h.sum(0).sum() * 0
        loss.backward()
        return loss
    return step


@pytest.mark.parametrize("dim", [0, 1])
def test_other_sums_replay_unfused_as_eager(dim):
    """A sum of a ReLU's gradient that is not the next recorded call, or over another dim, is left as it was."""
    rng = np.random.default_rng(5)
    w0 = rng.standard_normal((6, 10)).astype(np.float32)
    w, we = numgrad.tensor(w0, requires_grad=True), numgrad.tensor(w0, requires_grad=True)
    fn, step = numgrad.compile(_relu_sum_step(dim)), _relu_sum_step(dim)
    for k in range(3):
        x = numgrad.tensor(rng.standard_normal((8, 6)).astype(np.float32))
        w.grad = we.grad = None
        assert fn(x, w).item() == step(x, we).item()
        np.testing.assert_array_equal(w.grad.numpy(), we.grad.numpy())
    assert FUSED not in _tape(fn)


def test_a_range_split_over_threads_is_left_to_the_backward_kernel():
    """From threads.PARALLEL_MIN elements the ReLU's backward runs split over threads: not fused when there are
    several (one thread would be slower), fused with one; either way eager's values."""
    rows = PARALLEL_MIN // 64
    sizes = (8, 64, 3)
    results = {}
    threads = numgrad.get_num_threads()
    try:
        for n in sorted({1, max(threads, 2)}):
            numgrad.set_num_threads(n)
            model = _mlp(numgrad, sizes, np.float32)
            opt = numgrad.optim.SGD(model.parameters(), lr=0.1)
            fn = numgrad.compile(train_step)
            rng = np.random.default_rng(6)
            x = numgrad.tensor(rng.standard_normal((rows, 8)).astype(np.float32))
            y = numgrad.tensor(rng.integers(0, 3, rows))
            losses = [fn(numgrad, model, opt, x, y).item() for _ in range(2)]
            results[n] = (losses, [p.detach().numpy().copy() for p in model.parameters()], _tape(fn))
    finally:
        numgrad.set_num_threads(threads)
    (one, many) = results.values()
    assert one[0] == many[0]
    for a, b in zip(one[1], many[1]):
        np.testing.assert_array_equal(a, b)
    assert FUSED in one[2] and FUSED not in many[2]


def test_a_kept_bias_grad_keeps_its_values_and_the_next_lands_in_new_memory():
    """The bias's .grad a slot serves (compile/slots.py) is written by the fused kernel into memory nobody holds:
    a .grad the caller keeps from an earlier call keeps its values, as eager's."""
    sizes = (10, 16, 3)
    kept = {}
    for compiled in (True, False):
        model = _mlp(numgrad, sizes, np.float32)
        opt = numgrad.optim.SGD(model.parameters(), lr=0.1)
        fn = numgrad.compile(train_step) if compiled else train_step
        rng = np.random.default_rng(7)
        held, values = [], []
        for _ in range(4):
            x = numgrad.tensor(rng.standard_normal((12, 10)).astype(np.float32))
            y = numgrad.tensor(rng.integers(0, 3, 12))
            fn(numgrad, model, opt, x, y)
            for bias in (model[0].bias.grad, model[-1].bias.grad):  # fused with the ReLU's backward; alone
                held.append((bias, bias.numpy().copy()))
                values.append(bias.numpy().copy())
        for t, v in held:
            np.testing.assert_array_equal(t.numpy(), v)
        assert len({id(t) for t, _ in held}) == 8
        kept[compiled] = values
        if compiled:
            assert FUSED in _tape(fn)
    for a, b in zip(kept[True], kept[False]):
        np.testing.assert_array_equal(a, b)


def _sum_step(dim, dtype=None):
    def step(x, w):
        h = x * w
        loss = (h.sum(dim, dtype=dtype) ** 2).sum()
        loss.backward()
        return loss, h.detach().sum(dim, dtype=dtype)
    return step


def _special_rows(dtype, shape, seed):
    specials = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 2.5, -1e-30, np.finfo(dtype).max / 2], dtype)
    return np.random.default_rng(seed).choice(specials, shape).astype(dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_column_sums_replay_gives_eagers_sums_on_special_values(dtype):
    fn, step = numgrad.compile(_sum_step(0)), _sum_step(0)
    w0 = np.linspace(-1, 1, 7).astype(dtype)
    w, we = numgrad.tensor(w0, requires_grad=True), numgrad.tensor(w0, requires_grad=True)
    for k in range(4):
        x = numgrad.tensor(_special_rows(dtype, (5, 7), k))
        w.grad = we.grad = None
        (loss, sums), (e_loss, e_sums) = fn(x, w), step(x, we)
        _same(sums.numpy(), e_sums.numpy())
        _same(w.grad.numpy(), we.grad.numpy())
        np.testing.assert_array_equal(loss.detach().numpy(), e_loss.detach().numpy())
    # the loss's sum, the detached one, and w's gradient (summed over the rows x broadcasts w along)
    assert _tape(fn).count(SUMS) == 3


@pytest.mark.parametrize("case", ["dim 1", "3-d", "split over threads"])
def test_other_float_sums_replay_as_recorded(case):
    """Sums the kernel does not serve (over another dim, of another rank, a range the fold splits over threads)
    keep their recorded replay, with eager's values."""
    shape = {"dim 1": (5, 6), "3-d": (4, 5, 6), "split over threads": (PARALLEL_MIN // 6 + 1, 6)}[case]
    step = _sum_step(1 if case == "dim 1" else 0)
    fn = numgrad.compile(step)
    w0 = np.linspace(-1, 1, 6).astype(np.float32)
    w, we = numgrad.tensor(w0, requires_grad=True), numgrad.tensor(w0, requires_grad=True)
    threads = numgrad.get_num_threads()
    numgrad.set_num_threads(2)
    try:
        for k in range(3):
            x = numgrad.tensor(_special_rows(np.float32, shape, k + 10))
            w.grad = we.grad = None
            (loss, sums), (e_loss, e_sums) = fn(x, w), step(x, we)
            _same(sums.numpy(), e_sums.numpy())
            _same(w.grad.numpy(), we.grad.numpy())
    finally:
        numgrad.set_num_threads(threads)
    assert fn.variants[0].hits == 2
    tape = _tape(fn)
    assert SUMS not in tape if case != "dim 1" else tape.count(SUMS) == 1  # (dim 1: w's gradient alone)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_row_add_kernel_is_numpys_add(dtype):
    x = _special_rows(dtype, (6, 8), 1)
    b = _special_rows(dtype, (8,), 2)
    with np.errstate(all="ignore"):
        want = x + b
    add_to_rows(x, b)
    _same(x, want)


def _linear_step(x, w, b):
    out = numgrad.nn.functional.linear(x, w, b)
    (out * 2).backward(numgrad.ones_like(out))
    return out.detach()


@pytest.mark.parametrize("case", ["contiguous bias", "strided bias", "float64"])
def test_linear_bias_add_replays_eagers_values(case):
    """A Linear's bias added to the rows: the kernel for a contiguous row of the product's dtype, the recorded add
    for a strided one (a view of every other element); both eager's values."""
    dtype = np.float64 if case == "float64" else np.float32
    rng = np.random.default_rng(12)
    w0 = rng.standard_normal((5, 7)).astype(dtype)
    b0 = _special_rows(dtype, (10,), 3)  # inf, NaN, signed zeros added to finite products
    fn = numgrad.compile(_linear_step)
    w, we = numgrad.tensor(w0, requires_grad=True), numgrad.tensor(w0, requires_grad=True)
    base, base_e = numgrad.tensor(b0, requires_grad=True), numgrad.tensor(b0, requires_grad=True)
    b, be = (base[::2], base_e[::2]) if case == "strided bias" else (base[:5], base_e[:5])
    for k in range(3):
        x = numgrad.tensor(rng.standard_normal((4, 7)).astype(dtype))
        for t in (w, we, base, base_e):
            t.grad = None
        _same(fn(x, w, b).numpy(), _linear_step(x, we, be).numpy())
        _same(w.grad.numpy(), we.grad.numpy())
        _same(base.grad.numpy(), base_e.grad.numpy())
    assert fn.variants[0].hits == 2, fn.eager_reason
    assert (ADD in _tape(fn)) == (case != "strided bias")


def test_column_sums_of_an_argument_read_in_place_follow_each_calls_argument():
    """An argument of 64 KiB or more is read where the caller has it (compile/inputs.py remakes the entries that
    read it): the column sums entry is remade on each call's memory, with eager's sums."""
    def total(x, w):
        return x.sum(0) * w

    fn = numgrad.compile(total)
    w = numgrad.tensor(np.linspace(1, 2, 64).astype(np.float32))
    rng = np.random.default_rng(13)
    for k in range(4):
        x = numgrad.tensor(rng.standard_normal((512, 64)).astype(np.float32))  # 128 KiB, a new tensor each call
        _same(fn(x, w).numpy(), total(x, w).numpy())
    assert fn.variants[0].hits == 3
    assert SUMS in _tape(fn)

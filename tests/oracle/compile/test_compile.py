"""numgrad.compile against eager numgrad (bitwise: a replay runs the same kernels) and against torch (within
tolerance): values, .grad, parameters and optimizer state over several steps, guards, graph breaks."""
import warnings

import numpy as np
import pytest
import torch

import numgrad
from numgrad.bench.workloads import chain
from numgrad.compile import GraphBreak
from numgrad.compile.compiled import describe

nn = numgrad.nn


def _mlp(lib, seed=0, sizes=(20, 16, 16, 5)):
    """A ReLU MLP whose weights come from a seeded NumPy generator, the same on both libraries."""
    rng = np.random.default_rng(seed)
    layers = []
    for i, (a, b) in enumerate(zip(sizes, sizes[1:])):
        layer = lib.nn.Linear(a, b)
        with lib.no_grad():
            layer.weight.copy_(lib.tensor(rng.uniform(-0.3, 0.3, (b, a)).astype(np.float32)))
            layer.bias.copy_(lib.tensor(rng.uniform(-0.3, 0.3, b).astype(np.float32)))
        layers += [layer, lib.nn.ReLU()] if i < len(sizes) - 2 else [layer]
    return lib.nn.Sequential(*layers)


def _batches(n=4, rows=8, features=20, classes=5, seed=1):
    rng = np.random.default_rng(seed)
    return [(rng.standard_normal((rows, features)).astype(np.float32), rng.integers(0, classes, rows))
            for _ in range(n)]


def _optimizer(lib, params, name):
    if name == "sgd":
        return lib.optim.SGD(params, lr=0.05, momentum=0.9)
    if name == "adam":
        return lib.optim.Adam(params, lr=1e-2)
    return lib.optim.SGD(params, lr=0.1)


def _step(model, opt, loss_fn, compiled):
    """The usual training step, compiled or not."""
    def step(x, y):
        opt.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        return loss
    return numgrad.compile(step) if compiled else step


def _train(lib, opt_name, compiled, steps=4, scheduler=False):
    model = _mlp(lib)
    opt = _optimizer(lib, model.parameters(), opt_name)
    sched = lib.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5) if scheduler else None
    fn = _step(model, opt, lib.nn.functional.cross_entropy, compiled)
    losses = []
    for x, y in _batches(steps):
        losses.append(fn(lib.tensor(x), lib.tensor(y)).item())
        if sched is not None:
            sched.step()
    params = [p.detach().numpy().copy() for p in model.parameters()]
    grads = [p.grad.numpy().copy() for p in model.parameters()]
    return losses, params, grads, fn


@pytest.mark.parametrize("opt_name", ["sgd", "adam", "plain"])
@pytest.mark.parametrize("scheduler", [False, True])
def test_training_steps_match_eager_exactly_and_torch(opt_name, scheduler):
    eager = _train(numgrad, opt_name, False, scheduler=scheduler)
    compiled = _train(numgrad, opt_name, True, scheduler=scheduler)
    reference = _train(torch, opt_name, False, scheduler=scheduler)
    fn = compiled[3]
    assert fn.eager_reason is None and len(fn.variants) == 1 and fn.variants[0].hits == 3
    assert eager[0] == compiled[0]  # the same kernels on the same buffers: the same bits
    for a, b in zip(eager[1] + eager[2], compiled[1] + compiled[2]):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_allclose(compiled[0], reference[0], rtol=1e-5, atol=1e-6)
    for a, b in zip(compiled[1] + compiled[2], reference[1] + reference[2]):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)


_chain = chain  # the benchmark's: y = x * x; z = (y + 1) * y; z.sum().backward()


def _mixed(lib, x, w):
    # values computed in the call feed later kernels: a replay must read them again, not keep the trace's
    s = x.sum()
    y = (x * s + w.mean()).sum() + x.max() * 2 + lib.softmax(x * w[:3], 0).pow(2).sum()
    y.backward()
    return y


@pytest.mark.parametrize("fusion", [True, False])
def test_values_made_in_the_call_are_read_again_at_replay(fusion):
    with numgrad.fusion(fusion):
        fn = numgrad.compile(lambda x, w: _mixed(numgrad, x, w))
        xn = numgrad.tensor(np.arange(3, dtype=np.float32), requires_grad=True)
        xe = numgrad.tensor(np.arange(3, dtype=np.float32), requires_grad=True)
        xt = torch.tensor(np.arange(3, dtype=np.float32), requires_grad=True)
        for i in range(4):
            w = np.linspace(-1, 1, 4).astype(np.float32) * (i + 1)
            for t, lib in ((xn, numgrad), (xe, numgrad), (xt, torch)):
                with lib.no_grad():
                    t.add_(0.5)
                t.grad = None
            a = fn(xn, numgrad.tensor(w))
            b = _mixed(numgrad, xe, numgrad.tensor(w))
            c = _mixed(torch, xt, torch.tensor(w))
            assert a.item() == b.item()
            np.testing.assert_array_equal(xn.grad.numpy(), xe.grad.numpy())
            np.testing.assert_allclose(a.item(), c.item(), rtol=1e-5)
            np.testing.assert_allclose(xn.grad.numpy(), xt.grad.numpy(), rtol=1e-5)
        assert len(fn.variants) == 1 and fn.variants[0].hits == 3, fn.eager_reason


def test_tiny_chain_result_prints_as_torch_compile_and_refuses_a_second_backward():
    fn = numgrad.compile(lambda x: _chain(numgrad, x))
    x = numgrad.tensor([1.0, 2.0, 3.0], requires_grad=True)
    tx = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    ref = torch.compile(lambda x: _chain(torch, x), backend="eager")
    for _ in range(3):
        x.grad = None
        tx.grad = None
        s, ts = fn(x), ref(tx)
        assert s.item() == ts.item()
        np.testing.assert_array_equal(x.grad.numpy(), tx.grad.numpy())
    assert repr(s) == "tensor(112., grad_fn=<CompiledFunctionBackward>)"
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        s.backward()


def test_returned_tensors_are_fresh_each_call():
    fn = numgrad.compile(lambda x: (x * 2).sum(0))
    x = numgrad.tensor(np.ones((3, 2), np.float32))
    first = fn(x)
    second = fn(numgrad.tensor(np.full((3, 2), 5, np.float32)))
    assert first.tolist() == [6.0, 6.0] and second.tolist() == [30.0, 30.0]


def test_a_held_grad_keeps_its_values_as_in_eager():
    model = _mlp(numgrad)
    opt = _optimizer(numgrad, model.parameters(), "plain")

    def step(x, y):
        opt.zero_grad()
        numgrad.nn.functional.cross_entropy(model(x), y).backward()
        opt.step()

    fn = numgrad.compile(step)
    batches = _batches()
    for x, y in batches[:2]:
        fn(numgrad.tensor(x), numgrad.tensor(y))
    held = model[0].weight.grad
    kept = held.clone()
    fn(numgrad.tensor(batches[2][0]), numgrad.tensor(batches[2][1]))
    assert bool((held == kept).all())  # eager makes a new .grad after zero_grad(); the old one stays
    assert not bool((model[0].weight.grad == kept).all())


def test_new_shapes_trace_new_variants_up_to_the_limit():
    fn = numgrad.compile(lambda x: (x * 3).sum())
    for n in range(1, numgrad.compile.RECOMPILE_LIMIT + 1):
        assert fn(numgrad.tensor(np.ones(n, np.float32))).item() == 3 * n
    assert len(fn.variants) == 8
    with pytest.warns(UserWarning, match="recompile limit"):
        assert fn(numgrad.tensor(np.ones(20, np.float32))).item() == 60
    assert fn(numgrad.tensor(np.ones(21, np.float32))).item() == 63


def test_grad_mode_and_python_scalars_are_guarded():
    fn = numgrad.compile(lambda x, k: (x * k).sum())
    x = numgrad.tensor(np.ones(4, np.float32))
    assert fn(x, 2.0).item() == 8.0
    assert fn(x, 3.0).item() == 12.0  # a new value: a new trace, not the first one's constant
    with numgrad.no_grad():
        out = fn(x, 3.0)
    assert out.item() == 12.0 and not out.requires_grad
    assert len(fn.variants) == 3
    w = numgrad.tensor(np.ones(4, np.float32), requires_grad=True)
    out = fn(w, 2.0)  # requires_grad is guarded: a new variant, whose graph leaves the call
    assert out.grad_fn.name() == "CompiledFunctionBackward" and len(fn.variants) == 4
    out.backward()
    np.testing.assert_array_equal(w.grad.numpy(), np.full(4, 2.0, np.float32))


def test_a_value_read_into_python_breaks_the_graph_and_runs_eager():
    def step(x):
        s = (x * 2).sum()
        if s.item() > 10:  # control flow on a value
            return s * 2
        return s

    fn = numgrad.compile(step)
    assert fn(numgrad.tensor([1.0, 2.0])).item() == 6.0
    assert fn(numgrad.tensor([10.0, 2.0])).item() == 48.0
    report = numgrad.explain(step)(numgrad.tensor([1.0, 2.0]))
    assert report.graph_count == 0 and report.graph_break_count == 1
    assert "read into Python" in report.break_reasons[0] and "test_compile.py" in report.break_reasons[0]
    with pytest.raises(numgrad.compile.GraphBreak, match=r"read into Python .*test_compile.py:\d+"):
        numgrad.compile(step, fullgraph=True)(numgrad.tensor([1.0, 2.0]))


class _Double(numgrad.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, g):
        return g * 2


@pytest.mark.parametrize("case", ["function", "hook", "retain_grad", "numpy", "print", "dropout"])
def test_what_cannot_be_replayed_runs_eager_with_eager_results(case, capsys):
    def step(x):
        y = x * 3
        if case == "function":
            y = _Double.apply(y)
        elif case == "hook":
            y.register_hook(lambda g: g * 10)
        elif case == "retain_grad":
            y.retain_grad()
        elif case == "numpy":
            y = y + numgrad.tensor(y.detach().numpy() * 0)
        elif case == "print":
            print(y)
        elif case == "dropout":
            y = numgrad.nn.functional.dropout(y, 0.5)
        s = y.sum()
        s.backward()
        return s

    results = []
    for compiled in (False, True):
        numgrad.manual_seed(3)
        x = numgrad.tensor(np.linspace(-1, 1, 6).astype(np.float32), requires_grad=True)
        fn = numgrad.compile(step) if compiled else step
        for _ in range(3):
            x.grad = None
            results.append((fn(x).item(), x.grad.tolist()))
    assert results[:3] == results[3:]
    assert fn.eager_reason is not None and not fn.variants
    with pytest.raises(GraphBreak):
        numgrad.compile(step, fullgraph=True)(x)


def test_a_tensor_stored_outside_the_call_is_not_replayed_stale():
    stash = []

    def step(x):
        h = x * 2
        stash.append(h)
        return (h + 1).sum()

    fn = numgrad.compile(step)
    for v in (1.0, 2.0, 3.0):
        fn(numgrad.tensor([v, v]))
    assert [h.tolist() for h in stash] == [[2.0, 2.0], [4.0, 4.0], [6.0, 6.0]]
    assert "outlives" in fn.eager_reason


def test_an_in_place_write_to_an_argument_runs_eager():
    def step(x):
        x.add_(1)
        return x.sum()

    fn = numgrad.compile(step)
    x = numgrad.tensor([1.0, 2.0])
    assert fn(x).item() == 5.0 and x.tolist() == [2.0, 3.0]
    assert fn(x).item() == 7.0 and x.tolist() == [3.0, 4.0]
    assert "in place" in fn.eager_reason


def test_forward_only_module_compiled_in_eval_and_no_grad():
    model = _mlp(numgrad)
    reference = _mlp(torch)
    compiled = numgrad.compile(model)
    assert compiled._orig_mod is model and compiled.training and compiled.state_dict().keys() == model.state_dict().keys()
    for x, _ in _batches(3):
        with numgrad.no_grad():
            out = compiled(numgrad.tensor(x))
        with torch.no_grad():
            expected = reference(torch.tensor(x))
        np.testing.assert_allclose(out.numpy(), expected.numpy(), rtol=1e-5, atol=1e-6)
        np.testing.assert_array_equal(out.numpy(), model(numgrad.tensor(x)).detach().numpy())
    assert compiled._compiled.variants[0].hits == 2


def test_module_compile_in_place_with_backward_outside_replays():
    model = _mlp(numgrad)
    reference = _mlp(numgrad)
    model.compile()
    for x, y in _batches(3):
        for m in (model, reference):
            m.zero_grad()
            numgrad.nn.functional.cross_entropy(m(numgrad.tensor(x)), numgrad.tensor(y)).backward()
        for p, q in zip(model.parameters(), reference.parameters()):
            np.testing.assert_array_equal(p.grad.numpy(), q.grad.numpy())
    assert model._compiled_call.eager_reason is None and model._compiled_call.variants[0].hits == 2


def test_decorator_forms_and_keywords():
    @numgrad.compile
    def f(x, scale=1.0):
        return (x * scale).sum()

    @numgrad.compile(fullgraph=True, dynamic=True)
    def g(x):
        return x.exp().sum()

    x = numgrad.tensor([1.0, 2.0])
    assert f(x).item() == 3.0 and f(x, scale=2.0).item() == 6.0 and f(x, scale=2.0).item() == 6.0
    assert g(x).item() == pytest.approx(float(np.exp(1) + np.exp(2)), rel=1e-6)
    with pytest.raises(AssertionError, match="A callable function is expected"):
        numgrad.compile(5)
    assert numgrad.compile(f._fn, disable=True) is f._fn


def test_debug_prints_the_tape(monkeypatch, capsys):
    monkeypatch.setenv("NUMGRAD_DEBUG", "1")
    fn = numgrad.compile(lambda x: _chain(numgrad, x))
    fn(numgrad.tensor([1.0, 2.0], requires_grad=True))
    err = capsys.readouterr().err
    assert "numgrad.compile: <lambda>:" in err and "fused map kernel" in err


def test_replayed_masked_fill_reads_new_inputs_and_masks():
    """A replayed masked_fill reads each call's input and broadcast mask, with the fills written in the code
    (-inf, as attention masks use it), as eager and torch give them: both fills, the mask's negation and the
    product are the softmax's pending input, computed in its row kernel (one entry, nothing stored between)."""
    def f(lib, x, mask):
        return (x.masked_fill(mask, -1.5) * 2).masked_fill(~mask, float("-inf")).softmax(-1)

    fn = numgrad.compile(lambda x, mask: f(numgrad, x, mask))
    rng = np.random.default_rng(3)
    for _ in range(4):
        x = rng.standard_normal((2, 3, 4, 4)).astype(np.float32)
        mask = rng.random((4, 4)) < 0.5
        mask[:, 0] = True  # no row all -inf (NaN rows are another test's business)
        got = fn(numgrad.tensor(x), numgrad.tensor(mask))
        eager = f(numgrad, numgrad.tensor(x), numgrad.tensor(mask))
        reference = f(torch, torch.tensor(x), torch.tensor(mask))
        np.testing.assert_array_equal(got.numpy(), eager.numpy())
        np.testing.assert_allclose(got.numpy(), reference.numpy(), rtol=1e-6, atol=1e-7)
    assert fn.variants[0].hits == 3, fn.eager_reason
    assert describe(fn.variants[0], "f").splitlines()[1:] == ["    0 softmax forward pending (24 rows of 4, prepared)"]


def test_describe_names_each_entry_on_one_line():
    """NumPy work recorded through dispatch.numpy_op (an embedding's gradient written at its indices) and bound
    array methods are named by the function they run, never printed as their array arguments."""
    emb = numgrad.nn.Embedding(10, 4)
    fn = numgrad.compile(lambda idx: emb(idx).sum().backward())
    idx = numgrad.tensor(np.arange(64) % 10)
    for _ in range(2):
        emb.weight.grad = None
        fn(idx)
    variant = fn.variants[0]
    lines = describe(variant, "step").splitlines()
    assert len(lines) == len(variant.entries) + 1
    assert any(line.endswith("numgrad.kernels.dispatch.indexing._summed_rows") for line in lines), lines
    assert all(line.split()[-1][0].isalpha() for line in lines[1:]), lines


def test_no_warnings_on_the_replay_path():
    fn = numgrad.compile(lambda x: _chain(numgrad, x))
    x = numgrad.tensor([1.0, 2.0], requires_grad=True)
    fn(x)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        x.grad = None
        fn(x)


def test_replayed_casts_fills_and_0d_constants_match_eager_and_torch_at_the_edges():
    """The tape's lean replays of a narrowing cast (a float32 sum accumulated in float64), of a fill and of a
    0-d constant: a sum past float32's range is inf, a NaN stays NaN, with no warning, as eager and torch."""
    def f(lib, x):
        z = lib.zeros(3)
        z.add_(x)  # a recorded write into a fill: each replay fills again
        c = lib.tensor(2.0)
        c.mul_(x[0])  # and into a 0-d constant
        return x.sum(), (z * c).sum()

    fn = numgrad.compile(lambda x: f(numgrad, x))
    big = np.finfo(np.float32).max
    cases = [[1.0, 2.0, 3.0], [big, big, 1.0], [-big, -big, 1.0], [np.nan, 1.0, 1.0], [np.inf, -np.inf, 1.0],
             [0.5, 0.25, 1.0]]
    for values in cases:
        x = np.array(values, np.float32)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            got = [t.item() for t in fn(numgrad.tensor(x))]
        with np.errstate(all="ignore"):
            eager = [t.item() for t in f(numgrad, numgrad.tensor(x))]
        reference = [t.item() for t in f(torch, torch.tensor(x))]
        np.testing.assert_array_equal(got, eager)
        np.testing.assert_array_equal(got, reference)
    assert fn.variants[0].hits == len(cases) - 1, fn.eager_reason


@pytest.mark.parametrize("fusion", [True, False])
def test_mse_regression_step_matches_eager_and_torch(fusion):
    def run(lib, compiled):
        model = _mlp(lib, sizes=(20, 8, 3))
        fn = _step(model, lib.optim.Adam(model.parameters(), lr=1e-2), lib.nn.functional.mse_loss, compiled)
        rng = np.random.default_rng(5)
        losses = [fn(lib.tensor(rng.standard_normal((6, 20)).astype(np.float32)),
                     lib.tensor(rng.standard_normal((6, 3)).astype(np.float32))).item() for _ in range(4)]
        return losses, [p.detach().numpy().copy() for p in model.parameters()], fn

    with numgrad.fusion(fusion):
        eager, compiled = run(numgrad, False), run(numgrad, True)
    reference = run(torch, False)
    assert compiled[2].variants[0].hits == 3, compiled[2].eager_reason
    assert eager[0] == compiled[0]
    for a, b, c in zip(eager[1], compiled[1], reference[1]):
        np.testing.assert_array_equal(a, b)
        np.testing.assert_allclose(b, c, rtol=1e-4, atol=1e-5)


def test_threads_calling_one_compiled_step_get_eager_results():
    import threading
    fn = numgrad.compile(lambda x: ((x * x + 1) * x).sum(0))
    inputs = [np.full((64, 8), k, np.float32) for k in range(8)]
    results, errors = {}, []

    def work(k):
        try:
            for _ in range(30):
                out = fn(numgrad.tensor(inputs[k])).tolist()
                assert out == [((k * k + 1) * k) * 64.0] * 8, (k, out)
            results[k] = True
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and len(results) == 8


def test_numbers_written_in_the_code_are_constants_and_numpy_data_breaks():
    def f(x):
        w = numgrad.tensor([1.0, 2.0, 3.0])
        w.mul_(x.sum())  # a recorded write into the constant: each replay starts from the numbers again
        return (w * x).sum()

    fn = numgrad.compile(f, fullgraph=True)
    for k in range(1, 4):
        x = numgrad.tensor(np.full(3, k, np.float32))
        assert fn(x).item() == f(x).item() == 18.0 * k * k
    assert fn.variants[0].hits == 2
    g = numgrad.compile(lambda x: x + numgrad.tensor(np.ones(3, np.float32)))  # NumPy data: read as it is then
    assert g(numgrad.tensor([1.0, 2.0, 3.0])).tolist() == [2.0, 3.0, 4.0] and g.eager_reason is not None


def test_a_replay_bumps_the_versions_of_what_it_writes_in_place():
    """A replay's in-place writes to a tensor from before the call count as eager's do: a graph that saved it
    refuses its backward after either (the version counter was left behind by replays)."""
    w = numgrad.tensor([1.0, 2.0], requires_grad=True)

    def scale(w):
        with numgrad.no_grad():
            w.mul_(2)

    fn = numgrad.compile(scale)
    for f in (scale, fn, fn, fn):
        y = (w * w).sum()
        before = w._version
        f(w)
        assert w._version == before + 1
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            y.backward()
    assert fn.variants[0].hits == 2


@pytest.mark.parametrize("rows", [3, 700])  # one checksum piece; several, spread over the threads
def test_a_write_through_shared_numpy_memory_between_recorded_ops_breaks_the_graph(rows):
    """The trace checksums the memory it reads: an untracked write (plain NumPy into a tensor's shared memory)
    between two recorded matmuls reading it makes the call break the graph, so every call equals eager's."""
    def make():
        a = np.ones((rows, 200), np.float32)
        return a, numgrad.from_numpy(a)

    def step(a, w):
        def f(x):
            y = x @ w  # reads w as it is now
            a[0, :] += 1.0  # a write no recorded kernel makes
            return (x @ w).sum() + y.sum()
        return f

    a_e, w_e = make()
    a_c, w_c = make()
    f_eager, f_compiled = step(a_e, w_e), numgrad.compile(step(a_c, w_c))
    x = numgrad.tensor(np.random.default_rng(0).standard_normal((4, rows)).astype(np.float32))
    for _ in range(3):
        assert f_compiled(x).item() == f_eager(x).item()
    np.testing.assert_array_equal(a_c, a_e)
    assert f_compiled.eager_reason is not None or not any(v.hits for v in f_compiled.variants)
    with pytest.raises(GraphBreak, match="written outside the recorded kernels"):
        numgrad.compile(step(*make()), fullgraph=True)(x)

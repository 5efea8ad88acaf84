"""A large tensor argument that needs no grad (a batch) is read by the replay where the caller has it, not copied
into the tape's buffer at each call (compile/inputs.py): the entries that read it are made again on the caller's
memory. Values bit for bit as eager's (and torch's within rounding) whatever comes in: new tensors each call, the
same tensor written in place, memory laid out otherwise or memory the tape itself writes (then copied)."""
import numpy as np
import pytest
import torch

import numgrad
from numgrad.compile.slots import Slot
from numgrad.kernels import dispatch

BATCH, FEATURES, CLASSES = 512, 256, 10  # a float32 batch of 512 KiB: above inputs.MIN_BYTES


@pytest.fixture
def buffer_copies(monkeypatch):
    """The ids of the arrays numgrad copies into (dispatch.copy_into), as the calls made them."""
    copies = []
    original = dispatch.copy_into

    def spy(dst, src):
        copies.append(id(dst))
        return original(dst, src)
    monkeypatch.setattr(dispatch, "copy_into", spy)
    return copies


def _batches(count, seed=0):
    rng = np.random.default_rng(seed)
    return [(rng.standard_normal((BATCH, FEATURES)).astype(np.float32),
             rng.integers(0, CLASSES, BATCH).astype(np.int64)) for _ in range(count)]


def _model(lib):
    lib.manual_seed(0)
    model = lib.nn.Sequential(lib.nn.Linear(FEATURES, 32), lib.nn.ReLU(), lib.nn.Linear(32, CLASSES))
    rng = np.random.default_rng(1)
    with lib.no_grad():
        for p in model.parameters():
            p.copy_(lib.tensor((rng.standard_normal(tuple(p.shape)) * 0.1).astype(np.float32)))
    return model


def _train(lib, compiled, batches, make=None):
    """Losses and final parameters of SGD steps on `batches` (each made into tensors by `make`, new ones by
    default); with `compiled`, also the step."""
    model = _model(lib)
    opt = lib.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)

    def step(x, y):
        opt.zero_grad()
        loss = lib.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return loss
    fn = numgrad.compile(step) if compiled else step
    make = make or (lambda x, y: (lib.tensor(x), lib.tensor(y)))
    losses = [fn(*make(x, y)).item() for x, y in batches]
    return fn, losses, [p.detach().numpy().copy() for p in model.parameters()]


def _same_training(got, want):
    assert got[1] == want[1]
    for a, b in zip(got[2], want[2]):
        np.testing.assert_array_equal(a, b)


def test_a_new_batch_each_step_is_read_in_place(buffer_copies):
    batches = _batches(5)
    got = _train(numgrad, True, batches)
    (variant,) = got[0].variants
    x_input = variant.inputs[0]
    assert variant.hits == 4, got[0].eager_reason
    assert x_input.binds is not None and id(x_input.buf) not in buffer_copies  # the batch: never copied
    # the first layer's weight gradient reads the batch: its slot's entry is made on the caller's memory
    assert any(isinstance(target, Slot) for target, _, _ in x_input.binds)
    _same_training(got, _train(numgrad, False, batches))
    ref = _train(torch, False, batches)
    np.testing.assert_allclose(got[1], ref[1], rtol=1e-5)
    for a, b in zip(got[2], ref[2]):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-6)


def test_the_same_batch_written_in_place_between_steps():
    batches = _batches(4, seed=2)

    def run(compiled):
        x, y = numgrad.tensor(batches[0][0]), numgrad.tensor(batches[0][1])

        def refill(xa, ya):  # (a data loader's own buffers, written in place: no grad needed)
            x.copy_(numgrad.tensor(xa))
            y.copy_(numgrad.tensor(ya))
            return x, y
        return _train(numgrad, compiled, batches, refill)
    got = run(True)
    assert got[0].variants[0].hits == 3
    _same_training(got, run(False))


@pytest.mark.parametrize("kind", ["rows of a dataset", "the tape's own memory"])
def test_a_view_of_a_dataset_is_read_in_place_and_the_tapes_own_memory_copied_in(kind, buffer_copies):
    """Rows of a larger array (a dataset sliced into batches) are read where they are; a parameter's memory,
    which the step itself writes, is copied into the buffer (and the next batch is read in place again)."""
    rows = BATCH * 64  # float32: 128 KiB
    dataset = numgrad.tensor(np.random.default_rng(11).standard_normal((4 * rows, 1)).astype(np.float32))

    def run(compiled):
        w = numgrad.tensor(np.linspace(-1, 1, rows, dtype=np.float32).reshape(rows, 1), requires_grad=True)
        opt = numgrad.optim.SGD([w], lr=0.1)

        def step(x):
            opt.zero_grad()
            loss = (x.t() @ w).tanh().sum()  # (matrix products read the argument: entries made again on it)
            loss.backward()
            opt.step()
            return loss
        fn = numgrad.compile(step) if compiled else step
        # (the trace's argument is a tensor of its own: a view there is guarded as that very tensor)
        calls = [dataset[:rows].clone()] + [dataset[k * rows:(k + 1) * rows] for k in range(1, 4)]
        if kind != "rows of a dataset":
            calls.insert(2, w.detach())
        losses = [fn(x).item() for x in calls]
        return fn, losses, [w.detach().numpy().copy()]
    got = run(True)
    (variant,) = got[0].variants
    x_input = variant.inputs[0]
    assert variant.hits == len(got[1]) - 1 and x_input.binds is not None
    assert buffer_copies.count(id(x_input.buf)) == (0 if kind == "rows of a dataset" else 1)
    _same_training(got, run(False))


def test_a_product_handed_out_in_its_own_memory_reads_the_batch_in_place(buffer_copies):
    w = numgrad.tensor(np.random.default_rng(4).standard_normal((FEATURES, FEATURES)).astype(np.float32))
    fn = numgrad.compile(lambda x: x @ w)
    kept = []
    for x, _ in _batches(4, seed=5):
        out = fn(numgrad.tensor(x))
        np.testing.assert_array_equal(out.numpy(), (numgrad.tensor(x) @ w).numpy())
        kept.append((out, out.numpy().copy()))
    for out, values in kept:  # each result in memory of its own, unchanged since
        np.testing.assert_array_equal(out.numpy(), values)
    (variant,) = fn.variants
    (slot,) = variant.slots
    assert [target for target, _, _ in variant.inputs[0].binds] == [slot]
    assert id(variant.inputs[0].buf) not in buffer_copies


@pytest.mark.parametrize("reshaped", [False, True])
def test_backward_outside_the_call(reshaped):
    """compile(model) with the backward after the call: the trace's graph reads the batch through the proxy,
    pointed at the caller's memory; a view of it made in the call would read the buffer: then it is copied."""
    batches = _batches(4, seed=6)

    def train(compiled):
        model = _model(numgrad)

        def forward(x):
            return model(x.reshape(BATCH, FEATURES // 2, 2).flatten(1) if reshaped else x)
        call = numgrad.compile(forward) if compiled else forward
        opt = numgrad.optim.SGD(model.parameters(), lr=0.1)
        losses = []
        for x, y in batches:
            opt.zero_grad()
            loss = numgrad.nn.functional.cross_entropy(call(numgrad.tensor(x)), numgrad.tensor(y))
            loss.backward()
            opt.step()
            losses.append(loss.item())
        return call, losses, [p.detach().numpy().copy() for p in model.parameters()]
    got = train(True)
    (variant,) = got[0].variants
    assert variant.hits == 3 and (variant.inputs[0].binds is None) == reshaped
    _same_training(got, train(False))

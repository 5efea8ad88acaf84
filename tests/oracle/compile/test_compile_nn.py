"""numgrad.compile of the nn layers the benchmark's training steps use (conv2d, max_pool2d, embedding,
layer_norm, reshape copies, clone): a replayed step is bitwise equal to eager numgrad and close to torch, and
the ops made replayable still give torch's eager results."""
import numpy as np
import pytest
import torch

import numgrad
from numgrad.compile.compiled import describe
from numgrad.compile import GraphBreak
from numgrad.bench.workloads import _gpt_class, _load_weights, lm_step, train_step

F = numgrad.nn.functional


def _convnet(lib, rng):
    """The benchmark's convnet on 1x12x12 images: conv, ReLU, pool, conv, ReLU, flatten, linear."""
    nn = lib.nn
    model = nn.Sequential(nn.Conv2d(1, 4, 3), nn.ReLU(), nn.MaxPool2d(2), nn.Conv2d(4, 6, 3), nn.ReLU(),
                          nn.Flatten(), nn.Linear(6 * 3 * 3, 5))
    model = _load_weights(lib, model, rng)
    return model, lib.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)


def _convnet_batches(steps=4):
    rng = np.random.default_rng(7)
    return [(rng.standard_normal((4, 1, 12, 12)).astype(np.float32), rng.integers(0, 5, 4)) for _ in range(steps)]


def _gpt(lib, rng):
    """The benchmark's GPT block, small: vocabulary 16, 8 positions, width 16, 2 heads."""
    model = _load_weights(lib, _gpt_class(lib)(16, 8, 16, 2), rng)
    return model, lib.optim.AdamW(model.parameters(), lr=1e-2)


_QKV_BIAS = 9  # the position of qkv.bias among the GPT block's parameters


def _gpt_batches(steps=4):
    rng = np.random.default_rng(8)
    return [rng.integers(0, 16, (4, 9)) for _ in range(steps)]


def _run(lib, which, compiled):
    """Four steps on different inputs: the losses, parameters, gradients and the compiled function."""
    rng = np.random.default_rng(0)
    if which == "convnet":
        model, opt = _convnet(lib, rng)
        fn = numgrad.compile(train_step, fullgraph=True) if compiled else train_step
        losses = [fn(lib, model, opt, lib.tensor(x), lib.tensor(y)).item() for x, y in _convnet_batches()]
    else:
        model, opt = _gpt(lib, rng)
        fn = numgrad.compile(lm_step, fullgraph=True) if compiled else lm_step
        mask = lib.tensor(np.triu(np.ones((8, 8), bool), 1))
        pos = lib.tensor(np.arange(8))
        losses = [fn(lib, model, opt, lib.tensor(idx[:, :-1].copy()), pos, mask, lib.tensor(idx[:, 1:].copy())).item()
                  for idx in _gpt_batches()]
    params = [p.detach().numpy().copy() for p in model.parameters()]
    grads = [p.grad.numpy().copy() for p in model.parameters()]
    return losses, params, grads, fn


@pytest.mark.parametrize("which", ["convnet", "gpt"])
def test_training_step_replays_bitwise_as_eager_and_matches_torch(which):
    eager = _run(numgrad, which, False)
    compiled = _run(numgrad, which, True)
    reference = _run(torch, which, False)
    fn = compiled[3]
    assert fn.eager_reason is None and len(fn.variants) == 1 and fn.variants[0].hits == 3
    assert eager[0] == compiled[0]
    for a, b in zip(eager[1] + eager[2], compiled[1] + compiled[2]):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_allclose(compiled[0], reference[0], rtol=1e-4, atol=1e-5)
    for a, b in zip(compiled[2], reference[2]):
        np.testing.assert_allclose(a, b, rtol=1e-3, atol=1e-4)
    for i, (a, b) in enumerate(zip(compiled[1], reference[1])):
        if which == "gpt" and i == _QKV_BIAS:
            # the key bias's gradient is zero but for rounding (softmax ignores a shift of a row's scores):
            # AdamW turns that noise into steps of up to lr, either way, in both libraries
            np.testing.assert_allclose(a[16:32], b[16:32], atol=4 * 1e-2)
            a, b = np.delete(a, np.s_[16:32]), np.delete(b, np.s_[16:32])
        np.testing.assert_allclose(a, b, rtol=1e-3, atol=1e-4)


# ---- the ops made replayable, eager against torch --------------------------------------------------------

def _pair(array, grad=True):
    """The same values as a numgrad and a torch tensor."""
    return numgrad.tensor(array, requires_grad=grad), torch.tensor(array, requires_grad=grad)


def _check(ours, theirs, inputs, rtol=1e-5, atol=1e-6):
    """Values and the input gradients of a random projection of the output agree."""
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=rtol, atol=atol)
    w = np.random.default_rng(3).standard_normal(tuple(theirs.shape)).astype(np.float32)
    (ours * numgrad.tensor(w)).sum().backward()
    (theirs * torch.tensor(w)).sum().backward()
    for a, b in inputs:
        if b.grad is not None:
            np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=rtol * 10, atol=atol * 10)


@pytest.mark.parametrize("kernel,stride,padding,groups", [(3, 1, 0, 1), (1, 1, 0, 1), (3, 2, 1, 2)])
def test_conv2d_eager_matches_torch(kernel, stride, padding, groups):
    rng = np.random.default_rng(1)
    x = _pair(rng.standard_normal((2, 4, 7, 7)).astype(np.float32))
    w = _pair(rng.standard_normal((6, 4 // groups, kernel, kernel)).astype(np.float32))
    b = _pair(rng.standard_normal(6).astype(np.float32))
    ours = F.conv2d(x[0], w[0], b[0], stride, padding, 1, groups)
    theirs = torch.nn.functional.conv2d(x[1], w[1], b[1], stride, padding, 1, groups)
    _check(ours, theirs, [x, w, b], rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("kernel,stride,padding", [(2, 2, 0), (3, 1, 1)])
def test_max_pool2d_eager_matches_torch(kernel, stride, padding):
    x = _pair(np.random.default_rng(2).standard_normal((2, 3, 6, 6)).astype(np.float32))
    ours, oi = F.max_pool2d(x[0], kernel, stride, padding, return_indices=True)
    theirs, ti = torch.nn.functional.max_pool2d(x[1], kernel, stride, padding, return_indices=True)
    np.testing.assert_array_equal(oi.numpy(), ti.numpy())
    _check(ours, theirs, [x])


@pytest.mark.parametrize("padding_idx,freq", [(None, False), (2, True)])
def test_embedding_eager_matches_torch(padding_idx, freq):
    idx = np.array([[1, 2, 4], [2, 2, 0]])
    w = _pair(np.random.default_rng(4).standard_normal((5, 3)).astype(np.float32))
    ours = F.embedding(numgrad.tensor(idx), w[0], padding_idx, scale_grad_by_freq=freq)
    theirs = torch.nn.functional.embedding(torch.tensor(idx), w[1], padding_idx, scale_grad_by_freq=freq)
    _check(ours, theirs, [w])
    with pytest.raises(IndexError, match="index out of range in self"):
        F.embedding(numgrad.tensor(np.array([5])), w[0])


def test_layer_norm_eager_matches_torch():
    rng = np.random.default_rng(5)
    x, w, b = (_pair(rng.standard_normal(s).astype(np.float32)) for s in ((3, 4, 6), (6,), (6,)))
    ours = F.layer_norm(x[0], (6,), w[0], b[0])
    theirs = torch.nn.functional.layer_norm(x[1], (6,), w[1], b[1])
    _check(ours, theirs, [x, w, b])


def test_reshape_copy_and_clone_eager_match_torch():
    x = _pair(np.random.default_rng(6).standard_normal((3, 4, 5)).astype(np.float32))
    ours, theirs = x[0].transpose(0, 1).reshape(4, 15), x[1].transpose(0, 1).reshape(4, 15)
    _check(ours, theirs, [x])
    y = _pair(np.random.default_rng(6).standard_normal((3, 4)).astype(np.float32))
    ours, theirs = y[0].t().clone(), y[1].t().clone()
    assert ours.stride() == theirs.stride()
    _check(ours, theirs, [y])


def test_embedding_max_norm_breaks_the_graph():
    weight = numgrad.tensor(np.ones((4, 3), np.float32) * 3)
    fn = numgrad.compile(lambda i: F.embedding(i, weight, max_norm=1.0), fullgraph=True)
    with pytest.raises(GraphBreak, match="max_norm"):
        fn(numgrad.tensor(np.array([1, 2])))


@pytest.mark.parametrize("index_shape", [(6,), (2, 3)])
def test_embedding_replay_gathers_each_calls_rows_and_checks_them(index_shape):
    """A replayed embedding lookup gathers the rows of each call's indices from the weight as it is then (the
    optimizer wrote it in place), into the trace's buffer; an index out of range raises torch's IndexError."""
    rng = np.random.default_rng(4)
    weight = rng.standard_normal((7, 3)).astype(np.float32)
    ours, eager, theirs = numgrad.nn.Embedding(7, 3), numgrad.nn.Embedding(7, 3), torch.nn.Embedding(7, 3)
    for lib, emb in ((numgrad, ours), (numgrad, eager), (torch, theirs)):
        with lib.no_grad():
            emb.weight.copy_(lib.tensor(weight))
    opts = [lib.optim.SGD(emb.parameters(), lr=0.1)
            for lib, emb in ((numgrad, ours), (numgrad, eager), (torch, theirs))]

    def step(lib, emb, opt, idx):
        opt.zero_grad()
        out = emb(idx)
        (out * out).sum().backward()
        opt.step()
        return out
    compiled = numgrad.compile(lambda idx: step(numgrad, ours, opts[0], idx), fullgraph=True)
    for _ in range(4):
        idx = rng.integers(0, 7, index_shape)
        got = compiled(numgrad.tensor(idx))
        want = step(torch, theirs, opts[2], torch.tensor(idx))
        by_eager = step(numgrad, eager, opts[1], numgrad.tensor(idx))
        np.testing.assert_array_equal(got.detach().numpy(), by_eager.detach().numpy())
        np.testing.assert_array_equal(ours.weight.detach().numpy(), eager.weight.detach().numpy())
        np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=1e-6, atol=1e-6)
        np.testing.assert_allclose(ours.weight.detach().numpy(), theirs.weight.detach().numpy(), rtol=1e-6, atol=1e-6)
    assert compiled.variants[0].hits == 3
    assert "_gather_rows_into" in describe(compiled.variants[0], "step")
    with pytest.raises(IndexError, match="index out of range in self"):
        compiled(numgrad.tensor(np.full(index_shape, 7)))


def test_index_put_replays_its_write_and_checks_new_indices():
    """embedding's gradient is an index_put: a replay repeats the write, and refuses a bad index as eager does."""
    def fn(i, v):
        z = numgrad.zeros(5)
        z.index_put_((i,), v, accumulate=True)
        return z * 2
    compiled = numgrad.compile(fn, fullgraph=True)
    v = numgrad.tensor(np.arange(1, 4, dtype=np.float32))
    for idx in ([0, 1, 1], [2, 2, 4], [-1, 0, 3]):
        i = np.array(idx)
        expected = torch.zeros(5).index_put_((torch.tensor(i),), torch.tensor(v.numpy()), accumulate=True) * 2
        np.testing.assert_array_equal(compiled(numgrad.tensor(i), v).numpy(), expected.numpy())
    assert compiled.variants[0].hits == 2
    with pytest.raises(IndexError, match="index 7 is out of bounds for dimension 0 with size 5"):
        compiled(numgrad.tensor(np.array([2, 7, 4])), v)


@pytest.mark.filterwarnings("ignore:Use of masked_fill_ on expanded tensors")
def test_masked_fill_into_an_expanded_tensor_replays_its_write():
    """masked_fill_ into an expanded tensor writes the masked elements alone: a replay writes them again."""
    def fn(lib, mask):
        z = lib.zeros(3, 1)
        z.expand(3, 4).masked_fill_(mask, 2.0)
        return z * 1
    compiled = numgrad.compile(lambda mask: fn(numgrad, mask), fullgraph=True)
    for m in ([[1, 0, 0, 0], [0, 0, 0, 0], [0, 1, 0, 0]], [[0, 0, 0, 0], [1, 0, 0, 0], [0, 0, 0, 0]]):
        m = np.array(m, bool)
        np.testing.assert_array_equal(compiled(numgrad.tensor(m)).numpy(), fn(torch, torch.tensor(m)).numpy())
    assert compiled.variants[0].hits == 1


@pytest.mark.parametrize("momentum", [0.1, None])
def test_batch_norm_module_step_replays_with_its_running_statistics(momentum):
    """BatchNorm2d's statistics, running update and batch count are recorded calls: a replay updates them as
    eager does. With momentum=None (a cumulative average) the factor is read into Python: eager then."""
    nn = numgrad.nn
    runs = []
    for compiled in (False, True):
        numgrad.manual_seed(0)
        model = nn.Sequential(nn.Conv2d(1, 2, 3), nn.BatchNorm2d(2, momentum=momentum), nn.Flatten(),
                              nn.Linear(2 * 10 * 10, 5))
        opt = numgrad.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
        fn = numgrad.compile(train_step) if compiled else train_step
        losses = [fn(numgrad, model, opt, numgrad.tensor(x), numgrad.tensor(y)).item() for x, y in _convnet_batches(4)]
        model.eval()
        with numgrad.no_grad():
            evaluated = model(numgrad.tensor(_convnet_batches(1)[0][0])).numpy().copy()
        state = {k: v.numpy().copy() for k, v in model.state_dict().items()}
        runs.append((losses, state, evaluated, fn))
    (losses, state, evaluated, _), (c_losses, c_state, c_evaluated, fn) = runs
    assert losses == c_losses
    assert state.keys() == c_state.keys() and int(c_state["1.num_batches_tracked"]) == 4
    for k in state:
        np.testing.assert_array_equal(state[k], c_state[k])
    np.testing.assert_array_equal(evaluated, c_evaluated)
    if momentum is None:
        assert "read into Python" in fn.eager_reason
    else:
        assert fn.eager_reason is None and fn.variants[0].hits == 3

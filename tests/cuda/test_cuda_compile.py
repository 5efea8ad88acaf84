"""numgrad.compile on the GPU (simulator): a traced step replays the same CUDA kernels, with eager's numbers;
what it cannot replay (a GPU value read on the host) runs eager."""
import numpy as np
import pytest

import numgrad

F = numgrad.nn.functional


def _chain(x):
    y = x * x
    z = (y + 1) * y
    s = z.sum()
    s.backward()
    return s


def test_tiny_chain_replays_on_the_gpu():
    fn = numgrad.compile(_chain, fullgraph=True)
    x = numgrad.tensor(np.array([1.0, 2.0, 3.0], np.float32)).cuda().requires_grad_()
    for k in range(3):
        with numgrad.no_grad():
            x.mul_(1.5 if k else 1.0)
        expected = _chain(numgrad.tensor(x.detach().cpu().numpy(), requires_grad=True))
        x.grad = None
        s = fn(x)
        assert s.device.type == "cuda" and s.item() == expected.item()
    assert fn.variants[0].hits == 2


@pytest.mark.parametrize("opt", ["sgd", "adam"])
def test_training_step_on_the_gpu_matches_eager(opt):
    def run(compiled):
        numgrad.manual_seed(0)
        model = numgrad.nn.Sequential(numgrad.nn.Linear(6, 5), numgrad.nn.Tanh(), numgrad.nn.Linear(5, 3)).cuda()
        o = numgrad.optim.SGD(model.parameters(), lr=0.1, momentum=0.9) if opt == "sgd" else \
            numgrad.optim.Adam(model.parameters(), lr=0.05)

        def step(x, y):
            o.zero_grad()
            loss = F.mse_loss(model(x), y)
            loss.backward()
            o.step()
            return loss

        fn = numgrad.compile(step, fullgraph=True) if compiled else step
        rng = np.random.default_rng(0)
        losses = [fn(numgrad.tensor(rng.standard_normal((4, 6)).astype(np.float32)).cuda(),
                     numgrad.tensor(rng.standard_normal((4, 3)).astype(np.float32)).cuda()).item() for _ in range(3)]
        return losses, [p.detach().cpu().numpy() for p in model.parameters()], fn

    eager, compiled = run(False), run(True)
    assert compiled[2].variants[0].hits == 2
    assert eager[0] == compiled[0]
    for a, b in zip(eager[1], compiled[1]):
        np.testing.assert_array_equal(a, b)


def test_forward_only_module_on_the_gpu():
    model = numgrad.nn.Sequential(numgrad.nn.Linear(4, 3), numgrad.nn.ReLU()).cuda()
    fn = numgrad.compile(model)
    with numgrad.no_grad():
        for k in range(3):
            x = numgrad.tensor(np.linspace(-1, 1, 8).astype(np.float32).reshape(2, 4) * (k + 1)).cuda()
            assert fn(x).cpu().tolist() == model(x).cpu().tolist()
    assert fn._compiled.variants[0].hits == 2


def test_what_the_gpu_step_cannot_replay_runs_eager():
    def step(x, t):  # cross_entropy on the GPU: its targets are checked on the host, its arrays made by tensor ops
        return F.cross_entropy(x, t)

    fn = numgrad.compile(step)
    x = numgrad.tensor(np.linspace(-1, 1, 6).astype(np.float32).reshape(2, 3)).cuda()
    for t in ([0, 2], [1, 1]):
        target = numgrad.tensor(t).cuda()
        assert fn(x, target).item() == step(x, target).item()
    assert fn.eager_reason is not None and not fn.variants


def test_module_with_backward_outside_the_call_on_the_gpu():
    def run(compiled):
        numgrad.manual_seed(0)
        model = numgrad.nn.Sequential(numgrad.nn.Linear(6, 5), numgrad.nn.Tanh(), numgrad.nn.Linear(5, 3)).cuda()
        call = numgrad.compile(model) if compiled else model
        rng = np.random.default_rng(3)
        grads = []
        for _ in range(3):
            model.zero_grad()
            x = numgrad.tensor(rng.standard_normal((4, 6)).astype(np.float32)).cuda()
            out = call(x)
            assert out.device.type == "cuda"
            (out * out).sum().backward()
            grads.append([p.grad.cpu().numpy() for p in model.parameters()])
        return grads, call
    (got, call), (want, _) = run(True), run(False)
    for g, w in zip(got, want):
        for a, b in zip(g, w):
            np.testing.assert_array_equal(a, b)
    assert call._compiled.variants[0].hits == 2

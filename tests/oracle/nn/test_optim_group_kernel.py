"""Adam's usual step over a whole parameter group in one pass (Adam._update_group,
dispatch.optim.adam_many): bitwise the one-parameter-at-a-time kernel's results, and against torch; cases the
group call does not take (strided gradients, parameters without state beside ones with it, amsgrad) go one at a
time, with the same results."""
import numpy as np
import pytest
import torch

import numgrad
from numgrad.kernels.dispatch import optim as dispatch_optim

SHAPES = [(5, 7), (7,), (3, 3, 2), (1,), (40,)]


def _run(lib, cls, kw, init, grads, one_at_a_time=False, transpose_first=False):
    params = [lib.tensor(a.copy(), requires_grad=True) for a in init]
    opt = getattr(lib.optim, cls)(params, **kw)
    if one_at_a_time:
        opt._update_group = lambda group, ps: False
    for gs in grads:
        for p, g in zip(params, gs):
            p.grad = lib.tensor(g.copy())
            if transpose_first and p is params[0]:  # a strided gradient of the parameter's shape
                p.grad = lib.tensor(np.ascontiguousarray(g.T)).t()
        opt.step()
    return [p.detach().numpy().copy() for p in params], opt


@pytest.fixture
def group_calls(monkeypatch):
    calls = []
    original = dispatch_optim.adam_many

    def counting(*args):
        calls.append(len(args[0][0]))
        return original(*args)
    monkeypatch.setattr(dispatch_optim, "adam_many", counting)
    return calls


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("cls,kw", [("Adam", {}), ("AdamW", {}), ("Adam", {"betas": (0.2, 0.9)}),
                                    ("AdamW", {"weight_decay": 0.1, "lr": 0.01}), ("Adam", {"lr": 0.1, "eps": 1e-3})])
def test_group_step_is_bitwise_the_one_at_a_time_step_and_torchs(group_calls, dtype, cls, kw):
    rng = np.random.default_rng(3)
    init = [rng.standard_normal(s).astype(dtype) for s in SHAPES]
    grads = [[rng.standard_normal(s).astype(dtype) for s in SHAPES] for _ in range(4)]
    grouped, _ = _run(numgrad, cls, kw, init, grads)
    assert group_calls == [len(SHAPES)] * 4
    single, _ = _run(numgrad, cls, kw, init, grads, one_at_a_time=True)
    theirs, _ = _run(torch, cls, kw, init, grads)
    for a, b, t in zip(grouped, single, theirs):
        np.testing.assert_array_equal(a, b)
        np.testing.assert_allclose(a, t, rtol=1e-6 if dtype == np.float32 else 1e-14, atol=1e-7)


def test_group_state_matches_torchs_state_dict(group_calls):
    rng = np.random.default_rng(4)
    init = [rng.standard_normal(s).astype(np.float32) for s in SHAPES]
    grads = [[rng.standard_normal(s).astype(np.float32) for s in SHAPES] for _ in range(3)]
    _, ours = _run(numgrad, "Adam", {}, init, grads)
    _, theirs = _run(torch, "Adam", {}, init, grads)
    for k in range(len(SHAPES)):
        a, b = ours.state_dict()["state"][k], theirs.state_dict()["state"][k]
        assert float(a["step"]) == float(b["step"]) == 3.0
        for name in ("exp_avg", "exp_avg_sq"):
            np.testing.assert_allclose(a[name].numpy(), b[name].numpy(), rtol=1e-5, atol=1e-9)


def test_strided_gradient_and_amsgrad_go_one_at_a_time(group_calls):
    rng = np.random.default_rng(5)
    init = [rng.standard_normal((4, 6)).astype(np.float32), rng.standard_normal(6).astype(np.float32)]
    grads = [[rng.standard_normal(a.shape).astype(np.float32) for a in init] for _ in range(2)]
    strided, _ = _run(numgrad, "Adam", {}, init, grads, transpose_first=True)
    theirs, _ = _run(torch, "Adam", {}, init, grads, transpose_first=True)
    assert group_calls == []
    for a, t in zip(strided, theirs):
        np.testing.assert_allclose(a, t, rtol=1e-6)
    _run(numgrad, "Adam", {"amsgrad": True}, init, grads)
    assert group_calls == []


def test_a_parameter_without_state_beside_ones_with_it_goes_one_at_a_time(group_calls):
    a, b = (numgrad.tensor(np.ones(3, np.float32), requires_grad=True) for _ in range(2))
    ta, tb = (torch.tensor(np.ones(3, np.float32), requires_grad=True) for _ in range(2))
    results = []
    for (x, y), lib in (((a, b), numgrad), ((ta, tb), torch)):
        opt = lib.optim.Adam([x, y], lr=0.1)
        x.grad = lib.ones_like(x)  # y has no gradient: x alone gets state
        opt.step()
        x.grad, y.grad = lib.ones_like(x), lib.ones_like(y) * 2
        opt.step()
        results.append((x.detach().numpy().copy(), y.detach().numpy().copy()))
    assert group_calls == []  # one parameter, then a group with state for only one of its two
    for ours, theirs in zip(*results):
        np.testing.assert_array_equal(ours, theirs)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("kw,group_steps", [({"lr": 0.1, "momentum": 0.9}, 3), ({"lr": 0.1}, 4),
                                            ({"lr": 0.05, "momentum": 0.5, "dampening": 0.3}, 3),
                                            ({"lr": 0.1, "momentum": 0.9, "nesterov": True}, 0),
                                            ({"lr": 0.1, "momentum": 0.9, "weight_decay": 0.01}, 0)])
def test_sgd_group_step_is_bitwise_the_one_at_a_time_step(monkeypatch, dtype, kw, group_steps):
    """SGD's usual step (momentum past its first step, or none) over the group; the first momentum step makes
    the buffers one at a time, Nesterov and weight decay always go one at a time."""
    calls = []
    original = dispatch_optim.sgd_many
    monkeypatch.setattr(dispatch_optim, "sgd_many", lambda *args: (calls.append(1), original(*args))[1])
    rng = np.random.default_rng(6)
    init = [rng.standard_normal(s).astype(dtype) for s in SHAPES]
    grads = [[rng.standard_normal(s).astype(dtype) for s in SHAPES] for _ in range(4)]
    grouped, opt = _run(numgrad, "SGD", kw, init, grads)
    assert len(calls) == group_steps
    single, _ = _run(numgrad, "SGD", kw, init, grads, one_at_a_time=True)
    theirs, topt = _run(torch, "SGD", kw, init, grads)
    for a, b, t in zip(grouped, single, theirs):
        np.testing.assert_array_equal(a, b)
        np.testing.assert_allclose(a, t, rtol=1e-6 if dtype == np.float32 else 1e-14, atol=1e-7)
    if kw.get("momentum"):
        assert list(opt.state_dict()["state"][0]) == list(topt.state_dict()["state"][0]) == ["momentum_buffer"]
    else:  # without momentum torch keeps no state at all
        assert opt.state_dict()["state"] == topt.state_dict()["state"] == {} and len(opt.state) == 0

"""A parameter group's step as one kernel call over all its parameters (optim/_foreach.py, dispatch.optim.many):
bitwise the one-parameter-at-a-time kernel's results and close to torch's, for every option of every optimizer it
takes; the plan it keeps follows replaced .data, missing gradients, frozen parameters, replaced state and
load_state_dict."""
import copy

import numpy as np
import pytest
import torch

import numgrad
from helpers.optim_steps import optimizer_steps
from numgrad.kernels.dispatch import optim as dispatch_optim

# ten parameters: three chunks of the four-parameter kernel
SHAPES = [(5, 7), (7,), (3, 3, 2), (1,), (40,), (), (2, 2), (3,), (0,), (6,)]

CASES = [
    ("SGD", {"lr": 0.1}), ("SGD", {"lr": 0.1, "momentum": 0.9}),
    ("SGD", {"lr": 0.05, "momentum": 0.5, "dampening": 0.3}),
    ("SGD", {"lr": 0.1, "momentum": 0.9, "nesterov": True, "weight_decay": 0.01}),
    ("SGD", {"lr": 0.1, "momentum": 0.9, "maximize": True, "weight_decay": 0.1}),
    ("Adam", {}), ("Adam", {"betas": (0.2, 0.9)}), ("Adam", {"amsgrad": True, "weight_decay": 0.1}),
    ("Adam", {"maximize": True, "lr": 0.1, "eps": 1e-3}), ("AdamW", {}), ("AdamW", {"amsgrad": True, "maximize": True}),
    ("AdamW", {"weight_decay": 0.1, "lr": 0.01}),
    ("Adagrad", {"lr_decay": 0.1, "weight_decay": 0.1}), ("Adamax", {"weight_decay": 0.1}),
    ("RMSprop", {}), ("RMSprop", {"momentum": 0.5, "centered": True, "weight_decay": 0.1}),
    ("RAdam", {}), ("RAdam", {"decoupled_weight_decay": True, "weight_decay": 0.1}),
    ("Adadelta", {"weight_decay": 0.1}),
]
TOL = {np.float32: {"rtol": 1e-5, "atol": 1e-6}, np.float64: {"rtol": 1e-12, "atol": 1e-13}}


def _arrays(dtype, seed, steps=4, shapes=SHAPES):
    rng = np.random.default_rng(seed)
    init = [rng.standard_normal(s).astype(dtype) for s in shapes]
    return init, [[rng.standard_normal(s).astype(dtype) for s in shapes] for _ in range(steps)]


@pytest.fixture
def many_calls(monkeypatch):
    calls = []
    original = dispatch_optim.many

    def counting(name, operands, scalars):
        calls.append(len(operands[0]))
        return original(name, operands, scalars)
    monkeypatch.setattr(dispatch_optim, "many", counting)
    return calls


def _same(ours, single, theirs, dtype):
    for a, b, t in zip(ours, single, theirs):
        np.testing.assert_array_equal(a, b)
        np.testing.assert_allclose(a, t, **TOL[dtype])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("cls,kw", CASES)
def test_group_step_is_bitwise_the_one_at_a_time_step_and_torchs(many_calls, dtype, cls, kw):
    init, grads = _arrays(dtype, 3)
    grouped, opt = optimizer_steps(numgrad, cls, kw, init, grads)
    assert many_calls == [12] * 4  # ten parameters padded to three chunks of four, one call a step
    single, _ = optimizer_steps(numgrad, cls, kw, init, grads, one_at_a_time=True)
    theirs, topt = optimizer_steps(torch, cls, kw, init, grads)
    _same(grouped, single, theirs, dtype)
    ours, expected = opt.state_dict(), topt.state_dict()
    assert ours["param_groups"] == expected["param_groups"]
    assert sorted(ours["state"]) == sorted(expected["state"])
    for k, state in expected["state"].items():
        assert list(ours["state"][k]) == list(state)
        for name, value in state.items():
            got = ours["state"][k][name]
            assert str(got.dtype) == str(value.dtype) and tuple(got.shape) == tuple(value.shape)
            np.testing.assert_allclose(got.numpy(), value.numpy(), **TOL[dtype])


def test_step_counts_stay_tensors_of_their_own_values():
    """The group's counts share one array (a step counts them all at once); each state["step"] is still a 0-d
    float32 tensor, saved and copied on its own."""
    init, grads = _arrays(np.float32, 4, steps=3)
    _, opt = optimizer_steps(numgrad, "Adam", {}, init, grads)
    steps = [opt.state[p]["step"] for p in opt.param_groups[0]["params"]]
    assert all(s.dtype == numgrad.float32 and s.shape == () and float(s) == 3.0 for s in steps)
    saved = copy.deepcopy(opt.state_dict())
    steps[0].fill_(7.0)  # one count changed in place: its parameter alone steps from it
    assert float(saved["state"][0]["step"]) == 3.0 and float(saved["state"][1]["step"]) == 3.0
    assert float(opt.state_dict()["state"][1]["step"]) == 3.0


@pytest.mark.parametrize("cls,kw", [("Adam", {}), ("SGD", {"lr": 0.1, "momentum": 0.9, "dampening": 0.2}),
                                    ("Adagrad", {})])
def test_missing_gradients_and_parameters_without_state(many_calls, cls, kw):
    """Some parameters lack a gradient in some steps (frozen, unused): they are left alone and their state lags,
    as torch's; the group then steps in two phases (counts or first steps that differ)."""
    init, grads = _arrays(np.float32, 5, steps=5)
    grads[0][1] = grads[0][4] = None
    grads[2][0] = None
    grads[3] = [None] * len(SHAPES)
    ours, _ = optimizer_steps(numgrad, cls, kw, init, grads)
    single, _ = optimizer_steps(numgrad, cls, kw, init, grads, one_at_a_time=True)
    theirs, _ = optimizer_steps(torch, cls, kw, init, grads)
    _same(ours, single, theirs, np.float32)
    assert len(many_calls) >= 4


def test_replaced_data_state_entry_and_load_state_dict_are_followed(many_calls):
    init, grads = _arrays(np.float32, 6, steps=6)
    rng = np.random.default_rng(7)
    fresh = rng.standard_normal(SHAPES[0]).astype(np.float32)
    other_init, other_grads = _arrays(np.float32, 8, steps=2)

    def between(lib, k, params, opt):
        if k == 2:  # a new .data for one parameter: the step writes to it
            params[0].data = lib.tensor(fresh.copy())
        if k == 3:  # a state entry replaced by another tensor
            opt.state[params[2]]["exp_avg"] = lib.ones_like(params[2]) * 0.5
        if k == 4:  # the state of another optimizer, loaded
            _, source = optimizer_steps(lib, "Adam", {}, other_init, other_grads)
            opt.load_state_dict(source.state_dict())
    ours, _ = optimizer_steps(numgrad, "Adam", {}, init, grads, between=between)
    single, _ = optimizer_steps(numgrad, "Adam", {}, init, grads, one_at_a_time=True, between=between)
    theirs, _ = optimizer_steps(torch, "Adam", {}, init, grads, between=between)
    _same(ours, single, theirs, np.float32)


def test_pending_results_that_read_a_parameter_or_its_state_keep_their_values():
    """A lazy result that reads a parameter (or a state tensor) is computed before the step writes it."""
    results = []
    for lib in (numgrad, torch):
        params = [lib.tensor(np.arange(4, dtype=np.float32) + k, requires_grad=True) for k in range(3)]
        opt = lib.optim.SGD(params, lr=0.5, momentum=0.9)
        for p in params:
            p.grad = lib.ones_like(p)
        opt.step()
        with lib.no_grad():
            before = params[1] * 2 + 1
            buffer = opt.state[params[2]]["momentum_buffer"] * 3
        opt.step()
        results.append((before.numpy().copy(), buffer.numpy().copy(), params[1].detach().numpy().copy()))
    for a, b in zip(*results):
        np.testing.assert_array_equal(a, b)


def test_strided_gradients_and_mixed_dtypes():
    """A strided gradient is read through a flat copy; a group of two dtypes goes one parameter at a time."""
    rng = np.random.default_rng(9)
    w = rng.standard_normal((4, 6)).astype(np.float32)
    g = rng.standard_normal((6, 4)).astype(np.float32)
    b64 = rng.standard_normal(3)
    results = []
    for lib in (numgrad, torch):
        params = [lib.tensor(w.copy(), requires_grad=True), lib.tensor(b64.copy(), requires_grad=True)]
        opt = lib.optim.Adam(params, lr=0.1)
        for _ in range(2):
            params[0].grad = lib.tensor(g.copy()).t()
            params[1].grad = lib.ones_like(params[1])
            opt.step()
        results.append([p.detach().numpy().copy() for p in params])
    for a, t in zip(*results):
        assert a.dtype == t.dtype
        np.testing.assert_allclose(a, t, rtol=1e-6)


def test_a_large_parameter_goes_one_at_a_time(monkeypatch, many_calls):
    """A parameter as large as the threads pay for is updated on its own, split over them."""
    monkeypatch.setattr(dispatch_optim, "PARALLEL_MIN", 30)
    init, grads = _arrays(np.float32, 10, steps=2)
    ours, _ = optimizer_steps(numgrad, "SGD", {"lr": 0.1, "momentum": 0.9}, init, grads)
    assert many_calls == []
    theirs, _ = optimizer_steps(torch, "SGD", {"lr": 0.1, "momentum": 0.9}, init, grads)
    for a, t in zip(ours, theirs):
        np.testing.assert_allclose(a, t, **TOL[np.float32])


def test_the_step_bumps_each_parameters_version():
    p = numgrad.tensor(np.ones(3, np.float32), requires_grad=True)
    q = numgrad.tensor(np.ones(2, np.float32), requires_grad=True)
    opt = numgrad.optim.SGD([p, q], lr=0.1)
    p.grad, q.grad = numgrad.ones_like(p), numgrad.ones_like(q)
    before = p._version, q._version
    opt.step()
    opt.step()
    assert (p._version, q._version) == (before[0] + 2, before[1] + 2)


def test_a_parameter_listed_twice_steps_twice_as_torchs():
    results = []
    for lib in (numgrad, torch):
        p = lib.tensor(np.linspace(-1, 1, 5, dtype=np.float32), requires_grad=True)
        q = lib.tensor(np.ones(3, np.float32), requires_grad=True)
        with pytest.warns(UserWarning, match="duplicate parameters"):
            opt = lib.optim.Adam([p, q, p], lr=0.1)
        for _ in range(3):
            p.grad, q.grad = lib.ones_like(p), lib.ones_like(q) * 2
            opt.step()
        results.append((p.detach().numpy().copy(), q.detach().numpy().copy(), float(opt.state[p]["step"])))
    (a, b, n), (ta, tb, tn) = results
    assert n == tn == 6.0
    np.testing.assert_allclose(a, ta, rtol=1e-6)
    np.testing.assert_allclose(b, tb, rtol=1e-6)

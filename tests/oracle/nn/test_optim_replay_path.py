"""Optimizer.step's lean path (optim/_foreach.replay): once every group has a plan that holds, a step goes
through it without the general path's grad mode and lists; whatever the user changed between steps (a group's
options, a missing or mistyped gradient, a state dict replaced or made in another order, a second group that
needs the general path) sends the whole step the general way, with torch's results and errors."""
import numpy as np
import pytest
import torch

import numgrad
from helpers.optim_steps import optimizer_steps
from numgrad.optim import _foreach

SHAPES = [(4, 3), (3,), (2, 2, 2), (5,), (1,)]
TOL = {"rtol": 1e-5, "atol": 1e-6}


def _arrays(seed, steps):
    rng = np.random.default_rng(seed)
    init = [rng.standard_normal(s).astype(np.float32) for s in SHAPES]
    return init, [[rng.standard_normal(s).astype(np.float32) for s in SHAPES] for _ in range(steps)]


def _close(ours, theirs):
    for a, t in zip(ours, theirs):
        np.testing.assert_allclose(a, t, **TOL)


@pytest.fixture
def general_steps(monkeypatch):
    """How many group steps went the general way (_foreach.step, called by Optimizer._step per group)."""
    calls = []
    original = _foreach.step

    def counting(*args):
        calls.append(1)
        return original(*args)
    monkeypatch.setattr(_foreach, "step", counting)
    return calls


@pytest.mark.parametrize("cls,kw", [("Adam", {}), ("AdamW", {"amsgrad": True}),
                                    ("SGD", {"lr": 0.1, "momentum": 0.9}), ("SGD", {"lr": 0.1}),
                                    ("RMSprop", {"centered": True})])
def test_later_steps_take_the_lean_path_with_torchs_results(general_steps, cls, kw):
    init, grads = _arrays(1, 5)
    ours, _ = optimizer_steps(numgrad, cls, kw, init, grads)
    assert len(general_steps) == 1  # the first step made the plan; the four later ones went through it
    theirs, _ = optimizer_steps(torch, cls, kw, init, grads)
    _close(ours, theirs)


def test_the_lean_path_is_bitwise_the_general_path(monkeypatch):
    init, grads = _arrays(2, 6)
    lean, _ = optimizer_steps(numgrad, "Adam", {"weight_decay": 0.1}, init, grads)
    monkeypatch.setattr(_foreach, "replay", lambda opt: False)
    general, _ = optimizer_steps(numgrad, "Adam", {"weight_decay": 0.1}, init, grads)
    for a, b in zip(lean, general):
        np.testing.assert_array_equal(a, b)


def test_a_group_without_its_gradients_sends_every_group_the_general_way(general_steps):
    """Two groups: when the second lacks a gradient, neither steps through the lean path (none steps twice or
    not at all); the missing parameter is left alone, as torch leaves it."""
    init, grads = _arrays(3, 5)
    grads[2][3] = None
    groups = [[0, 1], [2, 3, 4]]
    ours, _ = optimizer_steps(numgrad, "Adam", {}, init, grads, groups=groups)
    # per group: the first step, the one with a missing gradient (its plan made for the others) and the next (the
    # plan made again for all)
    assert len(general_steps) == 2 * 3
    theirs, _ = optimizer_steps(torch, "Adam", {}, init, grads, groups=groups)
    _close(ours, theirs)


def test_changed_options_and_state_are_followed():
    init, grads = _arrays(4, 7)

    def between(lib, k, params, opt):
        group = opt.param_groups[0]
        if k == 2:
            group["weight_decay"] = 0.1
            group["maximize"] = True
        if k == 3:
            group["lr"] = 0.01
            group["betas"] = (0.5, 0.9)
        if k == 4:  # a parameter's state dict replaced by a new one with the same tensors
            opt.state[params[1]] = dict(opt.state[params[1]])
        if k == 5:  # the state dict rebuilt in another order than the parameters'
            for p in reversed(params):
                opt.state[p] = opt.state.pop(p)
    ours, _ = optimizer_steps(numgrad, "Adam", {}, init, grads, between=between)
    theirs, _ = optimizer_steps(torch, "Adam", {}, init, grads, between=between)
    _close(ours, theirs)


def test_options_that_change_the_kernels_state_are_followed(general_steps):
    """SGD given momentum after its first steps: the kernel reads a momentum buffer from then on (the plan is
    made again), made from the gradient at its first use, as torch's."""
    init, grads = _arrays(5, 5)

    def between(lib, k, params, opt):
        if k == 2:
            opt.param_groups[0]["momentum"] = 0.9
    ours, _ = optimizer_steps(numgrad, "SGD", {"lr": 0.1}, init, grads, between=between)
    assert len(general_steps) == 2
    theirs, _ = optimizer_steps(torch, "SGD", {"lr": 0.1}, init, grads, between=between)
    _close(ours, theirs)


@pytest.mark.parametrize("start", [2.0 ** 24, 2.0 ** 24 - 1, 1e30, -0.25])
def test_step_counts_count_in_float32_as_torchs(start):
    """Each state["step"] counts in float32, as torch's `step_t += 1`: past 2^24 a step leaves it as it is."""
    init, grads = _arrays(6, 3)

    def between(lib, k, params, opt):
        if k == 1:
            for p in params:
                opt.state[p]["step"].fill_(start)
    ours, opt = optimizer_steps(numgrad, "Adam", {}, init, grads, between=between)
    theirs, topt = optimizer_steps(torch, "Adam", {}, init, grads, between=between)
    _close(ours, theirs)
    for p, tp in zip(opt.param_groups[0]["params"], topt.param_groups[0]["params"]):
        assert opt.state[p]["step"].numpy().tobytes() == topt.state[tp]["step"].numpy().tobytes()

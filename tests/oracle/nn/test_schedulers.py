"""Learning-rate schedulers against torch: the lr (and cycled momentum or beta1) of every parameter group over
many steps, get_last_lr, closed forms through step(epoch), state_dict contents and round trips, the composite
schedulers, ReduceLROnPlateau, torch's warnings and errors."""
import copy
import warnings

import numpy as np
import pytest
import torch

import numgrad


def make_optimizer(lib, kind="SGD"):
    a, b = lib.zeros(3, requires_grad=True), lib.zeros(2, requires_grad=True)
    groups = [{"params": [a]}, {"params": [b], "lr": 0.05}]
    if kind == "SGD":
        return lib.optim.SGD(groups, lr=0.1, momentum=0.9)
    return lib.optim.Adam(groups, lr=0.1)


class Scale:
    """A callable object: its __dict__ goes into the state_dict, as torch keeps it."""

    def __init__(self, rate):
        self.rate = rate

    def __call__(self, epoch):
        return self.rate ** epoch


def _sched(lib, name, *args, **kwargs):
    return getattr(lib.optim.lr_scheduler, name)(*args, **kwargs)


SCHEDULERS = {
    "lambda": lambda lib, opt: _sched(lib, "LambdaLR", opt, lambda e: 1 / (e + 1)),
    "lambda_list": lambda lib, opt: _sched(lib, "LambdaLR", opt, [Scale(0.9), lambda e: 0.5 ** (e // 3)]),
    "multiplicative": lambda lib, opt: _sched(lib, "MultiplicativeLR", opt, lambda e: 0.95),
    "step": lambda lib, opt: _sched(lib, "StepLR", opt, 4, gamma=0.5),
    "multistep": lambda lib, opt: _sched(lib, "MultiStepLR", opt, [3, 7, 7, 12], gamma=0.3),
    "constant": lambda lib, opt: _sched(lib, "ConstantLR", opt, factor=0.25, total_iters=6),
    "linear": lambda lib, opt: _sched(lib, "LinearLR", opt, start_factor=0.1, end_factor=0.9, total_iters=10),
    "exponential": lambda lib, opt: _sched(lib, "ExponentialLR", opt, gamma=0.9),
    "cosine": lambda lib, opt: _sched(lib, "CosineAnnealingLR", opt, T_max=7, eta_min=0.001),
    "onecycle": lambda lib, opt: _sched(lib, "OneCycleLR", opt, max_lr=[0.5, 0.2], total_steps=31),
    "onecycle_linear_three_phase": lambda lib, opt: _sched(lib, "OneCycleLR", opt, max_lr=0.4, epochs=4,
                                                           steps_per_epoch=8, anneal_strategy="linear",
                                                           three_phase=True, pct_start=0.25),
    "cyclic": lambda lib, opt: _sched(lib, "CyclicLR", opt, 0.01, [0.1, 0.2], step_size_up=4, step_size_down=6),
    "cyclic_triangular2": lambda lib, opt: _sched(lib, "CyclicLR", opt, 0.01, 0.1, step_size_up=3,
                                                  mode="triangular2"),
    "cyclic_exp_range": lambda lib, opt: _sched(lib, "CyclicLR", opt, [0.01, 0.02], 0.1, step_size_up=5,
                                                mode="exp_range", gamma=0.97),
    "sequential": lambda lib, opt: _sched(lib, "SequentialLR", opt, [
        _sched(lib, "LinearLR", opt, start_factor=0.2, total_iters=4), _sched(lib, "ExponentialLR", opt, gamma=0.9),
        _sched(lib, "StepLR", opt, 3, gamma=0.5)], milestones=[5, 12]),
    "chained": lambda lib, opt: _sched(lib, "ChainedScheduler", [
        _sched(lib, "ConstantLR", opt, factor=0.5, total_iters=5), _sched(lib, "ExponentialLR", opt, gamma=0.95)]),
}


def trajectory(lib, name, steps=30, kind="SGD"):
    opt = make_optimizer(lib, kind)
    sched = SCHEDULERS[name](lib, opt)
    seen = [(list(sched.get_last_lr()), [g.get("momentum", g.get("betas")) for g in opt.param_groups])]
    for _ in range(steps):
        opt.step()
        sched.step()
        seen.append((list(sched.get_last_lr()), [g.get("momentum", g.get("betas")) for g in opt.param_groups]))
    assert [g["lr"] for g in opt.param_groups] == seen[-1][0]
    return seen, sched, opt


@pytest.mark.parametrize("kind", ["SGD", "Adam"])
@pytest.mark.parametrize("name", list(SCHEDULERS))
def test_learning_rates_match_torch(name, kind):
    ours, _, _ = trajectory(numgrad, name, kind=kind)
    theirs, _, _ = trajectory(torch, name, kind=kind)
    assert ours == theirs  # the same float arithmetic: equal to the last bit


def _plain(state):
    """A state_dict with its nested scheduler states and callables made comparable."""
    out = {}
    for key, value in state.items():
        if key == "_schedulers":
            value = [_plain(s) for s in value]
        elif key == "_scale_fn_ref":
            value = None
        out[key] = value
    return out


@pytest.mark.parametrize("name", list(SCHEDULERS))
def test_state_dict_matches_torch_and_round_trips(name):
    states = {}
    for lib in (numgrad, torch):
        _, sched, _ = trajectory(lib, name, steps=9)
        states[lib] = sched.state_dict()
    ours, theirs = _plain(states[numgrad]), _plain(states[torch])
    assert sorted(ours) == sorted(theirs)
    for key in theirs:
        if key not in ("lr_lambdas",):
            assert ours[key] == theirs[key], key
    if "lr_lambdas" in theirs:
        assert ours["lr_lambdas"] == theirs["lr_lambdas"]  # a callable object's __dict__, None for a function
    # a new scheduler given the state continues as the original does
    _, sched, opt = trajectory(numgrad, name, steps=9)
    saved, saved_opt = copy.deepcopy(sched.state_dict()), copy.deepcopy(opt.state_dict())
    expected = []
    for _ in range(6):
        opt.step()
        sched.step()
        expected.append(sched.get_last_lr())
    opt2 = make_optimizer(numgrad)
    opt2.load_state_dict(saved_opt)
    sched2 = SCHEDULERS[name](numgrad, opt2)
    sched2.load_state_dict(saved)
    for group, lr in zip(opt2.param_groups, saved["_last_lr"]):
        group["lr"] = lr
    again = []
    for _ in range(6):
        opt2.step()
        sched2.step()
        again.append(sched2.get_last_lr())
    assert again == expected


@pytest.mark.parametrize("name,kwargs", [("StepLR", dict(step_size=3, gamma=0.5)),
                                         ("MultiStepLR", dict(milestones=[2, 5, 5], gamma=0.5)),
                                         ("ConstantLR", dict(factor=0.5, total_iters=4)),
                                         ("LinearLR", dict(start_factor=0.5, total_iters=4)),
                                         ("ExponentialLR", dict(gamma=0.8)),
                                         ("CosineAnnealingLR", dict(T_max=5))])
def test_step_with_epoch_uses_the_closed_form_and_warns(name, kwargs):
    results = []
    for lib in (numgrad, torch):
        opt = make_optimizer(lib)
        sched = getattr(lib.optim.lr_scheduler, name)(opt, **kwargs)
        lrs = []
        for epoch in (3, 7, 1, 4):
            opt.step()
            with pytest.warns(UserWarning, match="The epoch parameter in `scheduler.step\\(\\)` was not necessary"):
                sched.step(epoch)
            lrs.append(sched.get_last_lr())
        results.append(lrs)
    assert results[0] == results[1]


def test_scheduler_before_optimizer_step_warns_as_torch():
    messages = []
    for lib in (numgrad, torch):
        opt = make_optimizer(lib)
        sched = lib.optim.lr_scheduler.StepLR(opt, 2)
        with pytest.warns(UserWarning) as record:
            sched.step()
        messages.append(str(record[0].message))
        assert "Detected call of `lr_scheduler.step()` before `optimizer.step()`" in messages[-1]
        with warnings.catch_warnings():  # once stepped in order, no warning
            warnings.simplefilter("error")
            opt2 = make_optimizer(lib)
            sched2 = lib.optim.lr_scheduler.StepLR(opt2, 2)
            opt2.step()
            sched2.step()
            sched2.step()
    assert messages[0] == messages[1]


def test_overridden_optimizer_step_and_get_lr_outside_step_warn_as_torch():
    messages = []
    for lib in (numgrad, torch):
        opt = make_optimizer(lib)
        sched = lib.optim.lr_scheduler.ExponentialLR(opt, 0.5)
        opt.step = lambda closure=None: None
        with pytest.warns(UserWarning) as record:
            sched.step()
        with pytest.warns(UserWarning) as record2:
            lrs = sched.get_lr()
        messages.append((str(record[0].message), str(record2[0].message), lrs))
    assert messages[0] == messages[1]


def test_reduce_lr_on_plateau_matches_torch():
    metrics = [1.0, 0.9, 0.95, 0.95, 0.95, 0.95, 0.8, 0.8, 0.8, 0.8, 0.8, 0.8, 0.81, 0.5, 0.5, 0.5, 0.5, 0.5]
    for kwargs in (dict(patience=2), dict(mode="max", factor=0.5, patience=1, threshold=0.05, threshold_mode="abs",
                                          cooldown=2, min_lr=[0.02, 0.001]),
                   dict(patience=0, factor=0.1, min_lr=0.04, eps=1e-3)):
        results = []
        for lib in (numgrad, torch):
            opt = make_optimizer(lib)
            sched = lib.optim.lr_scheduler.ReduceLROnPlateau(opt, **kwargs)
            lrs = []
            for m in metrics:
                opt.step()
                sched.step(lib.tensor(m) if m > 0.9 else m)
                lrs.append(sched.get_last_lr())
            results.append((lrs, {k: v for k, v in sched.state_dict().items()}))
        assert results[0] == results[1]
    # a state_dict round trip restores the comparison mode
    opt = make_optimizer(numgrad)
    sched = numgrad.optim.lr_scheduler.ReduceLROnPlateau(opt, mode="max")
    sched.step(1.0)
    fresh = numgrad.optim.lr_scheduler.ReduceLROnPlateau(make_optimizer(numgrad))
    fresh.load_state_dict(sched.state_dict())
    assert fresh.mode == "max" and fresh.best == 1.0 and fresh._is_better(2.0, 1.0)


ERRORS = [
    (ValueError, lambda lib, opt: lib.optim.lr_scheduler.LambdaLR(opt, [lambda e: 1.0])),
    (TypeError, lambda lib, opt: lib.optim.lr_scheduler.MultiplicativeLR(opt, 0.9)),
    (ValueError, lambda lib, opt: lib.optim.lr_scheduler.ConstantLR(opt, factor=1.5)),
    (ValueError, lambda lib, opt: lib.optim.lr_scheduler.LinearLR(opt, start_factor=0)),
    (ValueError, lambda lib, opt: lib.optim.lr_scheduler.LinearLR(opt, end_factor=1.5)),
    (TypeError, lambda lib, opt: lib.optim.lr_scheduler.StepLR(object(), 3)),
    (KeyError, lambda lib, opt: lib.optim.lr_scheduler.StepLR(opt, 3, last_epoch=4)),
    (ValueError, lambda lib, opt: lib.optim.lr_scheduler.ReduceLROnPlateau(opt, factor=1.0)),
    (ValueError, lambda lib, opt: lib.optim.lr_scheduler.ReduceLROnPlateau(opt, mode="up")),
    (ValueError, lambda lib, opt: lib.optim.lr_scheduler.ReduceLROnPlateau(opt, threshold_mode="x")),
    (ValueError, lambda lib, opt: lib.optim.lr_scheduler.ReduceLROnPlateau(opt, min_lr=[0.1])),
    (ValueError, lambda lib, opt: lib.optim.lr_scheduler.OneCycleLR(opt, 0.1)),
    (ValueError, lambda lib, opt: lib.optim.lr_scheduler.OneCycleLR(opt, 0.1, total_steps=0)),
    (ValueError, lambda lib, opt: lib.optim.lr_scheduler.OneCycleLR(opt, 0.1, epochs=2, steps_per_epoch=0)),
    (ValueError, lambda lib, opt: lib.optim.lr_scheduler.OneCycleLR(opt, 0.1, total_steps=5, pct_start=1)),
    (ValueError, lambda lib, opt: lib.optim.lr_scheduler.OneCycleLR(opt, 0.1, total_steps=5, anneal_strategy="x")),
    (ValueError, lambda lib, opt: lib.optim.lr_scheduler.OneCycleLR(opt, [0.1], total_steps=5)),
    (ValueError, lambda lib, opt: lib.optim.lr_scheduler.CyclicLR(opt, 0.1, 0.2, mode="x")),
    (ValueError, lambda lib, opt: lib.optim.lr_scheduler.CyclicLR(
        lib.optim.Adagrad([lib.zeros(1, requires_grad=True)]), 0.1, 0.2)),
    (ValueError, lambda lib, opt: lib.optim.lr_scheduler.SequentialLR(opt, [], [])),
    (ValueError, lambda lib, opt: lib.optim.lr_scheduler.SequentialLR(
        opt, [lib.optim.lr_scheduler.StepLR(opt, 2)], [3])),
    (ValueError, lambda lib, opt: lib.optim.lr_scheduler.SequentialLR(
        opt, [lib.optim.lr_scheduler.ReduceLROnPlateau(opt)], [])),
    (ValueError, lambda lib, opt: lib.optim.lr_scheduler.ChainedScheduler([])),
    (TypeError, lambda lib, opt: lib.optim.lr_scheduler.ChainedScheduler([object()], opt)),
]


@pytest.mark.parametrize("exc,make", ERRORS)
def test_errors_match_torch(exc, make):
    messages = []
    for lib in (numgrad, torch):
        with pytest.raises(exc) as info:
            make(lib, make_optimizer(lib))
        messages.append(str(info.value))
    assert messages[0] == messages[1]


def test_one_cycle_refuses_steps_past_its_total():
    for lib in (numgrad, torch):
        opt = make_optimizer(lib)
        sched = lib.optim.lr_scheduler.OneCycleLR(opt, 0.1, total_steps=3)
        for _ in range(3):
            opt.step()
            sched.step()
        with pytest.raises(ValueError, match="Tried to step 4 times. The specified number of total steps is 3"):
            sched.step()


def test_training_with_a_scheduler_follows_torch():
    """Parameters of an Adam-trained regression under OneCycleLR (which also cycles beta1) track torch's."""
    x = np.random.default_rng(0).normal(size=(16, 4)).astype(np.float64)
    y = np.random.default_rng(1).normal(size=(16, 1)).astype(np.float64)
    results = []
    for lib in (numgrad, torch):
        w = lib.tensor(np.full((4, 1), 0.1), requires_grad=True)
        opt = lib.optim.Adam([w], lr=0.01)
        sched = lib.optim.lr_scheduler.OneCycleLR(opt, max_lr=0.05, total_steps=20)
        for _ in range(20):
            opt.zero_grad()
            ((lib.tensor(x) @ w - lib.tensor(y)) ** 2).mean().backward()
            opt.step()
            sched.step()
        results.append(w.detach().numpy())
    np.testing.assert_allclose(results[0], results[1], rtol=1e-12)

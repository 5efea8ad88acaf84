"""Optimizers and schedulers against torch: multi-step training trajectories (parameters after every step),
options, state_dict, param groups, zero_grad, frozen parameters, argument errors."""
import copy

import numpy as np
import pytest
import torch

import numgrad
from helpers.nn_compare import compare_params, rand, twin

X = rand(32, 6)
Y = np.random.default_rng(3).integers(0, 3, 32)


def mlp(lib):
    nn = lib.nn
    return nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 16), nn.Tanh(), nn.Linear(16, 3))


def train(lib, model, optimizer, steps, scheduler=None, batch=None):
    """Cross-entropy steps on fixed data; returns the losses and the parameters after each step."""
    losses, snapshots = [], []
    x, y = lib.tensor(X), lib.tensor(Y)
    for i in range(steps):
        optimizer.zero_grad()
        loss = lib.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        if scheduler is not None:
            scheduler.step()
        losses.append(loss.item())
        snapshots.append([p.detach().numpy().copy() for p in model.parameters()])
    return losses, snapshots


CASES = {
    "sgd": ("SGD", dict(lr=0.1)),
    "sgd_momentum": ("SGD", dict(lr=0.05, momentum=0.9)),
    "sgd_nesterov_decay": ("SGD", dict(lr=0.05, momentum=0.9, nesterov=True, weight_decay=1e-2)),
    "sgd_dampening_maximize": ("SGD", dict(lr=0.05, momentum=0.5, dampening=0.3, maximize=True)),
    "adam": ("Adam", dict(lr=0.01)),
    "adam_amsgrad_decay": ("Adam", dict(lr=0.01, betas=(0.8, 0.99), weight_decay=0.1, amsgrad=True)),
    "adam_large_beta_weight": ("Adam", dict(lr=0.01, betas=(0.3, 0.4))),
    "adamw": ("AdamW", dict(lr=0.01)),
    "adamw_amsgrad": ("AdamW", dict(lr=0.02, weight_decay=0.5, amsgrad=True)),
    "rmsprop": ("RMSprop", dict(lr=0.01)),
    "rmsprop_centered_momentum": ("RMSprop", dict(lr=0.005, alpha=0.9, momentum=0.8, centered=True,
                                                  weight_decay=0.01)),
    "rmsprop_small_alpha": ("RMSprop", dict(lr=0.005, alpha=0.3, centered=True)),
}


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("case", list(CASES))
def test_trajectory_matches_torch(case, dtype):
    name, kwargs = CASES[case]
    if case == "rmsprop_small_alpha" and dtype == "float32":
        # centered with alpha=0.3 divides by sqrt(E[g^2] - E[g]^2), nearly 0: one-ulp differences (torch's
        # compiler fuses some multiply-adds, Numba does not) grow to 1e-3 within 20 steps; float64 shows
        # the formula is the same
        kwargs = dict(kwargs, alpha=0.9)
    if name in ("RMSprop", "Adam", "AdamW") and dtype == "float32":
        # a gradient near eps (1e-8) makes g / (sqrt(avg) + eps) as sensitive as 0/0: the last-bit
        # differences of the two BLAS libraries' matmul sums (torch's vary from process to process with
        # buffer alignment) reach 1e-3 in one step; a larger eps keeps the float32 comparison about the
        # formula, and float64 checks the default eps
        kwargs = dict(kwargs, eps=1e-3)
    ours, theirs = twin(mlp)
    getattr(ours, {"float32": "float", "float64": "double"}[dtype])()
    getattr(theirs, {"float32": "float", "float64": "double"}[dtype])()
    global X
    x_saved = X
    X = X.astype(dtype)
    try:
        our_losses, our_params = train(numgrad, ours, getattr(numgrad.optim, name)(ours.parameters(), **kwargs), 20)
        their_losses, their_params = train(torch, theirs, getattr(torch.optim, name)(theirs.parameters(), **kwargs), 20)
    finally:
        X = x_saved
    # float64: the two BLAS libraries sum matmuls in different orders, and not always the same order
    # from one run to the next; 20 steps of centered RMSprop amplify those last-bit differences to 1e-13
    # float32: 20 steps of centered RMSprop still amplify those differences to ~3e-5 now and then
    tol = dict(rtol=1e-4, atol=1e-5) if dtype == "float32" else dict(rtol=1e-10, atol=1e-11)
    np.testing.assert_allclose(our_losses, their_losses, **tol)
    for step, (a, b) in enumerate(zip(our_params, their_params)):
        for pa, pb in zip(a, b):
            np.testing.assert_allclose(pa, pb, err_msg=f"step {step}", **tol)
    assert our_losses[-1] != our_losses[0]


def test_state_dict_matches_torch_layout():
    ours, theirs = twin(mlp)
    opts = []
    for lib, model in ((numgrad, ours), (torch, theirs)):
        opt = lib.optim.Adam(model.parameters(), lr=0.01, amsgrad=True)
        train(lib, model, opt, 3)
        opts.append(opt.state_dict())
    a, b = opts
    assert a["param_groups"] == b["param_groups"]
    assert list(a["state"]) == list(b["state"])
    for k in a["state"]:
        assert list(a["state"][k]) == list(b["state"][k])
        for key, value in a["state"][k].items():
            np.testing.assert_allclose(value.numpy(), b["state"][k][key].numpy(), rtol=1e-5, atol=1e-7)
            assert str(value.dtype) == str(b["state"][k][key].dtype)


def test_load_state_dict_resumes_identically():
    ours, theirs = twin(mlp)
    opt = numgrad.optim.SGD(ours.parameters(), lr=0.05, momentum=0.9)
    train(numgrad, ours, opt, 5)
    # state dicts share storage with the live tensors, in torch as here: keep copies
    saved_model, saved_opt = copy.deepcopy(ours.state_dict()), copy.deepcopy(opt.state_dict())
    reference, _ = train(numgrad, ours, opt, 5)
    resumed = mlp(numgrad)
    resumed.load_state_dict(saved_model)
    opt2 = numgrad.optim.SGD(resumed.parameters(), lr=1.0)
    opt2.load_state_dict(saved_opt)
    assert opt2.param_groups[0]["lr"] == 0.05
    again, _ = train(numgrad, resumed, opt2, 5)
    np.testing.assert_array_equal(again, reference)


def test_param_groups_with_their_own_options():
    ours, theirs = twin(mlp)
    results = []
    for lib, model in ((numgrad, ours), (torch, theirs)):
        groups = [{"params": model[0].parameters(), "lr": 0.1}, {"params": list(model[2].parameters())},
                  {"params": model[4].parameters(), "momentum": 0.0}]
        opt = lib.optim.SGD(groups, lr=0.01, momentum=0.9)
        results.append(train(lib, model, opt, 15)[0])
        assert [g["lr"] for g in opt.param_groups] == [0.1, 0.01, 0.01]
    np.testing.assert_allclose(results[0], results[1], rtol=2e-5)
    compare_params(ours, theirs, rtol=2e-5, atol=2e-6)


def test_frozen_parameters_are_skipped():
    ours, theirs = twin(mlp)
    for lib, model in ((numgrad, ours), (torch, theirs)):
        model[0].requires_grad_(False)
        before = model[0].weight.detach().numpy().copy()
        opt = lib.optim.Adam(model.parameters(), lr=0.01)
        train(lib, model, opt, 5)
        np.testing.assert_array_equal(model[0].weight.detach().numpy(), before)
        assert model[0].weight.grad is None
        assert len(opt.state) == 4
    compare_params(ours, theirs, rtol=2e-5, atol=2e-6)


def test_zero_grad_set_to_none_or_zero():
    model = mlp(numgrad)
    opt = numgrad.optim.SGD(model.parameters(), lr=0.1)
    model(numgrad.tensor(X)).sum().backward()
    opt.zero_grad(set_to_none=False)
    assert all(p.grad is not None and p.grad.abs().sum().item() == 0 for p in model.parameters())
    opt.zero_grad()
    assert all(p.grad is None for p in model.parameters())


def test_step_bumps_versions_so_stale_graphs_fail_like_torch():
    for lib in (numgrad, torch):
        lin = lib.nn.Linear(3, 3)
        opt = lib.optim.SGD(lin.parameters(), lr=0.1)
        out = lin(lib.ones(2, 3, requires_grad=True)).sum()
        out.backward(retain_graph=True)
        opt.step()
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            out.backward()


def test_closure_and_non_contiguous_parameter():
    p = numgrad.nn.Parameter(numgrad.tensor(rand(4, 3)).t())
    q = torch.nn.Parameter(torch.tensor(rand(4, 3)).t())
    for lib, param in ((numgrad, p), (torch, q)):
        opt = lib.optim.SGD([param], lr=0.1, momentum=0.9)

        def closure():
            opt.zero_grad()
            loss = (param * param).sum()
            loss.backward()
            return loss
        for _ in range(3):
            loss = opt.step(closure)
        assert loss.item() > 0
    np.testing.assert_allclose(p.detach().numpy(), q.detach().numpy(), rtol=1e-6)


@pytest.mark.parametrize("make", [
    lambda lib, ps: lib.optim.SGD(ps, lr=-0.1),
    lambda lib, ps: lib.optim.SGD(ps, lr=0.1, momentum=-1),
    lambda lib, ps: lib.optim.SGD(ps, lr=0.1, nesterov=True),
    lambda lib, ps: lib.optim.SGD(ps, lr=0.1, weight_decay=-1),
    lambda lib, ps: lib.optim.Adam(ps, lr=-1),
    lambda lib, ps: lib.optim.Adam(ps, betas=(1.0, 0.9)),
    lambda lib, ps: lib.optim.Adam(ps, betas=(0.9, -0.1)),
    lambda lib, ps: lib.optim.Adam(ps, eps=-1),
    lambda lib, ps: lib.optim.AdamW(ps, weight_decay=-1),
    lambda lib, ps: lib.optim.RMSprop(ps, alpha=-1),
    lambda lib, ps: lib.optim.SGD([], lr=0.1),
])
def test_argument_errors_match_torch(make):
    errors = []
    for lib in (numgrad, torch):
        with pytest.raises(Exception) as info:
            make(lib, [lib.nn.Parameter(lib.ones(1))] if "[]" not in "" else [])
        errors.append((info.type, str(info.value)))
    assert errors[0] == errors[1]


@pytest.mark.parametrize("make", [
    lambda lib, opt: lib.optim.lr_scheduler.StepLR(opt, step_size=3, gamma=0.5),
    lambda lib, opt: lib.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=5, eta_min=0.001),
    lambda lib, opt: lib.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=4),
], ids=["step", "cosine", "cosine_restart"])
def test_scheduler_learning_rates_and_trajectory_match_torch(make):
    ours, theirs = twin(mlp)
    rates, losses = [], []
    for lib, model in ((numgrad, ours), (torch, theirs)):
        opt = lib.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
        sched = make(lib, opt)
        seen = []
        for _ in range(16):
            seen.append(sched.get_last_lr()[0])
            opt.step()
            sched.step()
        rates.append(seen)
        model2 = mlp(lib)
        if lib is numgrad:
            model2.load_state_dict({k: v.numpy() for k, v in mlp(torch).state_dict().items()})
        opt2 = lib.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
        losses.append(train(lib, model, opt2, 15, make(lib, opt2))[0])
    np.testing.assert_allclose(rates[0], rates[1], rtol=1e-15)
    np.testing.assert_allclose(losses[0], losses[1], rtol=2e-5)


def test_scheduler_state_dict_and_type_check():
    opt = numgrad.optim.SGD([numgrad.nn.Parameter(numgrad.ones(1))], lr=1.0)
    sched = numgrad.optim.lr_scheduler.StepLR(opt, 2)
    for _ in range(3):
        opt.step()
        sched.step()
    state = sched.state_dict()
    assert state["last_epoch"] == 3 and state["base_lrs"] == [1.0]
    with pytest.raises(TypeError, match="list is not an Optimizer"):
        numgrad.optim.lr_scheduler.StepLR([], 2)


def test_optimizer_repr_lists_group_options():
    opt = numgrad.optim.SGD([numgrad.nn.Parameter(numgrad.ones(1))], lr=0.5, momentum=0.9)
    text = repr(opt)
    assert text.startswith("SGD (\nParameter Group 0\n") and "    lr: 0.5\n" in text and "momentum: 0.9" in text


@pytest.mark.parametrize("name", ["Adam", "AdamW", "RMSprop"])
def test_non_contiguous_parameter_and_state_and_the_float32_step_count(name):
    # the kernel works on contiguous copies of a transposed parameter and its transposed state, written back;
    # the step count is torch's float32 0-d tensor
    p = numgrad.nn.Parameter(numgrad.tensor(rand(4, 3)).t())
    q = torch.nn.Parameter(torch.tensor(rand(4, 3)).t())
    for lib, param in ((numgrad, p), (torch, q)):
        opt = getattr(lib.optim, name)([param], lr=0.1)
        for _ in range(3):
            opt.zero_grad()
            (param * param * param).sum().backward()
            opt.step()
        step = opt.state[param]["step"]
        assert step.dtype == lib.float32 and step.dim() == 0 and step.item() == 3
    np.testing.assert_allclose(p.detach().numpy(), q.detach().numpy(), rtol=1e-6, atol=1e-7)

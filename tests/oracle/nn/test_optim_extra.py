"""Adadelta, Adagrad, Adamax, NAdam, RAdam and LBFGS against torch: 25-step trajectories (every parameter after
every step, float32 and float64, each option), state_dict layout and values, resuming from a state_dict, parameter
groups, and torch's argument errors."""
import copy

import numpy as np
import pytest
import torch

import numgrad
from helpers.nn_compare import rand, twin

X = rand(32, 6)
Y = np.random.default_rng(3).integers(0, 3, 32)


def mlp(lib):
    nn = lib.nn
    return nn.Sequential(nn.Linear(6, 16), nn.Tanh(), nn.Linear(16, 3))


def train(lib, model, optimizer, steps, dtype="float32"):
    """Cross-entropy steps on fixed data: the losses and the parameters after each step."""
    losses, snapshots = [], []
    x, y = lib.tensor(X.astype(dtype)), lib.tensor(Y)
    for _ in range(steps):
        optimizer.zero_grad()
        loss = lib.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
        snapshots.append([p.detach().numpy().copy() for p in model.parameters()])
    return losses, snapshots


CASES = {
    "adadelta": ("Adadelta", dict()),
    "adadelta_options": ("Adadelta", dict(lr=0.5, rho=0.8, eps=1e-4, weight_decay=0.1, maximize=True)),
    "adagrad": ("Adagrad", dict(lr=0.05)),
    "adagrad_options": ("Adagrad", dict(lr=0.1, lr_decay=0.05, weight_decay=0.1, initial_accumulator_value=0.3,
                                        eps=1e-6)),
    "adagrad_maximize": ("Adagrad", dict(lr=0.05, maximize=True, foreach=False)),
    "adamax": ("Adamax", dict()),
    "adamax_options": ("Adamax", dict(lr=0.01, betas=(0.7, 0.9), eps=1e-5, weight_decay=0.1, maximize=True)),
    "nadam": ("NAdam", dict(lr=0.01)),
    "nadam_options": ("NAdam", dict(lr=0.01, betas=(0.8, 0.95), weight_decay=0.1, momentum_decay=0.01)),
    "nadam_decoupled": ("NAdam", dict(lr=0.01, weight_decay=0.2, decoupled_weight_decay=True, maximize=True)),
    "radam": ("RAdam", dict(lr=0.01)),
    "radam_early_rectification": ("RAdam", dict(lr=0.01, betas=(0.9, 0.9), weight_decay=0.1)),
    "radam_decoupled": ("RAdam", dict(lr=0.01, betas=(0.3, 0.99), weight_decay=0.2, decoupled_weight_decay=True,
                                      maximize=True)),
}


def adaptive_eps(name, kwargs, dtype):
    """A float32 gradient near a default eps of 1e-8 makes g / (sqrt(v) + eps) as sensitive as 0/0 to the last-bit
    differences of the two BLAS libraries (as test_optim.py explains); float64 checks the default."""
    if dtype == "float32" and name in ("NAdam", "RAdam", "Adamax") and "eps" not in kwargs:
        return dict(kwargs, eps=1e-3)
    return kwargs


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("case", list(CASES))
def test_trajectory_matches_torch(case, dtype):
    name, kwargs = CASES[case]
    kwargs = adaptive_eps(name, kwargs, dtype)
    ours, theirs = twin(mlp)
    ours.to(getattr(numgrad, dtype))
    theirs.to(getattr(torch, dtype))
    our_losses, our_params = train(numgrad, ours, getattr(numgrad.optim, name)(ours.parameters(), **kwargs), 25,
                                   dtype)
    their_losses, their_params = train(torch, theirs, getattr(torch.optim, name)(theirs.parameters(), **kwargs), 25,
                                       dtype)
    tol = dict(rtol=1e-4, atol=1e-5) if dtype == "float32" else dict(rtol=1e-10, atol=1e-11)
    np.testing.assert_allclose(our_losses, their_losses, **tol)
    for step, (a, b) in enumerate(zip(our_params, their_params)):
        for pa, pb in zip(a, b):
            np.testing.assert_allclose(pa, pb, err_msg=f"step {step}", **tol)
    assert our_losses[-1] != our_losses[0]


def _compare_state_dicts(a, b):
    assert a["param_groups"] == b["param_groups"]
    assert list(a["state"]) == list(b["state"])
    for k in a["state"]:
        assert list(a["state"][k]) == list(b["state"][k])
        for key, value in a["state"][k].items():
            np.testing.assert_allclose(value.numpy(), b["state"][k][key].numpy(), rtol=1e-5, atol=1e-7)
            assert str(value.dtype) == str(b["state"][k][key].dtype) and value.shape == b["state"][k][key].shape


@pytest.mark.parametrize("name", ["Adadelta", "Adagrad", "Adamax", "NAdam", "RAdam"])
def test_state_dict_matches_torch_and_resumes(name):
    ours, theirs = twin(mlp)
    opts = {}
    for lib, model in ((numgrad, ours), (torch, theirs)):
        opt = getattr(lib.optim, name)(model.parameters(), lr=0.01, weight_decay=0.01)
        if name == "Adagrad":  # its state exists before the first step, as torch's
            _compare_state_dicts_pending = opt.state_dict()
            assert len(_compare_state_dicts_pending["state"]) == 4
        train(lib, model, opt, 3)
        opts[lib] = opt
    _compare_state_dicts(opts[numgrad].state_dict(), opts[torch].state_dict())
    # a fresh optimizer given the saved state continues as the original does, and as torch's
    saved_model, saved_opt = copy.deepcopy(ours.state_dict()), copy.deepcopy(opts[numgrad].state_dict())
    reference, _ = train(numgrad, ours, opts[numgrad], 4)
    their_reference, _ = train(torch, theirs, opts[torch], 4)
    resumed = mlp(numgrad)
    resumed.load_state_dict(saved_model)
    opt2 = getattr(numgrad.optim, name)(resumed.parameters(), lr=1.0)
    opt2.load_state_dict(saved_opt)
    assert opt2.param_groups[0]["lr"] == 0.01
    again, _ = train(numgrad, resumed, opt2, 4)
    np.testing.assert_array_equal(again, reference)
    np.testing.assert_allclose(again, their_reference, rtol=1e-5)


def test_param_groups_with_their_own_options():
    ours, theirs = twin(mlp)
    results = []
    for lib, model in ((numgrad, ours), (torch, theirs)):
        first, last = model[0], model[2]
        opt = lib.optim.NAdam([{"params": first.parameters(), "lr": 0.02, "betas": (0.5, 0.9)},
                               {"params": last.parameters()}], lr=0.005, eps=1e-3)
        results.append(train(lib, model, opt, 10))
        assert [g["lr"] for g in opt.param_groups] == [0.02, 0.005]
    for a, b in zip(results[0][1], results[1][1]):
        for pa, pb in zip(a, b):
            np.testing.assert_allclose(pa, pb, rtol=1e-4, atol=1e-5)


BAD = [
    ("Adadelta", dict(lr=-1)), ("Adadelta", dict(rho=1.5)), ("Adadelta", dict(eps=-1)),
    ("Adadelta", dict(weight_decay=-1)),
    ("Adagrad", dict(lr=-1)), ("Adagrad", dict(lr_decay=-1)), ("Adagrad", dict(weight_decay=-1)),
    ("Adagrad", dict(initial_accumulator_value=-1)), ("Adagrad", dict(eps=-1)),
    ("Adamax", dict(lr=-1)), ("Adamax", dict(eps=-1)), ("Adamax", dict(betas=(1.0, 0.9))),
    ("Adamax", dict(betas=(0.9, -0.1))), ("Adamax", dict(weight_decay=-1)),
    ("NAdam", dict(lr=-1)), ("NAdam", dict(betas=(0.9, 1.0))), ("NAdam", dict(momentum_decay=-1)),
    ("RAdam", dict(eps=-1)), ("RAdam", dict(betas=(-0.1, 0.9))), ("RAdam", dict(weight_decay=-0.1)),
    ("LBFGS", dict(lr=-1)),
]


@pytest.mark.parametrize("name,kwargs", BAD)
def test_argument_errors_match_torch(name, kwargs):
    messages = []
    for lib in (numgrad, torch):
        with pytest.raises(ValueError) as info:
            getattr(lib.optim, name)([lib.zeros(2, requires_grad=True)], **kwargs)
        messages.append(str(info.value))
    assert messages[0] == messages[1]


def test_tensor_lr_must_have_one_element_and_fused_checks():
    for lib in (numgrad, torch):
        with pytest.raises(ValueError, match="Tensor lr must be 1-element"):
            lib.optim.RAdam([lib.zeros(2, requires_grad=True)], lr=lib.ones(2))
        with pytest.raises(RuntimeError, match="`fused` does not support `differentiable`"):
            lib.optim.Adagrad([lib.zeros(2, requires_grad=True)], fused=True, differentiable=True)


# ---- LBFGS ------------------------------------------------------------------------------------------------------

def lbfgs_fit(lib, line_search_fn, steps, dtype, **kwargs):
    """A small regression fitted with closure steps: the losses, the parameters and the optimizer state."""
    torch.manual_seed(0)
    w = lib.tensor(rand(6, 3, seed=1).astype(dtype) * 0.1, requires_grad=True)
    b = lib.tensor(np.zeros(3, dtype), requires_grad=True)
    x, target = lib.tensor(X.astype(dtype)), lib.tensor(rand(32, 3, seed=2).astype(dtype))
    opt = lib.optim.LBFGS([w, b], lr=kwargs.pop("lr", 1), line_search_fn=line_search_fn, **kwargs)

    def closure():
        opt.zero_grad()
        loss = (((x @ w + b).tanh() - target) ** 2).mean() + (w ** 2).sum() * 0.01
        loss.backward()
        return loss
    losses, params = [], []
    for _ in range(steps):
        losses.append(opt.step(closure).item())
        params.append([w.detach().numpy().copy(), b.detach().numpy().copy()])
    return losses, params, opt


# float32 runs stop at max_iter: near convergence, whether |loss - prev_loss| < 1e-9 ends an inner loop one
# iteration early is decided by the last bit of a float32 loss (float64 shows the stopping rules are torch's)
LBFGS_CASES = [(None, dict(), "float64"), ("strong_wolfe", dict(), "float64"),
               (None, dict(max_iter=5, history_size=3, lr=0.5), "float64"),
               ("strong_wolfe", dict(max_iter=4, history_size=2), "float64"),
               (None, dict(max_iter=5, history_size=3, lr=0.5, tolerance_change=0), "float32"),
               ("strong_wolfe", dict(max_iter=4, history_size=2, tolerance_change=0), "float32")]


@pytest.mark.filterwarnings("ignore:Converting a tensor with requires_grad")
@pytest.mark.parametrize("line_search_fn,kwargs,dtype", LBFGS_CASES)
def test_lbfgs_matches_torch(line_search_fn, kwargs, dtype):
    ours = lbfgs_fit(numgrad, line_search_fn, 4, dtype, **dict(kwargs))
    theirs = lbfgs_fit(torch, line_search_fn, 4, dtype, **dict(kwargs))
    tol = dict(rtol=2e-4, atol=1e-5) if dtype == "float32" else dict(rtol=1e-9, atol=1e-11)
    np.testing.assert_allclose(ours[0], theirs[0], **tol)
    for a, b in zip(ours[1], theirs[1]):
        for pa, pb in zip(a, b):
            np.testing.assert_allclose(pa, pb, **tol)
    our_state, their_state = ours[2].state_dict()["state"][0], theirs[2].state_dict()["state"][0]
    assert list(our_state) == list(their_state)
    assert our_state["func_evals"] == their_state["func_evals"] and our_state["n_iter"] == their_state["n_iter"]
    assert len(our_state["old_dirs"]) == len(their_state["old_dirs"])
    # near the optimum the gradient is a cancellation (~1e-3 of its terms): float32 compares it absolutely
    grad_tol = dict(rtol=0, atol=5e-5) if dtype == "float32" else tol
    np.testing.assert_allclose(our_state["prev_flat_grad"].numpy(), their_state["prev_flat_grad"].numpy(),
                               **grad_tol)
    assert ours[0][-1] < ours[0][0]


def test_lbfgs_errors_match_torch():
    for lib in (numgrad, torch):
        a, b = lib.zeros(2, requires_grad=True), lib.zeros(2, requires_grad=True)
        with pytest.raises(ValueError, match=r"LBFGS doesn't support per-parameter options \(parameter groups\)"):
            lib.optim.LBFGS([{"params": [a]}, {"params": [b]}])
        opt = lib.optim.LBFGS([a], line_search_fn="armijo")

        def closure():
            opt.zero_grad()
            loss = ((a - 1) ** 2).sum()
            loss.backward()
            return loss
        with pytest.raises(RuntimeError, match="only 'strong_wolfe' is supported"):
            opt.step(closure)

"""An optimizer whose state no longer matches its parameter (the parameter replaced through `p.data = ...`
with another shape, or state loaded from another model's optimizer) raises torch's error, of torch's type
and with torch's message, where torch raises it; it never crashes in a kernel or updates silently.

numgrad runs in a child process (helpers/isolated.py): a crash inside a kernel fails its case, not pytest.
torch runs here."""
import pytest

from helpers.isolated import child_main, outcome, run_cases

OPTIMIZERS = {
    "sgd": lambda t, ps: t.optim.SGD(ps, lr=0.1),
    "sgd_momentum": lambda t, ps: t.optim.SGD(ps, lr=0.1, momentum=0.9),
    "sgd_nesterov_wd": lambda t, ps: t.optim.SGD(ps, lr=0.1, momentum=0.9, nesterov=True, weight_decay=0.1),
    "adam": lambda t, ps: t.optim.Adam(ps, lr=0.1),
    "adam_amsgrad_wd": lambda t, ps: t.optim.Adam(ps, lr=0.1, amsgrad=True, weight_decay=0.1),
    "adamw": lambda t, ps: t.optim.AdamW(ps, lr=0.1),
    "rmsprop": lambda t, ps: t.optim.RMSprop(ps, lr=0.1),
    "rmsprop_centered_momentum": lambda t, ps: t.optim.RMSprop(ps, lr=0.1, centered=True, momentum=0.9),
    "rmsprop_momentum": lambda t, ps: t.optim.RMSprop(ps, lr=0.1, momentum=0.5),
}

# (old shape, new shape): grown, shrunk, shrunk to one element, grown from one element, the same
# number of elements in another shape, and shapes that broadcast one way only
RESHAPES = {
    "grown": ((3,), (5,)),
    "shrunk": ((5,), (3,)),
    "shrunk_to_one": ((5,), (1,)),
    "grown_from_one": ((1,), (5,)),
    "same_numel": ((2, 3), (3, 2)),
    "new_leading_dim": ((4,), (2, 4)),
    "lost_leading_dim": ((2, 4), (4,)),
    "big_grown": ((3, 100), (300, 100)),
}


def _values(t, p):
    return p.detach().reshape(-1).tolist()


def replaced_parameter(t, opt_name, old, new):
    """One step, then the parameter's data replaced by another shape (with a gradient of that shape), then
    a second step."""
    p = t.nn.Parameter(t.arange(float(_numel(old))).reshape(old) / 7 + 1)
    opt = OPTIMIZERS[opt_name](t, [p])
    p.grad = t.ones(old) / 3
    opt.step()
    p.data = t.arange(float(_numel(new))).reshape(new) / 5 - 1
    p.grad = t.ones(new) / 2
    opt.step()
    return _values(t, p)


def second_parameter_replaced(t, opt_name):
    """The first of two parameters keeps its shape: torch updates it before the second one's step raises,
    and so does numgrad (its values join the message)."""
    a, b = t.nn.Parameter(t.ones(3)), t.nn.Parameter(t.ones(4))
    opt = OPTIMIZERS[opt_name](t, [a, b])
    a.grad, b.grad = t.ones(3), t.ones(4)
    opt.step()
    b.data = t.ones(6)
    b.grad = t.ones(6)
    try:
        opt.step()
    except Exception as e:  # noqa: BLE001
        raise type(e)(f"{e} | first parameter: {[round(v, 4) for v in _values(t, a)]}") from None
    return _values(t, a) + _values(t, b)


def loaded_from_other_model(t, opt_name, sizes_a, sizes_b):
    """load_state_dict of the stepped optimizer of a model with other layer sizes, then a step."""
    t.manual_seed(0)
    a = t.nn.Linear(*sizes_a)
    b = t.nn.Linear(*sizes_b)
    opt_a, opt_b = OPTIMIZERS[opt_name](t, a.parameters()), OPTIMIZERS[opt_name](t, b.parameters())
    for p in a.parameters():
        p.grad = t.ones_like(p)
    opt_a.step()
    opt_b.load_state_dict(opt_a.state_dict())
    for p in b.parameters():
        p.grad = t.ones_like(p)
    opt_b.step()
    return [v for p in b.parameters() for v in _values(t, p)]


def loaded_other_param_count(t, opt_name):
    """A state dict whose group holds another number of parameters."""
    a, b = t.nn.Linear(2, 2), t.nn.Linear(2, 2, bias=False)
    opt_a, opt_b = OPTIMIZERS[opt_name](t, a.parameters()), OPTIMIZERS[opt_name](t, b.parameters())
    opt_b.load_state_dict(opt_a.state_dict())


def loaded_other_group_count(t, opt_name):
    a = t.nn.Linear(2, 2)
    opt_a = OPTIMIZERS[opt_name](t, [{"params": [a.weight]}, {"params": [a.bias]}])
    opt_b = OPTIMIZERS[opt_name](t, a.parameters())
    opt_b.load_state_dict(opt_a.state_dict())


def _numel(shape):
    n = 1
    for d in shape:
        n *= d
    return n


CASES = {}
for _opt in OPTIMIZERS:
    for _kind, (_old, _new) in RESHAPES.items():
        if _kind == "big_grown" and _opt not in ("sgd_momentum", "adam", "rmsprop_centered_momentum"):
            continue
        CASES[f"{_opt}-{_kind}"] = (replaced_parameter, (_opt, _old, _new))
    CASES[f"{_opt}-second_param"] = (second_parameter_replaced, (_opt,))
for _opt in ("sgd_momentum", "adam", "adamw", "rmsprop_centered_momentum"):
    CASES[f"{_opt}-load_other_model"] = (loaded_from_other_model, (_opt, (4, 3), (5, 2)))
    CASES[f"{_opt}-load_same_numel_model"] = (loaded_from_other_model, (_opt, (2, 3), (3, 2)))
CASES["adam-load_other_param_count"] = (loaded_other_param_count, ("adam",))
CASES["sgd_momentum-load_other_param_count"] = (loaded_other_param_count, ("sgd_momentum",))
CASES["rmsprop-load_other_group_count"] = (loaded_other_group_count, ("rmsprop",))


def run_case(t, name):
    """{'value': ...} or {'error': type name, 'message': ...} for case `name` on library `t`."""
    fn, args = CASES[name]
    return outcome(fn, t, *args)


def _numgrad_case(name):
    import numgrad
    return run_case(numgrad, name)


@pytest.fixture(scope="module")
def numgrad_results():
    return run_cases(__file__, list(CASES))


@pytest.mark.parametrize("name", list(CASES))
def test_state_mismatch_matches_torch(name, numgrad_results):
    import torch
    expected = run_case(torch, name)
    got = numgrad_results[name]
    assert "crash" not in got, f"numgrad died with code {got['crash']}:\n{got['stderr']}"
    if "error" in expected:
        assert (got.get("error"), got.get("message")) == (expected["error"], expected["message"])
    else:
        assert "value" in got, got
        assert got["value"] == pytest.approx(expected["value"], rel=1e-5, abs=1e-6)


def test_every_shape_mismatch_raises_in_torch():
    """The cases test what they mean to: torch raises for each replaced parameter with state."""
    import torch
    for name, (fn, _) in CASES.items():
        if fn is replaced_parameter and not name.startswith("sgd-"):
            assert "error" in run_case(torch, name), name


if __name__ == "__main__":
    child_main(_numgrad_case)

"""torch's foreach=, fused= and capturable= options on the CPU: accepted where torch accepts them (the same
numbers: numgrad's step over a group is one kernel whatever the flags), refused with torch's exception and words
where it refuses them, at construction or at the first step as torch does."""
import numpy as np
import pytest
import torch

import numgrad

OPTIMIZERS = ["SGD", "Adam", "AdamW", "Adagrad", "RMSprop", "Adamax", "NAdam", "RAdam", "Adadelta"]
FLAGS = [{"foreach": True}, {"foreach": False}, {"fused": True}, {"fused": False}, {"capturable": True},
         {"foreach": True, "capturable": True}, {"fused": True, "foreach": True}, {"fused": True, "capturable": True},
         {"fused": True, "differentiable": True}, {"foreach": False, "fused": False}]


def _outcome(lib, cls, flags, steps=3):
    """(parameters after `steps` steps, None) or (None, (exception type name, message)), and the state's size."""
    rng = np.random.default_rng(0)
    init = [rng.standard_normal((5, 7)).astype(np.float32), rng.standard_normal(7).astype(np.float32)]
    grads = [[rng.standard_normal(a.shape).astype(np.float32) for a in init] for _ in range(steps)]
    params = [lib.tensor(a.copy(), requires_grad=True) for a in init]
    kw = dict(flags, lr=0.1, momentum=0.9) if cls == "SGD" else dict(flags)
    opt = None
    try:
        opt = getattr(lib.optim, cls)(params, **kw)
        for gs in grads:
            for p, g in zip(params, gs):
                p.grad = lib.tensor(g.copy())
            opt.step()
    except (TypeError, RuntimeError, ValueError, AssertionError) as e:
        return None, (type(e).__name__, str(e).replace("numgrad", "torch")), None if opt is None else len(opt.state)
    return [p.detach().numpy().copy() for p in params], None, len(opt.state)


@pytest.mark.parametrize("flags", FLAGS, ids=lambda f: ",".join(f"{k}={v}" for k, v in f.items()))
@pytest.mark.parametrize("cls", OPTIMIZERS)
def test_flags_accepted_and_refused_as_torch(cls, flags):
    ours, our_error, our_state = _outcome(numgrad, cls, flags)
    theirs, their_error, their_state = _outcome(torch, cls, flags)
    if their_error is not None and their_error[0] == "TypeError":  # an option this optimizer does not have
        assert our_error is not None and our_error[0] == "TypeError"
        assert "unexpected keyword argument" in our_error[1]
        return
    assert our_error == their_error
    assert our_state == their_state  # a refused capturable step has made the state, as torch's _init_group
    if theirs is not None:
        # torch's fused kernels and its NAdam/RAdam foreach steps round differently from its single-tensor
        # steps in the last bit (the others are bitwise the same): numgrad computes the single-tensor numbers
        for a, t in zip(ours, theirs):
            np.testing.assert_allclose(a, t, rtol=2e-6, atol=1e-6)


@pytest.mark.parametrize("cls", ["SGD", "Adam", "Adagrad"])
def test_flags_do_not_change_numgrads_numbers(cls):
    """foreach and fused pick torch's implementation; numgrad has one, so its numbers are the same bits."""
    plain, _, _ = _outcome(numgrad, cls, {})
    for flags in ({"foreach": True}, {"fused": True}, {"foreach": False}):
        other, _, _ = _outcome(numgrad, cls, flags)
        for a, b in zip(plain, other):
            np.testing.assert_array_equal(a, b)


def test_group_option_flags_survive_state_dict():
    for lib in (numgrad, torch):
        p = lib.tensor(np.ones(3, np.float32), requires_grad=True)
        opt = lib.optim.Adam([p], fused=True)
        assert opt.state_dict()["param_groups"][0]["fused"] is True
        assert opt.state_dict()["param_groups"][0]["foreach"] is None

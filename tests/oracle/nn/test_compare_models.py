"""numgrad.testing.compare_modules and compare_training: they pass where numgrad matches torch, and name the
first place (step and tensor) where a deliberately different model, module or optimizer parts from it."""
import numpy as np
import pytest
import torch

import numgrad
from numgrad.testing import compare_modules, compare_training


def _mlp(lib):
    return lib.nn.Sequential(lib.nn.Linear(4, 8), lib.nn.Tanh(), lib.nn.Linear(8, 3))


RNG = np.random.default_rng(7)
DATA = [(RNG.standard_normal((6, 4)).astype(np.float32), RNG.integers(0, 3, 6)) for _ in range(4)]


def _step(lib, model, opt, x, y):
    opt.zero_grad()
    loss = lib.nn.functional.cross_entropy(model(x), y)
    loss.backward()
    opt.step()
    return loss


def test_compare_modules_passes_and_copies_torchs_state():
    ours, theirs = _mlp(numgrad), _mlp(torch)
    report = compare_modules(ours, theirs, DATA[0][0])
    assert report.ok and "grad of 2.weight" in report.max_abs_errors and "grad of input 0" in report.max_abs_errors
    np.testing.assert_array_equal(ours[0].weight.detach().numpy(), theirs[0].weight.detach().numpy())


def test_compare_modules_names_what_differs():
    ours, theirs = _mlp(numgrad), torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 3))
    report = compare_modules(ours, theirs, DATA[0][0], raise_exception=False)
    assert not report.ok
    assert [d.where for d in report.differences][:2] == ["module", "output 0"]
    with pytest.raises(AssertionError, match="numgrad differs from torch"):
        compare_modules(ours, theirs, DATA[0][0])


@pytest.mark.parametrize("make_opt", [lambda lib, ps: lib.optim.SGD(ps, lr=0.1, momentum=0.9),
                                      lambda lib, ps: lib.optim.Adam(ps, lr=1e-2)], ids=["sgd", "adam"])
def test_compare_training_passes_over_steps(make_opt):
    report = compare_training(_step, 4, model=_mlp, optimizer=make_opt, inputs=lambda i: DATA[i])
    assert report.ok and report.steps == 4 and report.first_step is None
    assert str(report).startswith("numgrad matches torch over 4 steps")


def test_compare_training_reports_the_first_step_and_tensor_that_part():
    def drifting(lib, ps):  # numgrad's learning rate moves from step 2 on
        return lib.optim.SGD(ps, lr=0.1)

    taken = {numgrad: 0, torch: 0}

    def step(lib, model, opt, x, y):
        if lib is numgrad and taken[lib] >= 2:
            opt.param_groups[0]["lr"] = 0.2
        taken[lib] += 1
        return _step(lib, model, opt, x, y)

    report = compare_training(step, 4, model=_mlp, optimizer=drifting, inputs=lambda i: DATA[i],
                              raise_exception=False)
    assert report.first_step == 2 and report.steps == 3
    assert report.differences[0].where == "step 2: parameter 0.weight"

"""GroupNorm, InstanceNorm1d/2d/3d and their functional forms against torch: outputs, input and parameter
gradients, running statistics, train/eval, state_dict keys, reprs, float64 gradchecks, errors and warnings."""
import warnings

import numpy as np
import pytest
import torch

import numgrad
from numgrad.testing import gradcheck, gradgradcheck
from helpers.nn_compare import assert_same, compare_params, rand, run_module, twin

LAYERS = {
    "group": (lambda nn: nn.GroupNorm(3, 6), (2, 6, 5)),
    "group_4d": (lambda nn: nn.GroupNorm(2, 4), (2, 4, 3, 3)),
    "group_one_per_channel": (lambda nn: nn.GroupNorm(4, 4), (3, 4, 5)),
    "group_one_group": (lambda nn: nn.GroupNorm(1, 4, eps=1e-3), (2, 4, 3)),
    "group_2d_input": (lambda nn: nn.GroupNorm(2, 6), (4, 6)),
    "group_no_affine": (lambda nn: nn.GroupNorm(2, 4, affine=False), (2, 4, 6)),
    "group_no_bias": (lambda nn: nn.GroupNorm(2, 4, bias=False), (2, 4, 6)),
    "instance_1d": (lambda nn: nn.InstanceNorm1d(3), (2, 3, 6)),
    "instance_1d_affine": (lambda nn: nn.InstanceNorm1d(3, affine=True), (2, 3, 6)),
    "instance_1d_unbatched": (lambda nn: nn.InstanceNorm1d(3, affine=True), (3, 6)),
    "instance_2d_running": (lambda nn: nn.InstanceNorm2d(3, track_running_stats=True), (2, 3, 4, 5)),
    "instance_2d_all": (lambda nn: nn.InstanceNorm2d(3, affine=True, track_running_stats=True, momentum=0.3),
                        (2, 3, 4, 4)),
    "instance_3d": (lambda nn: nn.InstanceNorm3d(2, affine=True), (2, 2, 3, 3, 2)),
    "instance_3d_unbatched": (lambda nn: nn.InstanceNorm3d(2), (2, 3, 3, 2)),
}


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["float32", "float64"])
@pytest.mark.parametrize("name", list(LAYERS))
def test_layer_matches_torch(name, dtype):
    make, shape = LAYERS[name]
    ours, theirs = twin(lambda lib: make(lib.nn))
    assert list(ours.state_dict()) == list(theirs.state_dict())
    assert repr(ours) == repr(theirs)
    if dtype == np.float64:
        ours.double()
        theirs.double()
    tol = dict(rtol=1e-4, atol=1e-5) if dtype == np.float32 else dict(rtol=1e-10, atol=1e-12)
    x = rand(*shape, dtype=dtype, seed=3) * 2 + 0.5
    run_module(ours, theirs, x, **tol)
    compare_params(ours, theirs, **tol)  # running statistics after one training step
    ours.eval()
    theirs.eval()
    ours.zero_grad()
    theirs.zero_grad()
    run_module(ours, theirs, x, **tol)


def test_instance_norm_running_statistics_over_steps():
    ours, theirs = twin(lambda lib: lib.nn.InstanceNorm1d(3, track_running_stats=True, momentum=None))
    for step in range(3):
        x = rand(2, 3, 5, seed=step) * (step + 1)
        assert_same(ours(numgrad.tensor(x)), theirs(torch.tensor(x)), rtol=1e-5, atol=1e-6)
        compare_params(ours, theirs)


def test_functional_forms_match_torch():
    x = rand(2, 6, 4, dtype=np.float64, seed=1)
    w, b = rand(6, dtype=np.float64, seed=2), rand(6, dtype=np.float64, seed=3)
    for lib_fn in (lambda lib, t: lib.nn.functional.group_norm(t, 2, lib.tensor(w), lib.tensor(b), eps=1e-3),
                   lambda lib, t: lib.nn.functional.instance_norm(t, weight=lib.tensor(w), bias=lib.tensor(b)),
                   lambda lib, t: lib.nn.functional.instance_norm(t, lib.zeros(6, dtype=lib.float64),
                                                                  lib.ones(6, dtype=lib.float64),
                                                                  use_input_stats=False)):
        assert_same(lib_fn(numgrad, numgrad.tensor(x)), lib_fn(torch, torch.tensor(x)), rtol=1e-10, atol=1e-12)


def test_gradcheck():
    x = numgrad.tensor(rand(2, 4, 3, dtype=np.float64, seed=1), requires_grad=True)
    w = numgrad.tensor(rand(4, dtype=np.float64, seed=2), requires_grad=True)
    b = numgrad.tensor(rand(4, dtype=np.float64, seed=3), requires_grad=True)
    F = numgrad.nn.functional
    assert gradcheck(lambda x, w, b: F.group_norm(x, 2, w, b), (x, w, b))
    assert gradcheck(lambda x, w, b: F.instance_norm(x, weight=w, bias=b), (x, w, b))
    assert gradgradcheck(lambda x, w, b: F.group_norm(x, 2, w, b), (x, w, b))


ERRORS = [
    lambda lib: lib.nn.GroupNorm(4, 6),
    lambda lib: lib.nn.functional.group_norm(lib.randn(2, 6, 3), 4),
    lambda lib: lib.nn.functional.group_norm(lib.randn(6), 2),
    lambda lib: lib.nn.functional.group_norm(lib.randn(1, 2, 1), 2),
    lambda lib: lib.nn.functional.group_norm(lib.randn(2, 6, 3), 2, lib.ones(4)),
    lambda lib: lib.nn.functional.group_norm(lib.randn(2, 6, 3), 2, None, lib.ones(2, 3)),
    lambda lib: lib.nn.functional.group_norm(lib.randn(2, 6, 3), 2, lib.ones(6), lib.ones(2, 3)),
    lambda lib: lib.nn.functional.instance_norm(lib.randn(2, 3)),
    lambda lib: lib.nn.functional.instance_norm(lib.randn(2, 3, 4), use_input_stats=False),
    lambda lib: lib.nn.InstanceNorm2d(3)(lib.randn(3, 4)),
    lambda lib: lib.nn.InstanceNorm1d(3, affine=True)(lib.randn(2, 4, 5)),
    lambda lib: lib.nn.Unflatten(1, 6),
    lambda lib: lib.nn.Unflatten(1, (2, 3.0)),
]


@pytest.mark.parametrize("case", range(len(ERRORS)))
def test_errors_match_torch(case):
    outcomes = []
    for lib in (numgrad, torch):
        with pytest.raises(Exception) as info:
            ERRORS[case](lib)
        outcomes.append((type(info.value), str(info.value)))
    assert outcomes[0] == outcomes[1]


def test_num_features_mismatch_warns_without_affine():
    messages = []
    for lib in (numgrad, torch):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            lib.nn.InstanceNorm1d(3)(lib.randn(2, 4, 5))
        messages.append([str(w.message) for w in caught])
    assert messages[0] == messages[1] and messages[0]


def test_unflatten_matches_torch():
    for dim, size in ((1, (2, 3)), (-1, [3, -1]), (0, (1, 2))):
        ours, theirs = twin(lambda lib: lib.nn.Unflatten(dim, size))
        assert repr(ours) == repr(theirs)
        run_module(ours, theirs, rand(2, 6, seed=4))

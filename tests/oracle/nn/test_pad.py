"""F.pad in every mode and the padding layers against torch: values, grad_fn names, gradients (float32 and
float64, finite differences), integer inputs, torch's errors."""
import numpy as np
import pytest
import torch

import numgrad
from helpers.functional_compare import check_gradients, compare, same_error
from helpers.nn_compare import rand, run_module, twin

CASES = {
    "1d": ((2, 3, 5), (1, 2)),
    "1d_unbatched": ((3, 5), (2, 0)),
    "1d_crop": ((2, 3, 5), (-1, 3)),
    "2d": ((2, 3, 5, 4), (1, 2, 3, 1)),
    "2d_crop": ((2, 3, 5, 4), (1, -2, -1, 2)),
    "2d_unbatched": ((3, 5, 4), (0, 2, 1, 1)),
    "3d": ((2, 2, 4, 3, 5), (1, 2, 0, 1, 2, 1)),
    "3d_unbatched": ((2, 4, 3, 5), (1, 1, 2, 1, 1, 0)),
}
MODES = ["constant", "reflect", "replicate", "circular"]


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["float32", "float64"])
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("case", list(CASES))
def test_pad_matches_torch(case, mode, dtype):
    shape, pad = CASES[case]
    compare(lambda F, x: F.pad(x, pad, mode=mode), shape, dtype=dtype)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("case", ["1d_crop", "2d_crop", "3d"])
def test_pad_gradcheck(case, mode):
    shape, pad = CASES[case]
    check_gradients(lambda F, x: F.pad(x, pad, mode=mode), shape)


@pytest.mark.parametrize("pad", [(1,), (2, 1, 0, 3), (1, 1, 1, 1, 1, 1, 1, 1), (-2, -2), ()])
def test_constant_pad_any_dims_and_value(pad):
    shape = (2, 3, 4) if len(pad) <= 6 else (2, 3, 4, 2)
    if len(pad) % 2:
        same_error(lambda F, x: F.pad(x, pad), rand(*shape))
    else:
        compare(lambda F, x: F.pad(x, pad, value=-1.5), shape)


def test_constant_pad_of_integers_casts_the_value():
    data = np.arange(12, dtype=np.int64).reshape(3, 4)
    for mode, value in (("constant", 2.7), ("reflect", None), ("replicate", None), ("circular", None)):
        ours = numgrad.nn.functional.pad(numgrad.tensor(data), (1, 2), mode=mode, value=value)
        theirs = torch.nn.functional.pad(torch.tensor(data), (1, 2), mode=mode, value=value)
        assert ours.dtype == numgrad.int64
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


def test_double_backward_through_pad():
    for mode in MODES:
        x = numgrad.tensor(rand(2, 3, 5, dtype=np.float64), requires_grad=True)
        (g,) = numgrad.autograd.grad((numgrad.nn.functional.pad(x, (2, 1), mode=mode) ** 2).sum(), x,
                                     create_graph=True)
        t = torch.tensor(rand(2, 3, 5, dtype=np.float64), requires_grad=True)
        (h,) = torch.autograd.grad((torch.nn.functional.pad(t, (2, 1), mode=mode) ** 2).sum(), t, create_graph=True)
        np.testing.assert_allclose(numgrad.autograd.grad(g.sum(), x)[0].numpy(),
                                   torch.autograd.grad(h.sum(), t)[0].numpy())


ERRORS = [
    ((1, 3, 4), dict(pad=(1, 1, 1, 1, 1, 1, 1, 1))),
    ((1, 3, 4), dict(pad=(1, 1), mode="foo")),
    ((1, 3, 4), dict(pad=(1, 1), mode="reflect", value=1.0)),
    ((1, 3, 4), dict(pad=(4, 1), mode="reflect")),
    ((1, 3, 4, 5), dict(pad=(5, 1, 1, 1), mode="reflect")),
    ((1, 3, 4, 5), dict(pad=(1, 1, 4, 1), mode="reflect")),
    ((1, 3, 4, 5, 6), dict(pad=(1, 1, 1, 1, 4, 1), mode="reflect")),
    ((1, 3, 4), dict(pad=(-3, -2), mode="reflect")),
    ((1, 3, 4), dict(pad=(-3, -3), mode="replicate")),
    ((1, 3, 4, 5), dict(pad=(-3, -2, -3, -3), mode="reflect")),
    ((1, 3, 4, 5), dict(pad=(-3, -3, -3, -3), mode="replicate")),
    ((1, 3, 4, 5), dict(pad=(0, 0, -3, -3), mode="replicate")),
    ((1, 3, 4, 5, 6), dict(pad=(-3, -3, -3, -3, -3, -3), mode="reflect")),
    ((4,), dict(pad=(1, 1), mode="reflect")),
    ((1, 3, 4, 4), dict(pad=(1, 1), mode="circular")),
    ((1, 3, 4), dict(pad=(5, 1), mode="circular")),
    ((1, 3, 4), dict(pad=(-3, -2), mode="circular")),
    ((3, 0, 4), dict(pad=(1, 1), mode="reflect")),
    ((3, 0, 4), dict(pad=(1, 1, 1, 1), mode="replicate")),
    ((1, 3, 4), dict(pad=(-3, -2))),
    ((1, 3, 4), dict(pad=(1.0, 1))),
]


@pytest.mark.parametrize("shape, kwargs", ERRORS)
def test_pad_errors_match_torch(shape, kwargs):
    same_error(lambda F, x: F.pad(x, **kwargs), rand(*shape))


def test_bool_reflection_is_refused_as_torch():
    same_error(lambda F, x: F.pad(x, (1, 1), mode="reflect"), np.ones((1, 3, 4), bool))


LAYERS = {
    "zero1": (lambda nn: nn.ZeroPad1d((1, 2)), (2, 3, 4)),
    "zero2": (lambda nn: nn.ZeroPad2d(2), (2, 3, 4, 4)),
    "zero3": (lambda nn: nn.ZeroPad3d((1, 0, 2, 1, 0, 1)), (1, 2, 3, 4, 4)),
    "const1": (lambda nn: nn.ConstantPad1d(2, 3.5), (2, 3, 4)),
    "const2": (lambda nn: nn.ConstantPad2d((1, 2, 0, 1), -1.0), (2, 3, 4, 4)),
    "const3": (lambda nn: nn.ConstantPad3d(1, 0.5), (1, 2, 3, 4, 4)),
    "reflect1": (lambda nn: nn.ReflectionPad1d(2), (2, 3, 4)),
    "reflect2": (lambda nn: nn.ReflectionPad2d((1, 2, 3, 0)), (2, 3, 4, 4)),
    "reflect3": (lambda nn: nn.ReflectionPad3d(1), (1, 2, 3, 4, 4)),
    "replicate1": (lambda nn: nn.ReplicationPad1d((3, 1)), (2, 3, 4)),
    "replicate2": (lambda nn: nn.ReplicationPad2d(2), (2, 3, 4, 4)),
    "replicate3": (lambda nn: nn.ReplicationPad3d((1, 2, 0, 1, 2, 0)), (1, 2, 3, 4, 4)),
    "circular1": (lambda nn: nn.CircularPad1d(2), (2, 3, 4)),
    "circular2": (lambda nn: nn.CircularPad2d((1, 2, 3, 0)), (2, 3, 4, 4)),
    "circular3": (lambda nn: nn.CircularPad3d(1), (1, 2, 3, 4, 4)),
}


@pytest.mark.parametrize("name", list(LAYERS))
def test_padding_layers_match_torch(name):
    make, shape = LAYERS[name]
    ours, theirs = twin(lambda lib: make(lib.nn))
    assert repr(ours) == repr(theirs)
    run_module(ours, theirs, rand(*shape))


def test_circular_layer_checks_dims():
    with pytest.raises(ValueError) as theirs:
        torch.nn.CircularPad2d(1)(torch.ones(2, 2))
    with pytest.raises(ValueError) as ours:
        numgrad.nn.CircularPad2d(1)(numgrad.ones(2, 2))
    assert str(ours.value) == str(theirs.value)

"""torch's legacy tensor types (FloatTensor, LongTensor, ...) and autograd.Variable against torch."""
import pytest
import torch

import numgrad

TYPES = ["FloatTensor", "DoubleTensor", "HalfTensor", "BFloat16Tensor", "ByteTensor", "CharTensor", "ShortTensor",
         "IntTensor", "LongTensor", "BoolTensor"]


def _lib(legacy_type):
    return numgrad if legacy_type is getattr(numgrad, legacy_type.__name__) else torch


def _outcome(fn, lib):
    try:
        out = fn(lib)
    except Exception as exc:  # noqa: BLE001  an error is a result to compare
        return type(exc), str(exc)
    return repr(out), tuple(out.shape) if hasattr(out, "shape") else None


@pytest.mark.parametrize("name", TYPES)
@pytest.mark.parametrize("call", [
    pytest.param(lambda T: T([1, 0, 2]), id="data"),
    pytest.param(lambda T: T([[1.7, -2.2], [0.5, 3.0]]), id="nested floats"),
    pytest.param(lambda T: T(), id="no arguments"),
    pytest.param(lambda T: T(2, 3).shape, id="size"),
    pytest.param(lambda T: T(4).shape, id="one size"),
    pytest.param(lambda T: T(_lib(T).Size([4, 1])).shape, id="a Size"),
    pytest.param(lambda T: T((4, 1)), id="a tuple is data"),
    pytest.param(lambda T: T("a"), id="a string"),
    pytest.param(lambda T: T(2.5), id="a float"),
    pytest.param(lambda T: T(-1), id="a negative size"),
])
def test_constructors(name, call):
    assert _outcome(lambda L: call(getattr(L, name)), numgrad) == _outcome(lambda L: call(getattr(L, name)), torch)


@pytest.mark.parametrize("name", TYPES)
def test_type_attributes_and_isinstance(name):
    ours, theirs = getattr(numgrad, name), getattr(torch, name)
    assert repr(ours) == repr(theirs) and repr(ours.dtype) == repr(theirs.dtype) and ours.is_cuda == theirs.is_cuda
    for make in (lambda L: L.ones(2), lambda L: L.ones(2).long(), lambda L: L.ones(2).int(), lambda L: L.ones(2).half(),
                 lambda L: L.ones(2).bool(), lambda L: L.ones(2).double(), lambda L: L.ones(2).byte()):
        assert isinstance(make(numgrad), ours) == isinstance(make(torch), theirs)
    assert not isinstance(3, ours) and not isinstance(3, theirs)
    assert getattr(numgrad, name)(2).type() == getattr(torch, name)(2).type()


def test_from_a_tensor():
    for L in (numgrad, torch):
        y = L.ones(2)
        z = L.FloatTensor(y)
        assert z is not y and z.data_ptr() == y.data_ptr()
    assert _outcome(lambda L: L.FloatTensor(L.ones(2).long()), numgrad) == \
        _outcome(lambda L: L.FloatTensor(L.ones(2).long()), torch)


def test_variable():
    for L in (numgrad, torch):
        x = L.ones(2, requires_grad=True)
        v = L.autograd.Variable(x)
        assert v is not x and not v.requires_grad and v.grad_fn is None and v.is_leaf
        w = L.autograd.Variable(L.tensor([1.0, 2.0]), requires_grad=True)
        (w * w).sum().backward()
        assert w.is_leaf and w.grad.tolist() == [2.0, 4.0]
        assert isinstance(L.ones(1), L.autograd.Variable) and not isinstance(3, L.autograd.Variable)
    assert repr(numgrad.autograd.Variable) == repr(torch.autograd.Variable)
    assert _outcome(lambda L: L.autograd.Variable(3), numgrad) == _outcome(lambda L: L.autograd.Variable(3), torch)


@pytest.mark.parametrize("name", TYPES)
def test_tensor_type_converts_to_a_legacy_type(name):
    for make in (lambda L: L.ones(2).type(getattr(L, name)), lambda L: L.ones(2).type(f"torch.{name}")):
        assert _outcome(make, numgrad) == _outcome(make, torch)


def test_tensor_type_refuses_an_unknown_name():
    assert _outcome(lambda L: L.ones(2).type("torch.FooTensor"), numgrad) == \
        _outcome(lambda L: L.ones(2).type("torch.FooTensor"), torch)

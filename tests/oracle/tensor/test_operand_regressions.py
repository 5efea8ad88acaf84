"""Regressions found by the hardening probe, each against torch: operators given something that is neither
a tensor nor a number leave it to Python (`t == None` is False, `t + None` is Python's TypeError, `+=` too);
a Python int beyond int64 is torch's ValueError; detach_() of a view raises; a Size joined or repeated with
tuples stays a Size; a device equals devices only (device("cpu") == "cpu" is False); a tensor inside a list
given to tensor() must be one number; storage_offset, nbytes, itemsize; mT refuses fewer than 2 dims."""

import pytest
import torch

import numgrad
from helpers.outcomes import outcome


def _iadd_none(L):
    t = L.tensor([1.0])
    t += None


def _ifloordiv(L):
    t = L.tensor([7, -7])
    t //= 2
    return t


CASES = {
    "t + None": lambda L: L.tensor([1.0]) + None,
    "t + str": lambda L: L.tensor([1.0]) + "a",
    "t + list": lambda L: L.tensor([1.0]) + [1.0],
    "list + t": lambda L: [1.0] + L.tensor([1.0]),
    "t + tuple": lambda L: L.tensor([1.0]) + (1,),
    "None * t": lambda L: None * L.tensor([1.0]),
    "None - t": lambda L: None - L.tensor([1.0]),
    "t == None": lambda L: L.tensor([1.0]) == None,  # noqa: E711 - the operator is what is tested
    "t != str": lambda L: L.tensor([1.0]) != "a",
    "t == list": lambda L: L.tensor([1.0]) == [1.0],
    "t < None": lambda L: L.tensor([1.0]) < None,
    "t ** None": lambda L: L.tensor([1.0]) ** None,
    "t / None": lambda L: L.tensor([1.0]) / None,
    "t // None": lambda L: L.tensor([1.0]) // None,
    "t % None": lambda L: L.tensor([1.0]) % None,
    "t & None": lambda L: L.tensor([True]) & None,
    "t @ None": lambda L: L.tensor([1.0]) @ None,
    "t += None": _iadd_none,
    "t //= 2": _ifloordiv,
    "t + numpy scalar": lambda L: L.tensor([1.0]) + __import__("numpy").float32(2),
    "tensor([2**64])": lambda L: L.tensor([2 ** 64]),
    "tensor(2**63)": lambda L: L.tensor(2 ** 63),
    "tensor([-2**63 - 1])": lambda L: L.tensor([-2 ** 63 - 1]),
    "detach_ of a slice": lambda L: L.ones(3)[0:1].detach_(),
    "detach_ of a view of a leaf": lambda L: L.ones(3, requires_grad=True).view(3).detach_(),
    "detach_ of a leaf": lambda L: L.ones(3, requires_grad=True).detach_().requires_grad,
    "Size + tuple": lambda L: L.ones(2, 3).shape + (4,),
    "tuple + Size": lambda L: (1,) + L.ones(2, 3).shape,
    "Size * 2": lambda L: L.ones(2, 3).shape * 2,
    "2 * Size": lambda L: 2 * L.ones(2, 3).shape,
    "Size + Size": lambda L: L.ones(2).shape + L.ones(3).shape,
    "Size == tuple": lambda L: L.ones(2, 3).shape == (2, 3),
    "device == str": lambda L: L.device("cpu") == "cpu",
    "device != str": lambda L: L.device("cpu") != "cpu",
    "device == device": lambda L: L.ones(1).device == L.device("cpu"),
    "device hash": lambda L: hash(L.device("cpu")) == hash(L.device("cpu")),
    "tensor of 1-d tensors": lambda L: L.tensor([L.ones(2), L.zeros(2)]),
    "tensor of one-element tensors": lambda L: L.tensor([L.ones(1), L.tensor(2.0)]),
    "tensor of 0-d int tensors": lambda L: L.tensor([L.tensor(1), L.tensor(2)]),
    "storage_offset of a slice": lambda L: L.arange(6.0)[2:].view(2, 2)[1].storage_offset(),
    "storage_offset of a fresh tensor": lambda L: (L.ones(3) * 2).storage_offset(),
    "nbytes and itemsize": lambda L: (L.ones(2, 3).nbytes, L.ones(2, dtype=L.int64).itemsize, L.zeros(0).nbytes),
    "mT of a 1-d tensor": lambda L: L.ones(2).mT,
    "mT of a batch": lambda L: L.arange(8.0).view(2, 2, 2).mT,
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_operands_and_conversions_as_torch(case):
    assert outcome(CASES[case], numgrad) == outcome(CASES[case], torch)

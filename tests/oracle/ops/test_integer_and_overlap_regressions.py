"""Regressions found by the hardening probe, each against torch, fused and unfused: integer division and
remainder by zero raise; `%`/remainder/fmod exist with torch's signs and nodes; add/sub's alpha takes the
result's type; a scalar exponent of +-0.5 keeps -0.0's sign; numbers that do not fit a tensor's type are
refused by fill_/full/masked_fill/setitem; in-place writes whose memory meets itself or an input raise
torch's "unsupported operation" errors, while writes torch allows into expanded views work."""
import math

import pytest
import torch

import numgrad
from helpers.outcomes import outcome

FUSION = pytest.mark.parametrize("fusion", [True, False])


def same_as_torch(fn, fusion):
    with numgrad.fusion(fusion):
        got = outcome(fn, numgrad)
    assert got == outcome(fn, torch)


INTEGER_DIVISION = {
    "int // int zero": lambda L: L.tensor([1, 2]) // L.tensor([0, 1]),
    "int // 0": lambda L: L.tensor([1, 2]) // 0,
    "int % int zero": lambda L: L.tensor([1, 2]) % L.tensor([1, 0]),
    "int % 0": lambda L: L.tensor([1, 2]) % 0,
    "int % bool false": lambda L: L.tensor([1, 2]) % L.tensor([True, False]),
    "scalar % int zero": lambda L: 5 % L.tensor([3, 0]),
    "fmod int zero": lambda L: L.fmod(L.tensor([5, -5]), 0),
    "int //= 0": lambda L: L.tensor([4]).__ifloordiv__(0),
    "float // 0": lambda L: L.tensor([1.0, -1.0, 0.0]) // 0,
    "float % 0": lambda L: L.tensor([1.0, -1.0, 0.0]) % 0.0,
    "int // float 0": lambda L: L.tensor([1, 2]) // 0.0,
}


@FUSION
@pytest.mark.parametrize("case", sorted(INTEGER_DIVISION))
def test_integer_division_by_zero_raises_as_torch(case, fusion):
    same_as_torch(INTEGER_DIVISION[case], fusion)


_A = [5.0, -5.0, 7.5, -7.5, 0.0, -0.0, 6.0, -6.0, math.inf, 2.0, -1e-30]
_B = [3.0, 3.0, -2.0, -2.0, 1.0, 1.0, -3.0, 3.0, 2.0, math.inf, 1.0]
REMAINDERS = {
    "float % float": lambda L: L.tensor(_A) % L.tensor(_B),
    "float % scalar": lambda L: L.tensor(_A) % -2.5,
    "scalar % float": lambda L: 7 % L.tensor([2.0, -3.0, 0.5]),
    "int % int": lambda L: L.tensor([5, -5, 7, -7, 0]) % L.tensor([3, 3, -2, -2, 4]),
    "int % scalar": lambda L: L.tensor([5, -5, 7, -7]) % -3,
    "int % float scalar": lambda L: L.tensor([5, -5]) % 2.5,
    "fmod float": lambda L: L.fmod(L.tensor(_A), L.tensor(_B)),
    "fmod int": lambda L: L.fmod(L.tensor([5, -5, 7, -7]), L.tensor([3, 3, -2, -2])),
    "fmod int scalar": lambda L: L.fmod(L.tensor([5, -5, 7, -7]), 3),
    "fmod scalar first": lambda L: L.fmod(5, L.tensor([3])),
    "remainder bool": lambda L: L.tensor([True]) % L.tensor([True]),
    "remainder_ method": lambda L: L.tensor([5.0, -5.0]).remainder_(3),
    "imod": lambda L: L.tensor([5, -5]).__imod__(3),
}


@FUSION
@pytest.mark.parametrize("case", sorted(REMAINDERS))
def test_remainder_and_fmod_match_torch(case, fusion):
    same_as_torch(REMAINDERS[case], fusion)


@FUSION
def test_remainder_and_fmod_gradients_and_nodes(fusion):
    def run(lib):
        a = lib.tensor([5.0, -5.0, 3.0, -7.5], requires_grad=True)
        b = lib.tensor([3.0, 3.0, -2.0, 2.0], requires_grad=True)
        nodes = [(a % b).grad_fn.name(), (a % 2).grad_fn.name(), lib.fmod(a, b).grad_fn.name(),
                 lib.fmod(a, 2).grad_fn.name(), (2 % a).grad_fn.name()]
        ((a % b) * 2 + lib.fmod(a, b) * 3).sum().backward()
        return nodes, a.grad.tolist(), b.grad.tolist()

    with numgrad.fusion(fusion):
        assert run(numgrad) == run(torch)
    # a Python number first: torch records the op but defines no derivative
    for lib in (numgrad, torch):
        a = lib.tensor([2.0], requires_grad=True)
        with pytest.raises(RuntimeError, match="derivative for aten::remainder is not implemented"):
            (3 % a).sum().backward()


ALPHA = {
    "bool alpha 2": lambda L: L.add(L.tensor([True, False]), L.tensor([True, False]), alpha=2),
    "bool alpha 0": lambda L: L.add(L.tensor([True, False]), L.tensor([True, True]), alpha=0),
    "bool alpha float": lambda L: L.add(L.tensor([True]), L.tensor([True]), alpha=1.5),
    "int alpha float": lambda L: L.add(L.tensor([1, 2]), L.tensor([1, 1]), alpha=1.5),
    "int alpha True": lambda L: L.add(L.tensor([1, 2]), L.tensor([1, 1]), alpha=True),
    "float alpha True": lambda L: L.add(L.tensor([1.0, 2.0]), L.tensor([1, 1]), alpha=True),
    "int + scalar, alpha": lambda L: L.add(L.tensor([1, 2]), 3, alpha=2),
    "sub bool other, alpha": lambda L: L.sub(L.tensor([1, 2]), L.tensor([True, True]), alpha=2),
    "sub int alpha float": lambda L: L.sub(L.tensor([1, 2]), L.tensor([1, 1]), alpha=1.5),
    "add_ bool alpha": lambda L: L.tensor([True, False]).add_(L.tensor([True, False]), alpha=3),
    "int float alpha float": lambda L: L.add(L.tensor([1, 2]), L.tensor([1.0, 1.0]), alpha=1.5),
}


@FUSION
@pytest.mark.parametrize("case", sorted(ALPHA))
def test_alpha_takes_the_result_type(case, fusion):
    same_as_torch(ALPHA[case], fusion)


SIGNED_ZEROS = {
    "x ** -0.5": lambda L: L.tensor([-0.0, 0.0, 4.0, -4.0]) ** -0.5,
    "x ** 0.5": lambda L: L.tensor([-0.0, 0.0, 4.0]) ** 0.5,
    "x ** -0.5 float64": lambda L: L.tensor([-0.0, 0.0], dtype=L.float64) ** -0.5,
    "x ** tensor(-0.5)": lambda L: L.tensor([-0.0, 0.0]) ** L.tensor([-0.5, -0.5]),
    "x ** -1.5": lambda L: L.tensor([-0.0, 0.0]) ** -1.5,
    "grad of x ** 0.5": lambda L: (lambda x: ((x ** 0.5).sum().backward(), x.grad)[1])(
        L.tensor([-0.0, 0.0, 4.0], requires_grad=True)),
    "int ** negative int tensor": lambda L: L.tensor([0, 2, -1, 1, -2, -1]) ** L.tensor([-1, -1, -1, -2, -2, -2]),
}


@FUSION
@pytest.mark.parametrize("case", sorted(SIGNED_ZEROS))
def test_scalar_powers_keep_torch_signs(case, fusion):
    same_as_torch(SIGNED_ZEROS[case], fusion)


OUT_OF_RANGE = {
    "fill_ inf on int": lambda L: L.tensor([1, 2]).fill_(math.inf),
    "fill_ nan on int": lambda L: L.tensor([1, 2]).fill_(math.nan),
    "fill_ 1e30 on int": lambda L: L.tensor([1, 2]).fill_(1e30),
    "fill_ 2**63 on int": lambda L: L.tensor([1, 2]).fill_(2 ** 63),
    "fill_ 1.5 on int": lambda L: L.tensor([1, 2]).fill_(1.5),
    "fill_ nan on bool": lambda L: L.tensor([True]).fill_(math.nan),
    "fill_ 1e300 on float32": lambda L: L.tensor([1.0]).fill_(1e300),
    "fill_ inf on float32": lambda L: L.tensor([1.0]).fill_(math.inf),
    "full inf int": lambda L: L.full((2,), math.inf, dtype=L.int64),
    "full 1e300": lambda L: L.full((2,), 1e300),
    "setitem inf on int": lambda L: L.tensor([1, 2]).__setitem__(0, math.inf),
    "masked_fill inf on int": lambda L: L.tensor([1, 2]).masked_fill(L.tensor([True, False]), math.inf),
    "masked_fill nan no mask": lambda L: L.tensor([1, 2]).masked_fill(L.tensor([False, False]), math.nan),
    "masked_fill_ tensor nan": lambda L: L.tensor([1, 2]).masked_fill_(L.tensor([True, False]), L.tensor(math.nan)),
    "masked_fill 1e300 float32": lambda L: L.tensor([1.0, 2.0]).masked_fill(L.tensor([True, False]), 1e300),
}


@FUSION
@pytest.mark.parametrize("case", sorted(OUT_OF_RANGE))
def test_numbers_that_do_not_fit_the_type_are_refused(case, fusion):
    same_as_torch(OUT_OF_RANGE[case], fusion)


def _expanded(L, shape=(2, 3)):
    return L.zeros(1, shape[1]).expand(*shape)


OVERLAP = {
    "add_ into expanded": lambda L: _expanded(L).add_(1),
    "mul_ into expanded": lambda L: L.zeros(3, 1).expand(3, 3).mul_(2),
    "clamp_ into expanded": lambda L: _expanded(L).clamp_(0, 1),
    "relu_ into expanded": lambda L: _expanded(L).relu_(),
    "scatter_ into expanded": lambda L: _expanded(L).scatter_(0, L.tensor([[0, 1, 0]]), 1.0),
    "copy_ into expanded": lambda L: _expanded(L).copy_(L.ones(2, 3)),
    "setitem [:] tensor into expanded": lambda L: _expanded(L).__setitem__(slice(None), L.ones(2, 3)),
    "setitem [:] number into expanded": lambda L: _expanded(L).__setitem__(slice(None), 1.0),
    "add_ of a shifted self": lambda L: (lambda x: x[1:].add_(x[:-1]))(L.arange(5.0)),
    "copy_ of a shifted self": lambda L: (lambda x: x[1:].copy_(x[:-1]))(L.arange(5.0)),
    "copy_ of own transpose": lambda L: (lambda x: x.copy_(x.T))(L.arange(4.0).view(2, 2)),
    "add_ of own transpose": lambda L: (lambda x: x.add_(x.T))(L.arange(4.0).view(2, 2)),
    "setitem shifted self": lambda L: (lambda x: x.__setitem__(slice(1, None), x[:-1]))(L.arange(5.0)),
    "index setitem shifted self": lambda L: (lambda x: x.__setitem__(L.tensor([1, 2]), x[:2]))(L.arange(5.0)),
    # what torch allows
    "add_ of self": lambda L: (lambda x: x.add_(x))(L.arange(4.0)),
    "add_ of a strided neighbour": lambda L: (lambda x: (x[::2].add_(x[1::2]), x)[1])(L.arange(6.0)),
    "mul_ of a disjoint half": lambda L: (lambda x: (x[:3].mul_(x[3:]), x)[1])(L.arange(6.0)),
    "copy_ of another row": lambda L: (lambda x: (x[0].copy_(x[1]), x)[1])(L.arange(6.0).view(2, 3)),
    "copy_ of the same transpose": lambda L: (lambda x: (x.T.copy_(x.T), x)[1])(L.arange(6.0).view(2, 3)),
    "fill_ through expanded": lambda L: (lambda b: (b.expand(2, 3).fill_(1), b)[1])(L.zeros(1, 3)),
    "zero_ through expanded": lambda L: (lambda b: (b.expand(2, 3).zero_(), b)[1])(L.ones(1, 3)),
    "add_ into a row of expanded": lambda L: (lambda b: (b.expand(2, 3)[0].add_(1), b)[1])(L.zeros(1, 3)),
    "setitem a row of expanded": lambda L: (lambda b: (b.expand(2, 3).__setitem__(0, 1.0), b)[1])(L.zeros(1, 3)),
    "masked_fill_ through expanded": lambda L: (lambda b: (
        b.expand(2, 3).masked_fill_(L.ones(2, 3, dtype=L.bool), 1.0), b)[1])(L.zeros(1, 3)),
    "index_put_ through expanded": lambda L: (lambda b: (
        b.expand(2, 3).index_put_((L.tensor([0]),), L.ones(3)), b)[1])(L.zeros(1, 3)),
    "add_ into expand(1, 3)": lambda L: (lambda b: (b.expand(1, 3).add_(1), b)[1])(L.zeros(1, 3)),
    "add_ into empty expanded": lambda L: L.zeros(3, 1).expand(3, 0).add_(1),
    "masked_fill_ with a 0-d view of self": lambda L: (lambda x: x.masked_fill_(x > 2, x[0]))(L.arange(5.0)),
    "expanded read, summed, differentiated": lambda L: (lambda b: ((b.expand(2, 3) * 2).sum().backward(), b.grad)[1])(
        L.ones(1, 3, requires_grad=True)),
}


@FUSION
@pytest.mark.parametrize("case", sorted(OVERLAP))
def test_in_place_writes_that_meet_themselves(case, fusion):
    same_as_torch(OVERLAP[case], fusion)


def test_deprecated_writes_through_expanded_views_warn_as_torch():
    for lib in (numgrad, torch):
        with pytest.warns(UserWarning, match="Use of masked_fill_ on expanded tensors is deprecated"):
            _expanded(lib).masked_fill_(lib.ones(2, 3, dtype=lib.bool), 1.0)
        with pytest.warns(UserWarning, match="Use of index_put_ on expanded tensors is deprecated"):
            _expanded(lib)[lib.tensor([0])] = lib.ones(3)

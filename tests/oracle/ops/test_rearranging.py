"""tril/triu, roll, flip, rot90, repeat, tile, repeat_interleave, diagonal, diag, diag_embed, trace, meshgrid,
view_as, movedim, tensor_split, one_hot, is_tensor and numel against torch: values, dtypes, grad_fn names, gradients,
errors, and float64 gradchecks."""
import warnings

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import numgrad
import torch

from helpers.op_compare import F64, check, check_error, hyp, rand


def _gradcheck(fn, *arrays):
    ins = [numgrad.tensor(a, requires_grad=True) for a in arrays]
    assert numgrad.testing.gradcheck(lambda *ts: fn(numgrad, *ts), ins)


CASES = [
    lambda lib, x: lib.tril(x), lambda lib, x: lib.triu(x, 1), lambda lib, x: x.tril(-1), lambda lib, x: x.triu(10),
    lambda lib, x: lib.tril(x, -10), lambda lib, x: lib.roll(x, 1), lambda lib, x: lib.roll(x, (1, -2), (0, 1)),
    lambda lib, x: x.roll(5, -1), lambda lib, x: lib.roll(x, 0, 0), lambda lib, x: lib.flip(x, (0,)),
    lambda lib, x: lib.flip(x, [0, -1]), lambda lib, x: lib.flip(x, ()), lambda lib, x: x.flip(1),
    lambda lib, x: x.flip(0, 1), lambda lib, x: lib.fliplr(x), lambda lib, x: lib.flipud(x),
    lambda lib, x: lib.rot90(x), lambda lib, x: lib.rot90(x, 2), lambda lib, x: lib.rot90(x, 3, (1, 0)),
    lambda lib, x: lib.rot90(x, 0), lambda lib, x: lib.rot90(x, -1, (-1, -2)), lambda lib, x: x.repeat(2, 1, 3),
    lambda lib, x: x.repeat((1, 2)), lambda lib, x: x.repeat(0, 1), lambda lib, x: x.tile(2),
    lambda lib, x: lib.tile(x, (2, 1, 1)), lambda lib, x: x.repeat_interleave(2),
    lambda lib, x: lib.repeat_interleave(x, 3, dim=1), lambda lib, x: x.repeat_interleave(lib.tensor([1, 0, 2]), 0),
    lambda lib, x: x.repeat_interleave(lib.tensor([2]), 1), lambda lib, x: x.repeat_interleave(lib.tensor(2)),
    lambda lib, x: x.diagonal(), lambda lib, x: lib.diagonal(x, 1), lambda lib, x: lib.diagonal(x, -1, 1, 0),
    lambda lib, x: x.diagonal(-5), lambda lib, x: lib.diag(x), lambda lib, x: lib.diag(x, 2),
    lambda lib, x: lib.diag(x[0]), lambda lib, x: lib.diag(x[0], -1), lambda lib, x: lib.diag_embed(x),
    lambda lib, x: lib.diag_embed(x, 1, 0, 2), lambda lib, x: x.diag_embed(-2, -1, 0), lambda lib, x: lib.trace(x),
    lambda lib, x: x.view_as(x.reshape(-1)), lambda lib, x: lib.movedim(x, 0, 1),
    lambda lib, x: lib.moveaxis(x, (0, 1), (1, 0)), lambda lib, x: x.movedim(-1, 0),
    lambda lib, x: lib.tensor_split(x, 2), lambda lib, x: x.tensor_split([1, 3], 1),
    lambda lib, x: lib.tensor_split(x, lib.tensor(3), 1), lambda lib, x: lib.tensor_split(x, lib.tensor([0, 2])),
    lambda lib, x: lib.tensor_split(x, (5, 1)), lambda lib, x: lib.unflatten(x, 1, (2, 2)),
    lambda lib, x: lib.meshgrid(x[0], x[1, :2], indexing="ij"),
    lambda lib, x: lib.meshgrid([x[0], x[1, :2], x[2, :1]], indexing="xy"),
    lambda lib, x: lib.meshgrid(x[0, 0], x[1], indexing="xy"), lambda lib, x: x.narrow(1, 1, 2),
    lambda lib, x: x.chunk(2, 1), lambda lib, x: x[:, :3].T.tril(), lambda lib, x: lib.flip(x.T, (0,)),
]


@pytest.mark.parametrize("fn", CASES)
def test_rearranging(fn):
    check(fn, rand(3, 4))


@pytest.mark.parametrize("fn", [
    lambda lib, x: lib.tril(x), lambda lib, x: lib.roll(x, 1), lambda lib, x: lib.flip(x, (0,)),
    lambda lib, x: lib.rot90(x), lambda lib, x: x.repeat(2, 1, 1), lambda lib, x: x.repeat_interleave(2, 1),
    lambda lib, x: lib.diagonal(x, 0, 0, 2), lambda lib, x: lib.diag_embed(x), lambda lib, x: lib.movedim(x, 2, 0),
    lambda lib, x: lib.triu(x, -1),
])
def test_rearranging_gradcheck(fn):
    _gradcheck(fn, rand(2, 3, 3, dtype=F64))


def test_integer_bool_and_empty_inputs():
    for fn in (lambda lib, x: lib.tril(x), lambda lib, x: lib.roll(x, 1, 1), lambda lib, x: lib.flip(x, (1,)),
               lambda lib, x: lib.rot90(x), lambda lib, x: x.repeat(2, 2), lambda lib, x: x.repeat_interleave(2),
               lambda lib, x: lib.diagonal(x), lambda lib, x: lib.diag(x), lambda lib, x: lib.diag_embed(x),
               lambda lib, x: lib.trace(x)):
        check(lambda lib: fn(lib, lib.tensor([[1, 2, 3], [4, 5, 6]])))
        check(lambda lib: fn(lib, lib.zeros(0, 3)))
        bools = lambda lib: fn(lib, lib.tensor([[1.5, 2.5, 3.5], [4.5, 5.5, 6.5]]) > 3)  # noqa: E731
        check_error(bools) if fn(numgrad, numgrad.ones(2, 2)).shape == () else check(bools)
    check(lambda lib: lib.tril(lib.tensor([[True, True], [True, True]])))
    check(lambda lib: lib.roll(lib.tensor(1.5), 1))
    check(lambda lib: lib.flip(lib.tensor(1.5), (0,)))
    check(lambda lib: lib.repeat_interleave(lib.tensor([1, 2, 0])))
    check(lambda lib: lib.tensor(2.0).repeat(3))
    check(lambda lib: lib.diagonal(lib.zeros(0, 3), 1))


@pytest.mark.parametrize("fn", [
    lambda lib, x: lib.tril(x[0]), lambda lib, x: lib.triu(x[0, 0]), lambda lib, x: lib.roll(x, (1, 2), 0),
    lambda lib, x: lib.roll(x, ()), lambda lib, x: lib.roll(x, (1, 2)), lambda lib, x: lib.roll(x, 1, 5),
    lambda lib, x: lib.flip(x, (0, 0)), lambda lib, x: lib.flip(x, 0), lambda lib, x: lib.flip(x, (3,)),
    lambda lib, x: lib.fliplr(x[0]), lambda lib, x: lib.flipud(x[0, 0]), lambda lib, x: lib.rot90(x, 1, (0, 0)),
    lambda lib, x: lib.rot90(x[0]), lambda lib, x: lib.rot90(x, 1, (0, 1, 2)), lambda lib, x: lib.rot90(x, 1, (0, 5)),
    lambda lib, x: lib.rot90(x, 1, (0, -2)), lambda lib, x: x.repeat(2), lambda lib, x: x.repeat(-1, 1),
    lambda lib, x: x.repeat_interleave(-1), lambda lib, x: x.repeat_interleave(lib.tensor([1, 2]), 0),
    lambda lib, x: x.repeat_interleave(lib.tensor([1, -2, 1]), 0), lambda lib, x: x.repeat_interleave(2, 5),
    lambda lib, x: lib.repeat_interleave(lib.tensor([[1]])), lambda lib, x: lib.repeat_interleave(lib.tensor([1.])),
    lambda lib, x: x.diagonal(0, 0, 0), lambda lib, x: x[0].diagonal(), lambda lib, x: lib.diag(x.reshape(3, 2, 2)),
    lambda lib, x: lib.diag_embed(x, 0, 1, 1), lambda lib, x: lib.trace(x[0]), lambda lib, x: lib.trace(x > 0),
    lambda lib, x: lib.meshgrid(x[0], x[0], indexing="foo"), lambda lib, x: lib.meshgrid(indexing="ij"),
    lambda lib, x: lib.meshgrid(x[0], x[0].double(), indexing="ij"), lambda lib, x: lib.movedim(x, (0, 0), (1, 0)),
    lambda lib, x: lib.movedim(x, (0,), (1, 0)), lambda lib, x: lib.movedim(x, (0, 1), (1, 1)),
    lambda lib, x: lib.movedim(x, 0, 5), lambda lib, x: lib.tensor_split(x, 0), lambda lib, x: x.view_as(x[0]),
    lambda lib, x: lib.tensor_split(x[0, 0], 2), lambda lib, x: lib.tensor_split(x, lib.tensor([[1]])),
])
def test_rearranging_errors(fn):
    check_error(fn, rand(3, 4))


def test_meshgrid_warns_once_without_indexing():
    outs = []
    for lib in (torch, numgrad):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            grids = lib.meshgrid(lib.arange(3), lib.arange(2))
        outs.append(([str(m.message) for m in w], [g.numpy() for g in grids]))
    assert outs[0][0] == outs[1][0]
    for a, b in zip(outs[0][1], outs[1][1]):
        np.testing.assert_array_equal(a, b)


def test_diagonal_is_a_writable_view():
    for lib in (numgrad, torch):
        x = lib.zeros(3, 4)
        x.diagonal(1).fill_(2.0)
        assert x.sum().item() == 6.0 and x[0, 1].item() == 2.0 and x.diagonal()._base is x


def test_one_hot_is_tensor_numel():
    for lib in (torch, numgrad):
        assert lib.is_tensor(lib.ones(2)) and not lib.is_tensor([1]) and lib.numel(lib.ones(2, 3)) == 6
    for args in (([0, 2, 1],), ([0, 2, 1], 5), ([[1], [0]], 2)):
        check(lambda lib: lib.nn.functional.one_hot(lib.tensor(args[0]), *args[1:]))
    check(lambda lib: lib.nn.functional.one_hot(lib.tensor([], dtype=lib.int64), 3))
    for fn in (lambda lib: lib.nn.functional.one_hot(lib.tensor([0, 2, 1]), 2),
               lambda lib: lib.nn.functional.one_hot(lib.tensor([0., 2.])),
               lambda lib: lib.nn.functional.one_hot(lib.tensor([-1, 2])),
               lambda lib: lib.nn.functional.one_hot(lib.tensor([], dtype=lib.int64))):
        check_error(fn)


@st.composite
def shaped(draw):
    shape = draw(st.lists(st.integers(0, 3), min_size=2, max_size=4))
    nd = len(shape)
    return shape, draw(st.integers(-nd, nd - 1)), draw(st.integers(-nd, nd - 1)), draw(st.integers(-3, 3))


@hyp(40)
@given(shaped())
def test_rearranging_hypothesis(case):
    shape, d1, d2, k = case
    x = rand(*shape)
    check(lambda lib, t: lib.roll(t, k, d1), x)
    check(lambda lib, t: lib.flip(t, (d1,)), x)
    check(lambda lib, t: lib.tril(t, k), x)
    check(lambda lib, t: t.repeat_interleave(abs(k), d1), x)
    check(lambda lib, t: t.repeat(*([2] * len(shape))), x)
    check(lambda lib, t: lib.tensor_split(t, abs(k) + 1, d1), x)
    if d1 % len(shape) != d2 % len(shape):
        check(lambda lib, t: lib.diagonal(t, k, d1, d2), x)
        check(lambda lib, t: lib.rot90(t, k, (d1, d2)), x)
        check(lambda lib, t: lib.movedim(t, (d1, d2), (d2, d1)), x)


@pytest.mark.parametrize("fn", [
    lambda lib, x: x.flip(dims=(0,)), lambda lib, x: x.tile(dims=(2,)), lambda lib, x: lib.tile(x, dims=(2, 1)),
    lambda lib, x: lib.tensor_split(x, sections=2, dim=1), lambda lib, x: x.tensor_split(indices=[1], dim=1),
    lambda lib, x: x.roll(shifts=1, dims=0), lambda lib, x: lib.tril(x, diagonal=1),
    lambda lib, x: lib.diagonal(x, offset=1, dim1=1, dim2=0), lambda lib, x: lib.diag(x, diagonal=-1),
    lambda lib, x: lib.movedim(x, source=0, destination=1), lambda lib, x: lib.rot90(x, k=3, dims=[1, 0]),
    lambda lib, x: lib.repeat_interleave(x, repeats=2, dim=0), lambda lib, x: lib.diag_embed(x, offset=1, dim1=0),
])
def test_keyword_arguments(fn):
    check(fn, rand(3, 4))


def test_in_place_write_through_a_diagonal_view():
    def fn(lib, x):
        y = x.clone()
        d = y.diagonal(1)
        d.mul_(3)
        return y * y, d
    check(fn, rand(3, 4))

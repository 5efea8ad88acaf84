"""cat, stack, split, chunk and unbind against torch: values, dtypes, grad_fn names, gradients and errors."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import numgrad

from helpers.op_compare import F32, F64, LIBS, check, check_error, grad_fd, rand



# ---- cat / stack -------------------------------------------------------------------------------------

@pytest.mark.parametrize("fn", [
    lambda lib, a, b, c: lib.cat([a, b[:, :2]], 1), lambda lib, a, b, c: lib.cat((a, b, a), dim=-3),
    lambda lib, a, b, c: lib.cat([a, c]), lambda lib, a, b, c: lib.concat([a, b], 2),
    lambda lib, a, b, c: lib.concatenate([a, b]), lambda lib, a, b, c: lib.cat([a]),
    lambda lib, a, b, c: lib.cat([a, lib.zeros(0), b]), lambda lib, a, b, c: lib.cat([lib.zeros(0), a]),
    lambda lib, a, b, c: lib.cat([a, b.long()]), lambda lib, a, b, c: lib.cat([a[:, :0], b], 1),
    lambda lib, a, b, c: lib.cat([a.sum(1), c.sum((1, 2)).reshape(2, 1).expand(2, 4)]),
    lambda lib, a, b, c: lib.stack([a, b]), lambda lib, a, b, c: lib.stack((a, b, a), dim=-1),
    lambda lib, a, b, c: lib.stack([a, b.double()], 2), lambda lib, a, b, c: lib.stack([a[0, 0, 0], b[1, 1, 1]]),
    lambda lib, a, b, c: lib.stack([a[0], a[1]], 1), lambda lib, a, b, c: lib.stack([a]),
])
def test_cat_stack(fn):
    check(fn, rand(2, 3, 4), rand(2, 3, 4, seed=1), rand(2, 3, 4, dtype=F64, seed=2))


def test_cat_integers_and_bools():
    check(lambda lib: lib.cat([lib.tensor([1, 2]), lib.tensor([True, False])]))
    check(lambda lib: lib.stack([lib.tensor([1, 2]), lib.tensor([0.5, 1.5])]))


@pytest.mark.parametrize("fn", [
    lambda lib, a: lib.cat([]), lambda lib, a: lib.cat([a, a[:, :2]]), lambda lib, a: lib.cat([a, a[0]]),
    lambda lib, a: lib.cat([a, a], 3), lambda lib, a: lib.cat([a, a], -4), lambda lib, a: lib.cat([a.sum(), a.sum()]),
    lambda lib, a: lib.cat(a), lambda lib, a: lib.cat([a, 1]), lambda lib, a: lib.cat([a[:, :1], a[:2]], 2),
    lambda lib, a: lib.stack([]), lambda lib, a: lib.stack([a, a[:2]]), lambda lib, a: lib.stack([a, a], 4),
    lambda lib, a: lib.stack([a, a], -5), lambda lib, a: lib.stack(a),
])
def test_cat_stack_errors(fn):
    check_error(fn, rand(3, 4, 5))


@st.composite
def cat_cases(draw):
    ndim = draw(st.integers(1, 4))
    shape = draw(st.lists(st.integers(0, 3), min_size=ndim, max_size=ndim))
    dim = draw(st.integers(-ndim, ndim - 1))
    sizes = draw(st.lists(st.integers(0, 3), min_size=1, max_size=4))
    dtypes = draw(st.lists(st.sampled_from([F32, F32, F64]), min_size=len(sizes), max_size=len(sizes)))
    arrays = []
    for i, (n, dt) in enumerate(zip(sizes, dtypes)):
        s = list(shape)
        s[dim] = n
        arrays.append(rand(*s, dtype=dt, seed=i))
    return dim, arrays


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cat_cases())
def test_cat_hypothesis(case):
    dim, arrays = case
    check(lambda lib, *ts: lib.cat(ts, dim), *arrays)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cat_cases())
def test_stack_hypothesis(case):
    dim, arrays = case
    shape = arrays[0].shape
    arrays = [rand(*shape, dtype=a.dtype, seed=i) for i, a in enumerate(arrays)]
    check(lambda lib, *ts: lib.stack(ts, dim + (dim < 0)), *arrays)


# ---- split / chunk / unbind ----------------------------------------------------------------------

@pytest.mark.parametrize("fn", [
    lambda lib, x: lib.split(x, 2), lambda lib, x: lib.split(x, [1, 2]), lambda lib, x: lib.split(x, (1, 2)),
    lambda lib, x: x.split(2, dim=1), lambda lib, x: x.split([2, 2], 1), lambda lib, x: lib.split(x, 10),
    lambda lib, x: lib.split(x, [3, 0]), lambda lib, x: x.split(1, -1), lambda lib, x: x.split_with_sizes([1, 3], 1),
    lambda lib, x: lib.chunk(x, 2), lambda lib, x: x.chunk(5), lambda lib, x: x.chunk(3, 1),
    lambda lib, x: x.chunk(4, -1),
    lambda lib, x: lib.unbind(x), lambda lib, x: x.unbind(1), lambda lib, x: x.unbind(-1),
    lambda lib, x: lib.split(x, 2)[1], lambda lib, x: [x.split([1, 1, 1])[i] for i in (0, 2)],
    lambda lib, x: x.unbind(2)[3], lambda lib, x: [p * 2 for p in x.chunk(2, 2)[::-1]],
])
def test_split_chunk_unbind(fn):
    check(fn, rand(3, 4, 5))


def test_empty_pieces():
    check(lambda lib: lib.split(lib.zeros(0), 2))
    check(lambda lib: lib.split(lib.zeros(0), 0))
    check(lambda lib: lib.chunk(lib.zeros(0), 3))
    check(lambda lib: lib.chunk(lib.zeros(6), 4))
    check(lambda lib, x: lib.chunk(x[:, :0], 3, 1), rand(2, 3))


@pytest.mark.parametrize("fn", [
    lambda lib, x: lib.split(x, [1, 1]), lambda lib, x: lib.split(x, 0), lambda lib, x: lib.split(x, -1),
    lambda lib, x: lib.split(x, [1, 2], 5), lambda lib, x: lib.split(x, [4, -1]), lambda lib, x: lib.split(x.sum(), 1),
    lambda lib, x: lib.chunk(x, 0), lambda lib, x: lib.chunk(x.sum(), 1), lambda lib, x: lib.unbind(x.sum()),
    lambda lib, x: lib.unbind(x, 3), lambda lib, x: x.split(2, 3),
])
def test_split_errors(fn):
    check_error(fn, rand(3, 4, 5))


def test_split_pieces_are_views():
    for lib in LIBS:
        x = lib.tensor(rand(4, 3))
        a, b = x.split(2)
        u = x.unbind(1)
        with lib.no_grad():
            b.mul_(0)
            u[0].fill_(1)
        assert x[2:, 1:].abs().sum().item() == 0 and (x[:, 0] == 1).all().item() and a._version == 2


@st.composite
def split_cases(draw):
    ndim = draw(st.integers(1, 3))
    shape = draw(st.lists(st.integers(0, 5), min_size=ndim, max_size=ndim))
    dim = draw(st.integers(-ndim, ndim - 1))
    n = shape[dim]
    if draw(st.booleans()):
        how = draw(st.integers(1, 6)) if n else draw(st.integers(0, 2))
    else:
        cuts = sorted(draw(st.lists(st.integers(0, n), max_size=3)))
        how = [b - a for a, b in zip([0] + cuts, cuts + [n])]
    return shape, dim, how, draw(st.integers(1, 4))


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(split_cases())
def test_split_hypothesis(case):
    shape, dim, how, chunks = case
    check(lambda lib, x: lib.split(x, how, dim), rand(*shape))
    check(lambda lib, x: x.chunk(chunks, dim), rand(*shape))
    check(lambda lib, x: x.unbind(dim)[::2], rand(*shape))


# ---- higher order and finite differences -----------------------------------------------------------

def test_cat_split_double_backward():
    grads = []
    for lib in LIBS:
        a = lib.tensor(rand(2, 3, dtype=F64), requires_grad=True)
        b = lib.tensor(rand(2, 2, dtype=F64, seed=1), requires_grad=True)
        y = lib.cat([a * a, b ** 3], 1)
        p, q = y.split([4, 1], 1)
        loss = (p.sum(1) * q[:, 0] * lib.stack([a[:, 0], b[:, 1]]).sum(0)).sum()
        ga, gb = lib.autograd.grad(loss, [a, b], create_graph=True)
        grads.append([g.detach().numpy() for g in lib.autograd.grad((ga * gb[:, :1]).sum() + gb.pow(2).sum(), [a, b])])
    for x, y in zip(*grads):
        np.testing.assert_allclose(y, x, rtol=1e-10)


def test_finite_differences():
    w = numgrad.tensor(rand(2, 7, dtype=F64, seed=5))
    a, b = rand(2, 3, dtype=F64), rand(2, 3, dtype=F64, seed=1)
    grad_fd(lambda a, b: (numgrad.cat([a, b * b, a[:, :1]], 1) * w).sum(), a, b)
    grad_fd(lambda a, b: (numgrad.stack([a, b * a], 1) ** 2).sum(), a, b)
    grad_fd(lambda a: sum((p * (i + 1)).pow(2).sum() for i, p in enumerate(a.split([1, 2], 1))), rand(2, 3, dtype=F64))
    grad_fd(lambda a: (a.chunk(2)[1] * a.unbind(1)[2][:1]).sum(), rand(3, 3, dtype=F64))

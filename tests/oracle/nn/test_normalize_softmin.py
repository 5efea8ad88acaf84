"""F.normalize, F.softmin / nn.Softmin and nn.Softmax2d against torch: values, gradients, the composites' nodes,
dtypes, out=, the implicit-dim warning and torch's errors."""
import numpy as np
import pytest

import numgrad
from numgrad import testing as ngt
from helpers.autograd_compare import leaf, raises, same, tree
from helpers.compare_core import rand


@pytest.mark.parametrize("kw", [{}, {"p": 1}, {"p": 3.0, "dim": 0}, {"p": float("inf"), "dim": -1}, {"p": 0.5},
                                {"dim": 2, "eps": 0.5}])
def test_normalize_values_gradients_nodes(kw):
    def fn(L):
        x = leaf(L, rand(2, 3, 4))
        y = L.nn.functional.normalize(x, **kw)
        y.backward(L.tensor(rand(2, 3, 4, seed=1)))
        return y, x.grad, tree(y.grad_fn)
    same(fn, rtol=1e-5, atol=1e-6)


def test_normalize_zero_rows_eps_and_scalar():
    def fn(L):
        x = leaf(L, [[0.0, 0.0], [3.0, 4.0]])
        y = L.nn.functional.normalize(x)
        y.sum().backward()
        return y, x.grad, L.nn.functional.normalize(L.tensor(3.0), dim=0), \
            L.nn.functional.normalize(L.tensor([[1e-13, 0.0]]), eps=1e-12)
    same(fn)


def test_normalize_out_and_errors():
    def fn(L):
        x = L.tensor(rand(2, 3))
        out = L.empty(2, 3)
        r = L.nn.functional.normalize(x, out=out)
        F = L.nn.functional
        return (r is out, out, raises(F.normalize, leaf(L, rand(2, 3)), out=L.empty(2, 3)),
                raises(F.normalize, x, dim=5), raises(F.normalize, L.tensor([[1, 2]])),
                F.normalize(x.double(), p=1).dtype, F.normalize(x.half(), p=2).float(),
                raises(F.normalize, x, out=L.empty(2, 3, dtype=L.long)),
                F.normalize(x, out=L.empty(2, 3, dtype=L.float64)))
    same(fn, rtol=1e-3, atol=1e-3)


def test_normalize_gradcheck_float64():
    x = numgrad.tensor(rand(3, 4, dtype=np.float64), requires_grad=True)
    assert ngt.gradcheck(lambda t: numgrad.nn.functional.normalize(t, p=3.0, dim=0), (x,))
    assert ngt.gradgradcheck(lambda t: numgrad.nn.functional.normalize(t), (x,))


@pytest.mark.parametrize("dim", [0, 1, -1])
def test_softmin(dim):
    def fn(L):
        x = leaf(L, rand(3, 4))
        y = L.nn.functional.softmin(x, dim)
        y.backward(L.tensor(rand(3, 4, seed=2)))
        m = L.nn.Softmin(dim=dim)
        return y, x.grad, tree(y.grad_fn), m(x), repr(m), L.nn.functional.softmin(x, dim, dtype=L.float64)
    same(fn, rtol=1e-5, atol=1e-6)


def test_softmin_implicit_dim_warns_as_torch():
    same(lambda L: (L.nn.functional.softmin(L.tensor(rand(2, 3))), L.nn.Softmin()(L.tensor(rand(3))),
                    repr(L.nn.Softmin())), rtol=1e-5, atol=1e-6)


def test_softmin_gradcheck_float64():
    x = numgrad.tensor(rand(3, 4, dtype=np.float64), requires_grad=True)
    assert ngt.gradcheck(lambda t: numgrad.nn.functional.softmin(t, 1), (x,))


def test_softmax2d():
    def fn(L):
        m = L.nn.Softmax2d()
        x = leaf(L, rand(2, 3, 2, 2))
        y = m(x)
        y.backward(L.tensor(rand(2, 3, 2, 2, seed=3)))
        return y, x.grad, m(L.tensor(rand(3, 2, 2))), repr(m), raises(m, L.tensor(rand(2, 2))), \
            raises(m, L.tensor(rand(1, 2, 2, 2, 2)))
    same(fn, rtol=1e-5, atol=1e-6)

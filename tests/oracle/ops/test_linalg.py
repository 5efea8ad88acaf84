"""matmul, mm, bmm, mv, dot and outer against torch: values, dtypes, grad_fn names, gradients and errors."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import numgrad

from helpers.op_compare import F64, LIBS, check, check_error, grad_fd, name, rand



TOL = dict(rtol=1e-4, atol=1e-5)  # float32 BLAS sums in a different order than torch's


def check_matmul(shape_a, shape_b, grad_a=True, grad_b=True, strided_a=False, op=lambda lib, a, b: a @ b):
    """a @ b with chosen requires_grad flags; `strided_a` makes a's batch dims non-contiguous, which steers
    torch between its folded-mm and bmm paths."""
    arrays = [rand(*shape_a), rand(*shape_b, seed=1)]
    if strided_a:
        arrays[0] = np.swapaxes(np.ascontiguousarray(np.swapaxes(arrays[0], 0, 1)), 0, 1)
    results = []
    for lib in LIBS:
        a, b = (lib.tensor(x, requires_grad=g) for x, g in zip(arrays, (grad_a, grad_b)))
        if strided_a:
            a = lib.tensor(arrays[0].swapaxes(0, 1), requires_grad=grad_a)
            leaf_a, a = a, a.transpose(0, 1)
        else:
            leaf_a = a
        out = op(lib, a, b)
        if out.requires_grad:
            (out * lib.tensor(rand(*out.shape, seed=2))).sum().backward()
        results.append((out, leaf_a, b))
    (t, ta, tb), (n, na, nb) = results
    assert tuple(n.shape) == tuple(t.shape) and str(n.dtype) == str(t.dtype)
    np.testing.assert_allclose(n.detach().numpy(), t.detach().numpy(), **TOL)
    assert name(n) == name(t)
    for x, y in ((ta, na), (tb, nb)):
        if x.requires_grad:
            np.testing.assert_allclose(y.grad.numpy(), x.grad.numpy(), **TOL)


SHAPES = [
    ((3,), (3,)), ((2, 3), (3,)), ((3,), (3, 4)), ((2, 3), (3, 4)), ((5, 2, 3), (3,)), ((5, 2, 3), (3, 4)),
    ((3,), (5, 3, 4)), ((2, 3), (5, 3, 4)), ((5, 2, 3), (5, 3, 4)), ((1, 2, 3), (5, 3, 4)), ((5, 2, 3), (1, 3, 4)),
    ((2, 1, 2, 3), (5, 3, 4)), ((6, 5, 2, 3), (3,)), ((3,), (6, 5, 3, 4)), ((1, 3), (5, 3, 1)), ((3, 1), (5, 1, 4)),
    ((0, 2, 3), (3, 4)), ((2, 0), (0, 3)), ((0, 3), (3, 0)), ((1, 1, 2, 3), (5, 3, 4)), ((1, 2, 3), (2, 5, 3, 4)),
    ((0,), (0,)), ((1, 2, 3), (1, 3, 4)),
]


@pytest.mark.parametrize("shapes", SHAPES, ids=str)
@pytest.mark.parametrize("grads", [(True, True), (True, False), (False, True)], ids=str)
def test_matmul_shapes(shapes, grads):
    check_matmul(*shapes, *grads)


@pytest.mark.parametrize("shapes", [((5, 2, 3), (3,)), ((5, 2, 3), (3, 4)), ((5, 2, 3), (5, 3, 4))], ids=str)
@pytest.mark.parametrize("grads", [(True, True), (True, False), (False, True)], ids=str)
def test_matmul_non_contiguous_batch(shapes, grads):
    check_matmul(*shapes, *grads, strided_a=True)


@pytest.mark.parametrize("fn", [
    lambda lib, a, b: lib.mm(a[0], b[0]), lambda lib, a, b: a[0].mm(b[0]), lambda lib, a, b: lib.bmm(a, b),
    lambda lib, a, b: a.bmm(b), lambda lib, a, b: lib.mv(a[0], b[0, :, 0]), lambda lib, a, b: a[1].mv(b[0, :, 1]),
    lambda lib, a, b: lib.dot(a[0, 0], b[0, :, 0]), lambda lib, a, b: a[0, 1].dot(b[1, :, 1]),
    lambda lib, a, b: lib.matmul(a, b), lambda lib, a, b: a.matmul(b[0]), lambda lib, a, b: a[0].T @ b[0, :3],
    lambda lib, a, b: lib.outer(a[0, 0], b[0, 0]), lambda lib, a, b: lib.ger(a[0, 0], b[0, 0]),
    lambda lib, a, b: a[0, 0].outer(b[0, 0].double()), lambda lib, a, b: lib.outer(a[0, 0], lib.tensor([1, 2])),
    lambda lib, a, b: b.__rmatmul__(a), lambda lib, a, b: a[:, :, :2] @ b.mT[:, :, :2].mT,
])
def test_products(fn):
    check(fn, rand(2, 3, 4), rand(2, 4, 5, seed=1), **TOL)


def test_integer_products():
    a, b = np.arange(12).reshape(3, 4), np.arange(20).reshape(4, 5) - 7
    check(lambda lib: lib.tensor(a) @ lib.tensor(b))
    check(lambda lib: lib.tensor(a)[0] @ lib.tensor(a)[1])
    check(lambda lib: lib.tensor(a) @ lib.tensor(b)[:, 0])
    check(lambda lib: lib.tensor(a).reshape(3, 2, 2) @ lib.tensor(b)[:2])
    check(lambda lib: lib.outer(lib.tensor(a[0]), lib.tensor(b[0])))


z = lambda lib, *s, dtype=None: lib.zeros(*s, dtype=getattr(lib, dtype) if dtype else None)


@pytest.mark.parametrize("fn", [
    lambda lib: lib.mm(z(lib, 2, 3), z(lib, 4, 5)), lambda lib: lib.mm(z(lib, 2, 3), z(lib, 3, 5, dtype="float64")),
    lambda lib: lib.mm(z(lib, 2, 3, dtype="float64"), z(lib, 3, 5)), lambda lib: lib.mm(z(lib, 3), z(lib, 3, 5)),
    lambda lib: lib.mm(z(lib, 2, 3), z(lib, 3)), lambda lib: lib.mm(z(lib, 2, 3, dtype="long"), z(lib, 3, 5)),
    lambda lib: lib.mm(z(lib, 2, 3, dtype="bool"), z(lib, 3, 5, dtype="bool")),
    lambda lib: lib.mm(z(lib, 2, 3), z(lib, 4, 5, dtype="float64")), lambda lib: lib.mm(z(lib, 2, 3), 1),
    lambda lib: lib.mv(z(lib, 2, 3), z(lib, 4)), lambda lib: lib.mv(z(lib, 2, 3), z(lib, 3, 1)),
    lambda lib: lib.mv(z(lib, 3), z(lib, 3)), lambda lib: lib.mv(z(lib, 2, 3), z(lib, 3, dtype="float64")),
    lambda lib: lib.mv(z(lib, 2, 3, dtype="float64"), z(lib, 3)),
    lambda lib: lib.mv(z(lib, 2, 3, dtype="float64"), z(lib, 4)),
    lambda lib: lib.mv(z(lib, 2, 3, dtype="bool"), z(lib, 3, dtype="bool")),
    lambda lib: lib.dot(z(lib, 3), z(lib, 4)), lambda lib: lib.dot(z(lib, 2, 3), z(lib, 2, 3)),
    lambda lib: lib.dot(z(lib, 3), z(lib, 3, dtype="float64")), lambda lib: lib.dot(z(lib, 3), z(lib, 3, 3)),
    lambda lib: lib.dot(z(lib, 3), z(lib, 4, dtype="float64")),
    lambda lib: lib.dot(z(lib, 3, dtype="bool"), z(lib, 3, dtype="bool")),
    lambda lib: lib.bmm(z(lib, 2, 3, 4), z(lib, 3, 4, 5)), lambda lib: lib.bmm(z(lib, 2, 3, 4), z(lib, 2, 5, 5)),
    lambda lib: lib.bmm(z(lib, 3, 4), z(lib, 4, 5)), lambda lib: lib.bmm(z(lib, 2, 3, 4), z(lib, 2, 5)),
    lambda lib: lib.bmm(z(lib, 2, 3, 4), z(lib, 2, 4, 5, dtype="float64")),
    lambda lib: lib.bmm(z(lib, 2, 3, 4), z(lib, 3, 5, 5, dtype="float64")),
    lambda lib: lib.bmm(z(lib, 2, 2, 3, dtype="bool"), z(lib, 2, 3, 3, dtype="bool")),
    lambda lib: lib.matmul(z(lib, 3), z(lib, 4)), lambda lib: lib.matmul(z(lib, 2, 3), z(lib, 4)),
    lambda lib: lib.matmul(z(lib, 3), z(lib, 4, 5)), lambda lib: lib.matmul(z(lib, 2, 3), z(lib, 4, 5)),
    lambda lib: lib.matmul(z(lib, 2, 2, 3), z(lib, 3, 4, 5)), lambda lib: lib.matmul(z(lib, 2, 2, 3), z(lib, 4, 5)),
    lambda lib: lib.matmul(z(lib, 2, 3), z(lib, 3, dtype="float64")),
    lambda lib: lib.matmul(z(lib, 2, 3, 4), z(lib, 4, dtype="float64")),
    lambda lib: lib.matmul(z(lib, 2, 3, 4), z(lib, 2, 4, 5, dtype="float64")),
    lambda lib: lib.matmul(lib.tensor(1.0), z(lib, 3)), lambda lib: lib.matmul(z(lib, 3), lib.tensor(1.0)),
    lambda lib: lib.matmul(z(lib, 2, 4, 5), z(lib, 2, 3, 4)),
    lambda lib: lib.matmul(z(lib, 2, 2, 4, 5), z(lib, 3, 5, 4)),
    lambda lib: lib.matmul(z(lib, 2, 3), 2), lambda lib: z(lib, 2, 3) @ 1, lambda lib: 1 @ z(lib, 2, 3),
    lambda lib: lib.outer(z(lib, 3, 2), z(lib, 4)), lambda lib: lib.outer(z(lib, 3), z(lib, 4, 1)),
])
def test_product_errors(fn):
    check_error(fn)


@st.composite
def matmul_cases(draw):
    d1, d2 = draw(st.integers(1, 4)), draw(st.integers(1, 4))
    n, k, m = (draw(st.integers(0, 3)) for _ in range(3))
    batch = draw(st.lists(st.integers(1, 3), max_size=2))
    pick = lambda nd: [draw(st.sampled_from([s, 1])) for s in batch[len(batch) - nd:]] if nd > 0 else []
    shape_a = pick(min(d1 - 2, len(batch))) + [n, k] if d1 > 1 else [k]
    shape_b = pick(min(d2 - 2, len(batch))) + [k, m] if d2 > 1 else [k]
    grads = draw(st.sampled_from([(True, True), (True, False), (False, True)]))
    return shape_a, shape_b, grads


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(matmul_cases())
def test_matmul_hypothesis(case):
    shape_a, shape_b, grads = case
    check_matmul(shape_a, shape_b, *grads)


# ---- higher order and finite differences -------------------------------------------------------------

@pytest.mark.parametrize("shapes", [((3,), (3,)), ((2, 3), (3,)), ((3,), (3, 4)), ((2, 3), (3, 4)),
                                    ((5, 2, 3), (3, 4)), ((2, 3), (5, 3, 4)), ((1, 2, 3), (5, 3, 4)),
                                    ((2, 1, 2, 3), (5, 3, 4)), ((5, 2, 3), (3,))], ids=str)
def test_matmul_double_backward(shapes):
    grads = []
    for lib in LIBS:
        a = lib.tensor(rand(*shapes[0], dtype=F64), requires_grad=True)
        b = lib.tensor(rand(*shapes[1], dtype=F64, seed=1), requires_grad=True)
        y = ((a @ b) ** 2).sum()
        ga, gb = lib.autograd.grad(y, [a, b], create_graph=True)
        z = (ga * ga).sum() + (gb * b).sum()
        grads.append([g.detach().numpy() for g in lib.autograd.grad(z, [a, b])])
    for x, y in zip(*grads):
        np.testing.assert_allclose(y, x, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("shapes", [((3,), (3,)), ((2, 3), (3,)), ((3,), (3, 2)), ((2, 3), (3, 2)),
                                    ((2, 2, 3), (3, 2)), ((2, 3), (2, 3, 2)), ((2, 1, 2, 3), (2, 3, 1)),
                                    ((2, 2, 3), (3,))], ids=str)
def test_matmul_finite_differences(shapes):
    w = None
    def fn(a, b):
        nonlocal w
        y = a @ b
        w = w if w is not None else numgrad.tensor(rand(*y.shape, dtype=F64, seed=7))
        return (y * y * w).sum()
    grad_fd(fn, rand(*shapes[0], dtype=F64), rand(*shapes[1], dtype=F64, seed=1))


def test_saved_operand_modified_in_place():
    for lib in LIBS:
        a = lib.tensor(rand(2, 3))
        w = lib.tensor(rand(3, 4), requires_grad=True)
        y = a @ w
        a.add_(1)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            y.sum().backward()

"""nn.Linear with a bias (addmm, AddmmBackward0) gives each gradient its operand's layout as torch's
mm_mat1_backward and mm_mat2_backward do (mm's own backward does the same, test_grad_layouts.py): a weight
or an input stored column-major gets a column-major .grad that AccumulateGrad keeps without a copy
(node._copy_in_layout never runs), eager and compiled; values and strides against torch."""
import numpy as np
import pytest
import torch

import numgrad
from oracle.autograd.test_grad_layouts import TOL, _arrays


def _laid_out(lib, array, layout):
    """A leaf with `array`'s values, stored in C order or column-major (the transpose of a C-order tensor)."""
    t = lib.tensor(array) if layout == "C" else lib.tensor(np.ascontiguousarray(array.T)).t()
    return t.detach()


def _linear_grads(lib, x_layout, w_layout, grads, x_shape=(7, 4), seed=0):
    x, w, b = _arrays(x_shape, (5, 4), (5,), seed=seed)
    x = _laid_out(lib, x, x_layout).requires_grad_(grads[0]) if len(x_shape) == 2 else \
        lib.tensor(x, requires_grad=grads[0])
    w = _laid_out(lib, w, w_layout).requires_grad_(grads[1])
    b = lib.tensor(b, requires_grad=True)
    y = lib.nn.functional.linear(x, w, b)
    y.backward(lib.tensor(_arrays(tuple(y.shape), seed=9)[0]))
    return [t.grad for t in (x, w, b)], y.grad_fn


@pytest.mark.parametrize("grads", [(True, True), (True, False), (False, True)])
@pytest.mark.parametrize("w_layout", ["C", "F"])
@pytest.mark.parametrize("x_layout", ["C", "F"])
def test_each_gradient_in_its_operands_layout_without_a_copy(layout_copies, x_layout, w_layout, grads):
    got, _ = _linear_grads(numgrad, x_layout, w_layout, grads)
    want, _ = _linear_grads(torch, x_layout, w_layout, grads)
    for n, t in zip(got, want):
        assert (n is None) == (t is None)
        if t is not None:
            assert n.stride() == t.stride() and n._base is None
            np.testing.assert_allclose(n.numpy(), t.numpy(), **TOL)
    assert layout_copies == []


@pytest.mark.parametrize("w_layout", ["C", "F"])
def test_a_three_d_input_folded_into_rows(layout_copies, w_layout):
    got, _ = _linear_grads(numgrad, "C", w_layout, (True, True), x_shape=(2, 3, 4))
    want, _ = _linear_grads(torch, "C", w_layout, (True, True), x_shape=(2, 3, 4))
    for n, t in zip(got, want):
        assert n.stride() == t.stride()
        np.testing.assert_allclose(n.numpy(), t.numpy(), **TOL)
    assert layout_copies == []


@pytest.mark.parametrize("shapes", [((1, 4), (5, 4)), ((7, 1), (5, 1)), ((7, 4), (1, 4)), ((1, 1), (1, 1))])
@pytest.mark.parametrize("layouts", ["CC", "CF", "FC", "FF"])
def test_size_one_dims_take_torchs_layouts(layout_copies, shapes, layouts):
    x0, w0, b0 = _arrays(shapes[0], shapes[1], (shapes[1][0],), seed=4)
    grads = []
    for lib in (torch, numgrad):
        x = _laid_out(lib, x0, layouts[0]).requires_grad_()
        w = _laid_out(lib, w0, layouts[1]).requires_grad_()
        b = lib.tensor(b0, requires_grad=True)
        (lib.nn.functional.linear(x, w, b) * 3).sum().backward()
        grads.append((x, w))
    for n, t in zip(*grads[::-1]):
        # (a leaf with a size-1 dim can have other strides than torch's: each .grad takes its own leaf's)
        assert n.grad.stride() == n.stride() and t.grad.stride() == t.stride()
        np.testing.assert_allclose(n.grad.numpy(), t.grad.numpy(), **TOL)
    assert layout_copies == []


def test_double_backward_through_a_column_major_weight():
    x0, w0, b0 = _arrays((3, 4), (5, 4), (5,))
    results = []
    for lib in (torch, numgrad):
        x = lib.tensor(x0.astype(np.float64), requires_grad=True)
        w = _laid_out(lib, w0.astype(np.float64), "F").requires_grad_()
        b = lib.tensor(b0.astype(np.float64), requires_grad=True)
        (gw,) = lib.autograd.grad((lib.nn.functional.linear(x, w, b) ** 2).sum(), w, create_graph=True)
        gw.sum().backward()
        results.append((gw.detach().numpy(), x.grad.numpy(), w.grad.numpy(), b.grad.numpy()))
    for t, n in zip(*results):
        np.testing.assert_allclose(n, t, rtol=1e-12)


def test_compiled_step_of_a_column_major_linear_copies_nothing_and_matches_eager():
    w0, b0 = _arrays((5, 4), (5,), seed=3)
    batches = _arrays((6, 4), (6, 4), (6, 4), seed=5)
    runs = []
    for compiled in (False, True):
        w = _laid_out(numgrad, w0, "F").requires_grad_()
        b = numgrad.tensor(b0, requires_grad=True)
        opt = numgrad.optim.SGD([w, b], lr=0.1)

        def step(x, opt=opt, w=w, b=b):
            opt.zero_grad()
            loss = numgrad.nn.functional.linear(x, w, b).tanh().sum()
            loss.backward()
            opt.step()
            return loss
        fn = numgrad.compile(step) if compiled else step
        runs.append([(fn(numgrad.tensor(a)).item(), w.detach().numpy().copy(), w.grad.stride()) for a in batches])
        if compiled:
            (variant,) = fn.variants
            assert variant.hits == 2
            names = [getattr(getattr(e, "func", e), "__name__", "") for e in variant.entries]
            assert "_copy_into" not in names and "_host_copy" not in names
    for (le, we, se), (lc, wc, sc) in zip(*runs):
        assert le == lc and se == sc == (1, 5)
        np.testing.assert_array_equal(we, wc)

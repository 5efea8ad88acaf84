"""Gradients made in their input's memory layout, as torch's mm backward makes them: `x @ w.t()` and a
column-major operand give each leaf a C-contiguous (or its own layout's) .grad that AccumulateGrad keeps
without a copy (node._copy_in_layout never runs), eager and compiled; values against torch, strides and
MmBackward0's saved layout fields as torch's, and no .grad sharing memory with anything the user holds."""
import numpy as np
import pytest
import torch

import numgrad

TOL = dict(rtol=1e-5, atol=1e-6)


def _arrays(*shapes, seed=0):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(s).astype(np.float32) for s in shapes]


def _both(fn, arrays, grads):
    """fn(lib, *tensors) in torch and numgrad, backward of a weighted sum; the tensors whose flag in `grads`
    is set require grad. Returns [(torch leaves, numgrad leaves)]."""
    out = []
    for lib in (torch, numgrad):
        leaves = [lib.tensor(a, requires_grad=g) for a, g in zip(arrays, grads)]
        y = fn(lib, *leaves)
        (y * lib.tensor(_arrays(tuple(y.shape), seed=9)[0])).sum().backward()
        out.append(leaves)
    return list(zip(*out))


def _check_grads(pairs):
    for t, n in pairs:
        if t.requires_grad:
            assert n.grad.stride() == t.grad.stride()
            assert n.grad._base is None
            np.testing.assert_allclose(n.grad.numpy(), t.grad.numpy(), **TOL)


@pytest.mark.parametrize("rows", [1, 2, 7])
def test_x_matmul_w_t_gives_w_a_contiguous_grad_without_a_copy(layout_copies, rows):
    pairs = _both(lambda lib, x, w: x @ w.t(), _arrays((rows, 4), (5, 4)), (True, True))
    _check_grads(pairs)
    assert layout_copies == []


def test_a_column_major_first_operand_gets_its_gradient_in_its_layout(layout_copies):
    # a.t() is column-major: torch's mm_mat1_backward computes (w @ g.t()).t()
    pairs = _both(lambda lib, a, w: a.t() @ w, _arrays((4, 6), (4, 3)), (True, True))
    _check_grads(pairs)
    assert layout_copies == []


def test_a_column_major_leaf_keeps_a_column_major_grad(layout_copies):
    base = _arrays((5, 4))[0]
    grads = []
    for lib in (torch, numgrad):
        w = lib.tensor(base).t().detach().requires_grad_()  # a (4, 5) leaf stored column-major
        x = lib.tensor(_arrays((3, 4), seed=1)[0])
        (x @ w).pow(2).sum().backward()
        grads.append(w.grad)
    t, n = grads
    assert n.stride() == t.stride() == (1, 4)
    np.testing.assert_allclose(n.numpy(), t.numpy(), **TOL)
    assert layout_copies == []


@pytest.mark.parametrize("shape", [(6, 4), (2, 3, 4)])
def test_linear_without_bias(layout_copies, shape):
    (x,) = _arrays(shape)
    (w,) = _arrays((5, 4), seed=1)
    pairs = _both(lambda lib, x, w: lib.nn.functional.linear(x, w), [x, w], (True, True))
    _check_grads(pairs)
    assert layout_copies == []


def test_saved_layout_fields_match_torch():
    x, w = _arrays((3, 4), (5, 4))
    for grads in ((True, False), (False, True), (True, True)):
        fields = []
        for lib in (torch, numgrad):
            a, b = lib.tensor(x, requires_grad=grads[0]), lib.tensor(w, requires_grad=grads[1])
            node = (a @ b.t()).grad_fn
            fields.append([tuple(getattr(node, f"_saved_{k}")) for k in
                           ("self_sym_sizes", "self_sym_strides", "mat2_sym_sizes", "mat2_sym_strides")])
        assert fields[0] == fields[1]


def test_double_backward_through_a_transposed_operand():
    x, w = _arrays((3, 4), (5, 4))
    results = []
    for lib in (torch, numgrad):
        a = lib.tensor(x.astype(np.float64), requires_grad=True)
        b = lib.tensor(w.astype(np.float64), requires_grad=True)
        (gb,) = lib.autograd.grad(((a @ b.t()) ** 2).sum(), b, create_graph=True)
        gb.sum().backward()
        results.append((gb.detach().numpy(), a.grad.numpy(), b.grad.numpy()))
    for t, n in zip(*results):
        np.testing.assert_allclose(n, t, rtol=1e-12)


def test_no_grad_shares_memory_with_what_the_user_holds():
    (w0,) = _arrays((5, 4))
    w = numgrad.tensor(w0, requires_grad=True)
    user = numgrad.tensor(_arrays((5, 4), seed=1)[0])
    w.t().backward(user.t())  # the user's own gradient, transposed: w.grad may not be it
    assert not np.shares_memory(w.grad.numpy(), user.numpy())
    w.grad = None
    seen = []
    y = w.t()
    y.register_hook(seen.append)
    (numgrad.tensor(_arrays((3, 4), seed=2)[0]) @ y).sum().backward()
    assert not np.shares_memory(w.grad.numpy(), seen[0].numpy())
    w.grad = None
    y = w.t()
    y.retain_grad()
    (numgrad.tensor(_arrays((3, 4), seed=2)[0]) @ y).sum().backward()
    assert not np.shares_memory(w.grad.numpy(), y.grad.numpy())


def test_conv_and_layer_norm_parameters_get_their_grads_without_a_copy(layout_copies):
    (x,) = _arrays((2, 3, 8, 8))
    grads = []
    for lib in (torch, numgrad):
        lib.manual_seed(0)
        conv, norm = lib.nn.Conv2d(3, 4, 3), lib.nn.LayerNorm(6)
        with lib.no_grad():
            conv.weight.copy_(lib.tensor(_arrays((4, 3, 3, 3), seed=3)[0]))
            conv.bias.copy_(lib.tensor(_arrays((4,), seed=4)[0]))
        norm(conv(lib.tensor(x))).pow(2).sum().backward()
        grads.append([p.grad for p in (conv.weight, conv.bias, norm.weight, norm.bias)])
    for t, n in zip(*grads):
        assert n.stride() == t.stride()
        np.testing.assert_allclose(n.numpy(), t.numpy(), rtol=1e-4, atol=1e-4)
    assert layout_copies == []


def test_compiled_step_through_x_matmul_w_t_copies_nothing_and_matches_eager():
    rng = np.random.default_rng(0)
    w0, batches = rng.standard_normal((5, 4)).astype(np.float32), _arrays((6, 4), (6, 4), (6, 4), seed=5)
    runs = []
    for compiled in (False, True):
        w = numgrad.tensor(w0, requires_grad=True)
        opt = numgrad.optim.SGD([w], lr=0.1)

        def step(x):
            opt.zero_grad()
            loss = (x @ w.t()).tanh().sum()
            loss.backward()
            opt.step()
            return loss
        fn = numgrad.compile(step) if compiled else step
        runs.append([(fn(numgrad.tensor(b)).item(), w.detach().numpy().copy(), w.grad.is_contiguous())
                     for b in batches])
        if compiled:
            (variant,) = fn.variants
            names = [getattr(getattr(e, "func", e), "__name__", "") for e in variant.entries]
            assert "_copy_into" not in names and "_host_copy" not in names
    for (le, we, ce), (lc, wc, cc) in zip(*runs):
        assert le == lc and ce and cc
        np.testing.assert_array_equal(we, wc)


def test_retain_grad_of_a_transposed_non_leaf_is_c_order_as_torchs():
    """torch's retain_grad clones the gradient into C order, whatever layout the gradient came in."""
    strides = []
    for lib in (numgrad, torch):
        w = lib.tensor(np.arange(20.0, dtype=np.float32).reshape(5, 4), requires_grad=True)
        y = w.t()
        y.retain_grad()
        (lib.ones(3, 4) @ y).sum().backward()
        strides.append((y.grad.stride(), w.grad.stride()))
    assert strides[0] == strides[1] == (((5, 1), (4, 1)))


def test_no_grad_shares_memory_with_a_gradient_a_custom_backward_keeps():
    # torch's AccumulateGrad keeps a gradient without a copy only when nothing else holds it (its use count);
    # a Function whose backward also stores its result keeps it from becoming the leaf's .grad
    for lib in (torch, numgrad):
        kept = []

        class Keep(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2

            @staticmethod
            def backward(ctx, g):
                out = g * 3
                kept.append(out)
                return out
        x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        Keep.apply(x).sum().backward()
        x.grad.add_(1)
        assert kept[0].tolist() == [3.0, 3.0, 3.0] and x.grad.tolist() == [4.0, 4.0, 4.0]

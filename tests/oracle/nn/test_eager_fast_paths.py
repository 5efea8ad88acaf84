"""The eager fast paths of the GPT block's ops against torch and against numgrad's general path: layer_norm's row
kernels called straight from eager forward and backward, bmm's backward products, the views' and transposes'
backward on host gradients, and split's backward copying each piece into its slice. Each gives torch's values
and gradients, the general path's bits (numgrad.profiler and create_graph still take it), and falls back where
it does not apply (non-contiguous input, rows near overflow, missing gradients, double backward)."""
import numpy as np
import pytest
import torch

import numgrad
from numgrad.nn import _norm


def _arrays(*shapes, seed=0, dtype=np.float32):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(s).astype(dtype) for s in shapes]


def _tol(dtype):
    return (2e-5, 2e-5) if dtype == np.float32 else (1e-11, 1e-11)


def _bits_equal(a, b):
    return a.dtype == b.dtype and a.shape == b.shape and np.array_equal(a.view(np.uint8), b.view(np.uint8))


def _layer_norm_run(lib, x, shape, w, b, g, wants=(True, True, True), view=None):
    """layer_norm's output and the gradients of (x, weight, bias) that `wants` asks for (None for the others)."""
    xs = lib.tensor(x, requires_grad=wants[0])
    ws = None if w is None else lib.tensor(w, requires_grad=wants[1])
    bs = None if b is None else lib.tensor(b, requires_grad=wants[2])
    inp = xs if view is None else view(xs)
    out = lib.nn.functional.layer_norm(inp, shape, ws, bs)
    out.backward(lib.tensor(g))
    grads = [None if t is None or t.grad is None else t.grad.numpy() for t in (xs, ws, bs)]
    return [out.detach().numpy()] + grads


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("affine", ["both", "weight", "bias", "none"])
@pytest.mark.parametrize("shape, normalized", [((8, 16, 32), (32,)), ((4, 6, 5), (6, 5)), ((3, 7), (7,))])
def test_layer_norm_row_kernels_match_torch(dtype, affine, shape, normalized):
    x, g, w, b = _arrays(shape, shape, normalized, normalized, seed=1, dtype=dtype)
    w, b = (w if affine in ("both", "weight") else None), (b if affine in ("both", "bias") else None)
    ours = _layer_norm_run(numgrad, x, normalized, w, b, g)
    theirs = _layer_norm_run(torch, x, normalized, w, b, g)
    rtol, atol = _tol(dtype)
    for o, t in zip(ours, theirs):
        assert (o is None) == (t is None)
        if o is not None:
            assert o.dtype == t.dtype and o.shape == t.shape
            np.testing.assert_allclose(o, t, rtol=rtol, atol=atol * max(1.0, np.abs(t).max()))


@pytest.mark.parametrize("wants", [(True, False, False), (False, True, True), (False, False, True),
                                   (True, True, False)])
def test_layer_norm_row_kernels_give_only_the_wanted_gradients(wants):
    x, g, w, b = _arrays((5, 4, 8), (5, 4, 8), (8,), (8,), seed=2)
    ours = _layer_norm_run(numgrad, x, (8,), w, b, g, wants)
    theirs = _layer_norm_run(torch, x, (8,), w, b, g, wants)
    for o, t in zip(ours, theirs):
        assert (o is None) == (t is None)
        if o is not None:
            np.testing.assert_allclose(o, t, rtol=2e-5, atol=2e-5)


def test_layer_norm_eager_rows_are_bitwise_the_recorded_call():
    """The forward's arrays are those of the recorded call (_layer_norm_arrays), the gradients those that
    numgrad.profiler's run (which keeps the recorded calls) gives."""
    x, g, w, b = _arrays((6, 10, 24), (6, 10, 24), (24,), (24,), seed=3)
    fast = _layer_norm_run(numgrad, x, (24,), w, b, g)
    out, mean, invstd = _norm._layer_norm_arrays(x, w, b, (24,), (2,), 1e-5)
    assert _bits_equal(fast[0], out)
    with numgrad.profiler.profile():
        recorded = _layer_norm_run(numgrad, x, (24,), w, b, g)
    for f, r in zip(fast, recorded):
        assert _bits_equal(f, r)


@pytest.mark.parametrize("case", ["transposed input", "rows near overflow"])
def test_layer_norm_falls_back_where_the_row_kernel_does_not_apply(case):
    x, g, w, b = _arrays((4, 12, 12), (4, 12, 12), (12,), (12,), seed=4)
    view = None
    if case == "transposed input":  # a strided input: the recorded path copies it
        view = lambda t: t.transpose(1, 2)  # noqa: E731
    else:  # sums of squares above 1e30 in float32: torch's Welford order on the NumPy path
        x = x * np.float32(1e16)
    ours = _layer_norm_run(numgrad, x, (12,), w, b, g, view=view)
    theirs = _layer_norm_run(torch, x, (12,), w, b, g, view=view)
    for o, t in zip(ours, theirs):
        np.testing.assert_allclose(o, t, rtol=2e-5, atol=2e-5 * max(1.0, np.abs(t).max()))


def test_layer_norm_double_backward_keeps_the_tensor_formulas():
    x, w, b = _arrays((3, 5, 6), (6,), (6,), seed=5, dtype=np.float64)
    grads = []
    for lib in (numgrad, torch):
        xs, ws, bs = (lib.tensor(a, requires_grad=True) for a in (x, w, b))
        out = lib.nn.functional.layer_norm(xs, (6,), ws, bs)
        (gx,) = lib.autograd.grad((out * out).sum(), xs, create_graph=True)
        gx.sum().backward()
        grads.append([t.grad.numpy() for t in (xs, ws, bs)])
    for o, t in zip(*grads):
        np.testing.assert_allclose(o, t, rtol=1e-9, atol=1e-9)


def test_layer_norm_errors_are_torchs():
    for lib in (numgrad, torch):
        x = lib.tensor(np.zeros((2, 4), np.float32))
        with pytest.raises(RuntimeError, match="Expected weight to be of same shape as normalized_shape"):
            lib.nn.functional.layer_norm(x, (4,), lib.tensor(np.ones(3, np.float32)))
        with pytest.raises(RuntimeError, match=r"Given normalized_shape=\[5\]"):
            lib.nn.functional.layer_norm(x, (5,))


def _bmm_grads(lib, a, b, g, wants=(True, True), create_graph=False):
    x, y = lib.tensor(a, requires_grad=wants[0]), lib.tensor(b, requires_grad=wants[1])
    out = x.bmm(y)
    if create_graph:
        grads = lib.autograd.grad(out, [t for t in (x, y) if t.requires_grad], lib.tensor(g), create_graph=True)
        sum(gr.sum() for gr in grads).backward()
        return [None if t.grad is None else t.grad.numpy() for t in (x, y)]
    out.backward(lib.tensor(g))
    return [None if t.grad is None else t.grad.numpy() for t in (x, y)]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("wants", [(True, True), (True, False), (False, True)])
def test_bmm_backward_products_match_torch(dtype, wants):
    a, b, g = _arrays((4, 6, 5), (4, 5, 7), (4, 6, 7), seed=6, dtype=dtype)
    rtol, atol = _tol(dtype)
    for o, t in zip(_bmm_grads(numgrad, a, b, g, wants), _bmm_grads(torch, a, b, g, wants)):
        assert (o is None) == (t is None)
        if o is not None:
            assert o.dtype == t.dtype and o.shape == t.shape
            np.testing.assert_allclose(o, t, rtol=rtol, atol=atol)


def test_bmm_backward_products_are_bitwise_the_general_formulas():
    a, b, g = _arrays((3, 8, 4), (3, 4, 9), (3, 8, 9), seed=7)
    fast = _bmm_grads(numgrad, a, b, g)
    with numgrad.no_grad():  # the general path's formulas: g @ b^T, a^T @ g
        ga = numgrad.tensor(g).bmm(numgrad.tensor(b).mT).numpy()
        gb = numgrad.tensor(a).mT.bmm(numgrad.tensor(g)).numpy()
    assert _bits_equal(fast[0], ga) and _bits_equal(fast[1], gb)


def test_bmm_double_backward_takes_the_recorded_products():
    a, b, g = _arrays((2, 3, 4), (2, 4, 5), (2, 3, 5), seed=8, dtype=np.float64)
    for o, t in zip(_bmm_grads(numgrad, a, b, g, create_graph=True), _bmm_grads(torch, a, b, g, create_graph=True)):
        np.testing.assert_allclose(o, t, rtol=1e-12, atol=1e-12)
    assert numgrad.testing.gradcheck(lambda x, y: x.bmm(y), tuple(
        numgrad.tensor(v, requires_grad=True) for v in (a, b)))


def _attention_grads(lib, h, g):
    """The GPT block's head split and merge: split of q, k, v, reshapes, transposes, two matmuls."""
    x = lib.tensor(h, requires_grad=True)
    q, k, v = x.split(8, dim=-1)
    q, k, v = (z.reshape(2, 5, 2, -1).transpose(1, 2) for z in (q, k, v))
    att = (q @ k.transpose(-2, -1)).softmax(-1)
    out = (att @ v).transpose(1, 2).reshape(2, 5, -1)
    out.backward(lib.tensor(g))
    return out.detach().numpy(), x.grad.numpy()


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_attention_views_transposes_and_split_backward_match_torch(dtype):
    h, g = _arrays((2, 5, 24), (2, 5, 8), seed=9, dtype=dtype)
    rtol, atol = _tol(dtype)
    for o, t in zip(_attention_grads(numgrad, h, g), _attention_grads(torch, h, g)):
        assert o.dtype == t.dtype and o.shape == t.shape
        np.testing.assert_allclose(o, t, rtol=rtol, atol=atol)


@pytest.mark.parametrize("dim", [0, 1, 2])
def test_split_backward_joins_strided_pieces_as_concatenate(dim):
    """Pieces with transposed strides (the attention's key gradient) and plain ones give np.concatenate's bits."""
    (x,) = _arrays((6, 6, 6), seed=10)
    t = numgrad.tensor(x, requires_grad=True)
    pieces = t.split([2, 4], dim=dim)
    grads = _arrays(*(p.shape for p in pieces), seed=11)
    transposed = [numgrad.tensor(np.ascontiguousarray(gr.transpose(0, 2, 1))).transpose(1, 2) for gr in grads]
    assert not transposed[0].is_contiguous()
    numgrad.autograd.backward(list(pieces), transposed)
    assert _bits_equal(t.grad.numpy(), np.concatenate(grads, axis=dim))
    tt = torch.tensor(x, requires_grad=True)
    torch.autograd.backward(list(tt.split([2, 4], dim=dim)), [torch.tensor(gr) for gr in grads])
    np.testing.assert_array_equal(t.grad.numpy(), tt.grad.numpy())


def test_split_backward_with_an_unused_piece_gives_zeros_there():
    (x,) = _arrays((4, 9), seed=12)
    results = []
    for lib in (numgrad, torch):
        t = lib.tensor(x, requires_grad=True)
        a, _, c = t.split(3, dim=1)
        (a.sum() + (c * 2).sum()).backward()
        results.append(t.grad.numpy())
    np.testing.assert_array_equal(*results)


def test_view_and_transpose_backward_of_a_zero_dim_tensor():
    for lib in (numgrad, torch):
        x = lib.tensor(2.5, requires_grad=True)
        (x.reshape(1, 1).t().reshape(()) * 3).backward()
        assert float(x.grad) == 3.0
        y = lib.tensor(1.5, requires_grad=True)
        y.t().backward()
        assert float(y.grad) == 1.0


def test_view_backward_double_backward_matches_torch():
    (x,) = _arrays((3, 4), seed=13, dtype=np.float64)
    grads = []
    for lib in (numgrad, torch):
        t = lib.tensor(x, requires_grad=True)
        y = (t.reshape(4, 3).transpose(0, 1) ** 3).sum()
        (g,) = lib.autograd.grad(y, t, create_graph=True)
        g.sum().backward()
        grads.append(t.grad.numpy())
    np.testing.assert_allclose(*grads, rtol=1e-12)

"""Shaped kernel outputs (pool.empty with a shape): C-order arrays that are nobody's view, pooled or not, so
that the backward engine keeps a row-kernel's gradient (softmax) as a leaf's .grad instead of copying it."""
import gc

import numpy as np
import pytest

import numgrad
from numgrad.kernels import dispatch
from numgrad.kernels.cpu import pool


@pytest.fixture(autouse=True)
def fresh_pool():
    gc.collect()
    pool.empty_cache()
    yield
    gc.collect()
    pool.empty_cache()


@pytest.mark.parametrize("rows", [4, pool.MIN_BYTES // (4 * 64) + 8])  # below and above the pooling threshold
def test_a_shaped_buffer_owns_its_memory(rows):
    arr = pool.empty(rows * 64, np.float32, (rows, 64))
    assert arr.shape == (rows, 64) and arr.flags.c_contiguous and arr.dtype == np.float32
    assert dispatch.owns_memory(arr)
    flat = arr.reshape(-1)  # the kernels write through a flat view
    flat[:] = 1.5
    assert (arr == 1.5).all()


def test_a_pooled_shaped_buffer_is_reused_only_when_free():
    rows = pool.MIN_BYTES // (4 * 64) + 8
    a = pool.empty(rows * 64, np.float32, (rows, 64))
    view = a[1:]
    del a
    gc.collect()
    b = pool.empty(rows * 64, np.float32, (rows, 64))
    assert not np.shares_memory(view, b)  # the view still uses the first buffer


def test_softmax_gradient_becomes_the_leafs_grad_without_a_copy():
    x = numgrad.tensor(np.random.default_rng(0).standard_normal((300, 1024)).astype(np.float32),
                       requires_grad=True)
    w = numgrad.tensor(np.random.default_rng(1).standard_normal((300, 1024)).astype(np.float32))
    kept = []
    original = np.copyto

    def spying_copyto(dst, src, *args, **kwargs):
        kept.append(dst.shape)
        return original(dst, src, *args, **kwargs)

    np.copyto = spying_copyto
    try:
        (numgrad.softmax(x, -1) * w).sum().backward()
    finally:
        np.copyto = original
    assert (300, 1024) not in kept  # the engine's copy into a new .grad (node._copy_in_layout) never ran
    y = np.exp(x.detach().numpy() - x.detach().numpy().max(1, keepdims=True))
    y /= y.sum(1, keepdims=True)
    wn = w.numpy()
    expected = y * (wn - (wn * y).sum(1, keepdims=True))
    np.testing.assert_allclose(x.grad.numpy(), expected, rtol=1e-4, atol=1e-5)

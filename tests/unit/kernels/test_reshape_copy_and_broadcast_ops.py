"""Two host paths that avoid extra copies: dispatch.reshape_copy (one strided pass where a reshape needs a copy)
and a pending op on a broadcast input (a bias add) computed by a fused kernel that reads the input as a row or
column instead of by the op's own kernel on an expanded copy (lazy.LazyExpr._broadcasts)."""
import numpy as np
import pytest
import torch

import numgrad
from numgrad import lazy
from numgrad.kernels import dispatch


@pytest.mark.parametrize("shape, perm, target", [((8, 2, 64, 32), (0, 2, 1, 3), (8, 64, 64)),
                                                 ((3, 4, 5), (2, 0, 1), (5, 12)),
                                                 ((600, 700), (1, 0), (-1,))])
def test_reshape_copy_is_the_c_order_copy(shape, perm, target):
    arr = np.random.default_rng(0).standard_normal(shape).astype(np.float32).transpose(perm)
    target = np.reshape(arr, target).shape
    out = dispatch.reshape_copy(arr, target)
    assert out.shape == target and out.flags.c_contiguous and not np.shares_memory(out, arr)
    np.testing.assert_array_equal(out, np.reshape(arr, target))
    again = np.empty(target, np.float32)  # a replay's buffer
    assert dispatch._host_reshape_copy(arr * 2, target, out=again) is again
    np.testing.assert_array_equal(again, np.reshape(arr * 2, target))


def test_reshape_of_a_permuted_tensor_matches_torch_with_its_gradient():
    x0 = np.random.default_rng(1).standard_normal((2, 3, 4, 5)).astype(np.float32)
    results = []
    for lib in (numgrad, torch):
        x = lib.tensor(x0, requires_grad=True)
        y = x.transpose(1, 2).reshape(2, 12, 5)
        (y * lib.tensor(np.arange(120, dtype=np.float32).reshape(2, 12, 5))).sum().backward()
        results.append((y.detach().numpy(), y.stride(), type(y.grad_fn).__name__, x.grad.numpy()))
    (a, sa, na, ga), (b, sb, nb, gb) = results
    np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(ga, gb)
    assert (sa, na) == (sb, nb)


@pytest.fixture
def op_kernel_calls(monkeypatch):
    """The ops computed by their own kernel (unfused: compute_now, or compute_small for a small result)."""
    calls = []
    for name in ("compute_now", "compute_small"):
        def counting(entry, *args, _original=getattr(lazy, name)):
            calls.append(entry.name)
            return _original(entry, *args)
        monkeypatch.setattr(lazy, name, counting)
    return calls


@pytest.mark.parametrize("rows, cols", [(1024, 256), (4, 3)])
@pytest.mark.parametrize("operand", ["row", "column"])
def test_a_broadcast_add_matches_torch_and_only_a_large_one_is_fused(rows, cols, operand, op_kernel_calls):
    rng = np.random.default_rng(2)
    x0 = rng.standard_normal((rows, cols)).astype(np.float32)
    b0 = rng.standard_normal((cols,) if operand == "row" else (rows, 1)).astype(np.float64)
    ours = (numgrad.tensor(x0) + numgrad.tensor(b0)).numpy()
    theirs = (torch.tensor(x0) + torch.tensor(b0)).numpy()
    assert ours.dtype == theirs.dtype
    np.testing.assert_array_equal(ours, theirs)
    large = rows * cols >= dispatch.fused.BROADCAST_MIN and rows * cols > lazy.SMALL_MAX
    assert op_kernel_calls == ([] if large else ["add"])


def test_a_linear_layers_bias_add_on_a_3d_input_as_torch():
    rng = np.random.default_rng(3)
    x0, w0, b0 = (rng.standard_normal(s).astype(np.float32) for s in ((8, 64, 64), (256, 64), (256,)))
    got = []
    for lib in (numgrad, torch):
        x, w, b = (lib.tensor(a, requires_grad=True) for a in (x0, w0, b0))
        y = lib.nn.functional.linear(x, w, b)
        lib.nn.functional.gelu(y).sum().backward()
        got.append([y.detach().numpy(), x.grad.numpy(), w.grad.numpy(), b.grad.numpy()])
    for a, b in zip(*got):
        np.testing.assert_allclose(a, b, rtol=2e-5, atol=2e-5)

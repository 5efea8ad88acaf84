"""The new tensor ops on device='cuda' (Numba's simulator, or a GPU) against the CPU: the ones composed from ops
that run there (einsum, tensordot, kron, cross, diff, tril/triu, roll, flip, rot90, repeat, tile, repeat_interleave,
diagonal, diag, diag_embed, trace, meshgrid, movedim, tensor_split, one_hot) give the same values, grad_fn names and
gradients; the host-only ones (scans, sorting, scatter_reduce and the index ops) refuse a CUDA tensor."""
import numpy as np
import pytest

import numgrad
import numgrad.nn.functional as F

RNG = np.random.default_rng(0)
TOL = {numgrad.float32: dict(rtol=2e-5, atol=2e-6), numgrad.float64: dict(rtol=1e-11, atol=1e-12)}


def host(t):
    return t.detach().cpu().numpy()


def same(cpu, gpu):
    assert gpu.device == numgrad.device("cuda", 0), gpu.device
    assert cpu.dtype == gpu.dtype and cpu.shape == gpu.shape, (cpu.dtype, gpu.dtype, cpu.shape, gpu.shape)
    assert type(cpu.grad_fn).__name__ == type(gpu.grad_fn).__name__, (cpu.grad_fn, gpu.grad_fn)
    if cpu.dtype.is_floating_point:
        np.testing.assert_allclose(host(gpu), host(cpu), **TOL[cpu.dtype])
    else:
        np.testing.assert_array_equal(host(gpu), host(cpu))


def run_both(fn, *arrays):
    results = {}
    for device in ("cpu", "cuda"):
        inputs = [numgrad.tensor(a, device=device, requires_grad=a.dtype.kind == "f") for a in arrays]
        out = fn(numgrad, *inputs)
        outs = out if isinstance(out, tuple) else (out,)
        grads = [o for o in outs if o.requires_grad]
        if grads:
            sum((o * numgrad.arange(o.numel(), dtype=o.dtype, device=device).reshape(o.shape)).sum()
                for o in grads).backward()
        results[device] = (outs, [t.grad for t in inputs if t.requires_grad])
    (outs_c, grads_c), (outs_g, grads_g) = results["cpu"], results["cuda"]
    for a, b in zip(outs_c, outs_g):
        same(a, b)
    for a, b in zip(grads_c, grads_g):
        assert (a is None) == (b is None)
        if a is not None:
            same(a, b)


def x(*shape, dtype=np.float32):
    return RNG.standard_normal(shape).astype(dtype)


@pytest.mark.parametrize("fn", [
    lambda L, a, b: L.einsum("ij,jk->ik", a, b), lambda L, a, b: L.einsum("ij->ji", a),
    lambda L, a, b: L.einsum("ij,jk->", a, b), lambda L, a, b: L.tensordot(a, b, 1), lambda L, a, b: L.kron(a, b),
    lambda L, a, b: L.diff(a, 2), lambda L, a, b: L.tril(a, -1), lambda L, a, b: L.triu(b),
    lambda L, a, b: L.roll(a, (1, -1), (0, 1)), lambda L, a, b: L.roll(b, 2), lambda L, a, b: L.flip(a, (0, 1)),
    lambda L, a, b: L.rot90(a), lambda L, a, b: a.repeat(2, 1), lambda L, a, b: L.tile(b, (2,)),
    lambda L, a, b: a.repeat_interleave(2, 1), lambda L, a, b: L.diagonal(b, 1), lambda L, a, b: L.diag(a[0]),
    lambda L, a, b: L.diag_embed(a), lambda L, a, b: L.trace(b), lambda L, a, b: L.meshgrid(a[0], b[0], indexing="xy"),
    lambda L, a, b: L.movedim(a, 0, 1), lambda L, a, b: L.tensor_split(b, 2, 1),
    lambda L, a, b: L.cross(a[:, :3], b[:2, :3], dim=1),
])
def test_composed_ops_run_on_cuda(fn):
    run_both(fn, x(2, 3), x(3, 4))


def test_integer_index_ops_on_cuda():
    run_both(lambda L, a: a.repeat_interleave(L.tensor([1, 0, 2], device=a.device), 1), x(2, 3))
    labels = numgrad.tensor([0, 2, 1], device="cuda")
    np.testing.assert_array_equal(host(F.one_hot(labels, 4)), np.eye(4, dtype=np.int64)[[0, 2, 1]])
    assert F.one_hot(labels).device == labels.device


@pytest.mark.parametrize("fn", [
    lambda t: t.cumsum(0), lambda t: t.cumprod(1), lambda t: t.cummax(0), lambda t: t.logcumsumexp(0),
    lambda t: t.sort(), lambda t: t.topk(1), lambda t: t.median(), lambda t: t.unique(),
    lambda t: t.scatter_reduce(0, numgrad.zeros(2, 3, dtype=numgrad.int64, device="cuda"), t, "sum"),
    lambda t: t.index_add(0, numgrad.tensor([0], device="cuda"), t[:1]), lambda t: t.take(numgrad.tensor([0])),
])
def test_host_only_ops_refuse_cuda(fn):
    with pytest.raises(NotImplementedError, match="not implemented for CUDA tensors"):
        fn(numgrad.tensor(x(2, 3), device="cuda"))

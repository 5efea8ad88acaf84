"""Every op-table entry, reductions, products, fusion and higher-order gradients on device='cuda' (Numba's
simulator) against the same computation on the CPU: values, dtypes, grad_fn names and gradients."""
import numpy as np
import pytest
from hypothesis import given
from oracle.ops.test_ops_table import CALLS, DIFFERENTIABLE, NAMES, cases, make_args

import numgrad
from helpers.op_compare import hyp, param_grid
from numgrad.spec.table import ELEMENTWISE

TOL = {"float32": dict(rtol=2e-5, atol=2e-6), "float64": dict(rtol=1e-11, atol=1e-12)}


def on(device, args, requires_grad=True):
    return [numgrad.tensor(a, requires_grad=requires_grad and a.dtype.kind == "f", device=device)
            if isinstance(a, np.ndarray) else a for a in args]


def host(t):
    assert isinstance(t, numgrad.Tensor)
    return t.detach().cpu().numpy()


def same(cpu, gpu, dtype="float32"):
    """Equal results: device, dtype, shape, grad_fn name, values."""
    assert gpu.device == numgrad.device("cuda", 0), gpu.device
    assert cpu.dtype == gpu.dtype and cpu.shape == gpu.shape
    assert type(cpu.grad_fn).__name__ == type(gpu.grad_fn).__name__
    np.testing.assert_allclose(host(gpu), host(cpu), equal_nan=True, **TOL[dtype])


def run_both(fn, args, dtype, second_order=False, gradients=True):
    results = {}
    for device in ("cpu", "cuda"):
        inputs = on(device, args, gradients)
        out = fn(numgrad, *inputs)
        grads = []
        leaves = [t for t in inputs if isinstance(t, numgrad.Tensor) and t.requires_grad]
        if leaves and out.requires_grad:
            g = numgrad.ones_like(out) * 0.5
            first = numgrad.autograd.grad(out, leaves, g, retain_graph=True, create_graph=second_order,
                                          allow_unused=True)
            grads = [x for x in first if x is not None]
            if second_order and grads and any(x.requires_grad for x in grads):
                total = sum((x * x).sum() for x in grads if x.requires_grad)
                grads += [x for x in numgrad.autograd.grad(total, leaves, retain_graph=True, allow_unused=True)
                          if x is not None]
            out.backward(g)  # the kernel path (fused backward regions), into .grad
            grads += [t.grad if t.grad is not None else "unused" for t in leaves]
        results[device] = (out, grads)
    (out_c, grads_c), (out_g, grads_g) = results["cpu"], results["cuda"]
    same(out_c, out_g, dtype)
    assert len(grads_c) == len(grads_g)
    for a, b in zip(grads_c, grads_g):
        if isinstance(a, str) or isinstance(b, str):
            assert a == b  # a leaf the output does not use gets no gradient on either device
        else:
            same(a, b, dtype)


@pytest.mark.parametrize("name,dtype", param_grid(NAMES, "float32", "float64"))
def test_op_table_entry_on_cuda(name, dtype):
    entry, fn = ELEMENTWISE[name], CALLS[name]

    @hyp(3)
    @given(case=cases(entry, max_side=3))
    def check(case):
        run_both(fn, make_args(entry, case, dtype), dtype, gradients=name in DIFFERENTIABLE)
    check()


def test_backward_of_an_op_without_derivative_raises_on_cuda():
    a = numgrad.tensor([3.0, 4.0], device="cuda", requires_grad=True)
    with pytest.raises(RuntimeError, match="derivative for aten::floor_divide is not implemented"):
        (a // 2).sum().backward()


@pytest.mark.parametrize("name", [n for n in DIFFERENTIABLE if n not in ("floor_divide",)][::3])
def test_second_order_on_cuda(name):
    entry, fn = ELEMENTWISE[name], CALLS[name]

    @hyp(2)
    @given(case=cases(entry, max_side=3))
    def check(case):
        run_both(fn, make_args(entry, case, "float64"), "float64", second_order=True)
    check()


@pytest.mark.parametrize("dtype", ["int64", "bool"])
def test_integer_and_bool_ops_on_cuda(dtype):
    rng = np.random.default_rng(0)
    a = rng.integers(-3, 4, (3, 4))
    b = rng.integers(1, 4, (4,))
    a, b = (a != 0, b != 2) if dtype == "bool" else (a, b)
    for fn in (lambda L, x, y: x * y, lambda L, x, y: x == y, lambda L, x, y: L.logical_and(x, y),
               lambda L, x, y: (x + y).sum(1), lambda L, x, y: x.sum()):
        run_both(fn, [a, b], "float64")


# ---- reductions ------------------------------------------------------------------------------------
REDUCTIONS = [
    ("sum all", lambda L, x: x.sum()), ("sum dim 0", lambda L, x: x.sum(0)),
    ("sum dims (0, 2) keepdim", lambda L, x: x.sum((0, 2), keepdim=True)), ("sum dim 1", lambda L, x: x.sum(1)),
    ("mean", lambda L, x: x.mean()), ("mean dim -1", lambda L, x: x.mean(-1)),
    ("amax dim 1", lambda L, x: x.amax(1)), ("amin dims (1, 2)", lambda L, x: x.amin((1, 2))),
    ("max dim 2 values", lambda L, x: x.max(2).values), ("min dim 0 values", lambda L, x: x.min(0).values),
    ("max dim 1 indices", lambda L, x: x.max(1).indices.to(x.dtype) + 0 * x.sum()),
    ("argmax", lambda L, x: x.argmax(2).to(x.dtype)),
    ("var dim 1", lambda L, x: x.var(1)), ("std", lambda L, x: x.std()),
    ("norm", lambda L, x: x.norm()), ("softmax dim -1", lambda L, x: L.softmax(x, -1)),
    ("log_softmax dim 1", lambda L, x: L.log_softmax(x, 1)), ("logsumexp dim 2", lambda L, x: L.logsumexp(x, 2)),
    ("fused region then sum", lambda L, x: ((x * 2 + 1).tanh() * x).sum(-1)),
    ("fused region then mean", lambda L, x: (x.exp() - x).mean()),
    ("fused region then max", lambda L, x: (x * x - 1).amax(-1)),
]


@pytest.mark.parametrize("label,fn", REDUCTIONS, ids=[r[0] for r in REDUCTIONS])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_reductions_on_cuda(label, fn, dtype):
    x = np.random.default_rng(1).standard_normal((3, 5, 4)).astype(dtype)
    run_both(fn, [x], dtype, second_order=dtype == "float64")


def test_reductions_keep_first_index_of_ties_and_nan():
    x = np.array([[1.0, 3.0, 3.0, np.nan], [2.0, 2.0, 0.0, 1.0]], np.float32)
    gpu = numgrad.tensor(x, device="cuda")
    cpu = numgrad.tensor(x)
    for fn in (lambda t: t.max(1), lambda t: t.min(1)):
        c, g = fn(cpu), fn(gpu)
        np.testing.assert_array_equal(host(g.values), host(c.values))
        np.testing.assert_array_equal(host(g.indices), host(c.indices))


# ---- products ---------------------------------------------------------------------------------------
PRODUCTS = [
    ("mm", (4, 3), (3, 5), lambda L, a, b: a.mm(b)),
    ("mm transposed", (3, 4), (5, 3), lambda L, a, b: a.t().mm(b.t())),
    ("bmm", (2, 4, 3), (2, 3, 5), lambda L, a, b: a.bmm(b)),
    ("matmul broadcast", (2, 1, 4, 3), (3, 3, 2), lambda L, a, b: a @ b),
    ("mv", (4, 3), (3,), lambda L, a, b: a.mv(b)),
    ("dot", (5,), (5,), lambda L, a, b: a.dot(b)),
    ("vector @ matrix", (3,), (3, 4), lambda L, a, b: a @ b),
    ("linear", (5, 3), (4, 3), lambda L, a, b: L.nn.functional.linear(a, b, b[:, 0] * 2)),
    ("matmul then region", (4, 3), (3, 4), lambda L, a, b: ((a @ b).relu() * 2).sum()),
]


@pytest.mark.parametrize("label,sa,sb,fn", PRODUCTS, ids=[p[0] for p in PRODUCTS])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_products_on_cuda(label, sa, sb, fn, dtype):
    rng = np.random.default_rng(2)
    run_both(fn, [rng.standard_normal(sa).astype(dtype), rng.standard_normal(sb).astype(dtype)], dtype,
             second_order=dtype == "float64")


def test_integer_matmul_on_cuda_raises_torchs_error():
    a = numgrad.ones(2, 2, dtype=numgrad.int64, device="cuda")
    with pytest.raises(RuntimeError, match="addmm_cuda\" not implemented for 'Long'"):
        a @ a


# ---- fusion, views, in-place ----------------------------------------------------------------------
CHAINS = [
    ("chain", lambda L, x, y: ((x * 2 + y).tanh() * (x - y).sigmoid() + x.exp() * 0.1).sum()),
    ("gelu", lambda L, x, y: L.nn.functional.gelu(x * y, approximate="tanh").sum()),
    ("broadcast row and column", lambda L, x, y: (x * y[0] + y[:, 1:2]).sum()),
    ("views", lambda L, x, y: (x.t() * y.t()).reshape(-1)[1:].exp().sum()),
    ("saved square", lambda L, x, y: (((x * x) + 1) * (x * x)).sum()),
]


@pytest.mark.parametrize("label,fn", CHAINS, ids=[c[0] for c in CHAINS])
@pytest.mark.parametrize("fusion", [True, False])
def test_fused_chains_on_cuda(label, fn, fusion):
    rng = np.random.default_rng(3)
    x, y = rng.standard_normal((4, 6)), rng.standard_normal((4, 6))
    with numgrad.fusion(fusion):
        run_both(fn, [x, y], "float64", second_order=True)


def test_in_place_ops_and_views_on_cuda():
    results = []
    for device in ("cpu", "cuda"):
        x = numgrad.arange(12.0, device=device).reshape(3, 4).requires_grad_()
        y = x * 1.0
        y[1].mul_(2)
        y[:, 0] += 5
        y.t()[2].exp_()
        y.sum().backward()
        results.append((y, x.grad))
    same(results[0][0], results[1][0])
    same(results[0][1], results[1][1])

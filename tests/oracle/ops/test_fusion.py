"""Fusion: deferred elementwise regions and fused backward give torch's values, gradients, graphs and
errors, equal to the unfused path; regions stop at hooks, retain_grad, in-place writes and NumPy aliases."""
import gc
import warnings

import numpy as np
import pytest
import torch
from hypothesis import given, strategies as st

import numgrad
from numgrad import lazy
from helpers.op_compare import F32, F64, I64, check, check_error, hyp, rand

# the fused kernels are what these tests are about: small tensors go through fusion too (tests/helpers/fusion.py)
pytestmark = pytest.mark.usefixtures("fused_everywhere")


@pytest.fixture(params=[True, False], ids=["fused", "unfused"])
def fusion(request):
    with numgrad.fusion(request.param):
        yield request.param


def _gelu(lib, x):
    return 0.5 * x * (1 + lib.tanh(0.79788456 * (x + 0.044715 * x ** 3)))


REGIONS = {
    "chain": (lambda lib, x: (x * x + 1) * (x * x), [(5, 7)]),
    "gelu-tanh": (lambda lib, x: _gelu(lib, x), [(4, 9)]),
    "exp-sigmoid-div": (lambda lib, x, y: (x.exp() + y.sigmoid()) / (1 + y * y), [(3, 4), (3, 4)]),
    "row-and-column broadcast": (lambda lib, x, b, c: ((x + b) * c).tanh() - b, [(6, 5), (5,), (6, 1)]),
    "scalar tensor": (lambda lib, x, s: x * s + s.exp(), [(4, 3), ()]),
    "size-1 and 3-d": (lambda lib, x, y: (x * y).relu() ** 2, [(2, 1, 4), (3, 1)]),
    "pow constants": (lambda lib, x: x ** 3 - x ** 2 + x ** 0.5 + x ** -1 + x ** -2 + x ** 1.7, [(8,)]),
    "clamp and where": (lambda lib, x, y: lib.where(x > y, x.clamp(-0.5, 0.5), y * 2).abs(), [(5, 5), (5, 5)]),
    "maximum and minimum": (lambda lib, x, y: lib.maximum(x, y) * lib.minimum(x, y).sin(), [(7,), (7,)]),
}


def _inputs(shapes, seed=0):
    rng = np.random.default_rng(seed)
    return [np.asarray(np.abs(rng.standard_normal(s)) + 0.1, dtype=F32) for s in shapes]


@pytest.mark.parametrize("name", list(REGIONS))
def test_region_matches_torch(name, fusion):
    fn, shapes = REGIONS[name]
    check(fn, *_inputs(shapes), rtol=2e-6, atol=1e-6)


@pytest.mark.parametrize("name", list(REGIONS))
def test_fused_equals_unfused(name):
    fn, shapes = REGIONS[name]
    results = {}
    for enabled in (True, False):
        with numgrad.fusion(enabled):
            xs = [numgrad.tensor(a, requires_grad=True) for a in _inputs(shapes)]
            out = fn(numgrad, *xs)
            (out * 1.5).sum().backward()
            results[enabled] = [out.detach().numpy()] + [x.grad.numpy() for x in xs]
    for a, b in zip(results[True], results[False]):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-7)  # the same formulas, to float rounding


def test_fused_region_keeps_torch_graph():
    for enabled in (True, False):
        with numgrad.fusion(enabled):
            x = numgrad.tensor([1.0, 2.0], requires_grad=True)
            y = x * x
            z = (y + 1) * y
            assert z.grad_fn.name() == "MulBackward0"
            (add, _), (mul, _) = z.grad_fn.next_functions
            assert add.name() == "AddBackward0" and mul is y.grad_fn
            assert add.next_functions == ((y.grad_fn, 0), (None, 0))
            assert y.grad_fn.next_functions[0][0].name() == "torch::autograd::AccumulateGrad"
            assert z._version == 0 and repr(z) == "tensor([ 2., 20.], grad_fn=<MulBackward0>)"


def _saved_bytes(root):
    """Bytes of stored arrays that the graph below `root` keeps for backward."""
    seen, stack, arrays = set(), [root.grad_fn], {}
    while stack:
        node = stack.pop()
        if node is None or node in seen:
            continue
        seen.add(node)
        for saved in getattr(node, "_saved", {}).values():
            t = getattr(saved, "tensor", None)
            data = t._arr if t is not None else getattr(saved, "data", None)
            if isinstance(data, np.ndarray):
                arrays[id(lazy.root(data))] = data.nbytes
        stack.extend(n for n, _ in node.next_functions)
    return sum(arrays.values())


def test_fused_region_saves_only_its_inputs():
    x = numgrad.randn(1000, requires_grad=True)
    with numgrad.fusion(True):
        y = x * x
        z = (y + 1) * y
        assert _saved_bytes(z) == x._data.nbytes  # y and y + 1 are recomputed in backward, never stored
        z.sum().backward()
    with numgrad.fusion(False):
        y = x * x
        z = (y + 1) * y
        assert _saved_bytes(z) == 3 * x._data.nbytes


def test_sum_of_region_never_stores_it():
    x = numgrad.randn(4, 5, requires_grad=True)
    y = (x * 2).exp()
    s = y.sum()
    assert lazy.pending(y) is not None  # summed in the fused pass; y itself was never needed
    np.testing.assert_allclose(s.item(), np.exp(x.detach().numpy() * 2).sum(), rtol=1e-6)
    np.testing.assert_allclose(y.detach().numpy(), np.exp(x.detach().numpy() * 2), rtol=1e-6)


@pytest.mark.parametrize("dim, keepdim", [(None, False), (-1, False), (-1, True), ((1, 2), False), (1, True),
                                          (0, False)])
def test_reductions_of_regions(dim, keepdim, fusion):
    def fn(lib, x):
        y = (x * x + 1).log()
        return y.sum() if dim is None else y.sum(dim, keepdim=keepdim) + y.mean(dim, keepdim=keepdim)
    check(fn, rand(3, 4, 5))


@pytest.mark.parametrize("rows", [3, 64])  # fewer rows than threads (split inside rows) and more
def test_large_regions_run_on_threads(fusion, rows):
    n = 3 * (1 << 16) + 5 - (3 * (1 << 16) + 5) % rows  # above PARALLEL_MIN and BROADCAST_MIN: rows and columns
    check(lambda lib, x, b, c: ((x + b) * x - c).tanh().sum() + (x * 3 + c).sum(-1).sum() + ((x - c) * b).exp().mean(),
          rand(rows, n // rows), rand(n // rows), rand(rows, 1) * 0.1, rtol=2e-5)


def test_retain_grad_and_hooks_inside_region(fusion):
    seen = {}
    for lib in (torch, numgrad):
        x = lib.tensor([0.5, -1.0, 2.0], requires_grad=True)
        y = x * x
        y.retain_grad()
        w = y + 1
        w.register_hook(lambda g: g * 3)
        u = w.exp()
        u.grad_fn.register_hook(lambda gi, go: None)
        z = (u * y).sum()
        z.backward()
        seen[lib] = (x.grad.numpy(), y.grad.numpy())
    for a, b in zip(seen[torch], seen[numgrad]):
        np.testing.assert_allclose(b, a, rtol=1e-6)


def test_tensor_hook_can_replace_gradient_inside_region(fusion):
    def fn(lib, x):
        y = x.sin()
        y.register_hook(lambda g: g * 0 + 1)
        return (y * y).cos()
    check(fn, rand(6))


def test_inplace_write_to_input_after_pending_op(fusion):
    for lib in (torch, numgrad):
        a = lib.tensor([1.0, 2.0, 3.0])
        view = a[1:]
        y = a * 2
        z = y + a
        view.mul_(10)  # writes a's storage while y and z are pending
        a.add_(1)
        assert y.tolist() == [2.0, 4.0, 6.0] and z.tolist() == [3.0, 6.0, 9.0]


def test_inplace_on_pending_tensor(fusion):
    def fn(lib, x):
        y = x * 2
        y.add_(1)
        z = y + y.exp()  # nothing here saves y itself
        y.mul_(3)
        return z + y
    check(fn, rand(5))


def test_modified_saved_pending_output_raises_torch_error(fusion):
    def fn(lib, x):
        y = x.exp()
        y.add_(1)
        y.sum().backward()
    check_error(fn, rand(3))


def test_numpy_aliases_are_read_eagerly(fusion):
    for lib in (torch, numgrad):
        arr = np.array([1.0, 2.0], np.float32)
        a = lib.from_numpy(arr)
        b = lib.tensor([5.0, 6.0])
        alias = b.numpy()
        y, z = a * 2, b * 2
        arr[0], alias[0] = 100, 100  # NumPy writes behind the library's back
        assert y.tolist() == [2.0, 4.0] and z.tolist() == [10.0, 12.0]


def test_data_assignment_and_detach_share_storage(fusion):
    for lib in (torch, numgrad):
        a = lib.tensor([1.0, 2.0])
        d = a.detach()
        y = a + 1
        d.zero_()
        assert y.tolist() == [2.0, 3.0]


def test_mixed_dtypes_in_one_region(fusion):
    def fn(lib, x, y, k):
        z = x * y.to(lib.float64)  # float32 * float64 -> float64
        w = (z + k) / 3 + (k > 0)  # int64 and bool inputs promote inside the region
        return w.float() * x
    check(fn, rand(4, 3), rand(4, 3), np.arange(12, dtype=I64).reshape(4, 3) - 5, rtol=1e-6)


def test_integer_and_bool_regions(fusion):
    def fn(lib, k, j):
        return ((k * 3 + j) // 2 - k.abs()) * (k > j) + (k == j).logical_not()
    check(fn, np.arange(-6, 6, dtype=I64), np.arange(12, dtype=I64)[::-1].copy())


def test_double_backward_through_region(fusion):
    def fn(lib, x):
        y = _gelu(lib, x) * x.exp()
        (g,) = lib.autograd.grad(y.sum(), x, create_graph=True)
        (gg,) = lib.autograd.grad((g * g).sum(), x)
        return g.detach() + gg
    check(fn, rand(6, dtype=F64), rtol=1e-10, atol=1e-12)


def test_gradcheck_through_fused_region():
    x = numgrad.tensor(rand(2, 3, dtype=F64), requires_grad=True)
    b = numgrad.tensor(rand(3, dtype=F64, seed=1), requires_grad=True)
    assert numgrad.testing.gradcheck(lambda x, b: ((x + b) * x).sigmoid() * b, (x, b))


def test_long_chains_are_cut_into_regions(fusion):
    def fn(lib, x):
        for k in range(3 * lazy.MAX_REGION):
            x = x * 1.01 + 0.001 * k
        return x
    check(fn, rand(10), rtol=1e-5)


def test_observing_pending_values(fusion):
    x = numgrad.tensor([0.25, -2.0])
    y = (x * 4).abs()
    assert bool((y > 0).all()) and y.tolist() == [1.0, 8.0] and y[1].item() == 8.0
    assert repr(y + 1) == "tensor([2., 9.])" and (y * 2).shape == (2,) and len(y - 1) == 2
    assert (y / 2).numpy().tolist() == [0.5, 4.0]
    if (y.sum() > 5).item():
        assert y.max().item() == 8.0


def test_set_fusion_and_context_manager():
    assert numgrad.is_fusion_enabled()
    with numgrad.fusion(False):
        assert not numgrad.is_fusion_enabled()
        assert lazy.pending(numgrad.ones(2) * 2) is None
    assert numgrad.is_fusion_enabled() and lazy.pending(numgrad.ones(2) * 2) is not None
    previous = numgrad.set_fusion(False)
    assert previous is True and not numgrad.is_fusion_enabled()
    numgrad.set_fusion(True)


def test_pending_results_free_their_inputs_once_computed():
    x = numgrad.randn(100)
    y = x * 2
    z = y + 1
    z.tolist()  # computes z; y stays pending and z no longer refers to it
    ref = __import__("weakref").ref(y)
    del y
    gc.collect()
    assert ref() is None


def test_reader_entries_go_once_no_expression_waits():
    """lazy.READERS lists the pending expressions reading an array; an entry no expression waits on any
    more (all computed or freed) is dropped, so that Tensor._data stops paying before_access."""
    x = numgrad.randn(100)
    key = id(x._arr)
    y = x * 2
    assert key in lazy.READERS
    y.tolist()  # computed: it was x's only reader
    assert key not in lazy.READERS
    z = x * 3
    assert key in lazy.READERS
    del z
    gc.collect()
    numgrad.ones(2).add_(1)  # any access drops the entries of expressions freed since
    assert key not in lazy.READERS


def test_waiting_readers_survive_the_dropping_of_others():
    x = numgrad.tensor([1.0, 2.0, 3.0])
    dead = [x * k for k in range(3, 10)]  # readers that die pending, listed before the one that waits
    y = x * 2
    w = x + 1
    del dead
    gc.collect()
    w.tolist()  # computed: its entry's other readers are dead, y still waits
    numgrad.ones(2).add_(1)
    assert id(x._arr) in lazy.READERS
    x.mul_(0)  # computes y first
    assert y.tolist() == [2.0, 4.0, 6.0] and w.tolist() == [2.0, 3.0, 4.0] and x.tolist() == [0.0, 0.0, 0.0]


# ---- generated regions: random expression trees on broadcastable shapes -----------------------------
UNARY = ["exp", "tanh", "sigmoid", "sin", "relu", "abs", "neg", "square"]
BINARY = ["add", "sub", "mul", "div", "maximum"]


@st.composite
def _expressions(draw):
    shapes = draw(st.sampled_from([[(4, 5), (5,), (4, 1)], [(3, 2, 4), (2, 1), (4,)], [(6,), (), (1,)]]))
    ops = draw(st.lists(st.tuples(st.sampled_from(UNARY + BINARY), st.integers(0, 10), st.integers(0, 10)),
                        min_size=2, max_size=7))
    return shapes, ops


def _build(lib, leaves, ops):
    values = list(leaves)
    for op, i, j in ops:
        a, b = values[i % len(values)], values[j % len(values)]
        if op in UNARY:
            v = getattr(lib, op)(a * 0.5) if op != "square" else a * a
        elif op == "div":
            v = a / (b * b + 1)
        else:
            v = getattr(lib, op)(a, b)
        values.append(v)
    return values[-1] + values[-2] * 0.5


@hyp(12)
@given(_expressions())
def test_random_regions_match_torch(expr):
    shapes, ops = expr
    for enabled in (True, False):
        with numgrad.fusion(enabled), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            check(lambda lib, *xs: _build(lib, xs, ops), *_inputs(shapes, seed=len(ops)), rtol=1e-5, atol=1e-6)


# ---- kernels added with fusion: folds, softmax rows, in-place writes, the buffer pool ----------------
@pytest.mark.parametrize("n", [7, 1 << 15])  # below and above BROADCAST_MIN and PARALLEL_MIN splits
def test_max_min_folds_propagate_nan_and_inf(n, fusion):
    data = rand(4, n)
    data[1, 3] = np.nan
    data[2] = -np.inf
    data[3, 0] = np.inf

    def fn(lib, x):
        y = x * 2
        return lib.stack([y.amax(-1), y.amin(-1), (x + 1).amax(-1)]), y[0].max() + x[3].min()
    check(fn, data)


@pytest.mark.parametrize("log", [False, True])
@pytest.mark.parametrize("dtype", [F32, F64])
def test_softmax_rows_match_torch(log, dtype):
    data = rand(6, 300, dtype=dtype) * 4
    data[1, 7] = np.nan
    data[2] = -np.inf
    data[3, 5] = np.inf

    def fn(lib, x):
        y = lib.log_softmax(x, -1) if log else lib.softmax(x, -1)
        return y[4:] * 3, y[:4].detach()
    # float32: g - exp(y) * sum(g) cancels; both libraries round it at ~1e-6 of the terms
    check(fn, data, **(dict(rtol=1e-5, atol=1e-6) if dtype == F32 else dict(rtol=1e-12, atol=1e-14)))


def test_inplace_write_that_reads_its_target_elsewhere(fusion):
    for n in (4, 256):  # small regions copy broadcasts, large ones read rows of the target itself
        results = []
        for lib in (torch, numgrad):
            a = lib.tensor(rand(n, n))
            with lib.no_grad():
                a.mul_(a * 0.5 + 1)  # reads a at the element it writes: computed in place
                a.add_(a[1] * 2 - a[:, 2:3])  # reads other rows and columns of a: must not see new values
            results.append(a.numpy())
        np.testing.assert_allclose(results[1], results[0], rtol=1e-6)


def test_pool_reuses_only_arrays_nobody_holds():
    from numgrad.kernels.cpu import pool
    n = pool.MIN_BYTES // 4 + 1
    first = pool.empty(n, np.float32)
    second = pool.empty(n, np.float32)
    assert second is not first  # first is still held here
    keep = first.reshape(2, -1) if n % 2 == 0 else first[:]
    del first
    assert pool.empty(n, np.float32) is not keep.base  # a view keeps it alive
    del keep, second
    gc.collect()
    x = pool.empty(n, np.float32)
    address = x.ctypes.data
    del x
    assert pool.empty(n, np.float32).ctypes.data == address  # a free one comes back

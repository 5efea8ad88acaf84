"""Indexing, gather/scatter, masked ops, cat/stack/split, max/min(dim), the losses and embedding on device='cuda'
(Numba's simulator) against the same computation on the CPU: values, dtypes, shapes, grad_fn names, gradients,
the errors, and how many device-to-host reads each op makes."""
import numpy as np
import pytest

import numgrad
import numgrad.nn.functional as F
from numgrad.kernels.cuda import array

TOL = {numgrad.float32: dict(rtol=2e-5, atol=2e-6), numgrad.float64: dict(rtol=1e-11, atol=1e-12)}
RNG = np.random.default_rng(0)


def host(t):
    return t.detach().cpu().numpy()


def same(cpu, gpu):
    assert gpu.device == numgrad.device("cuda", 0), gpu.device
    assert cpu.dtype == gpu.dtype and cpu.shape == gpu.shape, (cpu.dtype, gpu.dtype, cpu.shape, gpu.shape)
    assert type(cpu.grad_fn).__name__ == type(gpu.grad_fn).__name__, (cpu.grad_fn, gpu.grad_fn)
    if cpu.dtype.is_floating_point:
        np.testing.assert_allclose(host(gpu), host(cpu), equal_nan=True, **TOL[cpu.dtype])
    else:
        np.testing.assert_array_equal(host(gpu), host(cpu))


def run_both(fn, *arrays, reads=0, backward=True):
    """fn(T, *tensors) on both devices, T(values) making an index/constant tensor on the same device: the
    results and the gradients of the float inputs agree; the CUDA run reads at most `reads` values back."""
    results = {}
    for device in ("cpu", "cuda"):
        def T(values, dtype=None, device=device):
            return numgrad.tensor(values, dtype=dtype, device=device)
        inputs = [numgrad.tensor(a, device=device, requires_grad=backward and a.dtype.kind == "f") for a in arrays]
        before = array.TRANSFERS["to_host"]
        out = fn(T, *inputs)
        outs = out if isinstance(out, tuple) else (out,)
        leaves = [t for t in inputs if t.requires_grad]
        if leaves and any(o.requires_grad for o in outs):
            total = sum((o * numgrad.arange(o.numel(), dtype=o.dtype, device=device).reshape(o.shape)).sum()
                        for o in outs if o.requires_grad)
            total.backward()
        if device == "cuda":
            assert array.TRANSFERS["to_host"] - before <= reads, array.TRANSFERS["to_host"] - before
        results[device] = (outs, [t.grad for t in leaves])
    (outs_c, grads_c), (outs_g, grads_g) = results["cpu"], results["cuda"]
    assert len(outs_c) == len(outs_g)
    for a, b in zip(outs_c, outs_g):
        same(a, b)
    for a, b in zip(grads_c, grads_g):
        assert (a is None) == (b is None)
        if a is not None:
            same(a, b)


def x(*shape, dtype=np.float32):
    return RNG.standard_normal(shape).astype(dtype)


# ---- getitem -------------------------------------------------------------------------------------------------
GETITEM = {
    "int_list": (lambda T, a: a[[1, 0, 1]], 0),
    "cuda_index": (lambda T, a: a[T([2, 0, -1, 2])], 1),
    "host_index": (lambda T, a: a[numgrad.tensor([2, 0, -1, 2])], 0),
    "second_dim": (lambda T, a: a[:, T([3, 0, 3])], 1),
    "two_adjacent": (lambda T, a: a[:, T([1, 0]), T([3, -1])], 2),
    "two_apart": (lambda T, a: a[T([1, 0]), 1:, T([[3], [1]])], 2),
    "none_ellipsis": (lambda T, a: a[None, ..., T([0, 2])], 1),
    "int_and_index": (lambda T, a: a[1, T([2, 2]), None], 1),
    "mask": (lambda T, a: a[a > 0.2], 1),
    "mask_2d_prefix": (lambda T, a: a[T([[True, False, True, True], [False, False, True, False], [True] * 4])], 1),
    "mask_one_dim": (lambda T, a: a[:, T([True, False, True, False])], 1),
    "mask_none_true": (lambda T, a: a[a > 100], 1),
    "python_bool": (lambda T, a: a[True, 0], 0),
    "empty_index": (lambda T, a: a[T([], dtype=numgrad.int64)], 1),
    "duplicates": (lambda T, a: a[T([[0, 0], [1, 0]])], 1),
    "basic_slice": (lambda T, a: a[1:, ::2], 0),
}


@pytest.mark.parametrize("name", list(GETITEM))
def test_getitem(name):
    fn, reads = GETITEM[name]
    run_both(fn, x(3, 4, 5), reads=reads)


@pytest.mark.parametrize("dtype", [np.int64, np.bool_, np.float64])
def test_getitem_other_dtypes(dtype):
    data = (np.arange(12).reshape(3, 4) % 3).astype(dtype)
    run_both(lambda T, a: a[T([2, 0]), 1:], data, reads=1)
    run_both(lambda T, a: a[T([[True, False, True, False]] * 3)], data, reads=1)


# ---- setitem / index_put ---------------------------------------------------------------------------------------
def _setter(index, value_fn):
    def fn(T, a, v):
        y = a * 1
        y[index(T)] = value_fn(v)
        return y
    return fn


SETITEM = {
    "slice_tensor": (_setter(lambda T: (slice(1, None), 0), lambda v: v[0, :3]), 0),
    "index_tensor": (_setter(lambda T: (T([2, 0]), 1), lambda v: v[1, :3] * 3), 1),
    "index_broadcast": (_setter(lambda T: T([0, 2]), lambda v: v[0, :3]), 1),
    "mask_scalar": (_setter(lambda T: T([True, False, True]), lambda v: 0.5), 1),
    "mask_tensor": (_setter(lambda T: (slice(None), T([True, True, False, True])), lambda v: v[:3, :3].t()), 1),
    "two_indices": (_setter(lambda T: (T([0, 2]), T([2, 1])), lambda v: v[1, 2]), 2),
}


@pytest.mark.parametrize("name", list(SETITEM))
def test_setitem(name):
    fn, reads = SETITEM[name]
    run_both(fn, x(3, 4, 3), x(4, 4), reads=reads)


EXPANDED_WRITES = {
    "masked_fill_": lambda T, v, w: v.masked_fill_(T([[True, False, False], [False, False, True]]), w),
    "mask": lambda T, v, w: v.__setitem__(T([[True, False, False], [False, False, True]]), w),
    "index": lambda T, v, w: v.__setitem__((slice(None), T([1])), w),
    "int": lambda T, v, w: v.__setitem__(1, w),
    "accumulate": lambda T, v, w: v.index_put_((T([0]), T([1])), w.reshape(1), accumulate=True),
}


@pytest.mark.parametrize("name", list(EXPANDED_WRITES))
@pytest.mark.filterwarnings("ignore:Use of .* on expanded tensors is deprecated")
def test_write_into_an_expanded_view(name):
    """Only the written elements change the memory the rows share (a whole-result copy let the last row win on
    the GPU), and the value's gradient adds up over the elements that share a location (as_strided backward)."""
    def fn(T, a, w):
        view = a.detach().clone().expand(2, 3)
        EXPANDED_WRITES[name](T, view, w[0])
        return view
    run_both(fn, x(1, 3), x(1), reads=2)


@pytest.mark.parametrize("accumulate", [False, True])
def test_index_put(accumulate):
    index = [2, 0, 2, 1] if accumulate else [2, 0, 1]
    run_both(lambda T, a, v: a.index_put((T(index),), v[:len(index)] * 2, accumulate=accumulate),
             x(3, 4), x(4, 4), reads=1)
    run_both(lambda T, a, v: a.index_put((T(index), T([1] * len(index))), v[0, :len(index)], accumulate=accumulate),
             x(3, 4), x(4, 4), reads=2)


@pytest.mark.parametrize("dtype", [np.int64, np.bool_])
def test_index_put_accumulate_other_dtypes(dtype):
    data = (np.arange(6) % 2).astype(dtype)
    values = np.array([1, 1, 0, 1]).astype(dtype)
    run_both(lambda T, a, v: a.index_put((T([3, 3, 0, 5]),), v, accumulate=True), data, values, reads=1)
    run_both(lambda T, a, v: a.index_put((T([3, 4, 0, 5]),), v), data, values, reads=1)


def test_setitem_in_place_without_grad_stays_on_gpu():
    a = numgrad.zeros(3, 4, dtype=numgrad.int64, device="cuda")
    a[numgrad.tensor([2, 0], device="cuda")] = numgrad.tensor([7, 8, 9, 10], device="cuda")
    a[a == 8] = -1
    expected = np.zeros((3, 4), np.int64)
    expected[[2, 0]] = [7, 8, 9, 10]
    expected[expected == 8] = -1
    np.testing.assert_array_equal(a.cpu().numpy(), expected)
    assert a.device == numgrad.device("cuda", 0) and a._version == 2


# ---- index_select, gather, scatter, masked_fill, take_along_dim ----------------------------------------------
INDEX = [[[0, 2, 1, 1]], [[2, 2, 2, 0]]]
PERMUTATION = [[[0, 2, 1, 1]], [[2, 1, 0, 0]]]  # no repeats along dim 1 for each column: scatter is defined
OPS = {
    "index_select": lambda T, a: a.index_select(2, T([3, 0, 3])),
    "index_select_dim0": lambda T, a: a.index_select(0, T([1])),
    "gather": lambda T, a: a.gather(1, T(INDEX)),
    "gather_last": lambda T, a: a.gather(-1, T([[[3, 0]], [[1, 1]]])),
    "take_along_dim": lambda T, a: a.take_along_dim(T([[[1]], [[2]]]), 1),
    "take_along_dim_flat": lambda T, a: numgrad.take_along_dim(a, T([5, 0, 23])),
    "scatter_src": lambda T, a: a.scatter(1, T(PERMUTATION), a[:, :1] * 2),
    "scatter_value": lambda T, a: a.scatter(1, T(PERMUTATION), 3.0),
    # src of the index's shape: with a larger src torch's backward refuses the gradient (see test_indexing.py)
    "scatter_add": lambda T, a: a.scatter_add(1, T(INDEX), a[:, 1:2] * 2),
    "scatter_add_": lambda T, a: (a * 1).scatter_add_(1, T(INDEX), a[:, 1:2] * 2),
    "masked_fill": lambda T, a: a.masked_fill(a > 0.3, 0.5),
    "masked_fill_broadcast": lambda T, a: a.masked_fill(T([True, False, False, True]), -2.0),
    "masked_fill_tensor": lambda T, a: a.masked_fill(a < 0, a[0, 0, 0] * 3),
    "masked_fill_": lambda T, a: (a * 1).masked_fill_(a > 0, 1.0),
    "narrow": lambda T, a: a.narrow(1, 1, 2),
    "select": lambda T, a: a.select(2, -1),
}


@pytest.mark.parametrize("name", list(OPS))
def test_ops(name):
    run_both(OPS[name], x(2, 3, 4), reads=1)


@pytest.mark.parametrize("dtype", [np.int64, np.bool_])
def test_gather_scatter_other_dtypes(dtype):
    data = (np.arange(24).reshape(2, 3, 4) % 5).astype(dtype)
    run_both(lambda T, a: a.gather(1, T(INDEX)), data, reads=1)
    run_both(lambda T, a: a.scatter(1, T(PERMUTATION), a[:, :1]), data, reads=1)
    run_both(lambda T, a: a.index_select(2, T([3, 0, 3])), data, reads=1)
    run_both(lambda T, a: a.masked_fill(T([True, False, False, True]), 1), data, reads=0)
    if dtype == np.int64:
        run_both(lambda T, a: a.scatter_add(1, T(INDEX), a[:, 1:]), data, reads=1)


@pytest.mark.parametrize("op", ["max", "min"])
@pytest.mark.parametrize("keepdim", [False, True])
def test_max_min_dim_backward(op, keepdim):
    data = x(3, 4, 2)
    data[1, :, 0] = 0.25  # ties: the first position gets the gradient
    for dim in (0, 1, -1):
        run_both(lambda T, a: getattr(a, op)(dim, keepdim=keepdim).values, data)
        run_both(lambda T, a: getattr(a, op)(dim, keepdim=keepdim).indices, data, backward=False)


# ---- second order: the gradient of indexing's gradient ---------------------------------------------------------
def test_double_backward_through_index_and_gather():
    results, data = [], x(3, 4)
    for device in ("cpu", "cuda"):
        a = numgrad.tensor(data, device=device, requires_grad=True)
        idx = numgrad.tensor([[0, 2], [1, 1], [3, 0]], device=device)
        y = (a[numgrad.tensor([2, 0, 2], device=device)] ** 2).sum() + (a.gather(1, idx) ** 3).sum()
        (g,) = numgrad.autograd.grad(y, a, create_graph=True)
        (gg,) = numgrad.autograd.grad((g * g).sum(), a)
        results.append((g, gg))
    for c, g in zip(*results):
        same(c, g)


# ---- losses and embedding --------------------------------------------------------------------------------------
LOSSES = {
    "ce_mean": (lambda T, a: F.cross_entropy(a, T([1, 0, 4, 2])), (4, 5)),
    "ce_sum_ignore": (lambda T, a: F.cross_entropy(a, T([1, -100, 4, 2]), reduction="sum"), (4, 5)),
    "ce_none": (lambda T, a: F.cross_entropy(a, T([1, -100, 4, 2]), reduction="none"), (4, 5)),
    "ce_weight": (lambda T, a: F.cross_entropy(a, T([1, 3, 4, 2]), weight=T([1., 2, 3, 4, 5]), ignore_index=3),
                  (4, 5)),
    "ce_smoothing": (lambda T, a: F.cross_entropy(a, T([1, 3, 4, 2]), label_smoothing=0.2, ignore_index=3), (4, 5)),
    "ce_smoothing_weight": (lambda T, a: F.cross_entropy(a, T([1, 3, 4, 2]), weight=T([1., 2, 3, 4, 5]),
                                                         label_smoothing=0.2, ignore_index=3), (4, 5)),
    "ce_1d": (lambda T, a: F.cross_entropy(a, T(3)), (5,)),
    "ce_2d_target": (lambda T, a: F.cross_entropy(a, T([[1, 0], [2, 2]])), (2, 3, 2)),
    "ce_2d_none": (lambda T, a: F.cross_entropy(a, T([[1, 0], [2, 2]]), reduction="none"), (2, 3, 2)),
    "ce_4d_none": (lambda T, a: F.cross_entropy(a, T([[[1], [0]], [[2], [2]]]), reduction="none"), (2, 3, 2, 1)),
    "ce_probabilities": (lambda T, a: F.cross_entropy(a, numgrad.softmax(a.detach() * 2, 1)), (4, 5)),
    "nll": (lambda T, a: F.nll_loss(F.log_softmax(a, 1), T([1, 0, 4, 2])), (4, 5)),
    "nll_all_ignored": (lambda T, a: F.nll_loss(a, T([-100, -100, -100, -100])), (4, 5)),
    "embedding": (lambda T, a: F.embedding(T([[1, 0], [3, 1]]), a), (4, 5)),
    "embedding_padding": (lambda T, a: F.embedding(T([[1, 0], [3, 1]]), a, padding_idx=1), (4, 5)),
    "embedding_freq": (lambda T, a: F.embedding(T([[1, 0], [3, 1]]), a, scale_grad_by_freq=True, padding_idx=-4),
                       (4, 5)),
}


@pytest.mark.parametrize("name", list(LOSSES))
@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # the simulator divides by zero in NumPy scalars (nan cases)
def test_losses_and_embedding(name):
    fn, shape = LOSSES[name]
    run_both(fn, x(*shape), reads=2)


def test_embedding_module_and_training_step_on_cuda():
    numgrad.manual_seed(0)
    emb = numgrad.nn.Embedding(6, 3)
    head = numgrad.nn.Linear(3, 4)
    cpu = [p.detach().clone() for p in (*emb.parameters(), *head.parameters())]
    emb.cuda()
    head.cuda()
    idx = numgrad.tensor([[0, 5, 2], [2, 2, 1]], device="cuda")
    loss = F.cross_entropy(head(emb(idx)).reshape(-1, 4), numgrad.tensor([0, 1, 3, 3, 2, 0], device="cuda"))
    loss.backward()
    ref = [p.requires_grad_() for p in cpu]
    ref_loss = F.cross_entropy(F.linear(F.embedding(idx.cpu(), ref[0]), ref[1], ref[2]).reshape(-1, 4),
                               numgrad.tensor([0, 1, 3, 3, 2, 0]))
    ref_loss.backward()
    same(ref_loss, loss)
    for r, p in zip(ref, (*emb.parameters(), *head.parameters())):
        same(r.grad, p.grad)


# ---- cat, stack, split, chunk, unbind --------------------------------------------------------------------------
JOIN = {
    "cat0": lambda T, a, b: numgrad.cat([a, b[:1]], 0),
    "cat1": lambda T, a, b: numgrad.cat([a, b[:, :2], a], 1),
    "cat_legacy_empty": lambda T, a, b: numgrad.cat([a, T([]), b], 0),
    "cat_mixed_dtype": lambda T, a, b: numgrad.cat([T([[1, 2, 3]]), a], 0),
    "stack0": lambda T, a, b: numgrad.stack([a, b * 2], 0),
    "stack_last": lambda T, a, b: numgrad.stack([a, b, a.t().t()], -1),
    "split": lambda T, a, b: numgrad.cat(list(a.split(1, 0))[::-1] + [b], 0),
    "split_unused": lambda T, a, b: a.split([1, 1], 0)[1] * 3,
    "chunk": lambda T, a, b: b.chunk(3, 1)[1],
    "unbind": lambda T, a, b: numgrad.stack(list(a.unbind(1))[:2], 0),
    "unbind_unused": lambda T, a, b: a.unbind(0)[1],
}


@pytest.mark.parametrize("name", list(JOIN))
def test_join(name):
    run_both(JOIN[name], x(2, 3), x(2, 3))


def test_cat_stack_other_dtypes():
    ints, bools = np.arange(6).reshape(2, 3), np.arange(6).reshape(2, 3) % 2 == 0
    run_both(lambda T, a, b: numgrad.cat([a, b], 1), ints, bools)
    run_both(lambda T, a, b: numgrad.stack([b, b], 0), ints, bools)


# ---- errors ----------------------------------------------------------------------------------------------------
ERRORS = {
    "getitem_bounds": lambda T, a: a[T([0, 7, -9])],
    "getitem_negative_bounds": lambda T, a: a[:, T([-5, 1])],
    "getitem_second_index": lambda T, a: a[T([1]), T([2, 4])],
    "mask_shape": lambda T, a: a[T([True, False])],
    "index_select_bounds": lambda T, a: a.index_select(1, T([-1])),
    "gather_bounds": lambda T, a: a.gather(1, T([[0, 4]])),
    "scatter_bounds": lambda T, a: a.scatter(0, T([[0, 3]]), 1.0),
    "index_put_bounds": lambda T, a: a.index_put((T([5]),), T(1.0)),
    "nll_target": lambda T, a: F.nll_loss(a, T([0, 4, 9])),
    "embedding_bounds": lambda T, a: F.embedding(T([5]), a),
    "index_put_dtype": lambda T, a: a.index_put_((T([0]),), T([1, 2, 3, 4])),
    "index_put_shape": lambda T, a: a.index_put((T([0, 1]),), a[:, :2]),
}


@pytest.mark.parametrize("name", list(ERRORS))
def test_errors_match_cpu(name):
    errors = []
    for device in ("cpu", "cuda"):
        a = numgrad.tensor(x(3, 4), device=device)
        with pytest.raises(Exception) as info:
            ERRORS[name](lambda v, dtype=None: numgrad.tensor(v, dtype=dtype, device=device), a)
        errors.append((type(info.value), str(info.value)))
    assert errors[0] == errors[1]


SAME_DEVICE = "Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!"


@pytest.mark.parametrize("fn", [
    lambda g, c: numgrad.cat([g, c]),
    lambda g, c: numgrad.stack([g, c]),
    lambda g, c: g.gather(0, c.long()),
    lambda g, c: g.scatter_add(0, c.long(), g),
    lambda g, c: g.index_select(0, c.long()),
    lambda g, c: F.cross_entropy(g.reshape(1, 3), c.long()[:1]),
    lambda g, c: F.embedding(c.long(), g.reshape(3, 1)),
])
def test_mixing_devices_raises(fn):
    g = numgrad.tensor([1.0, 2.0, 3.0], device="cuda")
    c = numgrad.tensor([0.0, 1.0, 2.0])
    with pytest.raises(RuntimeError) as info:
        fn(g, c)
    assert str(info.value) in (SAME_DEVICE, SAME_DEVICE.replace("cuda:0 and cpu", "cpu and cuda:0"))


def test_cuda_index_into_cpu_tensor_raises():
    with pytest.raises(IndexError, match=r"indices should be either on cpu or on the same device as the indexed "
                                         r"tensor \(cpu\)"):
        numgrad.zeros(3)[numgrad.tensor([0], device="cuda")]


def test_no_numpy_on_device_arrays():
    """Every op above ran its CUDA side without NumPy touching GPU memory (DeviceArray raises on any NumPy
    function it does not map to a kernel); the reads back are only the bounds checks and mask counts."""
    a = numgrad.tensor(x(12, 3), device="cuda", requires_grad=True)
    index = numgrad.tensor(list(range(11, -1, -2)), device="cuda")
    before = dict(array.TRANSFERS)
    y = a[index]
    z = numgrad.cat([y, a[a > 0].reshape(-1, 1).expand(-1, 3)[:4]], 0)
    z.sum().backward()
    assert array.TRANSFERS["to_host"] - before["to_host"] == 2  # one bounds check, one mask count
    assert array.TRANSFERS["to_device"] == before["to_device"]
    assert a.grad.device == numgrad.device("cuda", 0)

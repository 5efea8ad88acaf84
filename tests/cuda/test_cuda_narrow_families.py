"""uint8, int8, int16, int32, float16 and bfloat16 CUDA tensors in the families beside the op table, against the CPU:
conversions between every pair of dtypes (bfloat16's rounding and NaNs included), fills, strided copies, reductions,
matmul (half types; integers refused with torch's CUDA error), indexing (gathers, writes, accumulation) and
numgrad.compile's replay."""
import itertools

import ml_dtypes
import numpy as np
import pytest
from helpers.cuda_narrow import HALF, NARROW, close, host, np_dtype, pair, same_bits, same_error

import numgrad

ALL = ("bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64")
# values that round differently in each type: ties of bfloat16 and float16, overflow, signed zero, NaN, inf
FLOATS = np.array([0.0, -0.0, 1.0, -2.5, 1 + 2 ** -8, 1 + 3 * 2 ** -8, 1 + 2 ** -11, 1 + 3 * 2 ** -11, 1e-8, 3.4e38,
                   -7e4, 70000.0, 255.75, -128.5, np.inf, -np.inf, np.nan, -np.nan, 1 + 2 ** -8 + 2 ** -30],
                  np.float64)
INTS = np.array([0, 1, -1, 127, -128, 255, 256, 32767, -32768, 65535, 2 ** 31 - 1, -2 ** 31, 2 ** 24 + 1,
                 2 ** 25 + 2 ** 17 + 1, 7], np.int64)


def source(dtype):
    """Values of `dtype` worth converting (what fits of the special values; bool true and false)."""
    if dtype == "bool":
        return np.array([True, False, True])
    if dtype in ("float32", "float64", *HALF):
        with np.errstate(all="ignore"):
            return FLOATS.astype(np.float32 if dtype in HALF else dtype)
    return INTS.astype(dtype)


@pytest.mark.parametrize("src,dst", [(s, d) for s, d in itertools.product(ALL, ALL) if s in NARROW or d in NARROW])
def test_conversions_between_every_pair(src, dst):
    """.to(dtype) on the GPU gives the CPU's bits (float to narrow integer: values in range, which C++ defines)."""
    cpu, gpu = pair(source(src), src)
    if dst not in ("bool", "float16", "bfloat16", "float32", "float64") and src in ("float16", "bfloat16", "float32",
                                                                                     "float64"):
        finite = np.isfinite(host(cpu).astype(np.float64)) & (np.abs(host(cpu).astype(np.float64)) < 100)
        cpu, gpu = pair(host(cpu)[finite], src)
    same_bits(cpu.to(getattr(numgrad, dst)), gpu.to(getattr(numgrad, dst)))


def test_bfloat16_rounds_as_ml_dtypes():
    """float32 to bfloat16 on the GPU: to nearest even, overflow to inf, NaN as the quiet NaN of its sign."""
    values = np.array([1 + 2 ** -8, 1 + 3 * 2 ** -8, 3.4e38, -np.nan, np.nan, -0.0, 1e-40], np.float32)
    gpu = numgrad.tensor(values, device="cuda").to(numgrad.bfloat16)
    np.testing.assert_array_equal(host(gpu).view(np.uint16), values.astype(ml_dtypes.bfloat16).view(np.uint16))


@pytest.mark.parametrize("src", ("float16", "bfloat16", "float32", "float64"))
def test_floats_to_narrow_integers_go_through_int64(src):
    """torch's c10::convert: -2.5 is 254 as uint8 and 304.0 is 48 (a GPU's cvt would saturate)."""
    cpu, gpu = pair(np.array([-2.5, 304.0, -129.0, 7.5]), src)
    for dst, want in (("uint8", [254, 48, 127, 7]), ("int8", [-2, 48, 127, 7]), ("int16", [-2, 304, -129, 7])):
        gpu_result = gpu.to(getattr(numgrad, dst))
        same_bits(cpu.to(getattr(numgrad, dst)), gpu_result)
        assert host(gpu_result).tolist() == want


@pytest.mark.parametrize("dtype", NARROW)
def test_fills_and_creation(dtype):
    d = getattr(numgrad, dtype)
    for value in (0, 1, 3, -2, 2.75, 1 + 2 ** -8) if dtype in HALF else (0, 1, 3, -2, 100):
        if dtype == "uint8" and value < 0:
            continue
        same_bits(numgrad.full((2, 3), value, dtype=d), numgrad.full((2, 3), value, dtype=d, device="cuda"))
    same_bits(numgrad.ones(4, dtype=d), numgrad.ones(4, dtype=d, device="cuda"))
    same_bits(numgrad.zeros((2, 2), dtype=d), numgrad.zeros((2, 2), dtype=d, device="cuda"))
    cpu, gpu = pair(np.arange(12).reshape(3, 4), dtype)
    for t in (cpu, gpu):
        t[1] = 5  # a strided fill of a row
        t[:, 2] = 7  # a strided fill of a column
    same_bits(cpu, gpu)


@pytest.mark.parametrize("dtype", NARROW)
def test_strided_copies_cat_and_stack(dtype):
    cpu, gpu = pair(np.arange(24).reshape(2, 3, 4) - 5, dtype)
    for fn in (lambda t: t.transpose(0, 2).contiguous(), lambda t: t[:, ::2].clone(), lambda t: t.flip(1),
               lambda t: numgrad.cat([t, t[:, :1]], 1), lambda t: numgrad.stack([t[0], t[1]], 2),
               lambda t: t.expand(2, 2, 3, 4).reshape(4, 12), lambda t: t.permute(2, 0, 1).reshape(-1)):
        same_bits(fn(cpu), fn(gpu))


def _reduction_calls(dtype):
    calls = [lambda t: t.sum(), lambda t: t.sum(1), lambda t: t.sum(0, keepdim=True), lambda t: t.sum((0, 2)),
             lambda t: t.amax(2), lambda t: t.amin(0), lambda t: t.max(), lambda t: t.max(1)[0], lambda t: t.max(1)[1],
             lambda t: t.min(2)[1], lambda t: t.argmax(), lambda t: t.argmin(1), lambda t: t.prod(2),
             lambda t: t.sum(1, dtype=numgrad.float32), lambda t: t.sum(dtype=numgrad.int64)]
    if dtype in HALF:
        calls += [lambda t: t.mean(), lambda t: t.mean(1), lambda t: t.var(2), lambda t: t.std(),
                  lambda t: t.softmax(-1), lambda t: t.log_softmax(1), lambda t: t.logsumexp(2), lambda t: t.norm()]
    return calls


@pytest.mark.parametrize("dtype", NARROW)
def test_reductions(dtype):
    values = (np.arange(24).reshape(2, 3, 4) * 7 % 11 - 4) * (0.375 if dtype in HALF else 1)
    cpu, gpu = pair(values, dtype)
    for k, fn in enumerate(_reduction_calls(dtype)):
        result = same_error(lambda device, fn=fn: fn(cpu if device == "cpu" else gpu))
        if result is not None:
            (same_bits if k < 15 else close)(*result)


@pytest.mark.parametrize("dtype", HALF)
def test_half_reduction_gradients(dtype):
    values = np.linspace(-1.5, 2, 24).reshape(2, 3, 4)
    for fn in (lambda t: t.sum(1), lambda t: t.mean(), lambda t: t.amax(2), lambda t: (t * t).sum(2),
               lambda t: t.softmax(1)[:, 0]):
        cpu, gpu = pair(values, dtype, requires_grad=True)
        outs = [fn(cpu), fn(gpu)]
        for out in outs:
            out.backward(numgrad.ones_like(out))
        close(*outs)
        close(cpu.grad, gpu.grad)


@pytest.mark.parametrize("dtype", HALF)
def test_half_matmul(dtype):
    """Products of half types accumulate in float and round once (torch's cuBLAS; the CPU's BLAS path)."""
    rng = np.random.default_rng(1)
    a_cpu, a_gpu = pair(rng.integers(-4, 5, (2, 3, 5)) * 0.25, dtype, requires_grad=True)
    b_cpu, b_gpu = pair(rng.integers(-4, 5, (5, 4)) * 0.5, dtype, requires_grad=True)
    v_cpu, v_gpu = pair(rng.integers(-4, 5, 5) * 0.5, dtype)
    same_bits(a_cpu @ b_cpu, a_gpu @ b_gpu)  # small integers times powers of two: exact sums
    same_bits(a_cpu @ v_cpu, a_gpu @ v_gpu)
    same_bits(v_cpu @ b_cpu, v_gpu @ b_gpu)
    outs = [(a_cpu @ b_cpu).sum(), (a_gpu @ b_gpu).sum()]
    for out in outs:
        out.backward()
    same_bits(*outs)
    same_bits(a_cpu.grad, a_gpu.grad)
    same_bits(b_cpu.grad, b_gpu.grad)
    linear_cpu = numgrad.nn.Linear(5, 3).to(getattr(numgrad, dtype))
    linear_gpu = numgrad.nn.Linear(5, 3).to(getattr(numgrad, dtype)).cuda()
    linear_gpu.load_state_dict(linear_cpu.state_dict())
    close(linear_cpu(a_cpu.detach()), linear_gpu(a_gpu.detach()))


@pytest.mark.parametrize("dtype", ("uint8", "int8", "int16", "int32"))
def test_integer_matmul_is_refused_as_torch_cuda(dtype):
    _, a = pair(np.ones((2, 3)), dtype)
    word = {"uint8": "Byte", "int8": "Char", "int16": "Short", "int32": "Int"}[dtype]
    with pytest.raises(RuntimeError, match=f"\"addmm_cuda\" not implemented for '{word}'"):
        a @ a.T


@pytest.mark.parametrize("dtype", NARROW)
def test_indexing(dtype):
    values = np.arange(20).reshape(4, 5) * 3 % 7 - 2
    idx = np.array([2, 0, 3, 2])
    once = np.array([3, 0, 1])
    cpu, gpu = pair(values, dtype)
    for fn in (lambda t, i: t[i], lambda t, i: t[:, i[:3]], lambda t, i: t[t > 0],
               lambda t, i: t.gather(1, i[:2].reshape(2, 1).expand(2, 3)),
               lambda t, i: t.index_select(0, i), lambda t, i: t.masked_fill(t < 1, 2),
               lambda t, i: numgrad.take_along_dim(t, i[:2].reshape(1, 2).expand(4, 2), 1)):
        same_bits(fn(cpu, numgrad.tensor(idx)), fn(gpu, numgrad.tensor(idx, device="cuda")))
    v_cpu, v_gpu = pair(np.arange(15).reshape(3, 5) - 6, dtype)
    writes = [lambda t, i, v: t.index_put_((i,), v), lambda t, i, v: t.index_put_((i,), v, accumulate=True),
              lambda t, i, v: t.scatter_add_(0, i.reshape(3, 1).expand(3, 5), v),
              lambda t, i, v: t.scatter_(1, i.reshape(3, 1), v[:, :1])]
    for write in writes:  # distinct indices: one add per element, the CPU's rounding
        outs = [write(t.clone(), numgrad.tensor(once, device=t.device), v)
                for t, v in ((cpu, v_cpu), (gpu, v_gpu))]
        same_bits(*outs)
    rep = numgrad.tensor(np.array([1, 1, 1]))  # a repeated index: integers wrap alike, half types round once
    outs = [t.clone().index_put_((rep.to(t.device),), v, accumulate=True) for t, v in ((cpu, v_cpu), (gpu, v_gpu))]
    (same_bits if dtype not in HALF else close)(*outs)


@pytest.mark.parametrize("dtype", HALF)
def test_half_indexing_gradients(dtype):
    cpu, gpu = pair(np.linspace(-2, 2, 12).reshape(3, 4), dtype, requires_grad=True)
    for x in (cpu, gpu):
        i = numgrad.tensor([2, 0, 2], device=x.device)
        (x[i] * 3).sum().backward()
    same_bits(cpu.grad, gpu.grad)


@pytest.mark.parametrize("dtype", ("int16", "bfloat16"))
def test_compiled_step_replays_narrow_gpu_kernels(dtype):
    def step(x, w):
        return ((x * w + x).sum(1), x.amax(0))

    fn = numgrad.compile(step)
    for k in range(3):
        x_cpu, x_gpu = pair(np.arange(12).reshape(3, 4) * (k + 1) - 5, dtype)
        w_cpu, w_gpu = pair(np.array([1, -2, 3, 2]), dtype)
        for a, b in zip(step(x_cpu, w_cpu), fn(x_gpu, w_gpu)):
            same_bits(a, b)


def test_numpy_dtype_of_bfloat16_buffers_round_trips():
    """A bfloat16 CUDA tensor reads back as ml_dtypes' bfloat16 with the bits it was given."""
    values = np.array([1.5, -0.0, np.inf, 3.0e38], np_dtype("bfloat16"))
    back = numgrad.tensor(values).cuda().cpu().numpy()
    assert back.dtype == values.dtype
    np.testing.assert_array_equal(back.view(np.uint16), values.view(np.uint16))


# kernels that move or convert narrow values (compiled to PTX for them in tests/unit/kernels/test_cuda_ptx.py); every
# other kernel computes in the four kernel types
MOVERS = ("cuda_strided_copy", "cuda_fill", "cuda_index_")
KERNEL_TYPES = {np.dtype(t) for t in (np.bool_, np.int64, np.float32, np.float64)}


def test_only_copies_fills_and_index_kernels_see_narrow_arrays(monkeypatch):
    from numgrad.kernels.cuda import kernels as target
    from numgrad.kernels.cuda import reduce
    seen = []
    launch, run_reduction = target.launch, reduce.run_reduction

    def spy_launch(kernel, n, *args):
        seen.append((kernel.py_func.__module__, {np.dtype(a.dtype) for a in args if hasattr(a, "shape")}))
        return launch(kernel, n, *args)

    def spy_reduction(name, update, x, *rest, **kw):
        seen.append((f"reduction {name}", {np.dtype(x.dtype)}))
        return run_reduction(name, update, x, *rest, **kw)

    monkeypatch.setattr(target, "launch", spy_launch)
    monkeypatch.setattr(reduce, "run_reduction", spy_reduction)
    for dtype in NARROW:
        _, x = pair(np.arange(12).reshape(3, 4) - 3, dtype, requires_grad=dtype in HALF)
        y = (x * 3 + x).abs().sum(1) + x.amax(1) + x[numgrad.tensor([2, 0], device="cuda")].sum(0)[:3]
        if dtype in HALF:
            (y.sum() + (x @ x.T).sum()).backward()
        x.detach().to(numgrad.bfloat16).to(numgrad.float16)
    narrow = [(name, dtypes) for name, dtypes in seen if dtypes - KERNEL_TYPES]
    assert narrow and all(name.removeprefix("numgrad_k_").startswith(MOVERS) for name, _ in narrow), narrow
    assert {d.name for _, dtypes in narrow for d in dtypes} >= {"uint8", "int8", "int16", "int32", "float16", "uint16"}
    assert not any(np_dtype("bfloat16") in dtypes for _, dtypes in seen)  # its bits, as uint16, go instead

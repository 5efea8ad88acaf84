"""Every generated CUDA kernel compiles to PTX for compute capabilities 8.0 and 9.0 (numba.cuda.compile_ptx,
NVVM from numba-cuda[cu13]; no GPU or driver needed): each op-table entry forward and backward, fused
regions and folds, optimizer updates, strided copies and fills, reductions, matmul and the indexing kernels.
Runs in the normal session, without the simulator."""
import functools
import os

import pytest

from numgrad.ops.elementwise import _plan
from numgrad.spec.table import ELEMENTWISE

SIMULATOR = os.environ.get("NUMBA_ENABLE_CUDASIM", "0") not in ("", "0")
pytestmark = pytest.mark.skipif(SIMULATOR, reason="compile_ptx needs the real CUDA target, not the simulator")
CCS = [(8, 0), (9, 0)]
DTYPES = ["float32", "float64"]


@functools.lru_cache(maxsize=None)
def _types():
    from numba.cuda import types
    return types


def _arr(dtype_name):
    t = _types()
    return (t.boolean if dtype_name in ("bool", "bool_") else getattr(t, dtype_name))[::1]


def _scalar(dtype_name):
    t = _types()
    return t.boolean if dtype_name in ("bool", "bool_") else getattr(t, dtype_name)


def compile_both(kernel, signature):
    from numba import cuda
    for cc in CCS:
        ptx, _ = cuda.compile_ptx(kernel.py_func, signature, cc=cc)
        assert ".entry" in ptx and f".target sm_{cc[0]}{cc[1]}" in ptx


def _forward(name, dtype):
    from numgrad.kernels.cuda import kernels as cuda
    entry = ELEMENTWISE[name]
    is_array = tuple(nm not in entry.scalar_only for nm in entry.inputs)
    kernel = cuda.elementwise_kernel(entry.name, entry.inputs, is_array, entry.forward_outputs, dtype)
    args = [(_arr if arr else _scalar)("bool" if nm in entry.bool_inputs else dtype)
            for nm, arr in zip(entry.inputs, is_array)]
    out = "bool" if entry.kind == "compare" else dtype
    return kernel, (_types().int64, *args, _arr(out))


def _backward(name, dtype):
    from numgrad.kernels.cuda import kernels as cuda
    entry = ELEMENTWISE[name]
    pattern = tuple(-2 if nm in entry.scalar_only else i for i, nm in enumerate(entry.inputs))
    plan = _plan(name, pattern)
    if not plan.exprs or plan.not_implemented:  # no derivative: backward raises before any kernel
        return None
    used = plan.kernel_inputs[1:]
    is_array = (True, *(nm not in entry.scalar_only for nm in used))
    kernel = cuda.elementwise_kernel(plan.kernel_name, plan.kernel_inputs, is_array, plan.exprs, dtype)
    args = [_arr(dtype)] + [(_arr if nm not in entry.scalar_only else _scalar)("bool" if is_bool else dtype)
                            for nm, is_bool in zip(used, plan.bool_used)]
    return kernel, (_types().int64, *args, *[_arr(dtype)] * len(plan.exprs))


# logical ops read bool inputs whatever the dtype: one case compiles their kernel
OP_CASES = [(name, dtype) for name in sorted(ELEMENTWISE) for dtype in DTYPES
            if not (name.startswith("logical_") and dtype == "float64")]


@pytest.mark.parametrize("name,dtype", OP_CASES)
def test_op_kernels_compile_to_ptx(name, dtype):
    entry = ELEMENTWISE[name]
    compile_both(*_forward(name, dtype))
    backward = _backward(name, dtype) if entry.grads else None
    if backward is not None:
        compile_both(*backward)


# narrow integers compute in int64 kernels (half types in the float32 ones above): the entries that take integers
INT_CASES = sorted(name for name, entry in ELEMENTWISE.items() if entry.kind != "float" and "int64" not in entry.refuses
                   and not name.startswith("logical_"))


@pytest.mark.parametrize("name", INT_CASES)
def test_integer_op_kernels_compile_to_ptx(name):
    compile_both(*_forward(name, "int64"))


def _fused_program(dtype):
    """A region like the benchmark's chain: full and one-value leaves, a host scalar, several steps and
    two outputs (as a fused backward writes)."""
    from numgrad.kernels.ir import Program
    p = Program((10,))
    p.target = "cuda"
    x, y = p._add_leaf(None, dtype, "array"), p._add_leaf(None, dtype, "array")
    g = p._add_leaf(None, dtype, "array")
    s = p._add_leaf(2.0, dtype, "scalar")
    p.leaves[0].kind = p.leaves[1].kind = "full"
    p.leaves[2].kind = "one"
    mul = ELEMENTWISE["mul"].forward
    v0 = p.step(mul, (("a", x, dtype), ("b", s, dtype)), dtype, dtype)
    v1 = p.step(ELEMENTWISE["add"].forward, (("a", v0, dtype), ("b", y, dtype)), dtype, dtype)
    v2 = p.step(ELEMENTWISE["tanh"].forward, (("a", v1, dtype),), dtype, dtype)
    v3 = p.step(mul, (("a", v2, dtype), ("b", g, dtype)), dtype, dtype)
    v4 = p.step(ELEMENTWISE["sigmoid"].forward, (("a", v3, dtype),), dtype, dtype)
    return p, [v3, v4]


@pytest.mark.parametrize("dtype", DTYPES)
def test_fused_kernels_compile_to_ptx(dtype):
    from numgrad.kernels.cuda import kernels as cuda, fused as cuda_fused
    program, outputs = _fused_program(dtype)
    kernel = cuda.source_kernel("ptx_fused", cuda_fused.map_source(program, outputs))
    a = _arr(dtype)
    compile_both(kernel, (_types().int64, a, a, a, _scalar(dtype), a, a))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("kind", ["sum", "max", "min"])
def test_fused_fold_kernels_compile_to_ptx(kind, dtype):
    from numgrad.kernels import loader
    from numgrad.kernels.cuda import fused as cuda_fused
    program, outputs = _fused_program(dtype)
    acc = "float64" if kind == "sum" else dtype
    kernel = loader.load_module("ptx_fold", cuda_fused.fold_source(program, outputs[1], acc, kind)).fold
    a, i64 = _arr(dtype), _types().int64
    compile_both(kernel, (i64, i64, i64, a, a, a, _scalar(dtype), _arr(acc)))


BOOL_SCALARS = {"nesterov", "maximize", "first", "amsgrad", "centered"}


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", ["sgd", "adam", "rmsprop", "sgd_usual", "sgd_plain", "adam_usual",
                                  "adam_usual_high_weight"])
def test_optimizer_kernels_compile_to_ptx(name, dtype):
    from numgrad.kernels.cuda import kernels as cuda
    from numgrad.kernels.dispatch import optim
    from numgrad.kernels.cuda import optim as cuda_optim
    params = [p.strip() for p in optim.BODIES[name][0].split(",")]
    kernel = cuda.source_kernel(f"ptx_optim_{name}_{dtype}", cuda_optim.kernel_source(optim.BODIES[name], dtype))
    first_scalar = next(i for i, p in enumerate(params) if p.startswith("neg_"))
    t = _types()
    sig = [_arr(dtype)] * first_scalar + [t.boolean if p in BOOL_SCALARS else t.float64 for p in params[first_scalar:]]
    compile_both(kernel, (t.int64, *sig))


NARROW = ("uint8", "int8", "int16", "int32", "float16", "bfloat16")
COPY_PAIRS = [("float32", "float32"), ("float64", "float32"), ("bool", "float32"), ("int64", "float64"),
              ("float32", "bool"), ("int64", "int64")] + \
    [(src, dst) for dtype in NARROW for src, dst in ((dtype, dtype), ("int64", dtype), (dtype, "int64"),
                                                      ("float32", dtype), (dtype, "float32"), ("float64", dtype),
                                                      ("bool", dtype), (dtype, "bool"))] + \
    [(src, dst) for src in NARROW for dst in NARROW if src != dst and "float16" in (src, dst)]  # (half <-> integers)


def _numpy_dtype(name):
    import ml_dtypes
    import numpy as np
    return np.dtype(ml_dtypes.bfloat16) if name == "bfloat16" else np.dtype(name)


@pytest.mark.parametrize("src,dst", COPY_PAIRS)
def test_copy_kernels_compile_to_ptx(src, dst):
    """The strided copy for each pair the GPU's copies launch (a copy_plan of None is two of these, through
    float32)."""
    from numgrad.kernels.cuda import array
    i64 = _types().int64
    plan = array.copy_plan(_numpy_dtype(src), _numpy_dtype(dst))
    steps = [plan] if plan is not None else [array.copy_plan(_numpy_dtype(src), array.FLOAT32),
                                             array.copy_plan(array.FLOAT32, _numpy_dtype(dst))]
    for convert, src_view, dst_view in steps:
        compile_both(array._copy_kernel(convert), (i64, _arr(src_view.name), i64, _arr(dst_view.name), i64,
                                                   *[i64] * (3 * array.MAX_DIMS)))


@pytest.mark.parametrize("dtype", ("bool", "int64", "float32", "float64", *NARROW))
def test_fill_kernels_compile_to_ptx(dtype):
    from numgrad.kernels.cuda import array
    filled = array.bits_dtype(_numpy_dtype(dtype)).name
    compile_both(array._fill_kernel(filled), (_types().int64, _arr(filled), _scalar(filled)))


def test_bfloat16_conversions_round_on_the_bits():
    """The bfloat16 copies read and write integer bits: no cvt to or from bf16 (which would drop a NaN's sign)."""
    from numba import cuda
    from numgrad.kernels.cuda import array
    t = _types()
    i64 = t.int64
    for convert, src, dst in (("float32_bits_to_bfloat16({})", "uint32", "uint16"),
                              ("bfloat16_to_float32_bits({})", "uint16", "uint32")):
        kernel = array._copy_kernel(convert)
        ptx, _ = cuda.compile_ptx(kernel.py_func, (i64, _arr(src), i64, _arr(dst), i64, *[i64] * (3 * array.MAX_DIMS)),
                                  cc=(8, 0))
        assert "bf16" not in ptx and ".f32" not in ptx, convert


# ---- the hand-written kernel modules list their own samples: (kernel py_func, signature[, label]) ----
def _module_samples():
    if SIMULATOR:
        return []
    from numgrad.kernels.cuda import index as cuda_index, matmul as cuda_matmul, reduce as cuda_reduce
    samples = [(f, sig, f"{f.__module__.removeprefix('numgrad_k_').rsplit('_', 1)[0]}-{sig.args[0].dtype}")
               for f, sig in cuda_reduce.ptx_samples() + cuda_matmul.ptx_samples()]
    return samples + list(cuda_index.ptx_samples())


@pytest.mark.parametrize("sample", _module_samples(), ids=lambda sample: sample[2])
def test_reduction_matmul_and_index_kernels_compile_to_ptx(sample):
    func, signature, _ = sample
    from numba import cuda
    for cc in CCS:
        ptx, _ = cuda.compile_ptx(func, signature, cc=cc)
        assert ".entry" in ptx and f".target sm_{cc[0]}{cc[1]}" in ptx


def test_scatter_add_uses_atomics():
    from numba import cuda
    for func, signature, label in _module_samples():
        if label.startswith("scatter_add-"):
            ptx, _ = cuda.compile_ptx(func, signature, cc=(8, 0))
            assert "atom.global.add" in ptx or "red.global.add" in ptx, label

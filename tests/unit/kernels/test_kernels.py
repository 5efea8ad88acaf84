"""Kernel generation and the CPU target: typed constants, the on-disk source cache, NUMGRAD_DEBUG, threads."""
import os
import subprocess
import sys
import threading

import numpy as np
import pytest

import numgrad
from numgrad.kernels import lower as codegen
from numgrad.kernels.cpu import kernels as cpu
from numgrad.spec.table import REDUCTIONS


def test_constants_carry_the_kernel_dtype():
    # a bare 0.5 would promote a float32 kernel to float64
    assert codegen.lower("0.5 * a + b", ["a"], ["b"], "float32") == "np.float32(0.5) * a_i + b"
    assert codegen.lower("where(a > 0, g, 0)", ["a", "g"], [], "float64") == \
        "where(a_i > np.float64(0), g_i, np.float64(0))"


def _kernel_files(tmp_path, code, **env):
    env = dict(os.environ, NUMGRAD_CACHE_DIR=str(tmp_path), **env)
    outputs = [subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                              check=True).stdout.strip() for _ in range(2)]  # the second process finds the files
    return outputs, sorted(p.name for p in tmp_path.iterdir() if p.suffix == ".py")


@pytest.mark.parametrize("fusion", ["1", "0"])
def test_kernel_source_is_cached_on_disk_by_content(tmp_path, fusion):
    code = ("import numgrad as t; x = t.ones(3, requires_grad=True); y = x * x; (y + 1).sum().backward(); "
            "print(x.grad)")
    # (fusion at every size: three elements would otherwise take the small-tensor path, unfused)
    outputs, names = _kernel_files(tmp_path, code, NUMGRAD_FUSION=fusion, NUMGRAD_SMALL_MAX="0")
    assert outputs == ["tensor([2., 2., 2.])"] * 2
    if fusion == "1":  # forward: one pass summing x * x + 1; backward: Add and Mul in one kernel
        assert any(n.startswith("numgrad_k_fused_sum_") for n in names)
        assert any(n.startswith("numgrad_k_fused_map_") for n in names)
        assert not any(n.startswith("numgrad_k_mul_float32_") for n in names)
    else:
        assert any(n.startswith("numgrad_k_mul_float32_") for n in names)
        assert any(n.startswith("numgrad_k_mul_backward_float32_") for n in names)
        assert not any("fused" in n for n in names)
    assert (tmp_path / "__pycache__").is_dir()  # Numba's cache=True wrote next to the sources


def test_numgrad_debug_prints_every_generated_kernel(tmp_path):
    env = dict(os.environ, NUMGRAD_CACHE_DIR=str(tmp_path), NUMGRAD_DEBUG="1", NUMGRAD_SMALL_MAX="0")
    code = "import numgrad as t; x = t.ones(3, requires_grad=True); (x.exp() * 2).sum().backward()"
    err = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True).stderr
    assert "# ---- numgrad kernel numgrad_k_fused_sum_" in err and "exp_f32(l0)" in err
    assert "# ---- numgrad kernel numgrad_k_fused_map_" in err  # ExpBackward0 and MulBackward0 together
    code = "import numgrad as t; x = t.ones(3, requires_grad=True); t.set_fusion(False); (x.exp() * 2).sum().backward()"
    err = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True).stderr
    assert "# ---- numgrad kernel numgrad_k_exp_float32_" in err
    assert "exp_f32(a_i)" in err and "def kernel(start, stop, " in err and "nogil=True" in err
    assert "# ---- numgrad kernel numgrad_k_exp_backward_float32_" in err


def test_parallel_kernels_from_several_threads():
    """The threading layer must survive concurrent calls (the workqueue layer would abort)."""
    data = np.random.default_rng(0).standard_normal(cpu.PARALLEL_MIN * 2).astype(np.float32)
    x = numgrad.tensor(data)
    expected = float((data.astype(np.float64) * 2 + 1).sum())
    results, errors = [], []

    def work():
        try:
            for _ in range(10):
                results.append(float((x * 2 + 1).sum()))
        except Exception as e:  # surfaced below
            errors.append(e)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert len(results) == 40 and np.allclose(results, expected, rtol=1e-5)


def test_small_arrays_take_the_serial_kernel_and_large_ones_the_parallel_one():
    for n in (3, cpu.PARALLEL_MIN + 5):
        data = np.arange(n, dtype=np.float64)
        y = numgrad.tensor(data) * numgrad.tensor(data)
        np.testing.assert_array_equal(y.numpy(), data * data)


def test_every_target_defines_the_helper_vocabulary():
    from numgrad.kernels.cpu import scalar_math
    missing = [name for name in codegen.HELPERS if not hasattr(scalar_math, name)]
    assert not missing
    with open(os.path.join(os.path.dirname(codegen.__file__), "cuda", "cuda_math.py")) as f:
        cuda_source = f.read()  # read, not imported: numba.cuda need not be importable here
    from numgrad.kernels import scalar_rules
    shared = {f.__name__ for f in scalar_rules.SHARED}  # compiled by each target from one definition
    assert "scalar_rules.SHARED" in cuda_source
    assert not [name for name in codegen.HELPERS if f"def {name}(" not in cuda_source and name not in shared]


@pytest.mark.parametrize("name", ["sum", "prod"])
@pytest.mark.parametrize("shape, axes", [((7,), (0,)), ((3, 4), (0, 1)), ((32, 130), (0,)), ((5, 1030), (0,)),
                                         ((6, 9), (1,)), ((2, 3, 5), (1,)), ((2, 3, 5), (1, 2)), ((2, 3, 5), (0, 2))])
@pytest.mark.parametrize("layout", ["c", "transposed"])
def test_fold_at_once_gives_run_reductions_values_bitwise(name, shape, axes, layout):
    """The small path's fold calls the kernel run_reduction would call (or run_reduction itself, for a layout or
    axes it does not read in place): the same values to the bit, signed zeros and non-finite values included."""
    rng = np.random.default_rng(len(shape) * 10 + len(axes))
    x = rng.standard_normal(shape).astype(np.float32)
    x.flat[::7] = -0.0
    x.flat[3] = np.inf if name == "sum" else 1.0
    if layout == "transposed":
        x = np.ascontiguousarray(x.T).T
    update = REDUCTIONS[name].update
    expected, _ = cpu.run_reduction(name, update, x, axes, np.float64)
    got = cpu.fold_at_once(name, update, x, axes, np.float64)
    assert got.dtype == expected.dtype and got.shape == expected.shape
    np.testing.assert_array_equal(np.signbit(got), np.signbit(expected))
    np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("shape", [(1, 5), (32, 128), (32, 10), (7, 1), (64, 1030), (3, 4097)])
@pytest.mark.parametrize("dtype, out_dtype", [(np.float32, np.float32), (np.float64, np.float64),
                                              (np.float32, np.float64)])
def test_column_sums_give_the_folds_rounded_sums_bitwise(shape, dtype, out_dtype):
    """A small bias gradient's column sums in one kernel call: run_reduction's fold over dim 0 rounded by
    round_sums, to the bit (signed zeros, inf, NaN, float32 overflow to inf included)."""
    rng = np.random.default_rng(shape[0] * 1000 + shape[1])
    x = (rng.standard_normal(shape) * 1e37).astype(dtype) if dtype == np.float32 else \
        rng.standard_normal(shape).astype(dtype)
    x[:, 0] = -0.0
    if shape[1] > 2:
        x[0, 1], x[-1, 2] = np.inf, np.nan
    values, _ = cpu.run_reduction("sum", REDUCTIONS["sum"].update, x, (0,), np.float64)
    expected = np.empty(shape[1], out_dtype)
    cpu.round_sums(values, expected)
    got = np.empty(shape[1], out_dtype)
    cpu.column_sums(x, np.empty(shape[1], np.float64), got)
    np.testing.assert_array_equal(np.signbit(got), np.signbit(expected))
    np.testing.assert_array_equal(got, expected)

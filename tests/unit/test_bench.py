"""The benchmark's own code: relative errors, workloads that run the same on torch and numgrad, and the
command's variants each in a process of its own (speed itself is measured, never asserted)."""
import math

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import numgrad  # noqa: E402
from numgrad.bench import cpu  # noqa: E402
from numgrad.bench.workloads import WORKLOADS, make_inputs, observe, relative_error, run_step  # noqa: E402


def test_relative_error_is_scaled_by_the_reference():
    assert relative_error(np.float32(1e7 + 4), np.float32(1e7)) == pytest.approx(4e-7)
    assert relative_error(np.array([1e-3, 3e-3]), np.array([1e-3, 2e-3])) == pytest.approx(0.5)  # max |b|
    assert relative_error(np.zeros(3), np.zeros(3)) == 0.0


def test_relative_error_is_inf_for_a_wrong_shape_or_a_nan_torch_has_not():
    assert relative_error(np.zeros(3), np.zeros(4)) == math.inf
    assert relative_error(np.array([np.nan, 1.0]), np.array([1.0, 1.0])) == math.inf
    assert relative_error(np.array([np.nan, -np.inf]), np.array([np.nan, -np.inf])) == 0.0


@pytest.mark.parametrize("name", ["convnet step 32x28x28", "GPT block step 8x64"])
def test_a_training_step_matches_torch_from_the_same_code_and_weights(name):
    w = WORKLOADS[name]
    ours_in, theirs_in = make_inputs(numgrad, w), make_inputs(torch, w)
    ours, theirs = observe(run_step(numgrad, w, ours_in), ours_in), observe(run_step(torch, w, theirs_in), theirs_in)
    assert list(ours) == list(theirs)  # the same parameters, in the same order
    assert max(relative_error(ours[k], theirs[k]) for k in theirs if not k.startswith("param")) < 1e-4


def test_the_gemm_floor_runs_the_mlp_products():
    gemms = WORKLOADS["MLP step SGD-momentum"].floor(np.random.default_rng(0))
    gemms()  # eight matmuls into preallocated outputs: no shape error


def test_the_command_times_each_variant_in_its_own_process():
    result = cpu.run(quick=True, compile_torch=False, only=["chain 3"])
    (row,) = result["rows"]
    assert row["torch_s"] and row["numgrad_s"] and row["numgrad_unfused_s"]
    assert row["eager_vs_eager"] == pytest.approx(row["torch_s"] / row["numgrad_s"])
    assert set(row["errors"]) >= {"numgrad", "numgrad unfused"}
    assert row["max_rel_err"]["value"] < 1e-6 and row["max_rel_err"]["grad"] < 1e-6
    if getattr(numgrad, "compile", None) is None:
        assert row["numgrad_compile_s"] is None and "numgrad.compile" in row["n/a"]


def test_a_worker_holds_one_library(tmp_path):
    workers = cpu.Workers(["torch", "numgrad"], str(tmp_path))
    try:
        assert workers.failed == {}
        # each says which matrix-product library it runs (the GEMM-bound rows depend on it)
        assert workers.blas["torch"].startswith("torch ") and "CPU capability" in workers.blas["torch"]
        assert workers.blas["numgrad"].startswith("NumPy: ") and "blas" in workers.blas["numgrad"].lower()
        reply = workers.ask("numgrad", {"workload": "chain 3 (tiny)", "reps": 3})
        assert reply["median_s"] > 0 and reply["first_call_s"] is not None
        assert "error" in workers.ask("torch", {"workload": "no such workload", "reps": 1})
    finally:
        workers.close()


def test_native_blas_leaves_the_openblas_kernel_choice_to_the_cpu(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENBLAS_CORETYPE", "Haswell")
    for native in (False, True):
        workers = cpu.Workers(["numgrad"], str(tmp_path), native_blas=native)
        try:
            assert workers.failed == {}
            assert ("OPENBLAS_CORETYPE=Haswell" in workers.blas["numgrad"]) is not native
        finally:
            workers.close()


def test_call_counts_are_the_same_on_every_run_and_compiled_steps_make_fewer():
    from numgrad.bench import calls
    w = WORKLOADS["chain 3 (tiny)"]
    eager = calls.count(w)
    assert eager == calls.count(w) and eager[0] > 100  # forward, backward and their nodes: hundreds of calls
    compiled = calls.count(w, compiled=True)
    assert 0 < compiled[0] < eager[0] / 5 and compiled[1] < eager[1]


def test_the_calls_option_prints_every_workload_without_timing(capsys):
    cpu.main(["--calls", "--only", "tiny"])
    out = capsys.readouterr().out
    assert "chain 3 (tiny)" in out and "eager" in out and "MLP" not in out

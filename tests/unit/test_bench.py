"""The benchmark's own code: relative errors, workloads that run the same on torch and numgrad, and the
command's variants each in a process of its own (speed itself is measured, never asserted)."""
import importlib.util
import math
import os

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import numgrad  # noqa: E402
from numgrad.bench import cpu  # noqa: E402
from numgrad.bench.workloads import WORKLOADS, chain, make_inputs, observe, relative_error, run_step  # noqa: E402


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


@pytest.mark.parametrize("name", ["small MLP step SGD", "chain 10^4"])
def test_the_small_workloads_match_torch(name):
    w = WORKLOADS[name]
    ours_in, theirs_in = make_inputs(numgrad, w), make_inputs(torch, w)
    ours, theirs = observe(run_step(numgrad, w, ours_in), ours_in), observe(run_step(torch, w, theirs_in), theirs_in)
    assert list(ours) == list(theirs)
    assert max(relative_error(ours[k], theirs[k]) for k in theirs) < 1e-5


def test_a_missing_peer_is_left_out_with_a_note(monkeypatch):
    import importlib.util
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "mygrad" else real(name, *a))
    found, notes = cpu.peer_variants(peers=True)
    assert "mygrad" not in found and any("MyGrad is not installed" in note for note in notes)
    assert len(found) + len(notes) == 2 and all("numgrad[peers]" in note for note in notes)  # (HIPS autograd: either)
    assert cpu.peer_variants() == ([], [])  # none unless asked for (--peers, --jax)


def test_peer_columns_show_a_dash_where_the_peer_does_not_run(capsys):
    row = {"workload": "GPT block step 8x64", "peers_run": [], "max_rel_err": {},
           **{key: None for key in cpu.VARIANTS.values()}, "compile_vs_eager": None, "compile_vs_torch_compile": None,
           "eager_vs_eager": None}
    cpu._print_row.printed = False
    cpu._print_row(row, ["mygrad", "autograd"])
    header, line = capsys.readouterr().out.splitlines()[-2:]
    assert "MyGrad" in header and "HIPS autograd" in header and line.split()[-8:-6] == ["-", "-"]


def test_the_peers_are_an_optional_extra_outside_the_tests():
    import tomllib
    with open(os.path.join(os.path.dirname(numgrad.__file__), "..", "pyproject.toml"), "rb") as f:
        extras = tomllib.load(f)["project"]["optional-dependencies"]
    assert set(extras["peers"]) == {"mygrad", "autograd", "jax[cpu]"}
    assert not any(p.split("[")[0] in ("mygrad", "autograd", "jax") for p in extras["test"])


def test_a_peer_worker_times_its_workloads_and_matches_torch(tmp_path):
    """Where a peer is installed (not in CI): its worker runs the small MLP step on torch's inputs."""
    from numgrad.bench import peers
    peer = next((p for p in ("mygrad", "autograd") if peers.installed(p)), None)
    if peer is None:
        pytest.skip("no peer installed (pip install 'numgrad[peers]')")
    workers = cpu.Workers(["torch", peer], str(tmp_path))
    try:
        assert workers.failed == {}
        row = cpu.measure(workers, peers.SMALL_MLP, WORKLOADS[peers.SMALL_MLP], ["torch", peer], 1, 3, str(tmp_path))
        assert row[cpu.VARIANTS[peer]] > 0 and row["peers_run"] == [peer]
        assert max(row["errors"][peer].values()) < 1e-5
        assert cpu.measure(workers, "MLP step Adam", WORKLOADS["MLP step Adam"], ["torch", peer], 1, 1,
                           str(tmp_path))["peers_run"] == []
    finally:
        workers.close()


def test_calls_per_node_and_copies_are_counted():
    from numgrad.bench import calls
    w = WORKLOADS["chain 3 (tiny)"]
    assert calls.nodes(w) == 5  # mul, add, mul, sum and the leaf's AccumulateGrad
    counted = calls.count(w)
    assert counted == calls.count(w) and counted.copies >= 0

    def copying(lib, x):
        s = chain(lib, x)
        x.detach().numpy().copy()  # one ndarray.copy a step
        return s
    more = calls.count(WORKLOADS["chain 3 (tiny)"]._replace(fn=copying))
    assert more.copies == counted.copies + 1

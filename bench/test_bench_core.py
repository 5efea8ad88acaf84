"""pytest-benchmark: the fusion issue's workloads on torch eager, numgrad fused and numgrad unfused
(compare within a group: `pytest bench --benchmark-only -n 0 --benchmark-group-by=group`)."""
import pytest

from numgrad.bench.workloads import WORKLOADS, make_inputs, observe, run_step


@pytest.mark.parametrize("workload", list(WORKLOADS))
def test_workload(benchmark, variant, workload):
    lib, w = variant, WORKLOADS[workload]
    inputs = make_inputs(lib, w)
    benchmark.group = workload
    out = benchmark(lambda: run_step(lib, w, inputs))
    assert out.requires_grad and any(name.startswith("grad") for name in observe(out, inputs))

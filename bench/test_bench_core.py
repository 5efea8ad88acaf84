"""pytest-benchmark: the core issue's workloads, numgrad and torch eager side by side (compare by group)."""
import pytest

from numgrad.bench import WORKLOADS

from conftest import make_input


@pytest.mark.parametrize("workload", list(WORKLOADS))
def test_workload(benchmark, lib, workload):
    fn, shape, _, _ = WORKLOADS[workload]
    x = make_input(lib, shape)
    benchmark.group = workload

    def step():
        x.grad = None
        fn(lib, x)

    benchmark(step)
    assert x.grad is not None and tuple(x.grad.shape) == shape

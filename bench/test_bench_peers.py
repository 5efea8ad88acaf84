"""pytest-benchmark: the small workloads in the other Python autograds (MyGrad, HIPS autograd, jax.jit), as their
users write them (numgrad/bench/peers.py), beside torch's and numgrad's in bench/test_bench_core.py (compare by
group). A peer that is not installed is skipped with a note (they are optional: pip install 'numgrad[peers]')."""
import importlib.util

import numpy as np
import pytest

from numgrad.bench import peers, workloads


@pytest.mark.parametrize("workload", ["chain 3 (tiny)", "chain 10^4", peers.SMALL_MLP])
@pytest.mark.parametrize("peer", list(peers.PEERS))
def test_peer_workload(benchmark, peer, workload):
    if importlib.util.find_spec(peers.PEERS[peer]) is None:
        pytest.skip(f"{peer} is not installed (pip install 'numgrad[peers]')")
    step, observe = peers.build(peer, workloads, workload, np.random.default_rng(0))
    benchmark.group = workload
    seen = observe(benchmark(step))
    assert "value" in seen and any(name.startswith("grad") for name in seen)

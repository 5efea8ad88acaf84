"""Test-suite settings: Hypothesis without deadlines (the first call of a new kernel compiles it), and the
CUDA tests (tests/cuda) in a second pytest process under Numba's CUDA simulator, run beside this one."""
import os
import random
import subprocess
import sys
import tempfile
import zlib

import numpy as np
import pytest
from hypothesis import HealthCheck, settings

from helpers.fusion import fused_at_every_size

settings.register_profile("numgrad", deadline=None, suppress_health_check=[HealthCheck.too_slow],
                          derandomize=True)
settings.load_profile("numgrad")


@pytest.fixture(autouse=True)
def _seeded_generators(request):
    """Every test starts from generators seeded from its own id: torch's (module weights drawn at
    construction), numgrad's, NumPy's and Python's global ones. Without this a test saw whatever state the
    tests before it in the same xdist worker left, and pytest-xdist hands tests to workers differently on
    every run: a comparison within float32 rounding of a well-conditioned draw failed on a rare badly
    conditioned one (a LayerNorm over near-equal features turns 1 ulp into 1e-6), once in many runs."""
    seed = zlib.crc32(request.node.nodeid.encode())
    random.seed(seed)
    np.random.seed(seed)
    if "torch" in sys.modules:  # imported by the test modules that use it, before any test runs
        sys.modules["torch"].manual_seed(seed)
    if "numgrad" in sys.modules:
        sys.modules["numgrad"].manual_seed(seed)

# NUMBA_ENABLE_CUDASIM=1 must be set before numba is imported, so the simulator needs its own process.
# A run of the whole suite (`pytest` with no paths, or the tests folder) starts it at the beginning,
# so that it works on the second core meanwhile, and at the end reports its result and fails the run if
# it failed. `NUMBA_ENABLE_CUDASIM=1 pytest tests/cuda` runs those tests alone.
SIMULATOR = os.environ.get("NUMBA_ENABLE_CUDASIM", "0") not in ("", "0")
# NUMGRAD_CUDA_DEVICE=1 runs them on a real GPU instead, in this process.
REAL_GPU = bool(os.environ.get("NUMGRAD_CUDA_DEVICE"))
collect_ignore = [] if SIMULATOR or REAL_GPU else ["cuda"]
HERE = os.path.dirname(os.path.abspath(__file__))
_simulator_run = {}


def _whole_suite(config):
    """Whether this run collects the tests folder itself (its paths as pytest parsed them: testpaths when
    none are given; option values such as `-p no:randomly` are not paths)."""
    base = str(config.invocation_params.dir)
    return any(os.path.abspath(os.path.join(base, a.split("::")[0])) == HERE for a in config.args)


def pytest_sessionstart(session):
    if SIMULATOR or REAL_GPU or not _whole_suite(session.config) or os.environ.get("NUMGRAD_SKIP_CUDA_SIMULATOR") or \
            session.config.option.collectonly or \
            hasattr(session.config, "workerinput"):  # under pytest-xdist, only the controller starts it
        return
    log = tempfile.TemporaryFile(mode="w+")
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1")
    _simulator_run["proc"] = subprocess.Popen(
        [sys.executable, "-m", "pytest", "-q", "-n", "0", os.path.join(HERE, "cuda")],
        stdout=log, stderr=subprocess.STDOUT, env=env, cwd=os.path.dirname(HERE))
    _simulator_run["log"] = log


def pytest_sessionfinish(session, exitstatus):
    proc = _simulator_run.pop("proc", None)
    if proc is None:
        return
    rc = proc.wait()
    log = _simulator_run.pop("log")
    log.seek(0)
    output = log.read()
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    lines = output.strip().splitlines()
    shown = lines if rc != 0 else lines[-1:]
    if reporter is not None:
        reporter.write_sep("=", f"tests/cuda under Numba's CUDA simulator (separate process): exit code {rc}")
        reporter.write_line("\n".join(shown))
    if rc != 0:
        session.exitstatus = 1


@pytest.fixture
def fused_everywhere():
    """Fusion at every size (tests/helpers/fusion.py) for a test of the fused kernels: a module opts in with
    `pytestmark = pytest.mark.usefixtures("fused_everywhere")`."""
    with fused_at_every_size():
        yield

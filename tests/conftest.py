"""Test-suite settings: Hypothesis without deadlines (the first call of a new kernel compiles it)."""
from hypothesis import HealthCheck, settings

settings.register_profile("numgrad", deadline=None, suppress_health_check=[HealthCheck.too_slow],
                          derandomize=True)
settings.load_profile("numgrad")

# tests/cuda runs in its own process under Numba's CUDA simulator (NUMBA_ENABLE_CUDASIM=1 must be set
# before numba is imported): `.ci/run` and the README's test command start that second session.
import os  # noqa: E402

SIMULATOR = os.environ.get("NUMBA_ENABLE_CUDASIM", "0") not in ("", "0")
collect_ignore = [] if SIMULATOR else ["cuda"]

"""Test-suite settings: Hypothesis without deadlines (the first call of a new kernel compiles it)."""
from hypothesis import HealthCheck, settings

settings.register_profile("numgrad", deadline=None, suppress_health_check=[HealthCheck.too_slow],
                          derandomize=True)
settings.load_profile("numgrad")

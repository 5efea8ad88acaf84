"""torch.autograd's anomaly detection: detect_anomaly and set_detect_anomaly (the flag lives in _core.state)."""
from .._core.state import ANOMALY
from .._core.warn import warn


def is_anomaly_enabled():
    return ANOMALY.enabled


def is_anomaly_check_nan_enabled():
    return ANOMALY.check_nan


class detect_anomaly:
    """Within this context (or decorated function), backward names the forward call behind a failing node and
    raises on a NaN result; it slows every op down (each node keeps its traceback)."""

    def __init__(self, check_nan=True):
        self.check_nan = check_nan
        warn("Anomaly Detection has been enabled. This mode will increase the runtime and should only be "
             "enabled for debugging.")

    def __enter__(self):
        self.prev = (ANOMALY.enabled, ANOMALY.check_nan)
        ANOMALY.enabled, ANOMALY.check_nan = True, self.check_nan
        return self

    def __exit__(self, *exc):
        ANOMALY.enabled, ANOMALY.check_nan = self.prev
        return False

    def __call__(self, fn):
        def wrapper(*args, **kwargs):
            with self.__class__(self.check_nan):
                return fn(*args, **kwargs)
        return wrapper


class set_detect_anomaly:
    """Turns anomaly detection on or off at once; used as a context manager it restores the old setting."""

    def __init__(self, mode, check_nan=True):
        self.prev = (ANOMALY.enabled, ANOMALY.check_nan)
        ANOMALY.enabled, ANOMALY.check_nan = bool(mode), check_nan

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        ANOMALY.enabled, ANOMALY.check_nan = self.prev
        return False

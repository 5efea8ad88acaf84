"""Per-thread state, as torch keeps it: grad mode, inference mode, saved-tensor hooks, the fusion switch.

Every thread sees its own values; a new thread starts with torch's defaults (grad enabled, inference off,
no saved-tensor hooks) and with fusion as the process last set it: set_fusion's last choice, NUMGRAD_FUSION
before any. (Fused and unfused kernels may round in another order: a thread started after
set_fusion(False) that ran fused gave other last bits than the same program run alone.)"""
import os
import threading

FUSION_DEFAULT = os.environ.get("NUMGRAD_FUSION", "1") != "0"


def small_max():
    """NUMGRAD_SMALL_MAX: results of at most this many elements compute at once, unfused (lazy.SMALL_MAX)."""
    value = os.environ.get("NUMGRAD_SMALL_MAX", str(1 << 17))
    if not value.isdigit():
        raise ValueError(f"NUMGRAD_SMALL_MAX must be a whole number of elements, got {value!r}")
    return int(value)


NEW_THREADS = {"fusion": FUSION_DEFAULT}  # what a thread starts with (lazy.set_fusion changes it)


class _ThreadState(threading.local):
    def __init__(self):  # runs once in each thread that touches STATE
        self.grad_enabled = True
        self.inference = False
        self.fusion = NEW_THREADS["fusion"]
        self.saved_tensor_hooks = []  # (pack, unpack) pairs, innermost last
        self.in_place = False  # an in-place op is computing its result (it may record an integer one)
        self.recorder = None  # numgrad.compile's recorder while it traces a call in this thread (kernels/tape.py)
        self.backward_callbacks = None  # inside backward: what queue_callback asked to run once it ends
        self.riders = None  # inside backward (fusion on): pending leaf gradients a row kernel may compute (lazy.py)
        self.forward_ad = None  # the active forward-AD level (autograd/forward_ad.py): ops hand it their results
        self.autocast = None  # the lower-precision dtype of CPU autocast while it is on (ops/autocast.py)


STATE = _ThreadState()


class _AnomalyMode:
    """torch's anomaly mode, for the whole process as torch's is (not per thread): nodes keep the traceback of
    the forward call that made them, and backward checks each node's results for NaN."""

    __slots__ = ("enabled", "check_nan")

    def __init__(self):
        self.enabled, self.check_nan = False, True


ANOMALY = _AnomalyMode()

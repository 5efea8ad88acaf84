"""Per-thread state, as torch keeps it: grad mode, inference mode, saved-tensor hooks, the fusion switch.

Every thread sees its own values; a new thread starts with torch's defaults (grad enabled, inference off,
no saved-tensor hooks) and with fusion as NUMGRAD_FUSION sets it for the process."""
import os
import threading

FUSION_DEFAULT = os.environ.get("NUMGRAD_FUSION", "1") != "0"


class _ThreadState(threading.local):
    def __init__(self):  # runs once in each thread that touches STATE
        self.grad_enabled = True
        self.inference = False
        self.fusion = FUSION_DEFAULT
        self.saved_tensor_hooks = []  # (pack, unpack) pairs, innermost last
        self.in_place = False  # an in-place op is computing its result (it may record an integer one)
        self.recorder = None  # numgrad.compile's recorder while it traces a call in this thread (kernels/tape.py)
        self.riders = None  # inside backward (fusion on): pending leaf gradients a row kernel may compute (lazy.py)
        self.autocast = None  # the lower-precision dtype of CPU autocast while it is on (ops/autocast.py)


STATE = _ThreadState()

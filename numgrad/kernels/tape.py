"""Where numgrad.compile listens: array work done through these hooks while a call is traced becomes one
replayable entry of its tape (numgrad/compile/recorder.py holds the recorder; the layers below only call it).

The contract of a recorded function: it writes only into the arrays it returns or is handed, and reads
only its arguments, so that a replay can run it again on the same arrays (the tape keeps every buffer it
made alive and reuses it). Work outside these hooks that makes a tensor's values, or values read back into
Python, breaks the graph instead (the call runs eager): never a stale number."""
from .._core.state import STATE

active = 0  # recorders tracing in any thread: the hot paths look at STATE only when one is
profiler = None  # numgrad.profiler's recorder while a profile runs: it times each call below


def recorder():
    """The recorder tracing in this thread, or None."""
    return STATE.recorder if active else None


def call(fn, *args, **kwargs):
    """fn(*args, **kwargs); recorded when a trace is on (its results are the tape's buffers)."""
    rec = STATE.recorder if active else None
    if rec is None or rec.depth:
        return fn(*args, **kwargs) if profiler is None else profiler.kernel(fn, args, kwargs)
    return rec.call(fn, args, kwargs, None)


def call_into(out_kw, fn, *args, **kwargs):
    """As call, for a function that allocates its results unless handed them as keyword `out_kw`: a replay
    hands it the buffers the trace got, so it writes there instead of allocating."""
    rec = STATE.recorder if active else None
    if rec is None or rec.depth:
        return fn(*args, **kwargs) if profiler is None else profiler.kernel(fn, args, kwargs)
    return rec.call(fn, args, kwargs, out_kw)


def constant(arr):
    """`arr` holds values written in the traced code (numgrad.tensor([1, 2])): a replay restores them."""
    rec = STATE.recorder if active else None
    if rec is not None and not rec.depth and not rec.broken:
        rec.constant(arr)


def graph_break(reason):
    """Something a replay could not repeat (a value read into Python, a hook, NumPy's memory): the traced
    call stops recording and runs eager (with fullgraph=True, raises)."""
    rec = STATE.recorder if active else None
    if rec is not None:
        rec.graph_break(reason)

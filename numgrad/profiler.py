"""numgrad.profiler: where a step's time goes, as torch.profiler shows it. Inside `with profile() as prof:`
each call of a public op (numgrad's functions and Tensor methods), each kernel run (fused regions named by
the ops they merged), each Numba compilation (apart from the runs) and each backward node is an event;
prof.key_averages().table(...) sums them by name, prof.export_chrome_trace(path) writes them for
chrome://tracing or Perfetto. The profiled thread runs slower meanwhile (a Python call hook)."""
import enum
import json
import os
import sys
import threading
import time

from numba.core import event as numba_event

from .kernels import tape
from .tensor import Tensor

__all__ = ["ProfilerActivity", "profile", "record_function"]

_PACKAGE = os.path.dirname(os.path.abspath(__file__)) + os.sep
# where public ops live: calls of their public functions (and Tensor's operators) are op events
_OP_FILES = tuple(os.path.join(_PACKAGE, p) for p in ("ops" + os.sep, "tensor.py", "tensor_base.py",
                                                        "nn" + os.sep + "functional.py", "nn" + os.sep + "_"))


class ProfilerActivity(enum.Enum):
    CPU = 0
    CUDA = 1


class FunctionEvent:
    """One timed interval: name, kind (op, kernel, compile, backward, user), start and end in microseconds."""

    __slots__ = ("name", "kind", "start_us", "end_us", "thread", "children_us")

    def __init__(self, name, kind, start_us, thread):
        self.name, self.kind, self.start_us, self.thread = name, kind, start_us, thread
        self.end_us, self.children_us = start_us, 0.0

    @property
    def key(self):
        return self.name

    @property
    def cpu_time_total(self):
        return self.end_us - self.start_us

    @property
    def self_cpu_time_total(self):
        return self.cpu_time_total - self.children_us

    def __repr__(self):
        return f"<FunctionEvent {self.name} ({self.kind}) {self.cpu_time_total:.3f} us>"


class FunctionEventAvg:
    """Events of one name added up (torch's FunctionEventAvg): times in microseconds."""

    def __init__(self, key, kind):
        self.key, self.kind, self.count, self.cpu_time_total, self.self_cpu_time_total = key, kind, 0, 0.0, 0.0

    def add(self, e):
        self.count += 1
        self.cpu_time_total += e.cpu_time_total
        self.self_cpu_time_total += e.self_cpu_time_total

    @property
    def cpu_time(self):
        return self.cpu_time_total / max(self.count, 1)

    @property
    def self_cpu_time(self):
        return self.self_cpu_time_total / max(self.count, 1)

    def __repr__(self):
        return f"<FunctionEventAvg key={self.key} count={self.count} cpu_time_total={self.cpu_time_total:.3f}us>"


_SORT_KEYS = {"cpu_time_total": "cpu_time_total", "self_cpu_time_total": "self_cpu_time_total", "count": "count",
              "cpu_time": "cpu_time", "self_cpu_time": "self_cpu_time"}


def _time(us):
    return f"{us / 1e3:.3f}ms" if us >= 1000 else f"{us:.3f}us"


class EventList(list):
    """A list of events (or of their averages) that prints as torch's table."""

    def key_averages(self):
        groups = {}
        for e in self:
            groups.setdefault(e.name, FunctionEventAvg(e.name, e.kind)).add(e)
        return EventList(groups.values())

    def table(self, sort_by=None, row_limit=100, max_name_column_width=55, header=None,
              top_level_events_only=False):
        rows = self if not self or isinstance(self[0], FunctionEventAvg) else self.key_averages()
        if sort_by is not None:
            if sort_by not in _SORT_KEYS:
                raise AttributeError(f"'FunctionEventAvg' object has no attribute '{sort_by}'")
            rows = sorted(rows, key=lambda r: getattr(r, _SORT_KEYS[sort_by]), reverse=True)
        rows = list(rows)[:row_limit] if row_limit and row_limit > 0 else list(rows)
        total = sum(r.self_cpu_time_total for r in self) if self and isinstance(self[0], FunctionEventAvg) else \
            sum(e.self_cpu_time_total for e in self)
        width = min(max([len(r.key) for r in rows] + [4]) + 2, max_name_column_width)
        cols = ("Self CPU %", "Self CPU", "CPU total %", "CPU total", "CPU time avg", "# of Calls")
        rule = "-" * width + "  " + "  ".join("-" * 12 for _ in cols) + "  "
        lines = [rule, f"{'Name':>{width}}  " + "  ".join(f"{c:>12}" for c in cols) + "  ", rule]
        if header:
            lines.insert(0, header)
        for r in rows:
            share = (lambda t: f"{100 * t / total:.2f}%") if total else (lambda t: "0.00%")
            name = r.key if len(r.key) <= width else r.key[:width - 3] + "..."
            cells = (share(r.self_cpu_time_total), _time(r.self_cpu_time_total), share(r.cpu_time_total),
                     _time(r.cpu_time_total), _time(r.cpu_time), str(r.count))
            lines.append(f"{name:>{width}}  " + "  ".join(f"{c:>12}" for c in cells) + "  ")
        lines += [rule, f"Self CPU time total: {_time(total)}", ""]
        return "\n".join(lines)

    def export_chrome_trace(self, path):
        events = [{"name": e.name, "ph": "X", "cat": e.kind, "ts": e.start_us, "dur": e.cpu_time_total,
                   "pid": os.getpid(), "tid": e.thread} for e in self]
        with open(path, "w") as f:
            json.dump({"traceEvents": events, "displayTimeUnit": "ms"}, f)


class _Recorder:
    """The events of one profile: a stack of open events per thread, closed ones in `done`."""

    def __init__(self):
        self.t0, self.done, self.open, self.lock = time.perf_counter(), [], {}, threading.Lock()

    def now(self):
        return (time.perf_counter() - self.t0) * 1e6

    def begin(self, name, kind):
        tid = threading.get_ident()
        e = FunctionEvent(name, kind, self.now(), tid)
        self.open.setdefault(tid, []).append(e)
        return e

    def end(self, e):
        e.end_us = self.now()
        stack = self.open.get(e.thread)
        while stack:  # a frame left by an exception closes with what it opened
            top = stack.pop()
            if top is e:
                break
        if stack:
            stack[-1].children_us += e.cpu_time_total
        with self.lock:
            self.done.append(e)

    def timed(self, name, kind, fn, *args, **kwargs):
        e = self.begin(name, kind)
        try:
            return fn(*args, **kwargs)
        finally:
            self.end(e)

    # ---- the kernel layer's hook (kernels/tape.py) ---------------------------------------------------------
    def kernel(self, fn, args, kwargs):
        return self.timed(_kernel_name(fn, args), "kernel", fn, *args, **kwargs)


def _kernel_name(fn, args):
    name = getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None) or repr(fn)
    ops = getattr(args[0], "ops", None) if args else None
    if ops:  # a fused program: the ops it merged
        return f"{name} [{', '.join(ops[:8])}{', ...' if len(ops) > 8 else ''}]"
    if name.endswith("_elementwise") and args and isinstance(args[0], str):  # run_(small_)elementwise
        return f"{name} [{args[0]}]"
    return name


class _CompileListener(numba_event.Listener):
    """Numba's compilations, each an event of its own (its time is not the kernel's run time)."""

    def __init__(self, recorder):
        self.recorder, self.open = recorder, {}

    def on_start(self, ev):
        fn = ev.data.get("dispatcher") if isinstance(ev.data, dict) else None
        name = getattr(getattr(fn, "py_func", None), "__name__", "kernel")
        self.open.setdefault(threading.get_ident(), []).append(self.recorder.begin(f"numba compile: {name}", "compile"))

    def on_end(self, ev):
        stack = self.open.get(threading.get_ident())
        if stack:
            self.recorder.end(stack.pop())


class profile:
    """torch.profiler.profile's surface: a context manager (or start()/stop()) recording the events of the
    thread that entered it; events(), key_averages(), table() and export_chrome_trace() once it stops."""

    def __init__(self, activities=None, schedule=None, on_trace_ready=None, record_shapes=False,
                 profile_memory=False, with_stack=False, with_flops=False, with_modules=False,
                 experimental_config=None, use_cuda=None):
        self.on_trace_ready, self._recorder, self._events = on_trace_ready, None, EventList()

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        self.stop()
        return False

    def start(self):
        if tape.profiler is not None:
            raise RuntimeError("Profiler is already enabled on this thread")
        self._recorder = rec = _Recorder()
        self._listener = _CompileListener(rec)
        numba_event.register("numba:compile", self._listener)
        self._previous_hook = sys.getprofile()
        self._open_ops = {}  # id(frame) -> its op's open event
        sys.setprofile(self._op_hook)
        tape.profiler = rec

    def stop(self):
        if self._recorder is None:
            return
        sys.setprofile(self._previous_hook)
        tape.profiler = None
        numba_event.unregister("numba:compile", self._listener)
        self._events = EventList(sorted(self._recorder.done, key=lambda e: e.start_us))
        self._recorder = None
        if self.on_trace_ready is not None:
            self.on_trace_ready(self)

    def step(self):
        """Marks a step boundary (schedules are not implemented: every step is recorded)."""

    def _op_hook(self, frame, what, arg):
        """Opens an event at the call of a public op from outside the op layer, closes it at its return."""
        if what == "call":
            code = frame.f_code
            if code.co_filename.startswith(_OP_FILES) and _public(code.co_name) and code.co_name not in _PROPERTIES:
                caller = frame.f_back
                if caller is None or not caller.f_code.co_filename.startswith(_OP_FILES):
                    self._open_ops[id(frame)] = self._recorder.begin(_op_name(_function_name(frame)), "op")
        elif what == "return":
            e = self._open_ops.pop(id(frame), None) if self._open_ops else None
            if e is not None:
                self._recorder.end(e)

    def events(self):
        return self._events

    def key_averages(self, group_by_input_shape=False, group_by_stack_n=0):
        return self._events.key_averages()

    def export_chrome_trace(self, path):
        self._events.export_chrome_trace(path)


# functions standing for the op named by their `name` argument (ops/elementwise.apply)
_WRAPPERS = ("apply",)


def _function_name(frame):
    """The op a call stands for: the function's own name, or for a function made by a factory (the op
    table's functions, the argument checks, ones/zeros and their *_like forms) the name it was made for."""
    code = frame.f_code
    if code.co_name in _WRAPPERS or "<locals>" in code.co_qualname:
        found = frame.f_locals
        if isinstance(found.get("name"), str):
            return found["name"]
        if callable(found.get("factory")):
            return f"{found['factory'].__name__}_like"
        if callable(found.get("fn")):
            return found["fn"].__name__
    return code.co_name
# Tensor's properties (.grad, .shape, ...) read no kernel and are no op
_PROPERTIES = frozenset(k for cls in Tensor.__mro__ for k, v in vars(cls).items() if isinstance(v, property))


def _public(name):
    return not name.startswith("_") or (name.startswith("__") and name.endswith("__") and name != "__init__")


_OPERATORS = {"add": "add", "sub": "sub", "mul": "mul", "truediv": "div", "floordiv": "floor_divide",
              "matmul": "matmul", "pow": "pow", "mod": "remainder", "and": "bitwise_and", "or": "bitwise_or",
              "xor": "bitwise_xor", "lshift": "__lshift__", "rshift": "__rshift__"}


def _op_name(name):
    """torch's name for the op a Python function stands for: Tensor.__mul__ and __rmul__ are aten::mul,
    __imul__ aten::mul_, numgrad.relu aten::relu."""
    if name.startswith("__") and name.endswith("__"):
        bare = name[2:-2]
        if bare in _OPERATORS:
            return f"aten::{_OPERATORS[bare]}"
        if bare[:1] == "r" and bare[1:] in _OPERATORS:
            return f"aten::{_OPERATORS[bare[1:]]}"
        if bare[:1] == "i" and bare[1:] in _OPERATORS:
            return f"aten::{_OPERATORS[bare[1:]]}_"
        return f"aten::{name}"
    return f"aten::{name}"


class record_function:
    """A named range of user code, as torch.profiler.record_function; nothing is recorded outside a profile."""

    def __init__(self, name, args=None):
        self.name, self.event = name, None

    def __enter__(self):
        rec = tape.profiler
        if rec is not None:
            self.event = rec.begin(self.name, "user")
        return self

    def __exit__(self, *exc):
        rec = tape.profiler
        if rec is not None and self.event is not None:
            rec.end(self.event)
        return False

    def __call__(self, fn):
        def wrapper(*args, **kwargs):
            with record_function(self.name):
                return fn(*args, **kwargs)
        return wrapper

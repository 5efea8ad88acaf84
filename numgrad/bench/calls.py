"""Python work per step, counted: the function calls (Python and C) of one numgrad step, eager and compiled,
through sys.setprofile, per step and per node of the step's autograd graph, and the array copies a step makes.
Times on a shared 2-core machine move by 10-40% from run to run; these counts do not, so a change to the per-op
glue (numgrad's weak point on small work) or a new copy shows in them exactly."""
import gc
import sys
import typing

import numpy as np

import numgrad
from .workloads import WORKLOADS, make_inputs, run_step

# numgrad's own copying helpers (kernels/dispatch), counted as copies when called
_COPY_FUNCTIONS = ("_copy_into", "_host_copy")


class Counts(typing.NamedTuple):
    python: int  # Python function calls per step
    c: int  # C function calls per step
    copies: int  # array copies per step: ndarray.copy/astype, np.copyto, numgrad's copy helpers


def graph_nodes(out):
    """How many nodes the autograd graph behind `out` holds (each op's node, each leaf's AccumulateGrad): the
    ops of a step's forward and backward, which the calls are divided by (the optimizer step is not in it)."""
    seen, todo = set(), [out.grad_fn] if getattr(out, "grad_fn", None) is not None else []
    while todo:
        node = todo.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        todo.extend(next_node for next_node, _ in node.next_functions)
    return len(seen)


class _Copyto:
    """np.copyto, counted: a C function NumPy dispatches without a profile event. Installed for the whole count
    (warm-up included, so the replays of a compiled step bind it too); its own call is not counted as a call."""

    def __init__(self, original):
        self.original, self.calls = original, 0

    def __call__(self, *args, **kwargs):
        if sys._getframe(1).f_code.co_name not in _COPY_FUNCTIONS:  # (a copy helper's own: counted as the helper)
            self.calls += 1
        return self.original(*args, **kwargs)


def count(workload, compiled=False, warmup=5, steps=3):
    """Counts per step of `workload` in this thread, after `warmup` steps (kernels compiled, a compiled step
    traced). Threads the step starts run kernels, which are not counted. The cyclic garbage collector is held
    off while counting: when it runs depends on what the process allocated before, and the weak-reference
    callbacks it sets off are calls (the counts moved by one in a test run)."""
    inputs = make_inputs(numgrad, workload)
    fn = numgrad.compile(workload.fn) if compiled else None
    copyto = np.copyto = _Copyto(np.copyto)
    try:
        for _ in range(warmup):
            run_step(numgrad, workload, inputs, fn)
        counts = {"call": 0, "c_call": 0, "copy": 0}
        wrapper = _Copyto.__call__.__code__

        def profile(frame, event, arg):
            if event == "call":
                code = frame.f_code
                if code is wrapper:
                    return
                counts["call"] += 1
                if code.co_name in _COPY_FUNCTIONS and "numgrad" in code.co_filename:
                    counts["copy"] += 1
            elif event == "c_call":
                counts["c_call"] += 1
                if getattr(arg, "__name__", None) in ("copy", "astype") and type(getattr(arg, "__self__", None)) \
                        is np.ndarray:
                    counts["copy"] += 1
        collecting = gc.isenabled()
        gc.collect()
        gc.disable()
        copyto.calls = 0
        sys.setprofile(profile)
        try:
            for _ in range(steps):
                run_step(numgrad, workload, inputs, fn)
        finally:
            sys.setprofile(None)
            if collecting:
                gc.enable()
    finally:
        np.copyto = copyto.original
    return Counts(counts["call"] // steps, counts["c_call"] // steps, (counts["copy"] + copyto.calls) // steps)


def nodes(workload):
    """The autograd graph nodes of one eager step of `workload`."""
    inputs = make_inputs(numgrad, workload)
    return graph_nodes(run_step(numgrad, workload, inputs))


def table(names=None):
    """{workload: {"nodes": n, "eager": Counts, "compiled": Counts}} for the named workloads (default all)."""
    return {name: {"nodes": nodes(WORKLOADS[name]), "eager": count(WORKLOADS[name]),
                   "compiled": count(WORKLOADS[name], compiled=True)} for name in (names or WORKLOADS)}

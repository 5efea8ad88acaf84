"""Python work per step, counted: the function calls (Python and C) of one numgrad step, eager and compiled,
through sys.setprofile. Times on a shared 2-core machine move by 10-40% from run to run; these counts do not,
so a change to the per-op glue (numgrad's weak point on small work) shows in them exactly."""
import gc
import sys

import numgrad
from .workloads import WORKLOADS, make_inputs, run_step


def count(workload, compiled=False, warmup=5, steps=3):
    """(Python calls, C calls) per step of `workload` in this thread, after `warmup` steps (kernels
    compiled, a compiled step traced). Threads the step starts run kernels, which are not counted. The
    cyclic garbage collector is held off while counting: when it runs depends on what the process allocated
    before, and the weak-reference callbacks it sets off are calls (the counts moved by one in a test run)."""
    inputs = make_inputs(numgrad, workload)
    fn = numgrad.compile(workload.fn) if compiled else None
    for _ in range(warmup):
        run_step(numgrad, workload, inputs, fn)
    counts = {"call": 0, "c_call": 0}

    def profile(frame, event, arg):
        if event in counts:
            counts[event] += 1
    collecting = gc.isenabled()
    gc.collect()
    gc.disable()
    sys.setprofile(profile)
    try:
        for _ in range(steps):
            run_step(numgrad, workload, inputs, fn)
    finally:
        sys.setprofile(None)
        if collecting:
            gc.enable()
    return counts["call"] // steps, counts["c_call"] // steps


def table(names=None):
    """{workload: {"eager": (python, c), "compiled": (python, c)}} for the named workloads (default all)."""
    return {name: {"eager": count(WORKLOADS[name]), "compiled": count(WORKLOADS[name], compiled=True)}
            for name in (names or WORKLOADS)}

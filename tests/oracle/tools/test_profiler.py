"""numgrad.profiler: a step's ops by torch's names, the kernels they ran (fused ones named by the ops they
merged), backward nodes, Numba compilations apart from runs, user ranges; torch's table layout, its sort
keys and errors; a Chrome trace; nothing left hooked afterwards."""
import json
import os
import subprocess
import sys

import pytest
import torch

import numgrad
from numgrad.kernels import tape
from numgrad.profiler import profile, record_function


def _step():
    x = numgrad.ones(64, 64, requires_grad=True)
    loss = numgrad.exp(x * 2 + 1).sum()
    loss.backward()
    return x


def _profiled(fn):
    fn()  # kernels compiled (or loaded) before: the profile times runs
    with profile() as prof:
        with record_function("my step"):
            fn()
    return prof


@pytest.mark.usefixtures("fused_everywhere")  # (a fused kernel is named by the ops it merged)
def test_ops_kernels_backward_nodes_and_user_ranges_are_events():
    prof = _profiled(_step)
    names = {e.name: e for e in prof.events()}
    for op in ("aten::ones", "aten::exp", "aten::mul", "aten::add", "aten::sum", "aten::backward"):
        assert op in names, sorted(names)
    assert "my step" in names and names["my step"].kind == "user"
    assert "autograd::engine::evaluate_function: SumBackward0" in names
    fused = [e for e in prof.events() if e.kind == "kernel" and "[" in e.name]
    assert any("mul" in e.name and "add" in e.name and "exp" in e.name for e in fused), [e.name for e in fused]
    assert any(e.name.startswith("autograd::engine::evaluate_function: fused") or "Backward0" in e.name
               for e in prof.events() if e.kind == "backward")
    step = names["my step"]
    for e in prof.events():
        assert 0 <= e.self_cpu_time_total <= e.cpu_time_total + 1e-6
        if e is not step:
            assert step.start_us <= e.start_us and e.end_us <= step.end_us + 1e-6
    assert step.self_cpu_time_total < step.cpu_time_total  # its children's time is theirs


def test_key_averages_table_has_torchs_layout_and_sort_keys():
    prof = _profiled(_step)
    averages = prof.key_averages()
    mul = next(a for a in averages if a.key == "aten::mul")
    assert mul.count == 1 and mul.cpu_time == mul.cpu_time_total
    ours = averages.table(sort_by="self_cpu_time_total", row_limit=5).splitlines()
    x = torch.ones(3, requires_grad=True)
    with torch.profiler.profile() as tprof:
        (x * 2).sum().backward()
    theirs = tprof.key_averages().table(sort_by="self_cpu_time_total", row_limit=5).splitlines()
    assert ours[1].split() == theirs[1].split()  # the column titles
    assert ours[-1].startswith("Self CPU time total: ") and theirs[-1].startswith("Self CPU time total: ")
    assert len(ours) == 5 + 5
    selfs = [a.self_cpu_time_total for a in sorted(averages, key=lambda a: -a.self_cpu_time_total)][:5]
    assert [line.split()[-1] for line in ours[3:8]] == [str(next(a.count for a in averages if
                                                                 a.self_cpu_time_total == s)) for s in selfs]
    for lib, p in ((numgrad, prof), (torch, tprof)):
        with pytest.raises(AttributeError, match="'FunctionEventAvg' object has no attribute 'bogus'"):
            p.key_averages().table(sort_by="bogus")


def test_chrome_trace(tmp_path):
    prof = _profiled(_step)
    path = tmp_path / "trace.json"
    prof.export_chrome_trace(str(path))
    events = json.loads(path.read_text())["traceEvents"]
    assert len(events) == len(prof.events()) and {e["ph"] for e in events} == {"X"}
    assert {"op", "kernel", "backward", "user"} <= {e["cat"] for e in events}


def test_profile_leaves_nothing_hooked_and_refuses_nesting():
    before = sys.getprofile()
    with profile() as prof:
        with pytest.raises(RuntimeError, match="Profiler is already enabled"):
            profile().start()
    assert tape.profiler is None and sys.getprofile() is before
    with record_function("outside"):  # no profile: records nothing, raises nothing
        numgrad.ones(2) * 2
    assert prof.events() is not None


COMPILE_PROBE = """
import numgrad
from numgrad.profiler import profile
x = numgrad.ones(1000)
with profile() as prof:
    (x * 3.5 - 0.25).tanh().sum().item()
compiles = [e for e in prof.events() if e.kind == "compile"]
kernel = [e for e in prof.events() if e.kind == "kernel" and "tanh" in e.name][0]
print(len(compiles), kernel.cpu_time_total > kernel.self_cpu_time_total, all(e.name.startswith("numba compile: ")
      for e in compiles))
"""


def test_compilation_is_an_event_of_its_own(tmp_path):
    """With an empty kernel cache the fused kernel compiles inside its first run: the compile is its own event,
    and the kernel's self time is its run alone."""
    env = dict(os.environ, NUMGRAD_CACHE_DIR=str(tmp_path),
               PYTHONPATH=os.path.dirname(os.path.dirname(os.path.abspath(numgrad.__file__))))
    out = subprocess.run([sys.executable, "-c", COMPILE_PROBE], capture_output=True, text=True, env=env, timeout=300)
    assert out.returncode == 0, out.stderr
    count, nested, named = out.stdout.split()
    assert int(count) >= 1 and nested == "True" and named == "True"

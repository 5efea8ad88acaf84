"""The benchmark command (the README's main job): numgrad fused and unfused against torch eager and
torch.compile on the same workloads, checked against torch's values and gradients; prints a table of
medians and writes a JSON file and a PNG chart."""
import argparse
import json
import os
import subprocess
import sys
import time

import numpy as np

import numgrad
from . import cuda as bench_cuda
from .workloads import WORKLOADS, make_inputs, run_step
import tempfile


# ---- workloads: the same code runs on torch and on numgrad (`lib`) ----------------------------------
def _median_time(fn, reps):
    fn()  # warm-up: compiles kernels, faults pages in
    fn()
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return float(np.median(times))


# ---- the variants -----------------------------------------------------------------------------------
def _torch_compiled(torch, workload):
    """The workload's forward under torch.compile (backward runs through AOTAutograd), or None."""
    try:
        compiled = torch.compile(workload.fn)
        inputs = make_inputs(torch, workload)
        run_step(torch, workload, inputs)
        return compiled
    except Exception as e:  # no compiler, an unsupported op: the column says n/a
        print(f"  torch.compile unavailable for {workload.fn.__name__}: {type(e).__name__}", file=sys.stderr)
        return None


def _errors(torch_out, torch_inputs, ng_out, ng_inputs):
    value_err = float(np.max(np.abs(torch_out.detach().numpy().astype(np.float64) -
                                    ng_out.detach().numpy().astype(np.float64))))
    grad_err = 0.0
    for t, n in zip(torch_inputs, ng_inputs):
        if t.requires_grad:
            grad_err = max(grad_err, float(np.max(np.abs(t.grad.numpy().astype(np.float64) -
                                                         n.grad.numpy().astype(np.float64)))))
    return value_err, grad_err


def run(quick=False, json_path=None, png_path=None, compile_torch=True, only=None):
    import torch
    torch.set_num_threads(2)
    rows = []
    for name, w in WORKLOADS.items():
        if only and not any(o in name for o in only):
            continue
        reps = w.quick_reps if quick else w.reps
        row = {"workload": name}
        t_in = make_inputs(torch, w)
        row["torch_s"] = _median_time(lambda: run_step(torch, w, t_in), reps)
        row["torch_compile_s"] = None
        if compile_torch:
            compiled = _torch_compiled(torch, w)
            if compiled is not None:
                c_in = make_inputs(torch, w)
                c_w = w._replace(fn=compiled)
                row["torch_compile_s"] = _median_time(lambda: run_step(torch, c_w, c_in), reps)
        for label, enabled in (("numgrad_s", True), ("numgrad_unfused_s", False)):
            with numgrad.fusion(enabled):
                n_in = make_inputs(numgrad, w)
                row[label] = _median_time(lambda: run_step(numgrad, w, n_in), reps)
                # correctness: one step from the same inputs on both sides
                t_chk, n_chk = make_inputs(torch, w), make_inputs(numgrad, w)
                errs = _errors(run_step(torch, w, t_chk), t_chk, run_step(numgrad, w, n_chk), n_chk)
                row["value_err" if enabled else "value_err_unfused"] = errs[0]
                row["grad_err" if enabled else "grad_err_unfused"] = errs[1]
        row["speedup_vs_torch"] = row["torch_s"] / row["numgrad_s"]
        rows.append(row)
        _print_row(row)
    memory = None if only else peak_memory()
    if memory:
        print(f"\npeak memory of 'chain 10M' above the input: torch {memory['torch_mb']:.0f} MB, numgrad "
              f"{memory['numgrad_mb']:.0f} MB (unfused {memory['numgrad_unfused_mb']:.0f} MB)")
    compiling = None if only else compile_times()
    if compiling:
        print(f"new fused pattern, forward+backward: {compiling['first_call_s']:.2f} s compiling, "
              f"{compiling['cached_call_s'] * 1e3:.1f} ms from the disk cache in a new process")
    result = {"machine": {"cpus": os.cpu_count(), "torch": torch.__version__, "numgrad": numgrad.__version__},
              "quick": quick, "rows": rows, "peak_memory": memory, "compile": compiling}
    if json_path:
        with open(json_path, "w") as f:
            json.dump(result, f, indent=2)
        print(f"wrote {json_path}")
    if png_path:
        chart(rows, png_path)
    return result


_HEADER = (f"{'workload':<22}{'torch eager':>13}{'torch.compile':>15}{'numgrad':>12}{'unfused':>12}"
           f"{'speedup':>9}{'value err':>11}{'grad err':>10}")


def _fmt(seconds):
    if seconds is None:
        return "n/a"
    return f"{seconds * 1e6:.1f} us" if seconds < 1e-3 else f"{seconds * 1e3:.2f} ms"


def _print_row(row):
    if not getattr(_print_row, "printed", False):
        print(_HEADER)
        _print_row.printed = True
    print(f"{row['workload']:<22}{_fmt(row['torch_s']):>13}{_fmt(row['torch_compile_s']):>15}"
          f"{_fmt(row['numgrad_s']):>12}{_fmt(row['numgrad_unfused_s']):>12}{row['speedup_vs_torch']:>8.2f}x"
          f"{row['value_err']:>11.1e}{row['grad_err']:>10.1e}", flush=True)


def chart(rows, path):
    """A bar chart of speed relative to torch eager (higher is faster), one group per workload."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed: no chart (pip install matplotlib)", file=sys.stderr)
        return
    labels = [r["workload"] for r in rows]
    series = [("torch.compile", "torch_compile_s"), ("numgrad fused", "numgrad_s"), ("numgrad unfused", "numgrad_unfused_s")]
    fig, ax = plt.subplots(figsize=(10, 4.5))
    width = 0.8 / len(series)
    for k, (label, key) in enumerate(series):
        values = [r["torch_s"] / r[key] if r[key] else 0 for r in rows]
        ax.bar([i + (k - 1) * width for i in range(len(rows))], values, width, label=label)
    ax.axhline(1, color="black", linewidth=0.8, label="torch eager")
    ax.set_yscale("log")
    ax.set_ylabel("speed relative to torch eager (x)")
    ax.set_xticks(range(len(rows)), labels, rotation=15, fontsize=8)
    ax.legend(fontsize=8)
    ax.set_title("numgrad vs torch (medians, forward + backward)")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    print(f"wrote {path}")


# ---- peak memory, each library in its own process ----------------------------------------------------
_MEMORY_PROBE = """
import sys, numpy as np
lib_name, fusion = sys.argv[1], sys.argv[2] == "1"
if lib_name == "torch":
    import torch as lib; lib.set_num_threads(2)
else:
    import numgrad as lib; lib.set_fusion(fusion)
from numgrad.bench.workloads import chain
chain(lib, lib.tensor(np.ones(1000, np.float32), requires_grad=True))  # compiles, loads libraries
x = lib.tensor(np.random.default_rng(0).standard_normal(10_000_000).astype(np.float32), requires_grad=True)
def status(key):
    for line in open("/proc/self/status"):
        if line.startswith(key):
            return int(line.split()[1]) * 1024
with open("/proc/self/clear_refs", "w") as f:
    f.write("5")  # resets the peak (VmHWM) to the current resident size
before = status("VmRSS")
chain(lib, x)
print(max(0, status("VmHWM") - before) / 2**20)
"""


def peak_memory():
    """Peak resident memory of one forward+backward of 'chain 10M' above the memory held before it."""
    if not os.path.exists("/proc/self/clear_refs"):
        return None
    result = {}
    for key, args in (("torch_mb", ["torch", "1"]), ("numgrad_mb", ["numgrad", "1"]),
                      ("numgrad_unfused_mb", ["numgrad", "0"])):
        out = subprocess.run([sys.executable, "-c", _MEMORY_PROBE, *args], capture_output=True, text=True)
        if out.returncode != 0:
            return None
        result[key] = float(out.stdout.strip().splitlines()[-1])
    return result


# ---- compile time of a new fused pattern, and of the same pattern from the on-disk cache -------------
_COMPILE_PROBE = """
import time, numpy as np, numgrad
x = numgrad.tensor(np.linspace(-1, 1, 1000, dtype=np.float32), requires_grad=True)
(x.detach() + 1).tolist()  # starts Numba's runtime (once per process, not per kernel)
t0 = time.perf_counter()
s = ((x * x + 0.5) * x.sin() - x).sum()  # a pattern no other workload uses: one fused sum, one fused map
s.backward()
print(time.perf_counter() - t0)
"""


def compile_times():
    """Seconds for the first forward+backward of a new fused pattern in a new process with an empty
    kernel cache, then in another new process that finds the compiled kernels on disk."""
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, NUMGRAD_CACHE_DIR=cache)
        times = []
        for _ in range(2):
            out = subprocess.run([sys.executable, "-c", _COMPILE_PROBE], env=env, capture_output=True, text=True)
            if out.returncode != 0:
                return None
            times.append(float(out.stdout.strip().splitlines()[-1]))
    return {"first_call_s": times[0], "cached_call_s": times[1]}


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m numgrad.bench", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="fewer repetitions, no torch.compile (under a minute)")
    parser.add_argument("--json", default="bench_results.json", help="where to write the results")
    parser.add_argument("--png", default="bench_results.png", help="where to write the chart")
    parser.add_argument("--no-compile", action="store_true", help="skip torch.compile")
    parser.add_argument("--only", nargs="*", help="run the workloads whose names contain these words")
    parser.add_argument("--device", default="cpu", choices=["cpu", "cuda"],
                        help="cuda: the fused chains on the GPU against the memory-bandwidth floor")
    parser.add_argument("--size", type=int, default=100_000_000, help="elements per tensor with --device cuda")
    args = parser.parse_args(argv)
    if args.device == "cuda":
        result = bench_cuda.run(args.size, reps=3 if args.quick else 10)
        with open(args.json.replace(".json", "_cuda.json"), "w") as f:
            json.dump(result, f, indent=2)
        return
    run(args.quick, args.json, args.png, compile_torch=not (args.quick or args.no_compile), only=args.only)


if __name__ == "__main__":
    main()

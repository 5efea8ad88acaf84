"""The benchmark command (the README's main job): torch eager and torch.compile against numgrad eager (fused
and unfused) and numgrad.compile on the same workloads, and with --peers / --jax the other Python autograds on
the small ones, each variant timed in its own process; checks every variant's loss, gradients and updated
parameters against torch eager's; prints a table and writes JSON and PNG."""
import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
from importlib.metadata import PackageNotFoundError, version

import numpy as np

import numgrad
from . import calls as bench_calls
from . import cuda as bench_cuda
from . import distributed as bench_distributed
from . import peers as bench_peers
from .workloads import WORKLOADS, relative_error

# variant -> the row's key for its time; "numpy floor" times only the workloads that have a GEMM floor
VARIANTS = {"torch": "torch_s", "torch.compile": "torch_compile_s", "numgrad.compile": "numgrad_compile_s",
            "numgrad": "numgrad_s", "numgrad unfused": "numgrad_unfused_s", "numpy floor": "gemm_floor_s",
            "mygrad": "mygrad_s", "autograd": "autograd_s", "jax.jit": "jax_jit_s"}
NUMGRAD_VARIANTS = ("numgrad", "numgrad unfused", "numgrad.compile")
PEER_NAMES = {"mygrad": "MyGrad", "autograd": "HIPS autograd", "jax.jit": "jax.jit"}  # the columns' headings
# the settings that pin OpenBLAS to one CPU's kernels (set on some machines for old OpenBLAS builds)
OPENBLAS_KERNEL_SETTINGS = ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")
_WORKER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_worker.py")


class Workers:
    """One long-lived process per variant, asked one round of one workload at a time: kernels and graphs
    compile once per process, while no two libraries ever share a process."""

    def __init__(self, variants, logs, native_blas=False):
        # the workers run _worker.py by path, so they find numgrad (and its workloads) through PYTHONPATH
        root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [root, os.environ.get("PYTHONPATH")])))
        # native_blas: NumPy's OpenBLAS (numgrad's and the GEMM floor's processes) picks its kernels by the CPU,
        # whatever OPENBLAS_CORETYPE this machine sets; torch's processes run MKL, which never reads it
        own_kernels = {k: v for k, v in env.items() if k not in OPENBLAS_KERNEL_SETTINGS}
        self.procs, self.failed, self.blas = {}, {}, {}
        for v in variants:  # started together: their imports overlap
            log = open(os.path.join(logs, v.replace(" ", "_") + ".log"), "w")
            self.procs[v] = subprocess.Popen([sys.executable, _WORKER, v], stdin=subprocess.PIPE,
                                             stdout=subprocess.PIPE, stderr=log, text=True,
                                             env=own_kernels if native_blas and not v.startswith("torch") else env)
        for v in list(self.procs):
            reply = self._read(v)
            if "error" in reply:
                self.failed[v] = reply["error"]
            elif len(reply["libraries"]) > 1:
                self.failed[v] = f"one process holds {' and '.join(reply['libraries'])}"
            else:
                self.blas[v] = reply.get("blas")

    def _read(self, v):
        line = self.procs[v].stdout.readline()
        if not line:
            self.failed[v] = f"the worker exited (code {self.procs[v].wait()})"
            return {"error": self.failed[v]}
        return json.loads(line)

    def ask(self, v, request):
        if v in self.failed:
            return {"error": self.failed[v]}
        self.procs[v].stdin.write(json.dumps(request) + "\n")
        self.procs[v].stdin.flush()
        return self._read(v)

    def close(self):
        for v, p in self.procs.items():
            if p.poll() is None:
                try:
                    p.stdin.write(json.dumps({"quit": True}) + "\n")
                    p.stdin.close()
                except OSError:
                    pass
            p.wait()


def _errors(reference_path, path):
    """The relative error of each kind (loss value, gradients, parameters after the step): the max over
    tensors of relative_error against torch eager's."""
    if not (os.path.exists(reference_path) and os.path.exists(path)):
        return None
    with np.load(reference_path) as ref, np.load(path) as ours:
        errors = {}
        for name in ref.files:
            kind = name.split()[0]
            err = relative_error(ours[name], ref[name]) if name in ours.files else math.inf
            errors[kind] = max(errors.get(kind, 0.0), err)
    return errors


def _version(package):
    """A package's version without importing it here (nothing is timed in this process)."""
    try:
        return version(package)
    except PackageNotFoundError:
        return None


def _ratio(numerator, denominator):
    return numerator / denominator if numerator and denominator else None


def measure(workers, name, w, variants, rounds, reps, scratch):
    """One row: `rounds` rounds, each timing every variant once (the order rotating between rounds), the
    minimum of the per-round medians per variant, and the relative errors of each variant's first step."""
    variants = [v for v in variants if (v != "numpy floor" or w.floor is not None) and
                (v not in bench_peers.PEERS or name in bench_peers.SUPPORTED[v])]
    medians, notes, first_calls = {v: [] for v in variants}, {}, {}
    saved = {v: os.path.join(scratch, f"{k}.npz") for k, v in enumerate(variants)}
    for r in range(rounds):
        for v in variants[r % len(variants):] + variants[:r % len(variants)]:
            if v in notes:
                continue  # it failed on this workload: n/a, not asked again
            reply = workers.ask(v, {"workload": name, "reps": reps, "save": saved[v]})
            if "error" in reply:
                notes[v] = reply["error"]
            else:
                medians[v].append(reply["median_s"])
                if reply["first_call_s"] is not None:
                    first_calls[v] = reply["first_call_s"]
    row = {"workload": name}
    for v, key in VARIANTS.items():
        row[key] = min(medians[v]) if medians.get(v) else None
    for v in bench_peers.PEERS:  # torch eager / the peer, as numgrad's ratios
        row[VARIANTS[v].replace("_s", "_vs_torch")] = _ratio(row["torch_s"], row[VARIANTS[v]])
    row["compile_vs_eager"] = _ratio(row["torch_s"], row["numgrad_compile_s"])
    row["compile_vs_torch_compile"] = _ratio(row["torch_compile_s"], row["numgrad_compile_s"])
    row["eager_vs_eager"] = _ratio(row["torch_s"], row["numgrad_s"])
    row["eager_vs_floor"] = _ratio(row["numgrad_s"], row["gemm_floor_s"])  # how many floors a step costs
    row["errors"] = {v: _errors(saved["torch"], saved[v]) for v in variants
                     if v not in ("torch", "numpy floor") and v not in notes}
    row["peers_run"] = [v for v in variants if v in bench_peers.PEERS]
    row["n/a"] = notes
    row["first_call_s"] = first_calls  # the untimed first step: compiling kernels, or the whole graph
    worst = {}
    for v in NUMGRAD_VARIANTS:
        for kind, err in (row["errors"].get(v) or {}).items():
            worst[kind] = max(worst.get(kind, 0.0), err)
    row["max_rel_err"] = worst  # over numgrad's variants, the table's last columns
    for path in saved.values():
        if os.path.exists(path):
            os.remove(path)
    return row


def _selected(only):
    """The workloads' names, those containing one of the words in `only` when it is given (--only)."""
    return [n for n in WORKLOADS if not only or any(o in n for o in only)]


def peer_variants(peers=False, jax=False):
    """(the peer variants asked for that this machine can import, a note for each it cannot): --peers asks for
    MyGrad and HIPS autograd, --jax for jax.jit; they are optional installs (numgrad[peers]), never the tests'."""
    wanted = (["mygrad", "autograd"] if peers else []) + (["jax.jit"] if jax else [])
    found, notes = [], []
    for v in wanted:
        if not bench_peers.installed(v):
            notes.append(f"{PEER_NAMES[v]} is not installed: its column is left out (pip install 'numgrad[peers]')")
        else:
            found.append(v)
    return found, notes


def run(quick=False, json_path=None, png_path=None, compile_torch=True, only=None, rounds=None, native_blas=False,
        peers=False, jax=False):
    rounds = rounds or (1 if quick else 3)
    workloads = {n: WORKLOADS[n] for n in _selected(only)}
    peer_list, peer_notes = peer_variants(peers, jax)
    peer_list = [v for v in peer_list if any(n in bench_peers.SUPPORTED[v] for n in workloads)]
    for note in peer_notes:
        print(f"  {note}", file=sys.stderr)
    variants = ["torch"] + (["torch.compile"] if compile_torch else []) + \
        ["numgrad.compile", "numgrad", "numgrad unfused"] + \
        (["numpy floor"] if any(w.floor for w in workloads.values()) else []) + peer_list
    rows = []
    _print_row.printed = False
    with tempfile.TemporaryDirectory() as scratch:
        workers = Workers(variants, scratch, native_blas)
        try:
            for v, why in workers.failed.items():
                print(f"  {v}: n/a ({why})", file=sys.stderr)
            blas = sorted(set(filter(None, workers.blas.values())))
            for line in blas:
                print(f"matrix products: {line}")
            reported = set(workers.failed)
            for name, w in workloads.items():
                row = measure(workers, name, w, variants, rounds, w.quick_reps if quick else w.reps, scratch)
                for v, why in row["n/a"].items():
                    if v not in reported:  # once per variant, not once per workload
                        print(f"  {v} n/a on {name}: {why}", file=sys.stderr)
                        reported.add(v)
                rows.append(row)
                _print_row(row, peer_list)
        finally:
            workers.close()
    memory = None if only else peak_memory()
    if memory:
        print(f"\npeak memory of 'chain 10M' above the input: torch {memory['torch_mb']:.0f} MB, numgrad "
              f"{memory['numgrad_mb']:.0f} MB (unfused {memory['numgrad_unfused_mb']:.0f} MB)")
    compiling = None if only else compile_times(rounds)
    if compiling:
        print(f"new fused pattern, forward+backward: {compiling['first_call_s']:.2f} s compiling, "
              f"{compiling['cached_call_s'] * 1e3:.1f} ms from the disk cache in a new process (minimum of {rounds} "
              "such pairs of processes)")
        if "compiled_step_cold_s" in compiling:
            print(f"numgrad.compile'd MLP step (Adam), first call: {compiling['compiled_step_cold_s']:.2f} s with an "
                  f"empty kernel cache, {compiling['compiled_step_cached_s'] * 1e3:.0f} ms from the disk cache in a "
                  f"new process (then {compiling['compiled_step_replay_s'] * 1e3:.1f} ms a replay)")
    counted = print_calls(list(workloads))
    result = {"machine": {"cpus": os.cpu_count(), "torch": _version("torch"), "numgrad": numgrad.__version__,
                          "blas": blas},
              "quick": quick, "rounds": rounds, "native_blas": native_blas, "rows": rows, "peak_memory": memory,
              "compile": compiling, "python_calls_per_step": counted,
              "peers": {"run": peer_list, "left out": peer_notes}}
    if json_path:
        with open(json_path, "w") as f:
            json.dump(result, f, indent=2)
        print(f"wrote {json_path}")
    if png_path:
        chart(rows, png_path)
    return result


_COLUMNS = [("workload", 24), ("torch eager", 12), ("torch.compile", 14), ("numgrad.compile", 16),
            ("numgrad eager", 14), ("ng unfused", 11), ("GEMM floor", 11), ("compile vs eager", 17),
            ("compile vs t.compile", 21), ("eager vs eager", 15), ("loss err", 9), ("grad err", 9),
            ("step err", 9)]
_LEGEND = ("times: minimum over rounds of each round's median, each variant in its own process; ratios: "
           "torch's time / numgrad's\n(compile vs eager: torch eager / numgrad.compile, compile vs t.compile: "
           "torch.compile / numgrad.compile, eager vs eager: torch eager / numgrad eager);\nerrors: max |a-b| / "
           "max|b| against torch eager, the worst of numgrad's variants (step err: parameters after the optimizer "
           "step)")


def _fmt(seconds):
    if seconds is None:
        return "n/a"
    return f"{seconds * 1e6:.1f} us" if seconds < 1e-3 else f"{seconds * 1e3:.2f} ms"


def _columns(peers):
    """The table's columns: the peers' after the GEMM floor's, each a time and torch eager's ratio to it."""
    return _COLUMNS[:7] + [(PEER_NAMES[p], 22) for p in peers] + _COLUMNS[7:]


def _peer_cell(row, peer):
    if peer not in row.get("peers_run", ()):
        return "-"  # a workload the peer does not express
    seconds, ratio = row[VARIANTS[peer]], row[VARIANTS[peer].replace("_s", "_vs_torch")]
    return "n/a" if seconds is None else f"{_fmt(seconds)} ({ratio:.2f}x)" if ratio else _fmt(seconds)


def _print_row(row, peers=()):
    columns = _columns(peers)
    if not getattr(_print_row, "printed", False):
        print(_LEGEND + ("; peers: their time (torch eager's / theirs)" if peers else ""))
        print("".join(f"{name:>{width}}" if k else f"{name:<{width}}" for k, (name, width) in enumerate(columns)))
        _print_row.printed = True
    times = [_fmt(row[k]) for k in ("torch_s", "torch_compile_s", "numgrad_compile_s", "numgrad_s",
                                    "numgrad_unfused_s", "gemm_floor_s")]
    ratios = [f"{row[k]:.2f}x" if row[k] else "n/a" for k in ("compile_vs_eager", "compile_vs_torch_compile",
                                                            "eager_vs_eager")]
    errs = [f"{row['max_rel_err'][k]:.1e}" if k in row["max_rel_err"] else "-" for k in ("value", "grad", "param")]
    cells = [row["workload"]] + times + [_peer_cell(row, p) for p in peers] + ratios + errs
    print("".join(f"{c:>{w}}" if k else f"{c:<{w}}" for k, (c, (_, w)) in enumerate(zip(cells, columns))),
          flush=True)


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
    series = [("torch.compile", "torch_compile_s"), ("numgrad.compile", "numgrad_compile_s"),
              ("numgrad eager", "numgrad_s"), ("numgrad unfused", "numgrad_unfused_s"),
              ("GEMM floor (NumPy)", "gemm_floor_s")] + [(PEER_NAMES[p], VARIANTS[p]) for p in bench_peers.PEERS]
    series = [(label, key) for label, key in series if any(r[key] for r in rows)]
    fig, ax = plt.subplots(figsize=(10, 4.5))
    width = 0.8 / len(series)
    for k, (label, key) in enumerate(series):
        values = [r["torch_s"] / r[key] if r[key] and r["torch_s"] else 0 for r in rows]
        ax.bar([i + (k - (len(series) - 1) / 2) * width for i in range(len(rows))], values, width, label=label)
    ax.axhline(1, color="black", linewidth=0.8, label="torch eager")
    ax.set_yscale("log")
    ax.set_ylabel("speed relative to torch eager (x)")
    ax.set_xticks(range(len(rows)), labels, rotation=15, fontsize=8)
    ax.legend(fontsize=8)
    ax.set_title("numgrad vs torch (min of per-round medians; forward + backward, or a training step)")
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


# the first call of numgrad.compile'd MLP step (trace: one eager step, compiling the kernels it meets)
_COMPILED_STEP_PROBE = """
import time, numpy as np, numgrad
from numgrad.bench.workloads import WORKLOADS, make_inputs
w = WORKLOADS["MLP step Adam"]
inputs = make_inputs(numgrad, w)
(numgrad.ones(2) + 1).tolist()  # starts Numba's runtime (once per process, not per kernel)
step = numgrad.compile(w.fn)
t0 = time.perf_counter()
step(numgrad, *inputs)
t1 = time.perf_counter()
step(numgrad, *inputs)
print(t1 - t0, time.perf_counter() - t1)
"""


def _probe_twice(source, rounds):
    """The probe's printed numbers in a new process with an empty kernel cache, then in another new process
    that finds the compiled kernels on disk, `rounds` times (a new cache each time): the minimum of each
    number, as the timed rows take the minimum of their rounds (another tenant of a shared machine only ever
    adds time); None if a run fails."""
    best = None
    for _ in range(rounds):
        with tempfile.TemporaryDirectory() as cache:
            env = dict(os.environ, NUMGRAD_CACHE_DIR=cache)
            runs = []
            for _ in range(2):
                out = subprocess.run([sys.executable, "-c", source], env=env, capture_output=True, text=True)
                if out.returncode != 0:
                    return None
                runs.append([float(v) for v in out.stdout.strip().splitlines()[-1].split()])
        best = runs if best is None else [[min(a, b) for a, b in zip(old, new)] for old, new in zip(best, runs)]
    return best


def print_calls(names):
    """Prints (and returns) numgrad's function calls per step, eager and compiled (bench/calls.py), per node of the
    step's autograd graph, and the array copies per step: the Python glue measured without the machine's noise."""
    counted = bench_calls.table(names)
    print("\nnumgrad's function calls per step (Python + C, counted; the same on every run), per node of the step's "
          "autograd graph,\nand array copies per step (ndarray.copy/astype, np.copyto, numgrad's copy helpers):")
    print(f"  {'workload':32s} {'nodes':>5s}  {'eager: Python + C':>17s} {'per node':>11s} {'copies':>6s}   "
          f"{'compiled: Python + C':>20s} {'per node':>9s} {'copies':>6s}")
    for name, c in counted.items():
        n, e, k = max(c["nodes"], 1), c["eager"], c["compiled"]
        print(f"  {name:32s} {c['nodes']:5d}  {e.python:8d} + {e.c:6d} {e.python / n:5.1f} + {e.c / n:4.1f} "
              f"{e.copies:6d}   {k.python:11d} + {k.c:6d} {k.python / n:4.1f} + {k.c / n:3.1f} {k.copies:6d}")
    return {name: {"nodes": c["nodes"], **{kind: {"python": c[kind].python, "c": c[kind].c,
                                                  "copies": c[kind].copies,
                                                  "python_per_node": c[kind].python / max(c["nodes"], 1),
                                                  "c_per_node": c[kind].c / max(c["nodes"], 1)}
                                           for kind in ("eager", "compiled")}}
            for name, c in counted.items()}


def compile_times(rounds=3):
    """Seconds for the first forward+backward of a new fused pattern, and for the first call of a
    numgrad.compile'd MLP step (Adam), each in a new process with an empty kernel cache and then in another
    new process that finds the compiled kernels on disk (the minimum of `rounds` such pairs)."""
    fused, step = _probe_twice(_COMPILE_PROBE, rounds), _probe_twice(_COMPILED_STEP_PROBE, rounds)
    if fused is None:
        return None
    result = {"first_call_s": fused[0][0], "cached_call_s": fused[1][0]}
    if step is not None:
        result.update(compiled_step_cold_s=step[0][0], compiled_step_cached_s=step[1][0],
                      compiled_step_replay_s=step[1][1])
    return result


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m numgrad.bench", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="fewer repetitions, no torch.compile (under a minute)")
    parser.add_argument("--json", default="bench_results.json", help="where to write the results")
    parser.add_argument("--png", default="bench_results.png", help="where to write the chart")
    parser.add_argument("--no-compile", action="store_true", help="skip torch.compile")
    parser.add_argument("--rounds", type=int, help="rounds of every variant in turn (default 3, --quick 1)")
    parser.add_argument("--only", nargs="*", help="run the workloads whose names contain these words")
    parser.add_argument("--calls", action="store_true",
                        help="only count numgrad's function calls per step and per graph node, and its array copies "
                             "per step (seconds, no timing, no torch)")
    parser.add_argument("--native-blas", action="store_true",
                        help="NumPy's BLAS in numgrad's processes picks its kernels by the CPU, ignoring "
                             + " and ".join(OPENBLAS_KERNEL_SETTINGS))
    parser.add_argument("--peers", action="store_true",
                        help="add columns for MyGrad and HIPS autograd on the small workloads (when installed)")
    parser.add_argument("--jax", action="store_true", help="add a column for jax.jit on the small workloads")
    parser.add_argument("--device", default="cpu", choices=["cpu", "cuda"],
                        help="cuda: the fused chains on the GPU against the memory-bandwidth floor")
    parser.add_argument("--size", type=int, default=100_000_000, help="elements per tensor with --device cuda")
    parser.add_argument("--distributed", action="store_true",
                        help="DDP scaling of the MLP step over 1 and 2 MPI ranks, beside torch's (needs numgrad[dist])")
    args = parser.parse_args(argv)
    if args.distributed:
        bench_distributed.run(rounds=1 if args.quick else 2)
        return
    if args.calls:
        print_calls(_selected(args.only))
        return
    if args.device == "cuda":
        result = bench_cuda.run(args.size, reps=3 if args.quick else 10)
        with open(args.json.replace(".json", "_cuda.json"), "w") as f:
            json.dump(result, f, indent=2)
        return
    run(args.quick, args.json, args.png, compile_torch=not (args.quick or args.no_compile), only=args.only,
        rounds=args.rounds, native_blas=args.native_blas, peers=args.peers, jax=args.jax)


if __name__ == "__main__":
    main()

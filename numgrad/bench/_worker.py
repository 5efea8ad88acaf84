"""A timing worker: one process for one variant (torch eager, torch.compile, numgrad fused, unfused,
numgrad.compile, NumPy's GEMM floor, or a peer: MyGrad, HIPS autograd, jax.jit), asked over stdin to time one
round of one workload at a time.

Run by path (`python numgrad/bench/_worker.py VARIANT`), not with -m: importing numgrad.bench would import
numgrad into a torch worker, and the project rule is one library per process (numgrad's threads, torch's
and BLAS's pools slow each other when they share one). Requests and replies are JSON lines."""
import importlib
import importlib.util
import json
import os
import sys
import time
import traceback

import numpy as np

try:  # optional (scikit-learn, in the test extra, brings it): which BLAS kernels NumPy runs
    import threadpoolctl
except ImportError:
    threadpoolctl = None

VARIANTS = ("torch", "torch.compile", "numgrad", "numgrad unfused", "numgrad.compile", "numpy floor", "mygrad",
            "autograd", "jax.jit")


def _load(file):
    """One of the benchmark's own files (workloads.py, peers.py), loaded by path: not through numgrad.bench."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), file)
    spec = importlib.util.spec_from_file_location("numgrad_bench_" + file[:-3], path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class Variant:
    """The library of one variant and how it turns a workload's step function into the one it times."""

    def __init__(self, name):
        self.name = name
        self.lib = None
        if name.startswith("torch"):
            self.lib = importlib.import_module("torch")
            self.lib.set_num_threads(2)  # the machine's cores; numgrad's Numba pool has as many
        elif name.startswith("numgrad"):
            self.lib = importlib.import_module("numgrad")
            self.lib.set_fusion(name != "numgrad unfused")
        elif name != "numpy floor":  # a peer: imported here, so that a missing one fails at the start
            self.peers = _load("peers.py")
            self.lib = importlib.import_module(self.peers.PEERS[name])

    def step_fn(self, fn):
        """The function timed: the workload's own, or compiled whole (forward, backward, optimizer step)."""
        if self.name == "torch.compile":
            return self.lib.compile(fn)
        if self.name == "numgrad.compile":
            compile_ = getattr(self.lib, "compile", None)
            if compile_ is None:
                raise NotImplementedError("numgrad has no compile() yet")
            return compile_(fn)
        return fn


def blas_description(variant):
    """Which matrix-product library this process runs and with what kernels: the GEMM-bound rows depend on it.
    NumPy's OpenBLAS picks its kernels by CPU unless OPENBLAS_CORETYPE names one (some machines set it for old
    OpenBLAS builds: Haswell's kernels on an AVX-512 CPU ran the MLP's largest GEMM 1.5x slower)."""
    if variant.startswith("torch"):
        torch = sys.modules["torch"]
        return f"torch {torch.__version__}: MKL {torch.backends.mkl.is_available()}, " \
               f"CPU capability {torch.backends.cpu.get_cpu_capability()}"
    core = os.environ.get("OPENBLAS_CORETYPE")
    pinned = f" (OPENBLAS_CORETYPE={core})" if core else ""
    if threadpoolctl is None:
        return "NumPy: its BLAS, kernels unknown (install threadpoolctl to see them)" + pinned
    pools = [f"{p['internal_api']} {p.get('version')} {p.get('architecture', '')} kernels, "
             f"{p['num_threads']} threads" for p in threadpoolctl.threadpool_info() if p.get("user_api") == "blas"]
    return "NumPy: " + ("; ".join(pools) or "no BLAS pool found") + pinned


class Worker:
    def __init__(self, variant):
        self.variant = Variant(variant)
        self.workloads = _load("workloads.py")
        self.current = None  # (workload name, step callable): one workload's state at a time

    def _prepare(self, name, save):
        """Builds the workload's inputs, runs its first step (compiling kernels or graphs) and saves what the
        correctness check compares; then one more warm-up step, so no round times a compilation."""
        self.current = None
        w = self.workloads.WORKLOADS[name]
        rng = np.random.default_rng(0)
        if self.variant.name == "numpy floor":
            if w.floor is None:
                raise NotImplementedError(f"{name} has no GEMM floor")
            step, t0 = w.floor(rng), time.perf_counter()
            step()
            first = time.perf_counter() - t0
        elif self.variant.lib is not None and not self.variant.name.startswith(("torch", "numgrad")):
            peers = self.variant.peers
            if name not in peers.SUPPORTED[self.variant.name]:
                raise NotImplementedError(f"{self.variant.name} does not run {name}")
            step, observe = peers.build(self.variant.name, self.workloads, name, rng)
            t0 = time.perf_counter()
            out = step()
            first = time.perf_counter() - t0
            if save:
                np.savez(save, **observe(out))
        else:
            lib = self.variant.lib
            if self.variant.name == "torch.compile":
                # each workload compiled for its own shapes, as in a fresh process
                importlib.import_module("torch._dynamo").reset()
            inputs = self.workloads.make_inputs(lib, w)
            fn = self.variant.step_fn(w.fn)
            t0 = time.perf_counter()
            out = self.workloads.run_step(lib, w, inputs, fn)
            first = time.perf_counter() - t0
            if save:
                np.savez(save, **self.workloads.observe(out, inputs))

            def step():
                return self.workloads.run_step(lib, w, inputs, fn)
        step()
        self.current = (name, step)
        return first

    def time_round(self, name, reps, save=None):
        first = None
        if self.current is None or self.current[0] != name:
            first = self._prepare(name, save)
        step = self.current[1]
        step()  # untimed: caches and pages come back after the other variants' processes ran
        times = []
        for _ in range(reps):
            t0 = time.perf_counter()
            step()
            times.append(time.perf_counter() - t0)
        return {"median_s": float(np.median(times)), "first_call_s": first}


def main():
    # replies go to the original stdout; anything the libraries print goes to stderr instead
    replies = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)
    worker = None
    try:
        worker = Worker(sys.argv[1])
        # the libraries this process holds, so the parent can check that no two share it
        held = sorted({"torch", "numgrad", "mygrad", "autograd", "jax"} & set(sys.modules))
        replies.write(json.dumps({"ready": True, "libraries": held,
                                  "blas": blas_description(sys.argv[1])}) + "\n")
    except Exception as e:
        replies.write(json.dumps({"error": f"{type(e).__name__}: {e}"}) + "\n")
        return
    for line in sys.stdin:
        request = json.loads(line)
        if request.get("quit"):
            break
        try:
            reply = worker.time_round(request["workload"], request["reps"], request.get("save"))
        except Exception as e:  # an unsupported op, no compiler: this variant's cell says n/a
            worker.current = None
            traceback.print_exc()
            reply = {"error": f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"[:200]}
        replies.write(json.dumps(reply) + "\n")


if __name__ == "__main__":
    sys.path = [p for p in sys.path if os.path.abspath(p or ".") != os.path.dirname(os.path.abspath(__file__))]
    main()

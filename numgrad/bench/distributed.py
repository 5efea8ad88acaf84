"""`python -m numgrad.bench --distributed`: data-parallel scaling of the MLP training step (784-512-512-10,
global batch 256, SGD momentum) over 1 and 2 MPI ranks of one thread each, numgrad's DDP beside torch's
(gloo) on the same ranks, and the all-reduce of one DDP bucket against MPI's own Allreduce of its bytes."""
import json
import os
import subprocess
import sys

from ..distributed import run as launcher

_WORKER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_dist_worker.py")


def _job(lib, ranks, threads):
    cmd = launcher.command(ranks, _WORKER, [lib, str(threads)])
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [
        os.path.dirname(os.path.dirname(os.path.dirname(_WORKER))), os.environ.get("PYTHONPATH")])))
    out = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=600, start_new_session=True)
    if out.returncode != 0:
        raise SystemExit(f"{lib} on {ranks} ranks failed:\n{out.stdout}\n{out.stderr}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def run(rounds=2, json_path="bench_results_distributed.json"):
    """Each job `rounds` times, alternating the libraries; the best round of each is kept."""
    configs = [("numgrad", 1, 1), ("torch", 1, 1), ("numgrad", 2, 1), ("torch", 2, 1)]
    best = {}
    for _ in range(rounds):
        for lib, ranks, threads in configs:
            r = _job(lib, ranks, threads)
            key = (lib, ranks)
            if key not in best or r["step_ms"] < best[key]["step_ms"]:
                best[key] = r
    print("MLP 784-512-512-10, global batch 256, SGD momentum; one thread per rank (images/s, higher is better)")
    print("| library | 1 rank | 2 ranks (DDP) | speedup |")
    print("|---|---|---|---|")
    for lib in ("numgrad", "torch"):
        one, two = best[(lib, 1)]["images_per_s"], best[(lib, 2)]["images_per_s"]
        print(f"| {lib} | {one:,.0f} | {two:,.0f} | {two / one:.2f}x |")
    print(f"numgrad 2 ranks vs torch DDP (gloo) 2 ranks: "
          f"{best[('numgrad', 2)]['images_per_s'] / best[('torch', 2)]['images_per_s']:.2f}x")
    print("\nall-reduce of one bucket, 2 ranks (median ms): numgrad.distributed vs MPI's in-place Allreduce")
    for label in ("bucket_1MB", "bucket_25MB"):
        b = best[("numgrad", 2)][label]
        print(f"  {label[7:]}: {b['numgrad_ms']:.3f} ms vs {b['mpi_ms']:.3f} ms ({b['numgrad_ms'] / b['mpi_ms']:.2f}x)")
    with open(json_path, "w") as f:
        json.dump({f"{k[0]} x{k[1]}": v for k, v in best.items()}, f, indent=2)
    return best


if __name__ == "__main__":
    run(int(sys.argv[1]) if len(sys.argv) > 1 else 2)

"""A distributed timing job: run by path under MPI (`mpiexec -n N python -m mpi4py _dist_worker.py LIB`),
one library per job. Times the MLP's data-parallel training step (the global batch split over the ranks),
and for numgrad the all-reduce of one DDP bucket against MPI's own Allreduce of the same bytes. Rank 0
prints one JSON line."""
import importlib.util
import json
import os
import sys
import time

import numpy as np
from mpi4py import MPI

GLOBAL_BATCH, STEPS, WARMUP = 256, 12, 3


def _load_workloads():
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "workloads.py")
    spec = importlib.util.spec_from_file_location("numgrad_bench_workloads", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _torch_group(torch, comm):
    """torch's gloo group over this MPI job's ranks (torchrun's variables, set from MPI's)."""
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ["MASTER_PORT"] = comm.bcast(os.environ.get("MASTER_PORT", "29533"))
    torch.distributed.init_process_group("gloo", rank=comm.Get_rank(), world_size=comm.Get_size())
    return torch.distributed


def _median_step(step, comm):
    for _ in range(WARMUP):
        step()
    times = []
    for _ in range(STEPS):
        comm.Barrier()
        t0 = time.perf_counter()
        step()
        times.append(time.perf_counter() - t0)
    times = np.array(times)
    comm.Allreduce(MPI.IN_PLACE, times, op=MPI.MAX)  # a step lasts as long as its slowest rank
    return float(np.median(times))


def _bucket_times(lib, comm, nbytes):
    """(numgrad's all_reduce of a float32 bucket, MPI's in-place Allreduce of the same array), median seconds."""
    arr = np.ones(nbytes // 4, np.float32)
    t = lib.from_numpy(arr)
    out = []
    for fn in (lambda: lib.distributed.all_reduce(t), lambda: comm.Allreduce(MPI.IN_PLACE, arr)):
        times = []
        for _ in range(STEPS):
            comm.Barrier()
            t0 = time.perf_counter()
            fn()
            times.append(time.perf_counter() - t0)
        out.append(float(np.median(times)))
    return out


def main(name, threads):
    comm = MPI.COMM_WORLD
    size, rank = comm.Get_size(), comm.Get_rank()
    lib = importlib.import_module(name)
    w = _load_workloads()
    if name == "torch":
        lib.set_num_threads(threads)
        dist = _torch_group(lib, comm) if size > 1 else None
    else:
        lib.set_num_threads(threads)
        dist = lib.distributed
        dist.init_process_group("mpi")
    rng = np.random.default_rng(0)
    model = w._load_weights(lib, w._mlp(lib), rng)
    if size > 1:
        model = lib.nn.parallel.DistributedDataParallel(model)
    opt = lib.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    x = rng.standard_normal((GLOBAL_BATCH, 784)).astype(np.float32)
    y = rng.integers(0, 10, GLOBAL_BATCH)
    mine = np.array_split(np.arange(GLOBAL_BATCH), size)[rank]
    xs, ys = lib.tensor(x[mine]), lib.tensor(y[mine])
    step_s = _median_step(lambda: w.train_step(lib, model, opt, xs, ys), comm)
    result = {"lib": name, "ranks": size, "threads": threads, "step_ms": step_s * 1e3,
              "images_per_s": GLOBAL_BATCH / step_s}
    if name == "numgrad" and size > 1:
        for label, nbytes in (("bucket_1MB", 1 << 20), ("bucket_25MB", 25 << 20)):
            ours, bare = _bucket_times(lib, comm, nbytes)
            result[label] = {"numgrad_ms": ours * 1e3, "mpi_ms": bare * 1e3}
    if rank == 0:
        print(json.dumps(result), flush=True)
    if dist is not None and name == "torch":
        dist.destroy_process_group()


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]))

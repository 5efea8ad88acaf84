"""`python -m numgrad.bench --device cuda`: the fused elementwise workloads on the GPU, timed against the
memory-bandwidth floor measured in the same run (and against torch eager CUDA when torch has CUDA)."""
import time

import numpy as np

import numgrad
from .workloads import chain, gelu_tanh

# bytes each element must cross DRAM at least, forward + backward in two fused passes: the forward reads
# x (4) and reduces; the backward reads x (4) and writes x.grad (4)
FLOOR_BYTES_PER_ELEMENT = 12
WORKLOADS = {"chain": chain, "gelu-tanh": gelu_tanh}


def _synchronized(lib, sync, fn, reps):
    fn()  # warm-up: compiles kernels
    times = []
    for _ in range(reps):
        sync()
        t0 = time.perf_counter()
        fn()
        sync()
        times.append(time.perf_counter() - t0)
    return float(np.median(times))


def copy_bandwidth(n_bytes):
    """Device-to-device copy bandwidth (bytes read + written per second) of one large copy."""
    from numba import cuda
    src = cuda.device_array(n_bytes // 4, np.float32)
    dst = cuda.device_array(n_bytes // 4, np.float32)
    dst.copy_to_device(src)
    cuda.synchronize()
    times = []
    for _ in range(5):
        t0 = time.perf_counter()
        dst.copy_to_device(src)
        cuda.synchronize()
        times.append(time.perf_counter() - t0)
    return 2 * n_bytes / float(np.median(times))


def _torch_cuda():
    try:
        import torch
    except ImportError:
        return None
    return torch if torch.cuda.is_available() else None


def run(size=100_000_000, reps=10):
    if not numgrad.cuda.is_available():
        raise SystemExit("--device cuda: no GPU (numgrad.cuda.is_available() is False)")
    torch = _torch_cuda()
    print(f"device: {numgrad.cuda.get_device_name()}, {size:,} elements")
    bandwidth = copy_bandwidth(min(size * 4, 1 << 30))
    print(f"device-to-device copy bandwidth: {bandwidth / 1e9:.0f} GB/s")
    x_host = np.random.default_rng(0).standard_normal(size).astype(np.float32)
    rows = []
    for name, fn in WORKLOADS.items():
        x = numgrad.tensor(x_host, device="cuda", requires_grad=True)

        def step(lib=numgrad, t=x):
            t.grad = None
            return fn(lib, t)
        row = {"workload": f"{name} {size:,}", "numgrad_s": _synchronized(numgrad, numgrad.cuda.synchronize, step,
                                                                         reps)}
        row["floor_s"] = FLOOR_BYTES_PER_ELEMENT * size / bandwidth
        row["vs_floor"] = row["numgrad_s"] / row["floor_s"]
        if torch is not None:
            xt = torch.tensor(x_host, device="cuda", requires_grad=True)

            def torch_step(t=xt):
                t.grad = None
                return fn(torch, t)
            row["torch_s"] = _synchronized(torch, torch.cuda.synchronize, torch_step, reps)
            row["speedup_vs_torch"] = row["torch_s"] / row["numgrad_s"]
            ours, theirs = step(), torch_step()
            row["value_err"] = abs(float(ours.item()) - float(theirs.item())) / max(1.0, abs(float(theirs.item())))
        rows.append(row)
        torch_part = (f", torch eager {row['torch_s'] * 1e3:.2f} ms ({row['speedup_vs_torch']:.2f}x)"
                      if "torch_s" in row else ", torch eager CUDA: n/a (torch has no CUDA here)")
        print(f"{row['workload']:<24} numgrad {row['numgrad_s'] * 1e3:.2f} ms, floor {row['floor_s'] * 1e3:.2f} ms "
              f"({row['vs_floor']:.2f}x the floor){torch_part}", flush=True)
    return {"device": numgrad.cuda.get_device_name(), "bandwidth_bytes_per_s": bandwidth, "rows": rows}

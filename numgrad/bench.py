"""The benchmark command (the README's main job): numgrad against torch eager on the same workloads."""
import argparse
import json
import time

import numpy as np


def _chain(lib, x):
    y = x * x
    z = (y + 1) * y
    s = z.sum()
    s.backward()
    return s


def _reductions(lib, x):
    s = (x.sum(1) ** 2).mean() + x.max()
    s.backward()
    return s


WORKLOADS = {
    # name: (function, input shape, repetitions in full mode, in quick mode)
    "chain 10M": (_chain, (10_000_000,), 10, 3),
    "chain 3 (tiny)": (_chain, (3,), 2000, 300),
    "reductions 4096x4096": (_reductions, (4096, 4096), 10, 3),
}


def _time(fn, reps):
    fn()  # warm-up: compiles kernels, faults pages in
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return float(np.median(times))


def run(quick=False, json_path=None):
    import torch
    import numgrad
    torch.set_num_threads(2)
    rows = []
    rng = np.random.default_rng(0)
    for name, (fn, shape, reps, quick_reps) in WORKLOADS.items():
        data = rng.standard_normal(shape).astype(np.float32)
        xt = torch.tensor(data, requires_grad=True)
        xn = numgrad.tensor(data, requires_grad=True)

        def step(lib, x):
            x.grad = None
            return fn(lib, x)

        n = quick_reps if quick else reps
        t_torch = _time(lambda: step(torch, xt), n)
        t_ng = _time(lambda: step(numgrad, xn), n)
        out_t, out_n = step(torch, xt), step(numgrad, xn)
        err_value = abs(float(out_t.detach()) - float(out_n.detach())) / max(1.0, abs(float(out_t.detach())))
        err_grad = float(np.max(np.abs(xt.grad.numpy() - xn.grad.numpy())))
        rows.append({"workload": name, "torch_ms": t_torch * 1e3, "numgrad_ms": t_ng * 1e3,
                     "ratio": t_ng / t_torch, "rel_err_value": err_value, "max_abs_err_grad": err_grad})
    _print(rows)
    if json_path:
        with open(json_path, "w") as f:
            json.dump(rows, f, indent=2)
    return rows


def _print(rows):
    print(f"{'workload':<24}{'torch eager':>14}{'numgrad':>14}{'numgrad/torch':>15}{'value err':>12}{'grad err':>12}")
    for r in rows:
        unit, scale = ("us", 1e3) if r["torch_ms"] < 1 else ("ms", 1)
        print(f"{r['workload']:<24}{r['torch_ms'] * scale:>11.2f} {unit}{r['numgrad_ms'] * scale:>11.2f} {unit}"
              f"{r['ratio']:>14.2f}x{r['rel_err_value']:>12.1e}{r['max_abs_err_grad']:>12.1e}")


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m numgrad.bench", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="fewer repetitions (under a minute)")
    parser.add_argument("--json", default="bench_results.json", help="where to write the results")
    args = parser.parse_args(argv)
    run(args.quick, args.json)


if __name__ == "__main__":
    main()

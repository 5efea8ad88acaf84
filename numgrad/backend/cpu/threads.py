"""Parallel CPU execution: generated kernels release the GIL (nogil) and take an index range, and the
range is split over a small pool of Python threads. No OpenMP pool: its spinning workers slowed every
other thread pool in the process (BLAS, torch's) and cost milliseconds per launch on two cores."""
import concurrent.futures

import numba

# Below this many elements one thread runs the loop; above it the range is split over the threads.
# (Handing work to a thread costs tens of microseconds, and right after a matmul the BLAS threads
# still spin on the cores.)
PARALLEL_MIN = 1 << 18
_pool = None


def count():
    """Threads to use: NUMBA_NUM_THREADS (by default the CPUs this process may run on)."""
    return numba.config.NUMBA_NUM_THREADS


def split(total, parts):
    """`parts` (or fewer) contiguous (start, stop) ranges covering range(total)."""
    step = -(-total // max(1, parts))
    return [(s, min(s + step, total)) for s in range(0, total, step)] if total else []


def run(calls):
    """Runs the thunks on the pool's threads and the calling one; returns their results in order."""
    global _pool
    if len(calls) == 1:
        return [calls[0]()]
    if _pool is None:
        _pool = concurrent.futures.ThreadPoolExecutor(max(1, count() - 1), thread_name_prefix="numgrad")
    futures = [_pool.submit(c) for c in calls[1:]]
    first = calls[0]()
    return [first] + [f.result() for f in futures]


def over(kernel, total, *args, parallel=True):
    """kernel(start, stop, *args) over range(total), split over the threads when `parallel`."""
    n = count()
    if not parallel or n == 1 or total < 2:
        kernel(0, total, *args)
    else:
        run([lambda a=a, b=b: kernel(a, b, *args) for a, b in split(total, n)])

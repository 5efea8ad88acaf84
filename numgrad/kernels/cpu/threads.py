"""Parallel CPU execution: generated kernels release the GIL (nogil) and take an index range, and the
range is split over a small pool of Python threads. No OpenMP pool: its spinning workers slowed every
other thread pool in the process (BLAS, torch's) and cost milliseconds per launch on two cores.

The pool is a worker thread per extra core, each waiting on a queue.SimpleQueue (a C lock, no Python-level
Condition): a hand-off costs about a quarter of concurrent.futures' (two no-op calls: 110 -> 27 us on this
VM's two cores), which is what a split over the threads pays on every kernel.

set_count also sets the thread count of NumPy's bundled OpenBLAS (the matrix products), as torch's
set_num_threads does MKL's: a process told to use one thread (a DDP rank, a DataLoader worker, a user's choice)
then has no BLAS worker spinning beside it. On two loaded cores two BLAS threads ran the GPT block's step 2.4-12x
slower than one (each product waits for a worker the scheduler has not run)."""
import ctypes
import glob
import itertools
import os
import queue
import threading

import numba
import numpy as np

# Below this many elements one thread runs the loop; above it the range is split over the threads.
# (Handing work to a thread costs tens of microseconds, and right after a matmul the BLAS threads
# still spin on the cores.)
PARALLEL_MIN = 1 << 18
_workers = []  # one job queue per worker thread
_worker_ids = set()  # their thread idents: a split inside a worker's job runs on that worker alone
_pool_pid = None  # the process that started them (a forked child has none of them running)
_start_lock = threading.Lock()
_chosen = []  # set_count's value, when one was set: it overrides NUMBA_NUM_THREADS
_blas = []  # NumPy's bundled OpenBLAS (a ctypes library), or None, once looked for


def count():
    """Threads to use: set_count's choice, else NUMBA_NUM_THREADS (by default the CPUs this process may run on)."""
    return _chosen[0] if _chosen else numba.config.NUMBA_NUM_THREADS


def set_count(n):
    """Use `n` threads from now on (torch.set_num_threads); the pool keeps its threads, splits use n parts."""
    if not isinstance(n, int) or isinstance(n, bool):
        raise RuntimeError(f"set_num_threads expects an int, but got {type(n).__name__}")
    if n < 1:
        raise RuntimeError("set_num_threads expects a positive integer")
    _chosen[:] = [n]
    set_blas_count(n)


def _openblas_function(name):
    """The C function `name` of the OpenBLAS that NumPy's wheel bundles (scipy-openblas names it with a prefix
    and a suffix, as threadpoolctl looks for it), or None: NumPy built on another BLAS, or no such library."""
    if not _blas:
        package = os.path.dirname(os.path.abspath(np.__file__))
        found = [path for folder in (package + ".libs", os.path.join(package, ".dylibs"))
                 for path in sorted(glob.glob(os.path.join(folder, "*openblas*")))]
        try:
            _blas.append(ctypes.CDLL(found[0]) if found else None)  # the library NumPy loaded: the same handle
        except OSError:
            _blas.append(None)
    library = _blas[0]
    for prefix, suffix in itertools.product(("", "scipy_"), ("", "64_", "_64")):
        function = getattr(library, f"{prefix}{name}{suffix}", None) if library is not None else None
        if function is not None:
            return function
    return None


def set_blas_count(n):
    """NumPy's OpenBLAS runs its matrix products on at most `n` threads; nothing happens where NumPy has no
    OpenBLAS of its own. (OpenBLAS splits a large product by the count, so its rounding can differ between
    counts, as MKL's does under torch.set_num_threads; the default count is left as OpenBLAS chose it.)"""
    setter = _openblas_function("openblas_set_num_threads")
    if setter is not None:
        setter(ctypes.c_int(n))


def blas_count():
    """The threads NumPy's OpenBLAS runs its products on, or None where NumPy has no OpenBLAS of its own."""
    getter = _openblas_function("openblas_get_num_threads")
    return None if getter is None else int(getter())


def split(total, parts):
    """`parts` (or fewer) contiguous (start, stop) ranges covering range(total)."""
    step = -(-total // max(1, parts))
    return [(s, min(s + step, total)) for s in range(0, total, step)] if total else []


def _work(jobs):
    _worker_ids.add(threading.get_ident())
    while True:
        index, call, replies = jobs.get()
        try:
            replies.put((index, True, call()))
        except BaseException as e:  # raised again in the thread that asked (as Future.result does)
            replies.put((index, False, e))
        # not kept while waiting for the next job: the call's closure holds its arrays (the buffer pool takes
        # a result's memory back only once nothing references it)
        del call, replies


def _start():
    global _pool_pid
    with _start_lock:
        if _pool_pid == os.getpid() and _workers:
            return
        _workers.clear()
        _worker_ids.clear()
        for k in range(max(1, count() - 1)):
            jobs = queue.SimpleQueue()
            threading.Thread(target=_work, args=(jobs,), name=f"numgrad-{k}", daemon=True).start()
            _workers.append(jobs)
        _pool_pid = os.getpid()


def run(calls):
    """Runs the thunks on the pool's threads and the calling one; returns their results in order. Several
    threads may call it at once: each call's results come back on a queue of its own."""
    if len(calls) == 1 or threading.get_ident() in _worker_ids:
        return [c() for c in calls]
    if _pool_pid != os.getpid():
        _start()
    replies = queue.SimpleQueue()
    workers = _workers
    for k, call in enumerate(calls[1:]):
        workers[k % len(workers)].put((k + 1, call, replies))
    try:
        first = calls[0]()
    finally:  # every job is waited for, also when the first raised: none still writes after return
        done = sorted(replies.get() for _ in calls[1:])  # (in the order they finished)
    for _, ok, value in done:
        if not ok:
            raise value
    return [first] + [value for _, _, value in done]


def over(kernel, total, *args, parallel=True):
    """kernel(start, stop, *args) over range(total), split over the threads when `parallel`."""
    n = count()
    if not parallel or n == 1 or total < 2:
        kernel(0, total, *args)
    else:
        run([lambda a=a, b=b: kernel(a, b, *args) for a, b in split(total, n)])

"""kernels.cpu.threads' pool: results in order, a worker's exception raised in the caller only once every
job is done, calls from several threads at once, a split inside a job, and a forked child."""
import os
import sys
import threading
import time

import numpy as np
import pytest

from numgrad.kernels.cpu import threads


@pytest.fixture(params=[None, 4])
def workers(request, monkeypatch):
    """The pool as this machine sizes it, and one of three workers (replies then come in any order): a pool of
    its own, the process's pool (its queues and its workers' idents) restored afterwards."""
    if request.param is not None:
        monkeypatch.setattr(threads, "count", lambda: request.param)
        monkeypatch.setattr(threads, "_pool_pid", None)  # started again at that size
        monkeypatch.setattr(threads, "_workers", [])
        monkeypatch.setattr(threads, "_worker_ids", set())
    yield


def test_results_come_back_in_the_order_of_the_calls(workers):
    slow_first = [lambda k=k: (time.sleep(0.005 * (7 - k)), k * k)[1] for k in range(7)]
    assert threads.run(slow_first) == [k * k for k in range(7)]
    assert threads.run([lambda: "alone"]) == ["alone"]


@pytest.mark.parametrize("failing", [0, 1, 2])
def test_an_exception_is_raised_after_every_job_finished(failing, workers):
    finished = []

    def job(k):
        def call():
            time.sleep(0.02 * (k != failing))  # the others are still running when the failing one raises
            if k == failing:
                raise ValueError(f"job {k}")
            finished.append(k)
            return k
        return call
    with pytest.raises(ValueError, match=f"job {failing}"):
        threads.run([job(k) for k in range(3)])
    assert sorted(finished) == [k for k in range(3) if k != failing]  # none left writing after the raise
    assert threads.run([lambda: 1, lambda: 2]) == [1, 2]  # the pool still works


def test_several_threads_split_work_at_once(workers):
    """Each caller gets its own results back, never another caller's (one reply queue per call)."""
    errors, results = [], {}

    def caller(t):
        try:
            for r in range(50):
                got = threads.run([lambda t=t, r=r, k=k: (t, r, k) for k in range(3)])
                assert got == [(t, r, k) for k in range(3)], got
            results[t] = True
        except BaseException as e:  # reported below
            errors.append(e)
    callers = [threading.Thread(target=caller, args=(t,)) for t in range(6)]
    for c in callers:
        c.start()
    for c in callers:
        c.join()
    assert not errors and len(results) == 6


def test_a_split_inside_a_job_runs_on_that_thread():
    """A job that splits again (a kernel calling over()) runs its parts on the worker running it, instead of
    queueing them behind itself (which would wait forever)."""
    def inner():
        return threads.run([lambda: threading.get_ident(), lambda: threading.get_ident()])
    outcome = []
    t = threading.Thread(target=lambda: outcome.append(threads.run([inner, inner])), daemon=True)
    t.start()
    t.join(20)
    assert outcome, "a split inside a worker's job hung"
    on_worker = outcome[0][1]  # the second job ran on a worker
    assert on_worker[0] == on_worker[1] != t.ident


def test_over_covers_the_range_once():
    hits = np.zeros(1000, np.int64)

    def kernel(a, b, out):
        out[a:b] += 1
    threads.over(kernel, 1000, hits)
    assert (hits == 1).all()


@pytest.mark.skipif(not hasattr(os, "fork") or sys.platform == "darwin", reason="fork")
def test_a_forked_child_starts_its_own_workers():
    threads.run([lambda: 1, lambda: 2])  # the parent's workers exist
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: the parent's worker threads are not running here
        try:
            ok = threads.run([lambda: 3, lambda: 4]) == [3, 4]
            os.write(w, b"ok" if ok else b"bad")
        finally:
            os._exit(0)
    os.close(w)
    deadline = time.time() + 20
    while time.time() < deadline:
        done, _ = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        time.sleep(0.05)
    else:
        os.kill(pid, 9)
        os.waitpid(pid, 0)
        pytest.fail("the forked child hung in threads.run")
    assert os.read(r, 10) == b"ok"
    os.close(r)


def test_a_worker_keeps_nothing_of_a_finished_job():
    """The buffer pool takes a kernel result's memory back once nothing references the array: a worker waiting
    for its next job must not hold the last one's closure (nor its arrays)."""
    import gc
    import weakref

    class Payload:
        pass
    payload = Payload()
    ref = weakref.ref(payload)
    threads.run([lambda: None, lambda p=payload: p and None])
    del payload
    gc.collect()
    assert ref() is None

"""DataLoader with worker processes against torch's: the same batches in the same order, IterableDataset
copies per worker, get_worker_info and worker_init_fn, seeding, persistent workers, a worker's exception
raised again with torch's wording, timeouts, a dead worker, numgrad's thread pool in a forked worker, and
the spawn context. Every test runs under a deadline, so that a hang fails instead of blocking the suite."""
import contextlib
import multiprocessing
import signal

import pytest
import torch
import torch.utils.data as tdata

import numgrad
import numgrad.utils.data as ndata
from helpers import worker_datasets as wd
from helpers.batches import epoch

LIBS = {"numgrad": ndata, "torch": tdata}


@contextlib.contextmanager
def deadline(seconds=20):
    def expire(*_):
        raise TimeoutError(f"DataLoader test still running after {seconds} s")
    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def both(kind, n=10, **kw):
    """(numgrad's loader, torch's loader) over the same dataset."""
    return tuple(LIBS[name].DataLoader(wd.make(kind, name, n), **kw) for name in ("numgrad", "torch"))


def error_of(loader):
    it = iter(loader)
    with pytest.raises(Exception) as info:
        list(it)
    it._shutdown_workers()  # now: the traceback holds the iterator, and torch's shutdown by the collector is slow
    return info.type, str(info.value)


@pytest.mark.parametrize("kw", [{"batch_size": 3}, {"batch_size": 3, "drop_last": True}, {"batch_size": None},
                                {"batch_size": 2, "prefetch_factor": 1}, {"batch_size": 4, "in_order": False}])
def test_same_batches_as_torch(kw):
    with deadline():
        ours, theirs = both("Rows", 10, num_workers=2, **kw)
        got, want = epoch(ours), epoch(theirs)
        if kw.get("in_order", True):
            assert got == want
        else:  # out of order allowed: the same batches
            assert sorted(map(repr, got)) == sorted(map(repr, want))
        assert len(ours) == len(theirs)


@pytest.mark.parametrize("kind, kw", [("Sharded", {"batch_size": 2}), ("Sharded", {"batch_size": None}),
                                      ("Copies", {"batch_size": 3}), ("Sharded", {"batch_size": 2, "drop_last": True})])
def test_iterable_dataset_copies_per_worker(kind, kw):
    with deadline():
        ours, theirs = both(kind, 7, num_workers=2, **kw)
        assert epoch(ours) == epoch(theirs)


def test_worker_info_init_fn_and_seeds():
    with deadline():
        loader = ndata.DataLoader(wd.make("Who", "numgrad", 6), batch_size=None, num_workers=2,
                                  worker_init_fn=wd.set_marker_numgrad, generator=numgrad.Generator().manual_seed(3))
        rows = list(loader)
        replay = list(ndata.DataLoader(wd.make("Who", "numgrad", 6), batch_size=None, num_workers=2,
                                       worker_init_fn=wd.set_marker_numgrad,
                                       generator=numgrad.Generator().manual_seed(3)))
    assert [r[1] for r in rows] == [0, 1, 0, 1, 0, 1] and {r[2] for r in rows} == {2}
    assert [r[6] for r in rows] == ["init 0", "init 1"] * 3
    pids = {r[1]: r[0] for r in rows}
    assert len(set(pids.values())) == 2 and numgrad.utils.data.get_worker_info() is None
    assert rows[1][3] == rows[0][3] + 1  # seed = base seed + worker id
    assert all(r[7] == r[3] for r in rows)  # the worker's default generator was seeded with it
    assert rows[0][4] != rows[1][4] and rows[0][5] != rows[1][5]  # numgrad's and NumPy's streams differ per worker
    assert [r[3:] for r in rows] == [r[3:] for r in replay]  # and follow the loader's generator


def test_numpy_seed_of_a_worker_is_torchs():
    from torch.utils.data._utils import worker as torch_worker
    for base, wid in [(0, 0), (12345678901234, 1), (2**63 - 1, 7)]:
        assert ndata._utils.worker._generate_state(base, wid) == torch_worker._generate_state(base, wid)


def test_worker_exception_is_raised_again_with_torchs_wording():
    with deadline():
        ours, theirs = both("Failing", 6, num_workers=2, batch_size=2)
        (t1, m1), (t2, m2) = error_of(ours), error_of(theirs)
    assert t1 is t2 is ValueError
    assert m1.splitlines()[0] == m2.splitlines()[0] == "Caught ValueError in DataLoader worker process 1."
    assert m1.splitlines()[1] == "Original Traceback (most recent call last):"
    assert m1.splitlines()[-1] == m2.splitlines()[-1] == "ValueError: bad sample 3"


def test_worker_key_error_and_init_fn_error():
    with deadline():
        ours, theirs = both("FailingKey", 4, num_workers=1)
        (t1, m1), (t2, m2) = error_of(ours), error_of(theirs)
        assert t1 is t2 is KeyError and m1.splitlines()[0] == m2.splitlines()[0]
        ours, theirs = both("Rows", 4, num_workers=2, worker_init_fn=wd.failing_init)
        (t1, m1), (t2, m2) = error_of(ours), error_of(theirs)
    assert t1 is t2 is ZeroDivisionError
    assert m1.splitlines()[0] == m2.splitlines()[0] == "Caught ZeroDivisionError in DataLoader worker process 0."


def test_an_exception_that_needs_other_arguments_comes_back_as_runtime_error():
    with deadline():
        ours, theirs = both("FailingOddly", 2, num_workers=1)
        (t1, m1), (t2, m2) = error_of(ours), error_of(theirs)
    assert t1 is t2 is RuntimeError
    assert m1.splitlines()[0] == m2.splitlines()[0] == "Caught TwoArgumentError in DataLoader worker process 0."
    assert m1.splitlines()[-1] == m2.splitlines()[-1]


def test_persistent_workers_keep_their_processes_across_epochs():
    with deadline():
        loader = ndata.DataLoader(wd.make("Who", "numgrad", 4), batch_size=None, num_workers=2,
                                  persistent_workers=True)
        first, second = list(loader), list(loader)
        assert {r[0] for r in first} == {r[0] for r in second} and len({r[0] for r in first}) == 2
        ours, theirs = both("Sharded", 5, num_workers=2, persistent_workers=True, batch_size=2)
        assert epoch(ours) == epoch(theirs) and epoch(ours) == epoch(theirs)
        ours._iterator._shutdown_workers()
        theirs._iterator._shutdown_workers()
        plain = ndata.DataLoader(wd.make("Who", "numgrad", 2), batch_size=None, num_workers=1)
        assert {r[0] for r in plain} != {r[0] for r in plain}  # new workers each epoch


def test_timeout():
    with deadline():
        ours, theirs = both("Slow", 4, num_workers=1, timeout=0.3, prefetch_factor=1)
        assert error_of(ours) == error_of(theirs) == (RuntimeError, "DataLoader timed out after 0.3 seconds")


def test_a_dead_worker_is_reported():
    with deadline():
        loader = ndata.DataLoader(wd.make("Dying", "numgrad", 4), batch_size=None, num_workers=1)
        kind, message = error_of(loader)
    assert kind is RuntimeError and message.startswith("DataLoader worker (pid(s) ") and \
        message.endswith(") exited unexpectedly")


def test_leaving_an_epoch_early_ends_the_workers():
    with deadline():
        loader = ndata.DataLoader(wd.make("Rows", "numgrad", 50), batch_size=2, num_workers=2)
        it = iter(loader)
        next(it)
        workers = list(it._workers)
        del it
        for w in workers:
            w.join(timeout=5)
        assert not any(w.is_alive() for w in workers)


def test_numgrad_thread_pool_in_forked_workers():
    """The parent has run the thread pool (its threads do not exist in a forked child): the worker starts its
    own, and its sums match the parent's."""
    with deadline(30):
        expected = [float(wd.make("Heavy", "numgrad").__getitem__(i)) for i in range(4)]
        got = [float(x) for x in ndata.DataLoader(wd.make("Heavy", "numgrad", 4), batch_size=None, num_workers=2)]
    assert got == expected


def test_spawned_workers_get_the_dataset_pickled():
    """A TensorDataset's numgrad tensors travel to a spawned worker (no fork: pickled) and back."""
    def loader(lib, data, **kw):
        return data.DataLoader(data.TensorDataset(lib.arange(12.0).reshape(6, 2), lib.arange(6)), batch_size=4, **kw)
    with deadline(60):
        assert epoch(loader(numgrad, ndata, num_workers=1, multiprocessing_context="spawn")) == \
            epoch(loader(torch, tdata))


def test_forkserver_workers():
    with deadline(60):
        ctx = multiprocessing.get_context("forkserver")
        loader = ndata.DataLoader(wd.make("Rows", "numgrad", 5), batch_size=2, num_workers=1,
                                  multiprocessing_context=ctx)
        assert epoch(loader) == epoch(tdata.DataLoader(wd.make("Rows", "torch", 5), batch_size=2))

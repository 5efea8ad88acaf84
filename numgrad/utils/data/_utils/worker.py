"""The worker process's side of a DataLoader with num_workers > 0: seeding, get_worker_info, the loop that
turns index lists into collated batches, and how an exception travels back to the main process."""
import dataclasses
import os
import queue
import random
import sys
import traceback

import numpy as np

from ....kernels import dispatch
from ....ops.random import manual_seed
from .fetch import _DatasetKind

# how often (seconds) a blocked worker checks that its parent lives, and the main process that its workers do
MP_STATUS_CHECK_INTERVAL = 1.0

_worker_info = None


@dataclasses.dataclass(frozen=True)
class WorkerInfo:
    """What get_worker_info() returns inside a worker: its id, the number of workers, its seed, its copy of
    the dataset."""
    id: int
    num_workers: int
    seed: int
    dataset: object
    rng: object = None
    worker_method: str = "multiprocessing"


def get_worker_info():
    """This worker's WorkerInfo, or None in the main process."""
    return _worker_info


@dataclasses.dataclass(frozen=True)
class _IterableDatasetStopIteration:
    worker_id: int


@dataclasses.dataclass(frozen=True)
class _ResumeIteration:
    seed: object = None


class KeyErrorMessage(str):
    """KeyError shows repr() of its argument; this keeps the multi-line message readable."""

    def __repr__(self):
        return self


class ExceptionWrapper:
    """An exception with its formatted traceback, picklable, raised again in the main process as torch
    words it: "Caught ValueError in DataLoader worker process 0.\\nOriginal Traceback ..."."""

    def __init__(self, exc_info=None, where="in background"):
        exc_info = exc_info or sys.exc_info()
        self.exc_type = exc_info[0]
        self.exc_msg = "".join(traceback.format_exception(*exc_info))
        self.where = where

    def reraise(self):
        msg = f"Caught {self.exc_type.__name__} {self.where}.\nOriginal {self.exc_msg}"
        if self.exc_type is KeyError:
            msg = KeyErrorMessage(msg)
        elif getattr(self.exc_type, "message", None):
            raise self.exc_type(message=msg)
        try:
            exception = self.exc_type(msg)
        except Exception:  # noqa: BLE001 - a type that takes other arguments: its message in a RuntimeError
            raise RuntimeError(msg) from None
        raise exception


class ManagerWatchdog:
    """Tells a worker whether the process that started it still runs (else it exits instead of waiting)."""

    def __init__(self):
        self.manager_pid = os.getppid()
        self.manager_dead = False

    def is_alive(self):
        if not self.manager_dead:
            self.manager_dead = os.getppid() != self.manager_pid
        return not self.manager_dead


def _generate_state(base_seed, worker_id):
    """NumPy's seed for a worker: torch's hash of (worker_id, base_seed) into four 32-bit words (NumPy's
    SeedSequence mixing), so that workers' NumPy streams differ and follow the loader's generator."""
    init_a, mult_a, init_b, mult_b = 0x43B0D7E5, 0x931E8875, 0x8B51F9DD, 0x58F38DED
    mix_mult_l, mix_mult_r, xshift, mask32 = 0xCA01F9DD, 0x4973F715, 16, 0xFFFFFFFF
    entropy = [worker_id, base_seed & mask32, base_seed >> 32, 0]
    hash_const_a = init_a

    def hash32(value):
        nonlocal hash_const_a
        value = (value ^ hash_const_a) & mask32
        hash_const_a = (hash_const_a * mult_a) & mask32
        value = (value * hash_const_a) & mask32
        return (value ^ (value >> xshift)) & mask32

    def mix(x, y):
        result = (((mix_mult_l * x) & mask32) - ((mix_mult_r * y) & mask32)) & mask32
        return (result ^ (result >> xshift)) & mask32

    pool = [hash32(e) for e in entropy]
    for i_src in range(4):
        for i_dst in range(4):
            if i_src != i_dst:
                pool[i_dst] = mix(pool[i_dst], hash32(pool[i_src]))
    hash_const_b, state = init_b, []
    for value in pool:
        value = (value ^ hash_const_b) & mask32
        hash_const_b = (hash_const_b * mult_b) & mask32
        value = (value * hash_const_b) & mask32
        state.append((value ^ (value >> xshift)) & mask32)
    return state


def _seed_worker(base_seed, worker_id):
    seed = base_seed + worker_id
    random.seed(seed)
    manual_seed(seed)
    np.random.seed(_generate_state(base_seed, worker_id))
    return seed


def _worker_loop(dataset_kind, dataset, index_queue, data_queue, done_event, auto_collation, collate_fn, drop_last,
                 base_seed, init_fn, worker_id, num_workers, persistent_workers, shared_seed):
    """Runs in the worker: (task index, sampler indices) from index_queue -> (task index, batch or
    ExceptionWrapper) on data_queue, until None arrives or the parent is gone."""
    global _worker_info
    try:
        dispatch.set_num_threads(1)  # as torch's workers: N workers beside the main process, not N * cores threads
        seed = _seed_worker(base_seed, worker_id)
        _worker_info = WorkerInfo(id=worker_id, num_workers=num_workers, seed=seed, dataset=dataset)
        init_exception = None
        try:
            if init_fn is not None:
                init_fn(worker_id)
            fetcher = _DatasetKind.create_fetcher(dataset_kind, dataset, auto_collation, collate_fn, drop_last)
        except Exception:  # noqa: BLE001 - sent back as the answer to the first task
            init_exception = ExceptionWrapper(where=f"in DataLoader worker process {worker_id}")
        iteration_end = False
        watchdog = ManagerWatchdog()
        while watchdog.is_alive():
            try:
                r = index_queue.get(timeout=MP_STATUS_CHECK_INTERVAL)
            except queue.Empty:
                if done_event.is_set():  # the main process is shutting down
                    break
                continue
            if isinstance(r, _ResumeIteration):  # a persistent worker's next epoch
                data_queue.put((r, None))
                iteration_end = False
                fetcher = _DatasetKind.create_fetcher(dataset_kind, dataset, auto_collation, collate_fn, drop_last)
                continue
            if r is None:
                break
            if done_event.is_set() or iteration_end:
                continue
            idx, index = r
            if init_exception is not None:
                data, init_exception = init_exception, None
            else:
                try:
                    data = fetcher.fetch(index)
                except Exception as e:  # noqa: BLE001 - every failure goes back to the main process
                    if isinstance(e, StopIteration) and dataset_kind == _DatasetKind.Iterable:
                        data = _IterableDatasetStopIteration(worker_id)
                        iteration_end = True
                    else:
                        data = ExceptionWrapper(where=f"in DataLoader worker process {worker_id}")
            data_queue.put((idx, data))
            del data, idx, index, r
    except KeyboardInterrupt:
        pass
    if done_event.is_set():
        data_queue.cancel_join_thread()
        data_queue.close()

"""Datasets for the DataLoader worker tests, importable by a spawned worker (they name numgrad or torch's data
module by a string, so that the child imports only the library its loader uses)."""
import importlib
import os
import time

import numpy as np


def data_module(lib_name):
    return importlib.import_module(f"{lib_name}.utils.data")


def make(kind, lib_name, *args):
    base = {"map": "Dataset", "iterable": "IterableDataset"}[KINDS[kind][1]]
    cls = type(kind, (KINDS[kind][0], getattr(data_module(lib_name), base)), {})
    obj = cls.__new__(cls)
    obj.setup(lib_name, *args)
    return obj


class _Base:
    def setup(self, lib_name, n=10, **kw):
        self.lib_name, self.n, self.kw = lib_name, n, kw

    def lib(self):
        return importlib.import_module(self.lib_name)

    def __len__(self):
        return self.n

    def __reduce__(self):  # spawned workers rebuild the class from its kind
        return make, (type(self).__name__, self.lib_name, self.n)


class Rows(_Base):
    """Sample i: (a float row, an int label, a string)."""

    def __getitem__(self, i):
        if not 0 <= i < self.n:
            raise IndexError(i)
        lib = self.lib()  # (made from NumPy: a numgrad kernel would be loaded again by every new worker)
        return lib.tensor(np.arange(3, dtype=np.float32) + 3 * i), i % 4, f"r{i}"


class Failing(_Base):
    """Raises ValueError at index 3."""

    def __getitem__(self, i):
        if i == 3:
            raise ValueError("bad sample 3")
        return i


class FailingKey(_Base):
    def __getitem__(self, i):
        raise KeyError("missing")


class TwoArgumentError(Exception):
    def __init__(self, code, detail):
        super().__init__(f"{code}: {detail}")


class FailingOddly(_Base):
    """Raises an exception that cannot be rebuilt from a message alone."""

    def __getitem__(self, i):
        raise TwoArgumentError(7, "odd")


class Who(_Base):
    """Sample i: the worker's pid, id, number of workers, seed, a value of each of numgrad's / NumPy's random
    streams, the worker_init_fn's mark, and the library's initial_seed() (torch's recipe seeds from it)."""

    def __getitem__(self, i):
        info = data_module(self.lib_name).get_worker_info()
        lib = self.lib()
        return (os.getpid(), info.id, info.num_workers, info.seed, float(lib.rand(1)), float(np.random.rand()),
                getattr(info.dataset, "marker", None), lib.initial_seed())


class Sharded(_Base):
    """An IterableDataset each worker reads its own share of (every num_workers-th value, from its id)."""

    def __iter__(self):
        info = data_module(self.lib_name).get_worker_info()
        start, step = (0, 1) if info is None else (info.id, info.num_workers)
        return iter(range(start, self.n, step))


class Copies(_Base):
    """An IterableDataset that does not shard: each worker yields all of it."""

    def __iter__(self):
        return iter(range(self.n))


class Slow(_Base):
    def __getitem__(self, i):
        time.sleep(1)
        return i


class Dying(_Base):
    def __getitem__(self, i):
        if i == 2:
            os._exit(3)
        return i


class Heavy(_Base):
    """Sample i: a sum over an array large enough for numgrad's thread pool (which the parent has used) to
    split it, computed in the forked worker."""

    def __getitem__(self, i):
        lib = self.lib()
        x = lib.full((1 << 19,), float(i), dtype=lib.float64)
        return (x * 2 + 1).sum()


KINDS = {"Rows": (Rows, "map"), "Failing": (Failing, "map"), "FailingKey": (FailingKey, "map"),
         "FailingOddly": (FailingOddly, "map"), "Who": (Who, "map"),
         "Sharded": (Sharded, "iterable"), "Copies": (Copies, "iterable"), "Slow": (Slow, "map"),
         "Dying": (Dying, "map"), "Heavy": (Heavy, "map")}


def set_marker_torch(worker_id):
    """A worker_init_fn: marks this worker's copy of the dataset."""
    info = data_module("torch").get_worker_info()
    info.dataset.marker = f"init {worker_id}"


def set_marker_numgrad(worker_id):
    info = data_module("numgrad").get_worker_info()
    info.dataset.marker = f"init {worker_id}"


def failing_init(worker_id):
    raise ZeroDivisionError(f"init of {worker_id}")

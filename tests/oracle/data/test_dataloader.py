"""DataLoader in the main process against torch's: the same dataset gives the same batches (shuffle=False;
samplers and batch samplers given; drop_last; batch_size=None; collate_fn; IterableDatasets), len(), shuffling's
invariants with a seeded Generator, and torch's errors and warnings for bad options."""
import collections
import warnings

import numpy as np
import pytest
import torch
import torch.utils.data as tdata

import numgrad
import numgrad.utils.data as ndata
from helpers.batches import epoch, structure
from helpers.outcomes import outcome

MODULES = {numgrad: ndata, torch: tdata}
Pair = collections.namedtuple("Pair", "image label")


def same(fn):
    assert outcome(lambda lib: fn(lib, MODULES[lib]), numgrad) == outcome(lambda lib: fn(lib, MODULES[lib]), torch)


def tensor_dataset(lib):
    data = MODULES[lib]
    return data.TensorDataset(lib.arange(30.0).reshape(10, 3), lib.arange(10) % 3)


class Records:
    """Samples of every kind default_collate handles."""

    def __len__(self):
        return 7

    def __getitem__(self, i):
        if not 0 <= i < 7:
            raise IndexError(i)
        return {"x": np.full((2,), i, np.float32), "n": i, "f": i / 2, "s": f"s{i}",
                "pair": Pair(np.arange(3) * i, i % 2), "t": (i, [i, -i])}


class Stream:
    def __init__(self, n):
        self.n = n

    def __iter__(self):
        return iter(np.arange(self.n, dtype=np.float64) * 1.5)


def stream(lib, n=9, length=True):
    base = MODULES[lib].IterableDataset
    cls = type("Stream", (Stream, base), {"__len__": lambda self: self.n} if length else {})
    return cls(n)


LOADERS = {
    "batch 4": lambda lib, data: data.DataLoader(tensor_dataset(lib), batch_size=4),
    "drop_last": lambda lib, data: data.DataLoader(tensor_dataset(lib), batch_size=4, drop_last=True),
    "batch 1": lambda lib, data: data.DataLoader(tensor_dataset(lib)),
    "no batching": lambda lib, data: data.DataLoader(tensor_dataset(lib), batch_size=None),
    "records": lambda lib, data: data.DataLoader(Records(), batch_size=3),
    "records unbatched": lambda lib, data: data.DataLoader(Records(), batch_size=None),
    "list dataset": lambda lib, data: data.DataLoader([(i, float(i)) for i in range(5)], batch_size=2),
    "sampler": lambda lib, data: data.DataLoader(tensor_dataset(lib), batch_size=3, sampler=[9, 1, 4, 4, 0]),
    "batch_sampler": lambda lib, data: data.DataLoader(tensor_dataset(lib), batch_sampler=[[0, 5], [9], [2, 2, 3]]),
    "BatchSampler": lambda lib, data: data.DataLoader(Records(), batch_sampler=data.BatchSampler(
        data.SequentialSampler(range(7)), 2, True)),
    "collate_fn": lambda lib, data: data.DataLoader(Records(), batch_size=2, collate_fn=lambda b: [r["n"] for r in b]),
    "iterable": lambda lib, data: data.DataLoader(stream(lib), batch_size=4),
    "iterable drop_last": lambda lib, data: data.DataLoader(stream(lib), batch_size=4, drop_last=True),
    "iterable unbatched": lambda lib, data: data.DataLoader(stream(lib), batch_size=None),
    "subset": lambda lib, data: data.DataLoader(data.Subset(tensor_dataset(lib), [3, 1, 2]), batch_size=2),
    "concat": lambda lib, data: data.DataLoader(tensor_dataset(lib) + tensor_dataset(lib), batch_size=8),
}


@pytest.mark.parametrize("name", list(LOADERS))
def test_same_batches_and_len_as_torch(name):
    ours, theirs = LOADERS[name](numgrad, ndata), LOADERS[name](torch, tdata)
    assert epoch(ours) == epoch(theirs)
    assert outcome(lambda lib: len(ours), numgrad) == outcome(lambda lib: len(theirs), torch)


def test_len_of_an_iterable_dataset_without_len():
    same(lambda lib, data: len(data.DataLoader(stream(lib, length=False), batch_size=2)))


def test_an_iterable_dataset_longer_than_its_len_warns():
    def run(lib, data):
        loader = data.DataLoader(stream(lib, 9), batch_size=None)
        stream_len = len(loader)
        loader.dataset.n = 11
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            n = len(list(loader))
        return stream_len, n, [str(x.message).split(" was reported")[1] for x in w]
    assert run(numgrad, ndata) == run(torch, tdata)


def test_shuffle_invariants():
    ds = tensor_dataset(numgrad)
    loader = ndata.DataLoader(ds, batch_size=3, shuffle=True, generator=numgrad.Generator().manual_seed(0))
    first, second = [b[1].tolist() for b in loader], [b[1].tolist() for b in loader]
    rows = [r for b in loader for r in b[0].tolist()]
    assert sorted(rows) == ds.tensors[0].tolist()  # every sample once a pass
    assert [len(b) for b in first] == [3, 3, 3, 1]
    replay = ndata.DataLoader(ds, batch_size=3, shuffle=True, generator=numgrad.Generator().manual_seed(0))
    assert [b[1].tolist() for b in replay] == first and [b[1].tolist() for b in replay] == second
    order = [[int(r[0]) // 3 for r in b[0].tolist()] for b in
             ndata.DataLoader(ds, batch_size=10, shuffle=True, generator=numgrad.Generator().manual_seed(1))]
    other = [[int(r[0]) // 3 for r in b[0].tolist()] for b in
             ndata.DataLoader(ds, batch_size=10, shuffle=True, generator=numgrad.Generator().manual_seed(2))]
    assert order != other and sorted(order[0]) == sorted(other[0]) == list(range(10))
    numgrad.manual_seed(7)
    a = [b[1].tolist() for b in ndata.DataLoader(ds, batch_size=4, shuffle=True)]
    numgrad.manual_seed(7)
    assert a == [b[1].tolist() for b in ndata.DataLoader(ds, batch_size=4, shuffle=True)]


def test_attributes_match_torch():
    same(lambda lib, data: (lambda d: (d.batch_size, d.drop_last, d.num_workers, d.prefetch_factor, d.timeout,
                                       type(d.sampler).__name__, type(d.batch_sampler).__name__,
                                       d.collate_fn.__name__))(data.DataLoader(tensor_dataset(lib), batch_size=2)))
    same(lambda lib, data: (lambda d: (type(d.sampler).__name__, d.batch_sampler, d.collate_fn.__name__))(
        data.DataLoader(tensor_dataset(lib), batch_size=None, shuffle=True)))
    same(lambda lib, data: data.DataLoader(tensor_dataset(lib), num_workers=1).prefetch_factor)


@pytest.mark.parametrize("kw", [
    {"num_workers": -1}, {"timeout": -1}, {"prefetch_factor": 2}, {"num_workers": 1, "prefetch_factor": -1},
    {"persistent_workers": True}, {"shuffle": True, "sampler": [0, 1]},
    {"batch_sampler": [[0]], "batch_size": 2}, {"batch_sampler": [[0]], "drop_last": True},
    {"batch_sampler": [[0]], "shuffle": True}, {"batch_sampler": [[0]], "sampler": [0]},
    {"batch_size": None, "drop_last": True}, {"multiprocessing_context": "spawn"},
    {"num_workers": 1, "multiprocessing_context": "nonsense"}, {"num_workers": 1, "multiprocessing_context": 3},
    {"batch_size": 0}, {"batch_size": 2, "drop_last": 1},
])
def test_option_errors_match_torch(kw):
    same(lambda lib, data: data.DataLoader(tensor_dataset(lib), **kw))


@pytest.mark.parametrize("kw", [{"shuffle": True}, {"sampler": [0]}, {"batch_sampler": [[0]]}])
def test_iterable_dataset_option_errors(kw):
    def run(lib, data):
        try:
            data.DataLoader(stream(lib), **kw)
        except ValueError as e:
            return str(e).split(" but got")[0]
    assert run(numgrad, ndata) == run(torch, tdata) is not None


def test_a_timeout_needs_workers():
    same(lambda lib, data: iter(data.DataLoader(tensor_dataset(lib), timeout=1)))


def test_attributes_cannot_be_reset():
    same(lambda lib, data: setattr(data.DataLoader(tensor_dataset(lib)), "batch_size", 3))
    for lib, data in MODULES.items():
        loader = data.DataLoader(tensor_dataset(lib))
        loader.num_workers = 0  # others may change
        assert loader.num_workers == 0


def test_dataset_errors_reach_the_caller_unchanged():
    same(lambda lib, data: list(data.DataLoader(Records(), sampler=[0, 9])))
    same(lambda lib, data: list(data.DataLoader([[1, 2], [3]], batch_size=2)))


def test_pin_memory_accepted_with_torch_warning_when_no_accelerator():
    def run(lib, data):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            batches = epoch(data.DataLoader(tensor_dataset(lib), batch_size=5, pin_memory=True))
        return batches, sorted({str(x.message) for x in w})
    assert run(numgrad, ndata) == run(torch, tdata)


def test_more_workers_than_cpus_warns_as_torch():
    def run(lib, data):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            data.DataLoader(tensor_dataset(lib), num_workers=1000)
        return [str(x.message) for x in w]
    assert run(numgrad, ndata) == run(torch, tdata) != []


def test_module_paths():
    from numgrad.utils.data.dataloader import DataLoader, default_collate, get_worker_info
    from numgrad.utils.data.dataset import Dataset, TensorDataset
    from numgrad.utils.data.sampler import RandomSampler, Sampler
    assert DataLoader is ndata.DataLoader and get_worker_info() is None and default_collate is ndata.default_collate
    assert Dataset is ndata.Dataset and TensorDataset and RandomSampler and Sampler
    assert numgrad.utils.data.DataLoader is DataLoader
    assert DataLoader[int] is not None and ndata.Sampler[int] is not None  # subscriptable in annotations
    assert sorted(ndata.__all__) == sorted(n for n in tdata.__all__ if n in dir(ndata))
    assert structure(ndata.default_collate([1])) == structure(tdata.default_collate([1]))

"""Datasets against torch's: TensorDataset, ConcatDataset, ChainDataset, StackDataset, Subset, `+`, random_split
(lengths or fractions; the split is a partition, reproducible with a seeded generator) and their errors."""
import warnings

import pytest
import torch
import torch.utils.data as tdata

import numgrad
import numgrad.utils.data as ndata
from helpers.batches import structure
from helpers.outcomes import outcome

MODULES = {numgrad: ndata, torch: tdata}


def same(fn):
    assert outcome(lambda lib: fn(lib, MODULES[lib]), numgrad) == outcome(lambda lib: fn(lib, MODULES[lib]), torch)


class Squares:
    def __init__(self, data, n):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        if not 0 <= i < self.n:
            raise IndexError(i)
        return i * i


def squares(data, n):
    return type("Squares", (Squares, data.Dataset), {})(data, n)


class Counting:
    def __init__(self, n):
        self.n = n

    def __iter__(self):
        return iter(range(self.n))

    def __len__(self):
        return self.n


def counting(data, n):
    return type("Counting", (Counting, data.IterableDataset), {})(n)


def items(ds):
    return [structure(ds[i]) for i in range(len(ds))]


def test_tensor_dataset_items_and_len():
    def build(lib, data):
        return data.TensorDataset(lib.arange(12.0).reshape(4, 3), lib.tensor([1, 0, 1, 1]))
    assert items(build(numgrad, ndata)) == items(build(torch, tdata))
    assert len(build(numgrad, ndata)) == 4
    same(lambda lib, data: data.TensorDataset(lib.zeros(3), lib.zeros(4)))


def test_concat_and_add():
    for lib, data in MODULES.items():
        cat = squares(data, 3) + squares(data, 2)
        assert isinstance(cat, data.ConcatDataset) and cat.cumulative_sizes == [3, 5]
        assert [cat[i] for i in range(5)] == [0, 1, 4, 0, 1] and cat[-1] == 1 and len(cat) == 5
    same(lambda lib, data: (squares(data, 3) + squares(data, 2))[-6])
    same(lambda lib, data: data.ConcatDataset([]))
    same(lambda lib, data: data.ConcatDataset([counting(data, 2)]))


def test_chain_dataset():
    for lib, data in MODULES.items():
        chain = counting(data, 2) + counting(data, 3)
        assert isinstance(chain, data.ChainDataset) and list(chain) == [0, 1, 0, 1, 2] and len(chain) == 5
    same(lambda lib, data: list(data.ChainDataset([squares(data, 2)])))


def test_stack_dataset():
    for lib, data in MODULES.items():
        assert data.StackDataset(squares(data, 3), squares(data, 3))[2] == (4, 4)
        assert data.StackDataset(a=squares(data, 2), b=squares(data, 2))[1] == {"a": 1, "b": 1}
    same(lambda lib, data: data.StackDataset(squares(data, 2), b=squares(data, 2)))
    same(lambda lib, data: data.StackDataset())
    same(lambda lib, data: data.StackDataset(squares(data, 2), squares(data, 3)))


def test_subset():
    for lib, data in MODULES.items():
        sub = data.Subset(squares(data, 5), [4, 0, 2])
        assert [sub[i] for i in range(3)] == [16, 0, 4] and sub.__getitems__([0, 2]) == [16, 4] and len(sub) == 3

    def override(lib, data):
        class Bad(data.Subset):
            def __getitem__(self, i):
                return 0
        return Bad(squares(data, 2), [0])
    same(override)


@pytest.mark.parametrize("lengths", [[3, 7], [0.3, 0.7], [0.5, 0.5], [0.25, 0.25, 0.25, 0.25], [0.34, 0.33, 0.33],
                                     [10, 0], [1.0]])
def test_random_split_lengths_partition_and_reproducibility(lengths):
    def sizes(lib, data):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            parts = data.random_split(squares(data, 10), lengths, generator=lib.Generator().manual_seed(1))
        return [len(p) for p in parts], [str(x.message) for x in w]
    assert sizes(numgrad, ndata) == sizes(torch, tdata)
    split = ndata.random_split(squares(ndata, 10), lengths, generator=numgrad.Generator().manual_seed(4))
    again = ndata.random_split(squares(ndata, 10), lengths, generator=numgrad.Generator().manual_seed(4))
    assert sorted(i for p in split for i in p.indices) == list(range(10))
    assert [p.indices for p in split] == [p.indices for p in again]
    assert all(isinstance(p, ndata.Subset) for p in split)


def test_random_split_uses_the_default_generator():
    numgrad.manual_seed(3)
    a = [p.indices for p in ndata.random_split(range(20), [10, 10])]
    numgrad.manual_seed(3)
    assert a == [p.indices for p in ndata.random_split(range(20), [10, 10])]


@pytest.mark.parametrize("lengths", [[3, 3], [-0.5, 1.5], [0.5, 0.6], [11], [1.2, -0.2]])
def test_random_split_errors(lengths):
    same(lambda lib, data: data.random_split(squares(data, 10), lengths))


def test_base_classes():
    same(lambda lib, data: data.Dataset()[0])
    for lib, data in MODULES.items():
        assert issubclass(data.IterableDataset, data.Dataset)
        assert data.Dataset[int] is not None  # subscriptable in annotations

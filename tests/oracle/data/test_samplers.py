"""Samplers against torch's: lengths, the orders (sequential exactly; random ones as permutations, the same for
the same seed, new each pass), batching with drop_last, weighted draws, and the argument errors."""
import numpy as np
import pytest
import torch
import torch.utils.data as tdata

import numgrad
import numgrad.utils.data as ndata
from helpers.outcomes import outcome

MODULES = {numgrad: ndata, torch: tdata}


def same(fn):
    assert outcome(lambda lib: fn(lib, MODULES[lib]), numgrad) == outcome(lambda lib: fn(lib, MODULES[lib]), torch)


def test_sequential_sampler():
    same(lambda lib, data: (list(data.SequentialSampler(range(5))), len(data.SequentialSampler(range(5)))))


@pytest.mark.parametrize("batch_size, drop_last", [(1, False), (3, False), (3, True), (5, True), (7, False),
                                                   (7, True)])
def test_batch_sampler(batch_size, drop_last):
    same(lambda lib, data: (list(data.BatchSampler(data.SequentialSampler(range(5)), batch_size, drop_last)),
                            len(data.BatchSampler(range(5), batch_size, drop_last))))


@pytest.mark.parametrize("args", [(0, False), (-1, False), (2.0, False), (True, False), (2, 1), (2, None)])
def test_batch_sampler_errors(args):
    same(lambda lib, data: data.BatchSampler(range(4), *args))


@pytest.mark.parametrize("kw", [{}, {"num_samples": 7}, {"num_samples": 25}, {"replacement": True},
                                {"replacement": True, "num_samples": 70}])
def test_random_sampler_lengths_and_values(kw):
    for lib, data in MODULES.items():
        s = data.RandomSampler(range(10), generator=lib.Generator().manual_seed(0), **kw)
        order = list(s)
        assert len(s) == len(order) == kw.get("num_samples", 10) and set(order) <= set(range(10))
        if not kw.get("replacement"):  # each full pass is a permutation
            for k in range(0, len(order) - len(order) % 10, 10):
                assert sorted(order[k:k + 10]) == list(range(10))


def test_random_sampler_seeded_passes():
    g = numgrad.Generator().manual_seed(5)
    s = ndata.RandomSampler(range(50), generator=g)
    first, second = list(s), list(s)
    assert sorted(first) == sorted(second) == list(range(50)) and first != second
    again = ndata.RandomSampler(range(50), generator=numgrad.Generator().manual_seed(5))
    assert list(again) == first and list(again) == second
    numgrad.manual_seed(1)
    a = list(ndata.RandomSampler(range(50)))
    numgrad.manual_seed(1)
    assert list(ndata.RandomSampler(range(50))) == a  # without a generator: seeded from the default one


@pytest.mark.parametrize("kw", [{"replacement": 1}, {"num_samples": 0}, {"num_samples": 2.0}, {"num_samples": -3}])
def test_random_sampler_errors(kw):
    same(lambda lib, data: data.RandomSampler(range(4), **kw))


def test_subset_random_sampler():
    s = ndata.SubsetRandomSampler([3, 5, 7, 9], generator=numgrad.Generator().manual_seed(2))
    assert len(s) == 4 and sorted(s) == [3, 5, 7, 9]
    assert list(ndata.SubsetRandomSampler([3, 5, 7, 9], generator=numgrad.Generator().manual_seed(2))) == list(
        ndata.SubsetRandomSampler([3, 5, 7, 9], generator=numgrad.Generator().manual_seed(2)))


def test_weighted_random_sampler():
    w = [0.0, 1.0, 3.0, 0.0]
    s = ndata.WeightedRandomSampler(w, 4000, generator=numgrad.Generator().manual_seed(0))
    counts = np.bincount(list(s), minlength=4) / 4000
    assert len(s) == 4000 and counts[0] == counts[3] == 0
    np.testing.assert_allclose(counts, np.array(w) / 4, atol=0.03)
    no_repeat = list(ndata.WeightedRandomSampler([1.0, 2.0, 3.0], 3, replacement=False))
    assert sorted(no_repeat) == [0, 1, 2]
    same(lambda lib, data: (data.WeightedRandomSampler([1, 2], 3).weights.dtype, len(list(
        data.WeightedRandomSampler([1, 2], 3)))))


@pytest.mark.parametrize("args", [([1.0, 2.0], 0), ([1.0, 2.0], True), ([1.0, 2.0], 2, 1), ([[1.0, 2.0]], 2),
                                  ([1.0, 2.0], 2.5)])
def test_weighted_random_sampler_errors(args):
    same(lambda lib, data: data.WeightedRandomSampler(*args))


def test_weighted_random_sampler_without_replacement_asking_too_many():
    same(lambda lib, data: list(data.WeightedRandomSampler([1.0, 2.0], 3, replacement=False)))

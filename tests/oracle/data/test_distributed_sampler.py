"""DistributedSampler against torch's, given num_replicas and rank (no process group needed): the same
indices without shuffling, padding and drop_last as torch's; with shuffling (numgrad's random stream is its
own) each epoch's shares partition one permutation, set_epoch reshuffles, and the errors are torch's."""
import pytest
import torch

import numgrad
from numgrad.utils.data import DistributedSampler


@pytest.mark.parametrize("n", [0, 1, 7, 8, 10])
@pytest.mark.parametrize("replicas", [1, 3, 4])
@pytest.mark.parametrize("drop_last", [False, True])
def test_unshuffled_shares_equal_torchs(n, replicas, drop_last):
    for rank in range(replicas):
        ours = DistributedSampler(range(n), replicas, rank, shuffle=False, drop_last=drop_last)
        theirs = torch.utils.data.DistributedSampler(range(n), replicas, rank, shuffle=False, drop_last=drop_last)
        assert list(ours) == list(theirs) and len(ours) == len(theirs)


@pytest.mark.parametrize("drop_last", [False, True])
def test_shuffled_shares_partition_one_permutation_per_epoch(drop_last):
    n, replicas = 10, 4
    orders = []
    for epoch in range(3):
        shares = []
        for rank in range(replicas):
            s = DistributedSampler(list(range(n)), replicas, rank, seed=5, drop_last=drop_last)
            s.set_epoch(epoch)
            shares.append(list(s))
        assert len({len(x) for x in shares}) == 1
        merged = [i for row in zip(*shares) for i in row]
        assert set(merged) <= set(range(n))
        assert len(set(merged)) == (8 if drop_last else n)
        orders.append(merged)
    assert orders[0] != orders[1]
    again = DistributedSampler(list(range(n)), replicas, 0, seed=5, drop_last=drop_last)
    assert list(again) == orders[0][0::replicas]


def test_errors_as_torchs():
    for lib in (numgrad, torch):
        with pytest.raises(ValueError, match=r"Invalid rank 4, rank should be in the interval \[0, 3\]"):
            lib.utils.data.DistributedSampler(range(5), 4, 4)


def test_a_dataloader_with_the_sampler():
    data = numgrad.utils.data.TensorDataset(numgrad.arange(10.0))
    sampler = DistributedSampler(data, num_replicas=2, rank=1, shuffle=False)
    batches = [b[0].tolist() for b in numgrad.utils.data.DataLoader(data, batch_size=2, sampler=sampler)]
    assert batches == [[1.0, 3.0], [5.0, 7.0], [9.0]]

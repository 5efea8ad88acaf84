"""EmbeddingBag and F.embedding_bag against torch with torch's weights: sum, mean and max bags from offsets or
a 2-D input, include_last_offset, padding_idx, per_sample_weights, empty bags, max_norm; values, weight and
per-sample-weight gradients, float64 gradchecks, reprs and errors."""
import numpy as np
import pytest
import torch

import numgrad
from numgrad.testing import gradcheck, gradgradcheck
from helpers.nn_compare import assert_same, compare_grads, rand, twin

INDICES = np.array([1, 2, 4, 5, 4, 3, 2, 9, 2, 2], np.int64)
CASES = {
    "mean_offsets": ({}, INDICES, np.array([0, 4, 4, 7])),  # the second bag is empty
    "sum_offsets": ({"mode": "sum"}, INDICES, np.array([0, 3, 8])),
    "max_offsets": ({"mode": "max"}, INDICES, np.array([0, 4, 4, 7])),
    "max_ties": ({"mode": "max"}, INDICES, np.array([0, 8])),
    "last_offset": ({"mode": "sum", "include_last_offset": True}, INDICES, np.array([0, 2, 6, 10])),
    "padding_mean": ({"padding_idx": 2}, INDICES, np.array([0, 2, 6, 8])),  # the last bag: padding only
    "padding_max": ({"mode": "max", "padding_idx": -8}, INDICES, np.array([0, 2, 6])),
    "two_d_mean": ({}, INDICES.reshape(2, 5), None),
    "two_d_max": ({"mode": "max"}, INDICES.reshape(5, 2), None),
    "scale_grad_by_freq": ({"mode": "sum", "scale_grad_by_freq": True}, INDICES, np.array([0, 5])),
    "scale_grad_by_freq_mean": ({"scale_grad_by_freq": True}, np.array([3, 3, 1, 0, 0, 0, 2]), np.array([0, 2])),
}


def _run(lib, module, indices, offsets, per_sample_weights=None):
    args = [lib.tensor(indices)]
    args.append(None if offsets is None else lib.tensor(offsets))
    psw = None if per_sample_weights is None else lib.tensor(per_sample_weights, requires_grad=True)
    out = module(*args, per_sample_weights=psw)
    (out * lib.tensor(rand(*out.shape, seed=3, dtype=per_sample_weights.dtype if psw is not None else np.float32)
                      ).to(out.dtype)).sum().backward()
    return out, psw


@pytest.mark.parametrize("name", list(CASES))
def test_embedding_bag_matches_torch(name):
    kwargs, indices, offsets = CASES[name]
    ours, theirs = twin(lambda lib: lib.nn.EmbeddingBag(10, 3, **kwargs))
    assert repr(ours) == repr(theirs) and list(ours.state_dict()) == list(theirs.state_dict())
    our_out, their_out = _run(numgrad, ours, indices, offsets)[0], _run(torch, theirs, indices, offsets)[0]
    assert_same(our_out, their_out)
    assert type(our_out.grad_fn).__name__ == type(their_out.grad_fn).__name__ == "EmbeddingBagBackward0"
    compare_grads(ours, theirs)


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
def test_all_bags_empty_match_torch(mode):
    ours, theirs = twin(lambda lib: lib.nn.EmbeddingBag(10, 3, mode=mode, padding_idx=2))
    indices, offsets = np.array([2, 2], np.int64), np.array([0, 0, 2])
    assert_same(_run(numgrad, ours, indices, offsets)[0], _run(torch, theirs, indices, offsets)[0])
    compare_grads(ours, theirs)


@pytest.mark.parametrize("two_d", [False, True], ids=["offsets", "2d"])
def test_per_sample_weights_match_torch(two_d):
    ours, theirs = twin(lambda lib: lib.nn.EmbeddingBag(10, 3, mode="sum").double())
    weights = rand(10, seed=4, dtype=np.float64)
    indices, offsets = (INDICES.reshape(2, 5), None) if two_d else (INDICES, np.array([0, 3, 3, 7]))
    if two_d:
        weights = weights.reshape(2, 5)
    our_out, our_psw = _run(numgrad, ours, indices, offsets, weights)
    their_out, their_psw = _run(torch, theirs, indices, offsets, weights)
    assert_same(our_out, their_out, rtol=1e-12, atol=1e-12)
    assert_same(our_psw.grad, their_psw.grad, rtol=1e-12, atol=1e-12)
    compare_grads(ours, theirs, rtol=1e-12, atol=1e-12)


def test_max_norm_renormalises_rows_as_torch():
    ours, theirs = twin(lambda lib: lib.nn.EmbeddingBag(10, 3, max_norm=0.5, mode="sum"))
    assert repr(ours) == repr(theirs)
    assert_same(_run(numgrad, ours, INDICES, np.array([0, 4]))[0], _run(torch, theirs, INDICES, np.array([0, 4]))[0])
    assert_same(ours.weight, theirs.weight)  # the rows read were scaled in place


def test_from_pretrained_matches_torch():
    table = rand(4, 2, seed=5)
    ours = numgrad.nn.EmbeddingBag.from_pretrained(numgrad.tensor(table), mode="max")
    theirs = torch.nn.EmbeddingBag.from_pretrained(torch.tensor(table), mode="max")
    assert repr(ours) == repr(theirs) and ours.weight.requires_grad is theirs.weight.requires_grad is False
    idx = np.array([[0, 3], [2, 1]])
    assert_same(ours(numgrad.tensor(idx)), theirs(torch.tensor(idx)))


def test_gradcheck():
    weight = numgrad.tensor(rand(10, 3, seed=1, dtype=np.float64), requires_grad=True)
    psw = numgrad.tensor(rand(10, seed=2, dtype=np.float64), requires_grad=True)
    idx, offsets = numgrad.tensor(INDICES), numgrad.tensor(np.array([0, 4, 4, 7]))
    F = numgrad.nn.functional
    assert gradcheck(lambda w: F.embedding_bag(idx, w, offsets, padding_idx=4), (weight,))
    assert gradcheck(lambda w: F.embedding_bag(idx, w, offsets, mode="max"), (weight,))
    assert gradcheck(lambda w, p: F.embedding_bag(idx, w, offsets, mode="sum", per_sample_weights=p), (weight, psw))
    assert gradgradcheck(lambda w, p: F.embedding_bag(idx, w, offsets, mode="sum", per_sample_weights=p),
                         (weight, psw))


ERRORS = [
    lambda lib: lib.nn.functional.embedding_bag(lib.tensor([[1, 2]]), lib.randn(5, 3), lib.tensor([0])),
    lambda lib: lib.nn.functional.embedding_bag(lib.tensor([1, 2]), lib.randn(5, 3)),
    lambda lib: lib.nn.functional.embedding_bag(lib.tensor([1, 2]), lib.randn(5, 3), lib.tensor([[0]])),
    lambda lib: lib.nn.functional.embedding_bag(lib.tensor([[[1]]]), lib.randn(5, 3)),
    lambda lib: lib.nn.functional.embedding_bag(lib.tensor([1, 2]), lib.randn(5), lib.tensor([0])),
    lambda lib: lib.nn.functional.embedding_bag(lib.tensor([1, 2]), lib.randn(5, 3), lib.tensor([0]), mode="min"),
    lambda lib: lib.nn.functional.embedding_bag(lib.tensor([1, 2]), lib.randn(5, 3), lib.tensor([0]), mode="max",
                                                scale_grad_by_freq=True),
    lambda lib: lib.nn.functional.embedding_bag(lib.tensor([1, 2]), lib.randn(5, 3), lib.tensor([0]),
                                                per_sample_weights=lib.ones(2)),
    lambda lib: lib.nn.functional.embedding_bag(lib.tensor([1, 2]), lib.randn(5, 3), lib.tensor([0]),
                                                mode="sum", per_sample_weights=lib.ones(3)),
    lambda lib: lib.nn.functional.embedding_bag(lib.tensor([1, 2]), lib.randn(5, 3), lib.tensor([1])),
    lambda lib: lib.nn.functional.embedding_bag(lib.tensor([1, 2]), lib.randn(5, 3), lib.tensor([0, 3])),
    lambda lib: lib.nn.functional.embedding_bag(lib.tensor([1, 2]), lib.randn(5, 3),
                                                lib.tensor([], dtype=lib.int64), include_last_offset=True),
    lambda lib: lib.nn.EmbeddingBag(5, 3, padding_idx=5),
    lambda lib: lib.nn.EmbeddingBag(5, 3, _weight=lib.ones(3, 5)),
]


@pytest.mark.parametrize("case", range(len(ERRORS)))
def test_errors_match_torch(case):
    outcomes = []
    for lib in (numgrad, torch):
        with pytest.raises(Exception) as info:
            ERRORS[case](lib)
        outcomes.append((type(info.value), str(info.value).replace("numgrad.tensor.Tensor", "torch.Tensor")))
    assert outcomes[0] == outcomes[1]

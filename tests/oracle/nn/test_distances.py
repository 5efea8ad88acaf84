"""cosine_similarity, pairwise_distance and pdist (functional, module and torch's top-level forms) against torch:
values, dtypes, grad_fn names, gradients, float64 gradchecks, torch's eps semantics and its errors."""
import numpy as np
import pytest
import torch

import numgrad
from helpers.compare_core import rand
from helpers.functional_compare import check_gradients_of, compare_arrays, same_error

A, B = rand(4, 6, seed=1), rand(4, 6, seed=2)


def _lib(F):
    return numgrad if F.__name__.startswith("numgrad") else torch


@pytest.mark.parametrize("dim", [1, 0, -1])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_cosine_similarity(dim, dtype):
    compare_arrays(lambda F, a, b: F.cosine_similarity(a, b, dim=dim), A.astype(dtype), B.astype(dtype))
    compare_arrays(lambda F, a, b: _lib(F).cosine_similarity(a, b, dim), A.astype(dtype), B.astype(dtype))
    compare_arrays(lambda F, a, b: _lib(F).nn.CosineSimilarity(dim, 1e-3)(a, b), A.astype(dtype), B.astype(dtype))


def test_cosine_similarity_eps_broadcast_and_dtypes():
    small = A * 1e-6
    zeros = np.zeros((4, 6), np.float32)
    # each norm is clamped to eps on its own (not their product), outside the graph: the gradient is torch's, not
    # the clamped function's (so compared with torch, not with finite differences)
    compare_arrays(lambda F, a, b: F.cosine_similarity(a, b, eps=1e-3), small, B)
    compare_arrays(lambda F, a, b: F.cosine_similarity(a, b), zeros, B)
    compare_arrays(lambda F, a, b: F.cosine_similarity(a, b, eps=0.0), A, B)
    compare_arrays(lambda F, a, b: F.cosine_similarity(a, b, dim=-1), rand(3, 1, 6, seed=3), rand(5, 6, seed=4))
    compare_arrays(lambda F, a, b: F.cosine_similarity(a, b, dim=0), A[0], B[0])
    compare_arrays(lambda F, a, b: F.cosine_similarity(a, b), A, B.astype(np.float64))
    compare_arrays(lambda F, a, b: F.cosine_similarity(a, b), np.round(A * 3).astype(np.int64), B, grads=[1])
    compare_arrays(lambda F, a, b: F.cosine_similarity(a, b), A > 0, B.astype(np.float16), grads=[], rtol=1e-3,
                   atol=1e-3)
    compare_arrays(lambda F, a, b: F.cosine_similarity(a, b, eps=1e6), A.astype(np.float16),
                   B.astype(np.float16), grads=[])  # an eps beyond half's range clamps the norms to inf
    check_gradients_of(lambda F, a, b: F.cosine_similarity(a, b, dim=-1), rand(3, 1, 6, seed=3), rand(5, 6, seed=4))
    check_gradients_of(lambda F, a, b: F.cosine_similarity(a, b, dim=0), A, B)


def test_half_norms_round_once():
    """A half type's norms are computed in float and rounded once, as torch's: the similarity and its gradient
    follow torch's roundings."""
    x = np.array([[-0.5107, -0.8746, -0.7063]] * 2, np.float32)
    compare_arrays(lambda F, a: F.cosine_similarity(a.half(), a.half().expm1(), dim=-2, eps=0.5), x, rtol=1e-3,
                   atol=1e-4)
    compare_arrays(lambda F, a, b: F.pairwise_distance(a.half(), b.half()), A, B, rtol=1e-3, atol=1e-3)


def test_cosine_similarity_errors():
    same_error(lambda F, a, b: F.cosine_similarity(a, b), np.ones((2, 3), np.int64), np.ones((2, 3), np.int64))
    same_error(lambda F, a, b: F.cosine_similarity(a, b, eps=-1.0), A, B)
    same_error(lambda F, a, b: F.cosine_similarity(a, b, eps=-0.5), A, B)
    same_error(lambda F, a, b: F.cosine_similarity(a, b, dim=-1), rand(3, 6), rand(5, 6))
    same_error(lambda F, a, b: F.cosine_similarity(a, b, dim=2), A, B)


@pytest.mark.parametrize("p", [2.0, 1, 3, 0.5, 0, float("inf"), -1.0])
@pytest.mark.parametrize("keepdim", [False, True])
def test_pairwise_distance(p, keepdim):
    compare_arrays(lambda F, a, b: F.pairwise_distance(a, b, p, keepdim=keepdim), A, B)
    compare_arrays(lambda F, a, b: _lib(F).pairwise_distance(a, b, p, 1e-3, keepdim), A.astype(np.float64),
                   B[0].astype(np.float64))
    compare_arrays(lambda F, a, b: _lib(F).nn.PairwiseDistance(p, keepdim=keepdim)(a, b), A, B)
    if p not in (0, float("inf")):
        check_gradients_of(lambda F, a, b: F.pairwise_distance(a, b, p), A, B)


def test_pairwise_distance_shapes_and_dtypes():
    compare_arrays(lambda F, a, b: F.pairwise_distance(a, b), A[0], B[0])
    compare_arrays(lambda F, a, b: F.pairwise_distance(a, b), np.asarray(A[0, 0]), np.asarray(B[0, 0]))
    compare_arrays(lambda F, a, b: F.pairwise_distance(a, b), np.round(A).astype(np.int64),
                   np.round(B).astype(np.int64), grads=[])
    compare_arrays(lambda F, a, b: F.pairwise_distance(a, b), A.astype(np.float16), B.astype(np.float16), grads=[],
                   rtol=1e-3, atol=1e-3)
    compare_arrays(lambda F, a, b: F.pairwise_distance(a, b), A, A)  # eps keeps the distance off zero
    same_error(lambda F, a, b: F.pairwise_distance(a, b), A, rand(3, 6))


@pytest.mark.parametrize("p", [2, 1, 3, 1.5, 0.5, 0, float("inf")])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_pdist(p, dtype):
    x = rand(5, 4, seed=5).astype(dtype)
    x[3] = x[1]  # a zero distance: torch's subgradient there
    x[4, 2] = x[0, 2]  # equal coordinates
    compare_arrays(lambda F, a: F.pdist(a, p), x)
    compare_arrays(lambda F, a: _lib(F).pdist(a, p), x)
    if p not in (0, float("inf")):
        check_gradients_of(lambda F, a: F.pdist(a, p), rand(5, 4, seed=6))


def test_pdist_edges_and_errors():
    compare_arrays(lambda F, a: F.pdist(a), rand(1, 4))
    compare_arrays(lambda F, a: F.pdist(a), rand(0, 4), grads=[])  # (torch's backward of no rows crashes)
    compare_arrays(lambda F, a: F.pdist(a), rand(3, 0))
    compare_arrays(lambda F, a: F.pdist(a, float("inf")), np.array([[0.0, 1.0, -1.0], [0.5, 0.0, 0.0]]))
    for lib in (numgrad, torch):  # torch's own order: the dims, the dtype, p, then the kernel's dtypes
        assert str(lib.pdist(lib.ones(1, 3, dtype=lib.float16)).dtype) == "torch.float16"
    same_error(lambda F, a: F.pdist(a), rand(4))
    same_error(lambda F, a: F.pdist(a), rand(2, 3, 4))
    same_error(lambda F, a: F.pdist(a), np.ones((3, 2), np.int64))
    same_error(lambda F, a: F.pdist(a, -1), rand(3, 2))
    same_error(lambda F, a: F.pdist(a), rand(3, 2).astype(np.float16))
    for shape in ((1, 3), (3, 0)):  # no kernel ran forward for a half type; its backward's refuses it
        messages = []
        for lib in (numgrad, torch):
            x = lib.zeros(*shape, dtype=lib.float16, requires_grad=True)
            with pytest.raises(NotImplementedError) as info:
                lib.nn.functional.pdist(x).sum().backward()
            messages.append(str(info.value))
        assert messages[0] == messages[1]

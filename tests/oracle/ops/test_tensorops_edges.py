"""Edge inputs of the new tensor ops against torch (bool and integer dtypes, 0-d and empty tensors): the same
values, dtypes and shapes, or the same exception type and message."""
import warnings

import pytest
import torch

import numgrad

CASES = {
 "median_empty_int": lambda L: L.median(L.tensor([], dtype=L.int64)),
 "median_bool": lambda L: L.median(L.tensor([True, False])),
 "median_dim_bool": lambda L: L.median(L.tensor([True, False]), 0),
 "nanmedian_int": lambda L: L.nanmedian(L.tensor([1, 2])),
 "topk_bool": lambda L: L.topk(L.tensor([True, False]), 1),
 "kth_bool": lambda L: L.kthvalue(L.tensor([True, False]), 1),
 "mode_bool": lambda L: L.mode(L.tensor([True, False, True])),
 "sort_0d_dim1": lambda L: L.sort(L.tensor(1.), 1),
 "topk_0d_k2": lambda L: L.topk(L.tensor(1.), 2),
 "msort_0d": lambda L: L.msort(L.tensor(1.)),
 "unique_0d": lambda L: L.unique(L.tensor(1.), return_inverse=True),
 "uc_0d": lambda L: L.unique_consecutive(L.tensor(1.), return_inverse=True, return_counts=True),
 "histc_bins_float": lambda L: L.histc(L.tensor([1., 2.]), bins=3, min=0, max=3),
 "searchsorted_bool": lambda L: L.searchsorted(L.tensor([False, True]), L.tensor([True])),
 "bucketize_int_float": lambda L: L.bucketize(L.tensor([1, 2]), L.tensor([1.5])),
 "cumsum_bool_dtype": lambda L: L.cumsum(L.tensor([True]), 0, dtype=L.bool),
 "cumprod_0d": lambda L: L.cumprod(L.tensor(2), 0),
 "logcumsumexp_0d": lambda L: L.logcumsumexp(L.tensor(2.), -1),
 "diag_0d": lambda L: L.diag(L.tensor(2.)),
 "diag_embed_0d": lambda L: L.diag_embed(L.tensor(2.)),
 "trace_empty": lambda L: L.trace(L.zeros(0, 3)),
 "kron_int_float": lambda L: L.kron(L.tensor([1, 2]), L.tensor([0.5])),
 "tensordot_int": lambda L: L.tensordot(L.ones(2, 3, dtype=L.int64), L.ones(3, 2, dtype=L.int64), 1),
 "one_hot_0d": lambda L: L.nn.functional.one_hot(L.tensor(3)),
 "repeat_0d_empty": lambda L: L.tensor(2.).repeat(()),
 "tile_0d": lambda L: L.tile(L.tensor(2.), (2, 2)),
 "ri_0d": lambda L: L.repeat_interleave(L.tensor(2.), 3),
 "meshgrid_0d": lambda L: L.meshgrid(L.tensor(2.), L.tensor([1., 2.]), indexing="ij"),
 "tensor_split_neg": lambda L: L.tensor_split(L.arange(6), [-2, 5]),
 "movedim_list": lambda L: L.movedim(L.zeros(2, 3, 4), [0, 1], [2, 0]),
 "scatter_reduce_0d": lambda L: L.tensor(1.).scatter_reduce(0, L.tensor(0), L.tensor(5.), "amax"),
 "take_0d": lambda L: L.take(L.tensor(3.), L.tensor(0)),
 "masked_scatter_0d": lambda L: L.tensor(3.).masked_scatter(L.tensor(True), L.tensor([7.])),
 "index_fill_0d": lambda L: L.tensor(3.).index_fill(0, L.tensor([0]), 1.),
 "cross_int": lambda L: L.cross(L.tensor([1, 2, 3]), L.tensor([4, 5, 6]), dim=0),
 "diff_bool_prepend": lambda L: L.diff(L.tensor([True, False]), prepend=L.tensor([True])),
 "ri_output_size": lambda L: L.arange(3.).repeat_interleave(2, output_size=6),
 "ri_output_size_bad": lambda L: L.arange(3.).repeat_interleave(2, output_size=5),
 "ri_tensor_output_size": lambda L: L.arange(3.).repeat_interleave(L.tensor([1, 2, 0]), dim=0, output_size=3),
 "ri_tensor_output_size_bad": lambda L: L.arange(3.).repeat_interleave(L.tensor([1, 2, 0]), dim=0, output_size=4),
 "einsum_int": lambda L: L.einsum("ij,jk->ik", L.ones(2, 30, dtype=L.int64), L.ones(30, 20, dtype=L.int64)),
}


def _outcome(lib, fn):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            r = fn(lib)
        except Exception as e:  # the error is the outcome compared
            return type(e).__name__, str(e)
    rs = r if isinstance(r, tuple) else (r,)
    return "ok", [(str(x.dtype).split(".")[-1], tuple(x.shape), x.tolist()) for x in rs]


@pytest.mark.parametrize("name", list(CASES))
def test_edge_inputs(name):
    assert _outcome(numgrad, CASES[name]) == _outcome(torch, CASES[name])

"""embedding_bag: bags of embedding rows reduced by sum, mean or max, from embedding, a matrix product with the
bags' (weighted) membership matrix, and take_along_dim for max (autograd gives the gradients)."""
import numpy as np

from .._core.grad_mode import no_grad
from ..node import record
from ..ops import creation
from ..tensor import Tensor
from ._common import wants
from ._linear import embedding


def _check(input, weight, offsets, per_sample_weights, mode, scale_grad_by_freq, sparse):
    """F.embedding_bag's checks, in torch's order; returns the flat indices, offsets and weights."""
    if per_sample_weights is not None and tuple(input.shape) != tuple(per_sample_weights.shape):
        raise ValueError(f"embedding_bag: If per_sample_weights ({per_sample_weights.shape}) is not None, then it "
                         f"must have the same shape as the input ({input.shape})")
    if weight.dim() != 2:
        raise ValueError(f"weight has to be a 2D Tensor, but got Tensor of dimension {weight.dim()}")
    include_last_offset = None
    if input.dim() == 2:
        if offsets is not None:
            raise ValueError("if input is 2D, then offsets has to be None, as input is treated is a mini-batch of "
                             f"fixed length sequences. However, found offsets of type {type(offsets)}")
        offsets = np.arange(0, input.numel(), input.shape[1])
        include_last_offset = False
        input = input.reshape(-1)
        if per_sample_weights is not None:
            per_sample_weights = per_sample_weights.reshape(-1)
    elif input.dim() == 1:
        if offsets is None:
            raise ValueError("offsets has to be a 1D Tensor but got None")
        if offsets.dim() != 1:
            raise ValueError("offsets has to be a 1D Tensor")
        offsets = offsets.cpu().numpy()
    else:
        raise ValueError(f"input has to be 1D or 2D Tensor, but got Tensor of dimension {input.dim()}")
    if mode == "max":
        if scale_grad_by_freq:
            raise ValueError("max mode does not support scaling the gradient by the frequency")
        if sparse:
            raise ValueError("max mode does not support sparse weights")
    elif mode not in ("sum", "mean"):
        raise ValueError("mode has to be one of sum, mean or max")
    return input, offsets, per_sample_weights, include_last_offset


def _bounds(offsets, length, include_last_offset):
    """Each bag's [start, end) in the flat indices, with the kernel's checks of the offsets."""
    if include_last_offset and offsets.size < 1:
        raise RuntimeError("include_last_offset: number of offset should be at least 1")
    if offsets.size and offsets[0] != 0:
        raise RuntimeError("offsets[0] has to be 0, i.e., the first sequence in the mini-batch has to start from "
                           f"position 0. However, got {offsets[0]}\n[ torch.LongTensor{{}} ]")
    if offsets.size and offsets[-1] > length:
        raise RuntimeError(f"offsets[-1] can not be greater than input's length {length} but got offsets[-1] of "
                           f"{offsets[-1]}")
    ends = offsets[1:] if include_last_offset else np.append(offsets[1:], length)
    starts = offsets[:-1] if include_last_offset else offsets
    return list(zip(starts.tolist(), ends.tolist()))


def embedding_bag(input, weight, offsets=None, max_norm=None, norm_type=2, scale_grad_by_freq=False, mode="mean",
                  sparse=False, per_sample_weights=None, include_last_offset=False, padding_idx=None):
    """One row per bag: the sum, mean or max of its indices' embedding rows (entries equal to padding_idx left
    out; an empty bag gives zeros); per_sample_weights scale the rows in sum mode."""
    input, offsets, per_sample_weights, fixed = _check(input, weight, offsets, per_sample_weights, mode,
                                                       scale_grad_by_freq, sparse)
    if fixed is not None:
        include_last_offset = fixed
    if per_sample_weights is not None and mode != "sum":
        raise NotImplementedError("embedding_bag: per_sample_weights was not None. per_sample_weights is only "
                                  f"supported for mode='sum' (got mode='{mode}'). Please open a feature request on "
                                  "GitHub.")
    if padding_idx is not None and padding_idx < 0:
        padding_idx += weight.shape[0]
    indices = input.cpu().numpy()
    bags = _bounds(np.asarray(offsets, np.int64), indices.size, include_last_offset)
    kept = [[j for j in range(start, end) if indices[j] != padding_idx] for start, end in bags]
    saved = {"weight": weight, "indices": input, "psw": per_sample_weights, "mode": mode,
             "scale": _frequency_scale(indices, weight.shape[0]) if scale_grad_by_freq else None}
    with no_grad():  # the values; the gradients come from the one node below, as torch's
        rows = embedding(input, weight, None, max_norm, norm_type)  # max_norm renorms the rows read in place
        if mode == "max":
            out, saved["picks"] = _max_bags(rows, kept, indices, weight)
        else:
            saved["membership"] = _membership(kept, indices.size, mode, weight)
            out = saved["membership"].matmul(rows if per_sample_weights is None else
                                             rows * per_sample_weights.unsqueeze(1))
    out = Tensor._make(out._data, out._dtype)
    record("EmbeddingBagBackward0", _embedding_bag_backward, [weight, per_sample_weights], [out], saved)
    return out


def _membership(kept, length, mode, weight):
    """(bags, positions): 1 (or 1/size for mean) where a position's row counts in a bag."""
    membership = np.zeros((len(kept), length), weight.dtype.np)
    for b, members in enumerate(kept):
        membership[b, members] = 1.0 / len(members) if mode == "mean" and members else 1.0
    return creation.tensor(membership, device=weight.device)


def _embedding_bag_backward(node, g):
    """Tensor-op formulas: the weight's gradient gathers each position's share of its bag's gradient into its row;
    per_sample_weights get the dot product of that share with the row."""
    weight, indices = node.saved("weight"), node.saved("indices")
    if node.saved("mode") == "max":
        rows_at, columns, bags = node.saved("picks")
        shares = g.index_select(0, bags).reshape(-1)
        return creation.zeros(*node.input_shape(0), dtype=g.dtype, device=g.device).index_put(
            (rows_at, columns), shares, accumulate=True), None
    shares = node.saved("membership").t().matmul(g)  # (positions, features)
    psw, scale = node.saved("psw"), node.saved("scale")
    weight_grad = psw_grad = None
    if wants(node, 0):
        scaled = shares if scale is None else shares * creation.tensor(scale, dtype=g.dtype, device=g.device)
        scaled = scaled if psw is None else scaled * psw.unsqueeze(1)
        weight_grad = creation.zeros(*node.input_shape(0), dtype=g.dtype, device=g.device).index_put(
            (indices,), scaled, accumulate=True)
    if len(node.next_functions) > 1 and wants(node, 1):
        psw_grad = (shares * weight.index_select(0, indices)).sum(-1)
    return weight_grad, psw_grad


def _frequency_scale(indices, num_weights):
    """Each position's gradient scale as torch's CPU kernel computes it: the k-th distinct index (in ascending
    order) is divided by the count of the k-th smallest index, not by its own count (what torch 2.13 does)."""
    distinct = np.unique(indices)
    counts = np.bincount(indices, minlength=num_weights)
    group_scale = 1.0 / counts[np.sort(indices)[:distinct.size]]
    return group_scale[np.searchsorted(distinct, indices)][:, None]


def _max_bags(rows, kept, indices, weight):
    """Per bag and feature the largest value (the first one among equals); empty bags give zeros. Also returns
    where each non-empty bag's values came from: (weight rows, feature columns, bag numbers) for backward."""
    values = rows.cpu().numpy()
    width = weight.shape[1]
    out = np.zeros((len(kept), width), values.dtype)
    filled = [b for b, members in enumerate(kept) if members]
    positions = np.zeros((len(filled), width), np.int64)
    for i, b in enumerate(filled):
        members = np.asarray(kept[b])
        positions[i] = members[values[members].argmax(0)]
        out[b] = values[positions[i], np.arange(width)]
    device = weight.device
    where = (creation.tensor(indices[positions].reshape(-1).astype(np.int64), device=device),
             creation.tensor(np.tile(np.arange(width), len(filled)), device=device),
             creation.tensor(np.asarray(filled, np.int64), device=device))
    return creation.tensor(out, device=device), where

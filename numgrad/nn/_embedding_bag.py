"""embedding_bag: bags of embedding rows reduced by sum, mean or max, from embedding, a matrix product with the
bags' (weighted) membership matrix, and take_along_dim for max (autograd gives the gradients)."""
import numpy as np

from ..ops import creation
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
    rows = embedding(input, weight, None, max_norm, norm_type)  # max_norm renorms the rows read in place
    if per_sample_weights is not None and mode != "sum":
        raise NotImplementedError("embedding_bag: per_sample_weights was not None. per_sample_weights is only "
                                  f"supported for mode='sum' (got mode='{mode}'). Please open a feature request on "
                                  "GitHub.")
    if padding_idx is not None and padding_idx < 0:
        padding_idx += weight.shape[0]
    indices = input.cpu().numpy()
    if scale_grad_by_freq and rows.requires_grad:
        scale = creation.tensor(_frequency_scale(indices, weight.shape[0]), dtype=weight.dtype, device=weight.device)
        rows.register_hook(lambda g: g * scale)
    bags = _bounds(np.asarray(offsets, np.int64), indices.size, include_last_offset)
    kept = [[j for j in range(start, end) if indices[j] != padding_idx] for start, end in bags]
    if mode == "max":
        return _max_bags(rows, kept, weight)
    if per_sample_weights is not None:
        rows = rows * per_sample_weights.unsqueeze(1)
    membership = np.zeros((len(bags), indices.size), weight.dtype.np)
    for b, members in enumerate(kept):
        membership[b, members] = 1.0 / len(members) if mode == "mean" and members else 1.0
    return creation.tensor(membership, device=weight.device).matmul(rows)


def _frequency_scale(indices, num_weights):
    """Each position's gradient scale as torch's CPU kernel computes it: the k-th distinct index (in ascending
    order) is divided by the count of the k-th smallest index, not by its own count (what torch 2.13 does)."""
    distinct = np.unique(indices)
    counts = np.bincount(indices, minlength=num_weights)
    group_scale = 1.0 / counts[np.sort(indices)[:distinct.size]]
    return group_scale[np.searchsorted(distinct, indices)][:, None]


def _max_bags(rows, kept, weight):
    """Per bag and feature the largest value (the first one among equals); empty bags give zeros."""
    values = rows.detach().cpu().numpy()
    width = weight.shape[1]
    if not values.size:
        # zeros that stay in the graph (a result of weight, as torch's is), with zero gradients
        return creation.zeros(len(kept), width, dtype=weight.dtype, device=weight.device) + rows.sum() * 0
    picks = np.zeros((len(kept), width), np.int64)
    empty = np.zeros((len(kept), 1), np.bool_)
    for b, members in enumerate(kept):
        if members:
            picks[b] = np.asarray(members)[values[members].argmax(0)]
        else:
            empty[b] = True
    out = rows.take_along_dim(creation.tensor(picks, device=weight.device), 0)
    return out.masked_fill(creation.tensor(empty, device=weight.device), 0.0) if empty.any() else out

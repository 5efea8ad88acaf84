"""scaled_dot_product_attention by torch's math path from tensor ops (one node named as torch's fused CPU kernel
where torch takes it), and multi_head_attention_forward."""
import math
import warnings

import numpy as np

from .._core import dtypes
from .._core.grad_mode import no_grad
from ..node import record
from ..ops import creation
from ..ops.join import cat
from ..ops.reduction import softmax
from ..tensor import Tensor
from ._common import wants
from ._dropout import dropout
from ._linear import linear


def _check_inputs(query, key, value, attn_mask):
    """torch's validate_sdpa_input, in its order."""
    if not (query._dtype is key._dtype is value._dtype):
        raise RuntimeError(f"Expected query, key, and value to have the same dtype, but got query.dtype: "
                           f"{query._dtype.c_name} key.dtype: {key._dtype.c_name} and value.dtype: "
                           f"{value._dtype.c_name} instead.")
    if query.dim() < 2 or key.dim() < 2 or value.dim() < 2:
        raise RuntimeError(f"Expected query, key, and value to all be  at least 2 dimensional, but got query.dim: "
                           f"{query.dim()} key.dim: {key.dim()} and value.dim: {value.dim()} instead.")
    if attn_mask is not None and attn_mask._dtype not in (dtypes.bool_, dtypes.float32, query._dtype):
        raise RuntimeError(f"Expected attn_mask dtype to be bool or float or to match query dtype, but got "
                           f"attn_mask.dtype: {attn_mask._dtype.c_name} and  query.dtype: {query._dtype.c_name} "
                           "instead.")


def _repeat_heads(t, times):
    """Each head of (..., heads, S, E) repeated `times` times in place (repeat_interleave over dim -3)."""
    if times == 1:
        return t
    shape = tuple(t.shape)
    expanded = t.unsqueeze(-3).expand(*shape[:-2], times, *shape[-2:])
    return expanded.reshape(*shape[:-3], shape[-3] * times, *shape[-2:])


def _gqa(query, key, value):
    """Grouped-query attention: key and value heads shared by groups of query heads."""
    q_heads, k_heads, v_heads = query.size(-3), key.size(-3), value.size(-3)  # 2-D inputs: torch's IndexError
    if q_heads % k_heads or q_heads % v_heads:
        raise RuntimeError("Number of heads in key and value must divide the number of heads in ")  # (torch's words)
    return _repeat_heads(key, q_heads // k_heads), _repeat_heads(value, q_heads // v_heads)


def _safe_softmax(scores):
    """softmax over the last dim where a row entirely -inf (masked out) gives zeros and zero gradients, as torch's
    _safe_softmax: such rows are zeroed before the softmax (so no NaN reaches backward) and after it."""
    dead = (scores.detach() == float("-inf")).all(-1, keepdim=True)  # computed where the scores are
    if not dead.any().item():
        return softmax(scores, -1)
    return softmax(scores.masked_fill(dead, 0.0), -1).masked_fill(dead, 0.0)


def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None,
                                 enable_gqa=False):
    """softmax(q k^T * scale + mask) v; a bool mask keeps the True positions; is_causal keeps the lower triangle
    of the (L, S) scores aligned at the top left, as torch's."""
    _check_inputs(query, key, value, attn_mask)
    length, source = query.shape[-2], key.shape[-2]
    if is_causal:
        if attn_mask is not None:
            raise RuntimeError("_scaled_dot_product_attention: Explicit attn_mask should not be set when "
                               "is_causal=True")
        attn_mask = creation.tensor(np.tril(np.ones((length, source), np.bool_)), device=query.device)
    scale = 1.0 / math.sqrt(query.shape[-1]) if scale is None else scale
    if _takes_fused_path(query, key, value, attn_mask, dropout_p, enable_gqa):
        return _fused_attention(query, key, value, attn_mask, scale)
    if enable_gqa:
        key, value = _gqa(query, key, value)
    weights = _attention_weights(query, key, attn_mask, scale)
    if dropout_p > 0.0:
        weights = dropout(weights, dropout_p)
    return weights.matmul(value)


def _attention_weights(query, key, attn_mask, scale):
    """softmax(q k^T * scale + mask) by torch's math path."""
    root = math.sqrt(scale)  # torch scales both factors by sqrt(scale): the product stays in range
    scores = (query * root).matmul(key.transpose(-2, -1) * root)
    if attn_mask is not None:
        if attn_mask._dtype is dtypes.bool_:
            scores = scores.masked_fill(attn_mask.logical_not(), float("-inf"))
        else:
            scores = scores + attn_mask
    return _safe_softmax(scores)


def _takes_fused_path(query, key, value, attn_mask, dropout_p, enable_gqa):
    """Whether torch's CPU dispatch picks its fused kernel (one ScaledDotProductFlashAttentionForCpuBackward0
    node): 4-D inputs of equal batch and head dims (key/value heads dividing the query's under GQA), one head
    dim, no dropout, a 2-D or 4-D mask that needs no gradient, non-empty sequences, unit last strides."""
    if dropout_p != 0.0 or any(t.dim() != 4 for t in (query, key, value)):
        return False
    if attn_mask is not None and (attn_mask.requires_grad or attn_mask.dim() not in (2, 4)):
        return False
    if not (query.shape[0] == key.shape[0] == value.shape[0]) or key.shape[1] != value.shape[1]:
        return False
    if query.shape[1] != key.shape[1] and not (enable_gqa and query.shape[1] % key.shape[1] == 0):
        return False
    if not (query.shape[-1] == key.shape[-1] == value.shape[-1]):
        return False
    if 0 in (query.shape[-2], key.shape[-2]):
        return False
    return all(t.stride(-1) == 1 for t in (query, key, value))


def _fused_attention(query, key, value, attn_mask, scale):
    """The math path's values under one node named as torch's fused CPU kernel's; its backward is written as
    tensor ops (so create_graph differentiates it), the weights recomputed from q and k."""
    with no_grad():
        shared_key, shared_value = _gqa(query, key, value)
        out = _attention_weights(query, shared_key, attn_mask, scale).matmul(shared_value)
    out = Tensor._make(out._data, out._dtype)
    record("ScaledDotProductFlashAttentionForCpuBackward0", _fused_backward, [query, key, value], [out],
           {"query": query, "key": key, "value": value, "attn_mask": attn_mask, "scale": scale})
    return out


def _fused_backward(node, g):
    query, scale = node.saved("query"), node.saved("scale")
    key, value = _gqa(query, node.saved("key"), node.saved("value"))
    weights = _attention_weights(query, key, node.saved("attn_mask"), scale)
    grad_weights = g.matmul(value.transpose(-2, -1))
    grad_scores = weights * (grad_weights - (grad_weights * weights).sum(-1, keepdim=True))
    grads = [grad_scores.matmul(key) * scale if wants(node, 0) else None,
             _sum_groups(grad_scores.transpose(-2, -1).matmul(query) * scale, node.input_shape(1))
             if wants(node, 1) else None,
             _sum_groups(weights.transpose(-2, -1).matmul(g), node.input_shape(2)) if wants(node, 2) else None]
    return tuple(grads)


def _sum_groups(grad, shape):
    """A gradient over the query's heads summed back onto the key/value heads they shared (GQA)."""
    if tuple(grad.shape) == tuple(shape):
        return grad
    batch, heads, length, width = shape
    return grad.reshape(batch, heads, grad.shape[1] // heads, length, width).sum(2)



def _mha_shape_check(query, key, value, key_padding_mask, attn_mask, num_heads):
    """Whether the input is batched (3-D) or not (2-D), with torch's assertions on the other shapes."""
    if query.dim() == 3:
        if key.dim() != 3 or value.dim() != 3:
            raise AssertionError("For batched (3-D) `query`, expected `key` and `value` to be 3-D but found "
                                 f"{key.dim()}-D and {value.dim()}-D tensors respectively")
        if key_padding_mask is not None and key_padding_mask.dim() != 2:
            raise AssertionError("For batched (3-D) `query`, expected `key_padding_mask` to be `None` or 2-D but "
                                 f"found {key_padding_mask.dim()}-D tensor instead")
        if attn_mask is not None and attn_mask.dim() not in (2, 3):
            raise AssertionError("For batched (3-D) `query`, expected `attn_mask` to be `None`, 2-D or 3-D but "
                                 f"found {attn_mask.dim()}-D tensor instead")
        return True
    if query.dim() == 2:
        if key.dim() != 2 or value.dim() != 2:
            raise AssertionError("For unbatched (2-D) `query`, expected `key` and `value` to be 2-D but found "
                                 f"{key.dim()}-D and {value.dim()}-D tensors respectively")
        if key_padding_mask is not None and key_padding_mask.dim() != 1:
            raise AssertionError("For unbatched (2-D) `query`, expected `key_padding_mask` to be `None` or 1-D but "
                                 f"found {key_padding_mask.dim()}-D tensor instead")
        if attn_mask is not None:
            if attn_mask.dim() not in (2, 3):
                raise AssertionError("For unbatched (2-D) `query`, expected `attn_mask` to be `None`, 2-D or 3-D "
                                     f"but found {attn_mask.dim()}-D tensor instead")
            expected = (num_heads, query.shape[0], key.shape[0])
            if attn_mask.dim() == 3 and tuple(attn_mask.shape) != expected:
                raise AssertionError(f"Expected `attn_mask` shape to be {expected} but got {attn_mask.shape}")
        return False
    raise AssertionError(f"query should be unbatched 2D or batched 3D tensor but received {query.dim()}-D query "
                         "tensor")


def canonical_mask(mask, mask_name, other_type, other_name, target_type, check_other=True):
    """A bool mask (True: masked out) as an additive float mask of `target_type` (-inf where True)."""
    if mask is None:
        return None
    if mask._dtype is not dtypes.bool_ and not mask._dtype.is_floating_point:
        raise AssertionError(f"only bool and floating types of {mask_name} are supported")
    if check_other and other_type is not None and mask._dtype is not other_type:
        warnings.warn(f"Support for mismatched {mask_name} and {other_name} is deprecated. Use same type for both "
                      "instead.", stacklevel=3)
    if mask._dtype.is_floating_point:
        return mask
    return creation.zeros(*mask.shape, dtype=target_type, device=mask.device).masked_fill_(mask, float("-inf"))


def _in_projection(query, key, value, in_proj_weight, in_proj_bias, separate_weights):
    """q, k, v: the three projections (the packed weight's thirds, or the separate weights)."""
    weights = separate_weights if separate_weights is not None else in_proj_weight.chunk(3)
    biases = (None,) * 3 if in_proj_bias is None else in_proj_bias.chunk(3)
    return tuple(linear(x, w, b) for x, w, b in zip((query, key, value), weights, biases))


def _pad_column(mask):
    return None if mask is None else cat([mask, creation.zeros(*mask.shape[:-1], 1, dtype=mask._dtype,
                                                               device=mask.device)], dim=-1)


def multi_head_attention_forward(query, key, value, embed_dim_to_check, num_heads, in_proj_weight, in_proj_bias,
                                 bias_k, bias_v, add_zero_attn, dropout_p, out_proj_weight, out_proj_bias,
                                 training=True, key_padding_mask=None, need_weights=True, attn_mask=None,
                                 use_separate_proj_weight=False, q_proj_weight=None, k_proj_weight=None,
                                 v_proj_weight=None, static_k=None, static_v=None, average_attn_weights=True,
                                 is_causal=False):
    """torch's F.multi_head_attention_forward (sequence-first inputs), step for step."""
    is_batched = _mha_shape_check(query, key, value, key_padding_mask, attn_mask, num_heads)
    if not is_batched:
        query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
        if key_padding_mask is not None:
            key_padding_mask = key_padding_mask.unsqueeze(0)
    tgt_len, bsz, embed_dim = query.shape
    key_padding_mask = canonical_mask(key_padding_mask, "key_padding_mask",
                                      None if attn_mask is None else attn_mask._dtype, "attn_mask", query._dtype)
    if is_causal and attn_mask is None:
        raise RuntimeError("Need attn_mask if specifying the is_causal hint. You may use the Transformer module "
                           "method `generate_square_subsequent_mask` to create this mask.")
    if is_causal and key_padding_mask is None and not need_weights:
        attn_mask = None  # the hint alone: scaled_dot_product_attention masks causally
    else:
        attn_mask = canonical_mask(attn_mask, "attn_mask", None, "", query._dtype, check_other=False)
        if key_padding_mask is not None:
            is_causal = False
    if embed_dim != embed_dim_to_check:
        raise AssertionError(f"was expecting embedding dimension of {embed_dim_to_check}, but got {embed_dim}")
    head_dim = embed_dim // num_heads
    if head_dim * num_heads != embed_dim:
        raise AssertionError(f"embed_dim {embed_dim} not divisible by num_heads {num_heads}")
    if use_separate_proj_weight:
        if tuple(key.shape[:2]) != tuple(value.shape[:2]):
            raise AssertionError(f"key's sequence and batch dims {key.shape[:2]} do not match value's "
                                 f"{value.shape[:2]}")
        q, k, v = _in_projection(query, key, value, None, in_proj_bias, (q_proj_weight, k_proj_weight, v_proj_weight))
    else:
        if tuple(key.shape) != tuple(value.shape):
            raise AssertionError(f"key shape {key.shape} does not match value shape {value.shape}")
        q, k, v = _in_projection(query, key, value, in_proj_weight, in_proj_bias, None)
    src_len = key.shape[0]
    if attn_mask is not None:
        if attn_mask.dim() == 2:
            if tuple(attn_mask.shape) != (tgt_len, src_len):
                raise RuntimeError(f"The shape of the 2D attn_mask is {attn_mask.shape}, but should be "
                                   f"{(tgt_len, src_len)}.")
            attn_mask = attn_mask.unsqueeze(0)
        elif tuple(attn_mask.shape) != (bsz * num_heads, tgt_len, src_len):
            raise RuntimeError(f"The shape of the 3D attn_mask is {attn_mask.shape}, but should be "
                               f"{(bsz * num_heads, tgt_len, src_len)}.")
    if bias_k is not None and bias_v is not None:
        k = cat([k, bias_k.expand(1, bsz, embed_dim)])
        v = cat([v, bias_v.expand(1, bsz, embed_dim)])
        attn_mask, key_padding_mask = _pad_column(attn_mask), _pad_column(key_padding_mask)
    q = q.reshape(tgt_len, bsz * num_heads, head_dim).transpose(0, 1)
    k = (k.reshape(k.shape[0], bsz * num_heads, head_dim).transpose(0, 1) if static_k is None else static_k)
    v = (v.reshape(v.shape[0], bsz * num_heads, head_dim).transpose(0, 1) if static_v is None else static_v)
    if add_zero_attn:
        k = cat([k, creation.zeros(bsz * num_heads, 1, head_dim, dtype=k._dtype, device=k.device)], dim=1)
        v = cat([v, creation.zeros(bsz * num_heads, 1, head_dim, dtype=v._dtype, device=v.device)], dim=1)
        attn_mask, key_padding_mask = _pad_column(attn_mask), _pad_column(key_padding_mask)
    src_len = k.shape[1]
    if key_padding_mask is not None:
        if key_padding_mask.shape[0] != bsz:
            raise AssertionError(f"Expected key_padded_mask.shape[0] to be {bsz}, but got {key_padding_mask.shape[0]}")
        if key_padding_mask.shape[1] != src_len:
            raise AssertionError(f"Expected key_padded_mask.shape[1] to be {src_len}, but got "
                                 f"{key_padding_mask.shape[1]}")
        key_padding_mask = key_padding_mask.reshape(bsz, 1, 1, src_len).expand(-1, num_heads, -1, -1) \
            .reshape(bsz * num_heads, 1, src_len)
        attn_mask = key_padding_mask if attn_mask is None else attn_mask + key_padding_mask
    if not training:
        dropout_p = 0.0
    if need_weights:
        scores = (q * math.sqrt(1.0 / float(head_dim))).bmm(k.transpose(-2, -1))
        if attn_mask is not None:
            scores = attn_mask + scores  # baddbmm(attn_mask, q, k^T)
        weights = softmax(scores, -1)
        if dropout_p > 0.0:
            weights = dropout(weights, dropout_p)
        out = weights.bmm(v).transpose(0, 1).reshape(tgt_len * bsz, embed_dim)
        out = linear(out, out_proj_weight, out_proj_bias).reshape(tgt_len, bsz, -1)
        weights = weights.reshape(bsz, num_heads, tgt_len, src_len)
        if average_attn_weights:
            weights = weights.mean(1)
        if not is_batched:
            out, weights = out.squeeze(1), weights.squeeze(0)
        return out, weights
    if attn_mask is not None:
        attn_mask = attn_mask.unsqueeze(0) if attn_mask.shape[0] == 1 else \
            attn_mask.reshape(bsz, num_heads, -1, src_len)
    q = q.reshape(bsz, num_heads, tgt_len, head_dim)
    k = k.reshape(bsz, num_heads, src_len, head_dim)
    v = v.reshape(bsz, num_heads, src_len, head_dim)
    out = scaled_dot_product_attention(q, k, v, attn_mask, dropout_p, is_causal)
    out = out.permute(2, 0, 1, 3).reshape(bsz * tgt_len, embed_dim)
    out = linear(out, out_proj_weight, out_proj_bias).reshape(tgt_len, bsz, -1)
    return (out if is_batched else out.squeeze(1)), None

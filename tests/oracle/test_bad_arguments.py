"""Bad arguments raise torch's exception, of torch's type and with torch's message (memory addresses aside):
zero or negative strides, paddings, dilations and groups, kernels larger than the padded input, dims and
indices out of range, indices of the wrong dtype, layers built with impossible sizes.

Each case is a function of the library (torch or numgrad). numgrad runs them in a child process
(helpers/isolated.py), so that a bad argument reaching a kernel fails its case instead of killing pytest."""
import re

import numpy as np

import pytest

from helpers.compare_core import strip_addresses
from helpers.isolated import child_main, outcome, run_cases


def _x(t):
    return t.ones(1, 2, 5, 5)


def _w(t):
    return t.ones(4, 2, 3, 3)


def _m(t):
    return t.arange(6.0).reshape(2, 3)


def _idx(t, *values):
    return t.tensor(list(values))


CASES = {
    # ---- conv2d: stride, padding, dilation, groups, kernel and input sizes ----
    "conv2d_dilation_0": lambda t: t.nn.functional.conv2d(_x(t), _w(t), dilation=0),
    "conv2d_dilation_neg": lambda t: t.nn.functional.conv2d(_x(t), _w(t), dilation=-1),
    "conv2d_dilation_pair_0": lambda t: t.nn.functional.conv2d(_x(t), _w(t), dilation=(1, 0)),
    "conv2d_stride_0": lambda t: t.nn.functional.conv2d(_x(t), _w(t), stride=0),
    "conv2d_stride_neg": lambda t: t.nn.functional.conv2d(_x(t), _w(t), stride=-2),
    "conv2d_stride_pair_0": lambda t: t.nn.functional.conv2d(_x(t), _w(t), stride=(0, 1)),
    "conv2d_padding_neg": lambda t: t.nn.functional.conv2d(_x(t), _w(t), padding=-1),
    "conv2d_groups_0": lambda t: t.nn.functional.conv2d(_x(t), _w(t), groups=0),
    "conv2d_groups_neg": lambda t: t.nn.functional.conv2d(_x(t), _w(t), groups=-1),
    "conv2d_groups_not_dividing_weight": lambda t: t.nn.functional.conv2d(t.ones(1, 3, 5, 5), _w(t), groups=3),
    "conv2d_groups_more_than_out": lambda t: t.nn.functional.conv2d(t.ones(1, 8, 5, 5), t.ones(4, 1, 3, 3),
                                                                    groups=8),
    "conv2d_channels_mismatch": lambda t: t.nn.functional.conv2d(t.ones(1, 3, 5, 5), _w(t)),
    "conv2d_groups_channels_mismatch": lambda t: t.nn.functional.conv2d(_x(t), _w(t), groups=2),
    "conv2d_kernel_too_big": lambda t: t.nn.functional.conv2d(t.ones(1, 2, 2, 2), _w(t)),
    "conv2d_kernel_too_big_dilated": lambda t: t.nn.functional.conv2d(_x(t), _w(t), dilation=3),
    "conv2d_weight_3d": lambda t: t.nn.functional.conv2d(_x(t), t.ones(4, 2, 3)),
    "conv2d_input_2d": lambda t: t.nn.functional.conv2d(t.ones(5, 5), _w(t)),
    "conv2d_input_5d": lambda t: t.nn.functional.conv2d(t.ones(1, 1, 2, 5, 5), _w(t)),
    "conv2d_stride_3_values": lambda t: t.nn.functional.conv2d(_x(t), _w(t), stride=(1, 1, 1)),
    "conv2d_padding_3_values": lambda t: t.nn.functional.conv2d(_x(t), _w(t), padding=(1, 1, 1)),
    "conv2d_bias_size": lambda t: t.nn.functional.conv2d(_x(t), _w(t), t.ones(3)),
    "conv2d_dtype_mismatch": lambda t: t.nn.functional.conv2d(_x(t).double(), _w(t)),
    "conv2d_padding_same_strided": lambda t: t.nn.functional.conv2d(_x(t), _w(t), stride=2, padding="same"),
    "conv2d_padding_bad_string": lambda t: t.nn.functional.conv2d(_x(t), _w(t), padding="full"),
    "conv2d_dilation_0_and_stride_0": lambda t: t.nn.functional.conv2d(_x(t), _w(t), stride=0, dilation=0),
    "conv2d_dilation_0_and_padding_neg": lambda t: t.nn.functional.conv2d(_x(t), _w(t), padding=-1, dilation=0),
    "conv2d_groups_0_and_weight_3d": lambda t: t.nn.functional.conv2d(_x(t), t.ones(4, 2, 3), groups=0),
    "conv2d_dilation_0_and_channels": lambda t: t.nn.functional.conv2d(t.ones(1, 3, 5, 5), _w(t), dilation=0),
    "conv2d_dilation_0_and_dtype": lambda t: t.nn.functional.conv2d(_x(t), _w(t).double(), dilation=0),
    "conv2d_dilation_0_unbatched": lambda t: t.nn.functional.conv2d(t.ones(2, 5, 5), _w(t), dilation=0),
    "conv2d_dilation_0_empty_batch_ok": lambda t: list(t.nn.functional.conv2d(t.ones(0, 2, 5, 5), _w(t),
                                                                              dilation=0).shape),
    "conv2d_dilation_3_values": lambda t: t.nn.functional.conv2d(_x(t), _w(t), dilation=(1, 1, 1)),
    "conv2d_stride_empty": lambda t: t.nn.functional.conv2d(_x(t), _w(t), stride=()),
    "conv2d_weight_5d": lambda t: t.nn.functional.conv2d(_x(t), t.ones(4, 2, 3, 3, 3)),
    "conv2d_weight_no_out_channels": lambda t: t.nn.functional.conv2d(_x(t), t.ones(0, 2, 3, 3)),
    "conv2d_kernel_0": lambda t: t.nn.functional.conv2d(_x(t), t.ones(4, 2, 0, 3)),
    "conv2d_kernel_0_dilated": lambda t: t.nn.functional.conv2d(_x(t), t.ones(4, 2, 0, 3), dilation=0),
    "conv2d_bias_dtype": lambda t: t.nn.functional.conv2d(_x(t), _w(t), t.ones(4, dtype=t.float64)),
    "conv2d_bias_2d": lambda t: t.nn.functional.conv2d(_x(t), _w(t), t.ones(4, 1)),
    "conv2d_empty_spatial": lambda t: t.nn.functional.conv2d(t.ones(1, 2, 0, 5), _w(t)),
    "conv2d_same_dilation_0": lambda t: t.nn.functional.conv2d(_x(t), _w(t), padding="same", dilation=0),
    "conv2d_same_stride_0": lambda t: t.nn.functional.conv2d(_x(t), _w(t), padding="same", stride=0),
    "conv2d_valid_dilation_0": lambda t: t.nn.functional.conv2d(_x(t), _w(t), padding="valid", dilation=0),
    "conv2d_empty_batch_ok": lambda t: list(t.nn.functional.conv2d(t.ones(0, 2, 5, 5), _w(t)).shape),
    # ---- max_pool2d ----
    "max_pool_kernel_0": lambda t: t.nn.functional.max_pool2d(_x(t), 0),
    "max_pool_kernel_neg": lambda t: t.nn.functional.max_pool2d(_x(t), -2),
    "max_pool_stride_0": lambda t: t.nn.functional.max_pool2d(_x(t), 2, stride=0),
    "max_pool_stride_neg": lambda t: t.nn.functional.max_pool2d(_x(t), 2, stride=-1),
    "max_pool_padding_neg": lambda t: t.nn.functional.max_pool2d(_x(t), 3, padding=-1),
    "max_pool_padding_too_big": lambda t: t.nn.functional.max_pool2d(_x(t), 3, padding=2),
    "max_pool_dilation_0": lambda t: t.nn.functional.max_pool2d(_x(t), 2, dilation=0),
    "max_pool_dilation_neg": lambda t: t.nn.functional.max_pool2d(_x(t), 2, dilation=-1),
    "max_pool_kernel_too_big": lambda t: t.nn.functional.max_pool2d(_x(t), 6),
    "max_pool_input_2d": lambda t: t.nn.functional.max_pool2d(t.ones(5, 5), 2),
    "max_pool_kernel_3_values": lambda t: t.nn.functional.max_pool2d(_x(t), (2, 2, 2)),
    "max_pool_kernel_0_stride_1": lambda t: t.nn.functional.max_pool2d(_x(t), 0, 1),
    "max_pool_kernel_0_return_indices": lambda t: t.nn.functional.max_pool2d(_x(t), 0, return_indices=True),
    "max_pool_padding_neg_dilation_0": lambda t: t.nn.functional.max_pool2d(_x(t), 3, 1, -1, 0),
    "max_pool_dilation_0_padding_2": lambda t: t.nn.functional.max_pool2d(_x(t), 3, 1, 2, 0),
    "max_pool_padding_over_half_kernel": lambda t: t.nn.functional.max_pool2d(_x(t), 3, 1, 2, 2),
    "max_pool_padding_1_kernel_2_ok": lambda t: t.nn.functional.max_pool2d(_x(t), 2, padding=1).tolist(),
    "max_pool_stride_3_values": lambda t: t.nn.functional.max_pool2d(_x(t), 2, (1, 1, 1)),
    "max_pool_padding_3_values": lambda t: t.nn.functional.max_pool2d(_x(t), 2, 2, (1, 1, 1)),
    "max_pool_dilation_3_values": lambda t: t.nn.functional.max_pool2d(_x(t), 2, 2, 0, (1, 1, 1)),
    "max_pool_kernel_empty": lambda t: t.nn.functional.max_pool2d(_x(t), ()),
    "max_pool_input_5d": lambda t: t.nn.functional.max_pool2d(t.ones(1, 1, 1, 5, 5), 2),
    "max_pool_empty_channels": lambda t: t.nn.functional.max_pool2d(t.ones(1, 0, 5, 5), 2),
    "max_pool_empty_batch_ok": lambda t: list(t.nn.functional.max_pool2d(t.ones(0, 2, 5, 5), 2).shape),
    "max_pool_ceil_mode_ok": lambda t: t.nn.functional.max_pool2d(_x(t), 6, ceil_mode=True).tolist(),
    "max_pool_empty_input": lambda t: t.nn.functional.max_pool2d(t.ones(1, 2, 0, 5), 2),
    # ---- layers' constructors and forward checks ----
    "Conv2d_groups_0": lambda t: t.nn.Conv2d(2, 4, 3, groups=0),
    "Conv2d_in_not_divisible": lambda t: t.nn.Conv2d(3, 4, 3, groups=2),
    "Conv2d_out_not_divisible": lambda t: t.nn.Conv2d(2, 3, 3, groups=2),
    "Conv2d_padding_mode": lambda t: t.nn.Conv2d(2, 4, 3, padding_mode="mirror"),
    "Conv2d_padding_same_strided": lambda t: t.nn.Conv2d(2, 4, 3, stride=2, padding="same"),
    "Conv2d_padding_bad_string": lambda t: t.nn.Conv2d(2, 4, 3, padding="full"),
    "Conv2d_negative_channels": lambda t: t.nn.Conv2d(-1, 4, 3),
    "Conv2d_stride_0_forward": lambda t: t.nn.Conv2d(2, 4, 3, stride=0)(_x(t)),
    "Conv2d_dilation_0_forward": lambda t: t.nn.Conv2d(2, 4, 3, dilation=0)(_x(t)),
    "MaxPool2d_stride_0_forward": lambda t: t.nn.MaxPool2d(2, stride=0)(_x(t)),
    "Linear_negative_features": lambda t: t.nn.Linear(-1, 3),
    "Linear_wrong_input": lambda t: t.nn.Linear(3, 2)(t.ones(4)),
    "Linear_wrong_input_2d": lambda t: t.nn.Linear(3, 2)(t.ones(5, 4)),
    "Embedding_padding_idx_too_big": lambda t: t.nn.Embedding(10, 3, padding_idx=10),
    "Embedding_padding_idx_too_small": lambda t: t.nn.Embedding(10, 3, padding_idx=-11),
    "Embedding_index_too_big": lambda t: t.nn.Embedding(10, 3)(_idx(t, 10)),
    "Embedding_index_negative": lambda t: t.nn.Embedding(10, 3)(_idx(t, -1)),
    "Embedding_float_index": lambda t: t.nn.Embedding(10, 3)(t.tensor([1.0])),
    "embedding_negative_index": lambda t: t.nn.functional.embedding(_idx(t, -1), t.ones(4, 2)),
    "BatchNorm1d_wrong_features": lambda t: t.nn.BatchNorm1d(3)(t.ones(2, 4)),
    "BatchNorm2d_wrong_dims": lambda t: t.nn.BatchNorm2d(3)(t.ones(2, 3)),
    "BatchNorm1d_wrong_dims": lambda t: t.nn.BatchNorm1d(3)(t.ones(2, 3, 4, 5)),
    "BatchNorm1d_negative_features": lambda t: t.nn.BatchNorm1d(-2),
    "BatchNorm1d_one_value_per_channel": lambda t: t.nn.BatchNorm1d(3)(t.ones(1, 3)),
    "batch_norm_eval_no_running_mean": lambda t: t.nn.functional.batch_norm(_m(t), None, None),
    "batch_norm_eval_no_running_var": lambda t: t.nn.functional.batch_norm(_m(t), t.zeros(3), None),
    "batch_norm_weight_size": lambda t: t.nn.functional.batch_norm(_m(t), t.zeros(3), t.ones(3), t.ones(4)),
    "batch_norm_bias_size": lambda t: t.nn.functional.batch_norm(_m(t), t.zeros(3), t.ones(3), None, t.ones(2)),
    "batch_norm_running_var_size": lambda t: t.nn.functional.batch_norm(_m(t), t.zeros(3), t.ones(2)),
    "batch_norm_train_running_mean_size": lambda t: t.nn.functional.batch_norm(_m(t), t.zeros(4), t.ones(3),
                                                                               training=True),
    "LayerNorm_wrong_shape": lambda t: t.nn.LayerNorm(4)(t.ones(2, 3)),
    "LayerNorm_negative": lambda t: t.nn.LayerNorm(-1),
    "layer_norm_weight_shape": lambda t: t.nn.functional.layer_norm(t.ones(2, 3), (3,), t.ones(2)),
    "Dropout_p_above_1": lambda t: t.nn.Dropout(1.5),
    "Dropout_p_negative": lambda t: t.nn.Dropout(-0.1),
    "dropout_p_above_1": lambda t: t.nn.functional.dropout(_m(t), 1.5),
    "dropout_p_negative": lambda t: t.nn.functional.dropout(_m(t), -0.5, training=False),
    # ---- indexing ops ----
    "index_select_minus_one": lambda t: t.index_select(_m(t), 0, _idx(t, -1)),
    "index_select_too_big": lambda t: t.index_select(_m(t), 1, _idx(t, 3)),
    "index_select_dim_out_of_range": lambda t: t.index_select(_m(t), 2, _idx(t, 0)),
    "index_select_float_index": lambda t: t.index_select(_m(t), 0, t.tensor([0.0])),
    "index_select_2d_index": lambda t: t.index_select(_m(t), 0, t.tensor([[0]])),
    "index_select_dim1_negative": lambda t: t.index_select(t.ones(1, 6), 1, _idx(t, 0, -1, 6)),
    "index_select_dim1_3d": lambda t: t.index_select(t.ones(2, 3, 4), 1, _idx(t, 5)),
    "index_select_last_dim_3d": lambda t: t.index_select(t.ones(2, 3, 4), 2, _idx(t, -1)),
    "index_select_1d_too_big": lambda t: t.index_select(t.arange(6.0), 0, _idx(t, 0, 6, -1)),
    "index_select_empty_self": lambda t: t.index_select(t.ones(0, 3), 0, _idx(t, 0)),
    "index_select_0d_index": lambda t: t.index_select(_m(t), 0, t.tensor(5)),
    "index_select_bool_index": lambda t: t.index_select(_m(t), 0, t.tensor([True])),
    "index_select_0d_self": lambda t: t.index_select(t.tensor(1.0), 0, _idx(t, 1)),
    "gather_too_big": lambda t: t.gather(_m(t), 0, t.tensor([[2]])),
    "gather_negative": lambda t: t.gather(_m(t), 1, t.tensor([[-1]])),
    "gather_dim_out_of_range": lambda t: t.gather(_m(t), -3, t.tensor([[0]])),
    "gather_float_index": lambda t: t.gather(_m(t), 0, t.tensor([[0.0]])),
    "gather_ndim_mismatch": lambda t: t.gather(_m(t), 0, _idx(t, 0)),
    "gather_index_too_large": lambda t: t.gather(_m(t), 0, t.zeros(3, 4, dtype=t.long)),
    "scatter_too_big": lambda t: _m(t).scatter(0, t.tensor([[5]]), t.ones(1, 1)),
    "scatter_negative": lambda t: _m(t).scatter(0, t.tensor([[-1]]), t.ones(1, 1)),
    "scatter_dim_out_of_range": lambda t: _m(t).scatter(2, t.tensor([[0]]), t.ones(1, 1)),
    "scatter_float_index": lambda t: _m(t).scatter(0, t.tensor([[0.0]]), t.ones(1, 1)),
    "scatter_src_dtype": lambda t: _m(t).scatter(0, t.tensor([[0]]), t.ones(1, 1, dtype=t.float64)),
    "scatter_add_too_big": lambda t: _m(t).scatter_add(1, t.tensor([[3]]), t.ones(1, 1)),
    "scatter_add_negative": lambda t: _m(t).scatter_add(1, t.tensor([[-4]]), t.ones(1, 1)),
    "narrow_start_too_big": lambda t: _m(t).narrow(1, 4, 1),
    "narrow_start_too_small": lambda t: _m(t).narrow(1, -4, 1),
    "narrow_length_negative": lambda t: _m(t).narrow(1, 0, -1),
    "narrow_exceeds": lambda t: _m(t).narrow(1, 2, 2),
    "narrow_dim_out_of_range": lambda t: _m(t).narrow(2, 0, 1),
    "narrow_0d": lambda t: t.tensor(1.0).narrow(0, 0, 1),
    "select_too_big": lambda t: _m(t).select(0, 2),
    "select_too_small": lambda t: _m(t).select(1, -4),
    "select_dim_out_of_range": lambda t: _m(t).select(-3, 0),
    "select_0d": lambda t: t.tensor(1.0).select(0, 0),
    "getitem_too_big": lambda t: _m(t)[2],
    "getitem_negative_too_small": lambda t: _m(t)[:, -4],
    "getitem_tensor_index_too_big": lambda t: _m(t)[_idx(t, 0, 2)],
    "getitem_tensor_index_negative": lambda t: _m(t)[_idx(t, -3)],
    "getitem_float_index": lambda t: _m(t)[t.tensor([0.5])],
    "setitem_too_big": lambda t: _m(t).__setitem__((0, 3), 1.0),
    "setitem_tensor_index_too_big": lambda t: _m(t).__setitem__(_idx(t, 2), 1.0),
    "index_put_too_big": lambda t: _m(t).index_put_((_idx(t, 5),), t.tensor(1.0)),
    "index_put_negative_too_small": lambda t: _m(t).index_put_((_idx(t, -3),), t.tensor(1.0)),
    "masked_fill_mask_shape": lambda t: _m(t).masked_fill(t.ones(3, 2, dtype=t.bool), 0.0),
    "masked_fill_mask_3d": lambda t: _m(t).masked_fill(t.ones(2, 2, 3, dtype=t.bool), 0.0),
    "add_shapes": lambda t: _m(t) + t.ones(3, 2),
    "add_inplace_shapes": lambda t: _m(t).add_(t.ones(2, 2, 3)),
    "mul_three_dims": lambda t: t.ones(2, 3, 4) * t.ones(3, 3, 1),
    "where_shapes": lambda t: t.where(t.ones(2, 1, dtype=t.bool), _m(t), t.ones(4)),
    "masked_fill_float_mask": lambda t: _m(t).masked_fill(t.ones(2, 3), 0.0),
    # ---- losses' targets ----
    "nll_loss_target_too_big": lambda t: t.nn.functional.nll_loss(_m(t), _idx(t, 0, 3)),
    "nll_loss_target_negative": lambda t: t.nn.functional.nll_loss(_m(t), _idx(t, 0, -2)),
    "nll_loss_ignore_index_ok": lambda t: t.nn.functional.nll_loss(_m(t), _idx(t, 0, -100)).item(),
    "nll_loss_float_target": lambda t: t.nn.functional.nll_loss(_m(t), t.tensor([0.0, 1.0])),
    "nll_loss_batch_mismatch": lambda t: t.nn.functional.nll_loss(_m(t), _idx(t, 0, 1, 2)),
    "cross_entropy_target_too_big": lambda t: t.nn.functional.cross_entropy(_m(t), _idx(t, 3, 0)),
    "cross_entropy_target_negative": lambda t: t.nn.functional.cross_entropy(_m(t), _idx(t, 0, -1)),
    "cross_entropy_weight_size": lambda t: t.nn.functional.cross_entropy(_m(t), _idx(t, 0, 1), weight=t.ones(2)),
    "cross_entropy_4d_weight_size": lambda t: t.nn.functional.cross_entropy(t.ones(2, 3, 2, 2),
                                                                           t.zeros(2, 2, 2, dtype=t.long),
                                                                           weight=t.ones(4)),
    "cross_entropy_bad_reduction": lambda t: t.nn.functional.cross_entropy(_m(t), _idx(t, 0, 1), reduction="all"),
    "mse_loss_bad_reduction": lambda t: t.nn.functional.mse_loss(_m(t), _m(t), reduction="avg"),
    "binary_cross_entropy_size": lambda t: t.nn.functional.binary_cross_entropy(t.ones(3) / 2, t.ones(2)),
    # ---- shape ops ----
    "view_bad_size": lambda t: _m(t).view(4, 2),
    "view_two_inferred": lambda t: _m(t).view(-1, -1),
    "view_negative_size": lambda t: _m(t).view(-2, 3),
    "view_negative_after_inferred": lambda t: _m(t).view(-1, -2),
    "reshape_negative_size": lambda t: _m(t).reshape(2, -3),
    "reshape_bad_size": lambda t: _m(t).reshape(5),
    "permute_repeated": lambda t: _m(t).permute(0, 0),
    "permute_wrong_length": lambda t: _m(t).permute(0),
    "permute_too_long": lambda t: _m(t).permute(0, 1, 2),
    "permute_repeated_negative": lambda t: _m(t).permute(0, -2),
    "permute_out_of_range": lambda t: _m(t).permute(0, 2),
    "transpose_out_of_range": lambda t: _m(t).transpose(0, 2),
    "squeeze_out_of_range": lambda t: _m(t).squeeze(3),
    "unsqueeze_out_of_range": lambda t: _m(t).unsqueeze(3),
    "unsqueeze_too_small": lambda t: _m(t).unsqueeze(-4),
    "flatten_start_after_end": lambda t: t.ones(2, 3, 4).flatten(2, 1),
    "flatten_out_of_range": lambda t: _m(t).flatten(0, 2),
    "unflatten_bad_sizes": lambda t: _m(t).unflatten(1, (2, 2)),
    "unflatten_empty_sizes": lambda t: _m(t).unflatten(1, ()),
    "unflatten_inferred_bad": lambda t: t.ones(2, 6).unflatten(1, (-1, 4)),
    "unflatten_ok": lambda t: list(t.ones(2, 6).unflatten(-1, (-1, 3)).shape),
    "unflatten_out_of_range": lambda t: _m(t).unflatten(2, (1, 1)),
    "squeeze_dims_out_of_range": lambda t: _m(t).squeeze((0, 2)),
    "expand_negative": lambda t: _m(t).expand(-2, 3),
    "expand_bad": lambda t: _m(t).expand(4, 3),
    "expand_fewer_dims": lambda t: _m(t).expand(3),
    # ---- joins and splits ----
    "cat_dim_out_of_range": lambda t: t.cat([_m(t), _m(t)], 2),
    "cat_size_mismatch": lambda t: t.cat([_m(t), t.ones(2, 2)], 0),
    "cat_ndim_mismatch": lambda t: t.cat([_m(t), t.ones(3)], 0),
    "cat_empty": lambda t: t.cat([]),
    "stack_dim_out_of_range": lambda t: t.stack([_m(t), _m(t)], 3),
    "stack_size_mismatch": lambda t: t.stack([_m(t), t.ones(3, 2)]),
    "split_negative": lambda t: t.split(_m(t), -1),
    "split_dim_out_of_range": lambda t: t.split(_m(t), 1, 2),
    "split_sizes_bad_sum": lambda t: t.split(_m(t), [1, 1], 1),
    "split_sizes_negative": lambda t: t.split(_m(t), [4, -1], 1),
    "chunk_negative": lambda t: t.chunk(_m(t), -1),
    "chunk_zero": lambda t: t.chunk(_m(t), 0),
    "chunk_dim_out_of_range": lambda t: t.chunk(_m(t), 2, 2),
    "unbind_dim_out_of_range": lambda t: t.unbind(_m(t), 2),
    # ---- reductions' dims ----
    "sum_dim_out_of_range": lambda t: _m(t).sum(2),
    "sum_dim_repeated": lambda t: _m(t).sum((0, -2)),
    "mean_dim_out_of_range": lambda t: _m(t).mean(-3),
    "mean_int": lambda t: t.ones(2, dtype=t.long).mean(),
    "prod_dim_out_of_range": lambda t: _m(t).prod(2),
    "max_dim_out_of_range": lambda t: _m(t).max(2),
    "max_empty_dim": lambda t: t.ones(0, 3).max(0),
    "max_empty": lambda t: t.ones(0).max(),
    "argmax_dim_out_of_range": lambda t: _m(t).argmax(2),
    "amax_dim_out_of_range": lambda t: _m(t).amax(2),
    "std_dim_out_of_range": lambda t: _m(t).std(2),
    "var_int": lambda t: t.ones(3, dtype=t.long).var(),
    "logsumexp_dim_out_of_range": lambda t: _m(t).logsumexp(2),
    "softmax_dim_out_of_range": lambda t: _m(t).softmax(2),
    "log_softmax_dim_out_of_range": lambda t: t.nn.functional.log_softmax(_m(t), -3),
    "sum_dims_out_of_range": lambda t: _m(t).sum((0, 5)),
    "softmax_int": lambda t: t.ones(2, dtype=t.long).softmax(0),
    "argmax_empty": lambda t: t.ones(0).argmax(),
    "logsumexp_dims_repeated": lambda t: _m(t).logsumexp((1, -1)),
    "norm_dim_out_of_range": lambda t: _m(t).norm(dim=2),
    # ---- clamp_min / clamp_max: (Tensor input, Tensor or Number bound) ----
    "clamp_min_number_input_tensor_bound": lambda t: t.clamp_min(2, _m(t)),
    "clamp_max_number_input_tensor_bound": lambda t: t.clamp_max(2, _m(t)),
    "clamp_min_numpy_scalar_input": lambda t: t.clamp_min(np.float32(2), _m(t)),
    "clamp_min_numbers": lambda t: t.clamp_min(2, 3),
    "clamp_min_none_bound": lambda t: t.clamp_min(_m(t), None),
    "clamp_max_str_bound": lambda t: t.clamp_max(_m(t), "a"),
    "clamp_max_list_bound": lambda t: t.clamp_max(_m(t), [1]),
    "clamp_min_array_bound": lambda t: t.clamp_min(_m(t), np.array(2.0)),
    "clamp_min_complex_bound": lambda t: t.clamp_min(_m(t), 1j),
    "clamp_max_complex_bound": lambda t: _m(t).clamp_max(2j),
    "clamp_complex_min": lambda t: t.clamp(_m(t), min=1j),
    "clamp_complex_bounds": lambda t: _m(t).clamp(0, 2j),
}


def _described(t, value):
    """A returned value as JSON-able data (a tensor's shape; numbers and lists as they are)."""
    if hasattr(value, "shape") and hasattr(value, "dtype"):
        return {"shape": list(value.shape)}
    if isinstance(value, (list, tuple)):
        return [_described(t, v) for v in value]
    if isinstance(value, (int, float, str, bool)) or value is None:
        return value
    return type(value).__name__


_SET = re.compile(r"\{('[^']*'(?:, '[^']*')*)\}")


def _sorted_sets(text):
    """A printed set of strings ({'same', 'valid'}) with its items sorted: torch formats Python sets, whose
    order changes from process to process with the string hash seed."""
    return _SET.sub(lambda m: "{" + ", ".join(sorted(m.group(1).split(", "))) + "}", text)


def run_case(t, name):
    r = outcome(CASES[name], t)
    if "value" in r:
        r["value"] = _described(t, r["value"])
    if "message" in r:
        r["message"] = _sorted_sets(strip_addresses(r["message"]))
    return r


def _numgrad_case(name):
    import numgrad
    return run_case(numgrad, name)


@pytest.fixture(scope="module")
def numgrad_results():
    return run_cases(__file__, list(CASES))


def test_there_are_many_cases():
    assert len(CASES) >= 60


def test_sets_print_sorted():
    assert _sorted_sets("one of {'valid', 'same'}, got {'x'}") == "one of {'same', 'valid'}, got {'x'}"


@pytest.mark.parametrize("name", list(CASES))
def test_bad_argument_matches_torch(name, numgrad_results):
    import torch
    expected, got = run_case(torch, name), numgrad_results[name]
    assert "crash" not in got, f"numgrad died with code {got['crash']}:\n{got['stderr']}"
    assert got == expected


if __name__ == "__main__":
    child_main(_numgrad_case)

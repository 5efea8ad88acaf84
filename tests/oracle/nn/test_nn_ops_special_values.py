"""The padding, pooling, convolution, resampling and shuffle functions on special values (+-0, +-inf, NaN,
1e30, 1e-30) against torch, as the edge sweep runs the other nn functions: values, dtypes, grad_fn names and
gradients (zero signs not compared: BLAS and torch's kernels sum zeros in other orders)."""
import numpy as np
import pytest

from helpers.edge_cases import DTYPES
from helpers.edge_compare import compare


def F(L):
    return L.nn.functional


W1 = np.array([[[0.5, -1.0], [2.0, 0.25], [-0.5, 1.5]]], np.float32)  # conv1d weight (1, 3, 2)

CASES = {
    "pad_constant": lambda L, x: F(L).pad(x, (1, 2), value=-1.5),
    "pad_crop": lambda L, x: F(L).pad(x, (-1, 1, 1, 0)),
    "pad_reflect": lambda L, x: F(L).pad(x, (2, 1), mode="reflect"),
    "pad_replicate": lambda L, x: F(L).pad(x[None], (1, 2, 1, 0), mode="replicate"),
    "pad_circular": lambda L, x: F(L).pad(x[None], (1, 2, 1, 0), mode="circular"),
    "avg_pool1d": lambda L, x: F(L).avg_pool1d(x[None], 2),
    "avg_pool1d_pad": lambda L, x: F(L).avg_pool1d(x[None], 3, 1, 1, count_include_pad=False),
    "avg_pool2d": lambda L, x: F(L).avg_pool2d(x[None], 2, 1, ceil_mode=True),
    "adaptive_avg2d": lambda L, x: F(L).adaptive_avg_pool2d(x[None], (2, 3)),
    "adaptive_max2d": lambda L, x: F(L).adaptive_max_pool2d(x[None], (2, 3), return_indices=True),
    "max_pool1d": lambda L, x: F(L).max_pool1d(x[None], 2, 1, return_indices=True),
    "max_pool3d": lambda L, x: F(L).max_pool3d(x[None, None], (1, 2, 2), 1, return_indices=True),
    "lp_pool1d": lambda L, x: F(L).lp_pool1d(x[None], 2, 2),
    "conv1d": lambda L, x: F(L).conv1d(x[None], L.tensor(W1).to(x.dtype)),
    "conv_transpose1d": lambda L, x: F(L).conv_transpose1d(x[None], L.tensor(W1).to(x.dtype).transpose(0, 1), stride=2),
    "interp_nearest": lambda L, x: F(L).interpolate(x[None], scale_factor=2),
    "interp_linear": lambda L, x: F(L).interpolate(x[None], size=7, mode="linear"),
    "interp_bilinear": lambda L, x: F(L).interpolate(x[None, None], scale_factor=1.5, mode="bilinear",
                                                     align_corners=True),
    "interp_bicubic": lambda L, x: F(L).interpolate(x[None, None], size=(4, 5), mode="bicubic"),
    "unfold": lambda L, x: F(L).unfold(x[None, None], 2),
    "fold": lambda L, x: F(L).fold(x.reshape(4, 3), (2, 4), 2),
    "pixel_shuffle": lambda L, x: F(L).pixel_shuffle(x.reshape(1, 4, 1, 3), 2),
}


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", list(CASES))
def test_special_values_match_torch(name, dtype):
    difference = compare(CASES[name], DTYPES[dtype], signs=False, grad_signs=False)
    assert difference is None, difference

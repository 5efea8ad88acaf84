"""The sign of the zeros a convolution with a -0.0 bias gives, against torch: its slow CPU kernels (float64, float32
off oneDNN's conditions, dilated ones) add the terms onto the bias, so -0.0 terms keep a -0.0 bias; oneDNN's
(float32 with a batch or groups) and no bias give +0.0."""
import itertools

import numpy as np
import pytest
import torch

import numgrad


def _conv(lib, k, dtype, n, groups, dilation, padding, w_sign, x_sign, bias):
    rng = np.random.default_rng(k)
    x = np.zeros((n, 2 * groups) + (5,) * k) * x_sign
    w = (rng.random((2 * groups, 2) + (3,) * k) + 0.1) * w_sign
    b = {"none": None, "+0": np.zeros(2 * groups), "-0": -np.zeros(2 * groups),
         "mixed": np.array([0.0, -0.0] * groups)}[bias]
    f = (lib.nn.functional.conv1d, lib.nn.functional.conv2d, lib.nn.functional.conv3d)[k - 1]
    t = [None if a is None else lib.tensor(a.astype(dtype)) for a in (x, w, b)]
    return f(*t, dilation=dilation, groups=groups, padding=padding).numpy()


CASES = list(itertools.product([1, 2, 3], [np.float32, np.float64], [1, 2], [1, 2], [1, 2], [0, 1]))


@pytest.mark.parametrize("k,dtype,n,groups,dilation,padding", CASES)
def test_zero_signs_match_torch(k, dtype, n, groups, dilation, padding):
    for w_sign, x_sign, bias in itertools.product([1, -1], [1, -1], ["none", "+0", "-0", "mixed"]):
        args = (k, dtype, n, groups, dilation, padding, w_sign, x_sign, bias)
        ours, theirs = _conv(numgrad, *args), _conv(torch, *args)
        np.testing.assert_array_equal(ours, theirs)
        np.testing.assert_array_equal(np.signbit(ours), np.signbit(theirs), err_msg=str(args))


def test_mixed_terms_and_nonzero_values_are_untouched():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((1, 2, 6, 6))
    x[..., :3, :] = 0.0
    w = rng.standard_normal((3, 2, 3, 3))
    w[0] = -np.abs(w[0])
    b = np.array([-0.0, -0.0, 0.5])
    for dtype in (np.float32, np.float64):
        outs = [lib.nn.functional.conv2d(*(lib.tensor(a.astype(dtype)) for a in (x, w, b)), padding=1).numpy()
                for lib in (numgrad, torch)]
        np.testing.assert_allclose(outs[0], outs[1], rtol=1e-5, atol=1e-6)
        zeros = (outs[0] == 0) & (outs[1] == 0)
        np.testing.assert_array_equal(np.signbit(outs[0][zeros]), np.signbit(outs[1][zeros]))

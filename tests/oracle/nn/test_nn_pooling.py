"""Average, adaptive, 1-d and 3-d max pooling, max_unpool2d and lp_pool against torch: values, indices,
grad_fn names, gradients (float32 and float64, finite differences), layers and torch's errors."""
import numpy as np
import pytest

import numgrad
from helpers.functional_compare import check_gradients, compare, same_error
from helpers.nn_compare import rand, run_module, twin

CASES = {
    "avg2": (lambda F, x: F.avg_pool2d(x, 2), (2, 3, 6, 5)),
    "avg2_pad": (lambda F, x: F.avg_pool2d(x, 3, 2, 1), (2, 3, 7, 6)),
    "avg2_exclude_pad": (lambda F, x: F.avg_pool2d(x, 3, 2, 1, count_include_pad=False), (2, 3, 7, 6)),
    "avg2_ceil": (lambda F, x: F.avg_pool2d(x, 3, 2, 1, ceil_mode=True), (2, 3, 8, 6)),
    "avg2_ceil_exclude": (lambda F, x: F.avg_pool2d(x, 3, 2, 1, ceil_mode=True, count_include_pad=False),
                          (2, 3, 8, 6)),
    "avg2_divisor": (lambda F, x: F.avg_pool2d(x, (3, 2), 2, 1, divisor_override=4), (3, 8, 6)),
    "avg1": (lambda F, x: F.avg_pool1d(x, 3, 2, 1, ceil_mode=True), (2, 3, 8)),
    "avg1_exclude": (lambda F, x: F.avg_pool1d(x, 2, padding=1, count_include_pad=False), (3, 7)),
    "avg3": (lambda F, x: F.avg_pool3d(x, 2), (2, 2, 4, 5, 4)),
    "avg3_ceil_exclude": (lambda F, x: F.avg_pool3d(x, 2, 1, 1, ceil_mode=True, count_include_pad=False),
                          (2, 2, 4, 5, 3)),
    "avg3_divisor": (lambda F, x: F.avg_pool3d(x, (3, 2, 2), 2, 1, divisor_override=3), (2, 5, 5, 4)),
    "adaptive_avg2": (lambda F, x: F.adaptive_avg_pool2d(x, (3, 4)), (2, 3, 7, 6)),
    "adaptive_avg2_none": (lambda F, x: F.adaptive_avg_pool2d(x, (None, 4)), (2, 3, 7, 6)),
    "adaptive_avg2_up": (lambda F, x: F.adaptive_avg_pool2d(x, 5), (3, 3, 4)),
    "adaptive_avg2_mean": (lambda F, x: F.adaptive_avg_pool2d(x, 1), (2, 3, 7, 6)),
    "adaptive_avg1": (lambda F, x: F.adaptive_avg_pool1d(x, 4), (2, 3, 7)),
    "adaptive_avg3": (lambda F, x: F.adaptive_avg_pool3d(x, (2, 3, 4)), (2, 3, 5, 7, 6)),
    "adaptive_avg3_mean": (lambda F, x: F.adaptive_avg_pool3d(x, 1), (2, 3, 5, 7, 6)),
    "adaptive_max2": (lambda F, x: F.adaptive_max_pool2d(x, (3, 4), return_indices=True), (2, 3, 7, 6)),
    "adaptive_max2_unbatched": (lambda F, x: F.adaptive_max_pool2d(x, 3), (3, 5, 5)),
    "adaptive_max1": (lambda F, x: F.adaptive_max_pool1d(x, 4, True), (2, 3, 7)),
    "adaptive_max3": (lambda F, x: F.adaptive_max_pool3d(x, (2, 3, 4), True), (2, 3, 5, 7, 6)),
    "max3": (lambda F, x: F.max_pool3d(x, 2), (2, 3, 4, 5, 6)),
    "max3_ceil": (lambda F, x: F.max_pool3d(x, 3, 2, 1, ceil_mode=True, return_indices=True), (2, 3, 5, 5, 6)),
    "max3_dilation": (lambda F, x: F.max_pool3d(x, 2, 1, 1, dilation=2), (3, 5, 5, 6)),
    "max1": (lambda F, x: F.max_pool1d(x, 3, 2, 1), (2, 3, 9)),
    "max1_indices": (lambda F, x: F.max_pool1d(x, 3, 2, 1, return_indices=True), (2, 3, 9)),
    "max1_unbatched_dilation": (lambda F, x: F.max_pool1d(x, 2, dilation=2, ceil_mode=True), (3, 9)),
    "unpool2": (lambda F, x: F.max_unpool2d(*F.max_pool2d(x, 2, return_indices=True), 2), (2, 3, 6, 6)),
    "unpool2_size": (lambda F, x: F.max_unpool2d(*F.max_pool2d(x, 2, return_indices=True), 2, output_size=(7, 7)),
                     (2, 3, 7, 7)),
    "unpool1": (lambda F, x: F.max_unpool1d(*F.max_pool1d(x, 2, return_indices=True), 2), (2, 3, 7)),
    "unpool1_size": (lambda F, x: F.max_unpool1d(*F.max_pool1d(x, 2, return_indices=True), 2, output_size=[7]),
                     (2, 3, 7)),
    "unpool3": (lambda F, x: F.max_unpool3d(*F.max_pool3d(x, 2, return_indices=True), 2), (2, 2, 4, 4, 4)),
    "unpool3_unbatched": (lambda F, x: F.max_unpool3d(*F.max_pool3d(x, 2, return_indices=True), 2), (2, 4, 4, 4)),
    "lp3": (lambda F, x: F.lp_pool3d(x.abs() + 0.1, 2, 2), (2, 2, 4, 4, 4)),
    "max1_with_indices": (lambda F, x: F.max_pool1d_with_indices(x, 2), (2, 3, 7)),
    "max2_with_indices": (lambda F, x: F.max_pool2d_with_indices(x, 2, 1, 1), (2, 3, 5, 5)),
    "max3_with_indices": (lambda F, x: F.max_pool3d_with_indices(x, 2), (2, 2, 4, 4, 4)),
    "adaptive_max1_with_indices": (lambda F, x: F.adaptive_max_pool1d_with_indices(x, 3), (2, 3, 7)),
    "adaptive_max2_with_indices": (lambda F, x: F.adaptive_max_pool2d_with_indices(x, (2, 3)), (2, 3, 5, 5)),
    "adaptive_max3_with_indices": (lambda F, x: F.adaptive_max_pool3d_with_indices(x, 2), (2, 2, 4, 4, 4)),
    "lp2": (lambda F, x: F.lp_pool2d(x.abs() + 0.1, 2, 2), (2, 3, 6, 6)),
    "lp2_stride": (lambda F, x: F.lp_pool2d(x.abs() + 0.1, 3.0, (2, 3), 1), (2, 3, 6, 6)),
    "lp1": (lambda F, x: F.lp_pool1d(x.abs() + 0.1, 3, 2), (2, 3, 6)),
}


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["float32", "float64"])
@pytest.mark.parametrize("case", list(CASES))
def test_pool_matches_torch(case, dtype):
    fn, shape = CASES[case]
    compare(fn, shape, dtype=dtype)


@pytest.mark.parametrize("case", list(CASES))
def test_pool_gradcheck(case):
    fn, shape = CASES[case]
    check_gradients(fn, shape)


def test_max_pools_take_the_first_maximum_of_ties():
    data = np.zeros((1, 2, 4, 4, 4), np.float32)
    compare(lambda F, x: F.max_pool3d(x, 2, 1, return_indices=True), data.shape, check_name=True)
    for fn in (lambda F, x: F.max_pool3d(x, 3, 2, 1, return_indices=True),
               lambda F, x: F.adaptive_max_pool3d(x, 3, return_indices=True)):
        ours = fn(numgrad.nn.functional, numgrad.tensor(data))
        import torch
        theirs = fn(torch.nn.functional, torch.tensor(data))
        np.testing.assert_array_equal(ours[1].numpy(), theirs[1].numpy())


ERRORS = [
    ((1, 3, 4, 5), lambda F, x: F.avg_pool2d(x, (1, 2, 3))),
    ((1, 3, 4, 5), lambda F, x: F.avg_pool2d(x, 2, (1, 2, 3))),
    ((1, 3, 4, 5), lambda F, x: F.avg_pool2d(x, 2, 1, (1, 2, 3))),
    ((1, 3, 4, 5), lambda F, x: F.avg_pool2d(x, 2, divisor_override=0)),
    ((3, 4), lambda F, x: F.avg_pool2d(x, 2)),
    ((1, 3, 4, 5), lambda F, x: F.avg_pool2d(x, 2, padding=2)),
    ((1, 3, 4, 5), lambda F, x: F.avg_pool2d(x, 5)),
    ((1, 3, 4, 5), lambda F, x: F.avg_pool2d(x, 0)),
    ((1, 3, 4, 5, 6), lambda F, x: F.avg_pool3d(x, (1, 2))),
    ((1, 3, 4, 5, 6), lambda F, x: F.avg_pool3d(x, 2, (1, 2))),
    ((1, 3, 4, 5, 6), lambda F, x: F.avg_pool3d(x, 2, 1, (1, 2))),
    ((3, 4, 5), lambda F, x: F.avg_pool3d(x, 2)),
    ((1, 3, 4, 5, 6), lambda F, x: F.avg_pool3d(x, 5)),
    ((1, 3, 4, 5, 6), lambda F, x: F.avg_pool3d(x, 2, padding=2)),
    ((1, 3, 4), lambda F, x: F.avg_pool1d(x, (1, 2))),
    ((1, 3, 4, 5), lambda F, x: F.avg_pool1d(x, 2)),
    ((1, 3, 4), lambda F, x: F.avg_pool1d(x, 5)),
    ((1, 3, 4), lambda F, x: F.avg_pool1d(x, 2, padding=2)),
    ((1, 3, 4, 5, 6), lambda F, x: F.max_pool3d(x, (1, 2))),
    ((3, 4, 5), lambda F, x: F.max_pool3d(x, 2)),
    ((1, 3, 4, 5, 6), lambda F, x: F.max_pool3d(x, 5)),
    ((1, 3, 4, 5, 6), lambda F, x: F.max_pool3d(x, 2, padding=2)),
    ((1, 3, 4, 5), lambda F, x: F.max_pool1d(x, 2)),
    ((1, 3, 4), lambda F, x: F.max_pool1d(x, 5)),
    ((1, 3, 4), lambda F, x: F.max_pool1d(x, 2, padding=2)),
    ((1, 3, 4), lambda F, x: F.max_pool1d(x, (1, 2))),
    ((1, 3, 4), lambda F, x: F.max_pool1d(x, 5, return_indices=True)),
    ((1, 3, 4, 5), lambda F, x: F.adaptive_avg_pool2d(x, (1, 2, 3))),
    ((1, 3, 4, 5), lambda F, x: F.adaptive_avg_pool2d(x, (-1, 2))),
    ((1, 3, 4, 5), lambda F, x: F.adaptive_avg_pool1d(x, 2)),
    ((1, 3, 4, 5), lambda F, x: F.adaptive_max_pool1d(x, 2)),
    ((1, 0, 3, 3), lambda F, x: F.adaptive_max_pool2d(x, 2)),
    ((1, 3, 4, 5), lambda F, x: F.adaptive_max_pool2d(x, (-1, 2))),
    ((1, 3, 4, 5), lambda F, x: F.adaptive_avg_pool2d(x, (None, None, 2))),
]


@pytest.mark.parametrize("shape, fn", ERRORS)
def test_pool_errors_match_torch(shape, fn):
    same_error(fn, rand(*shape))


def test_unpool_errors_match_torch():
    x = rand(1, 2, 2, 2)
    same_error(lambda F, v: F.max_unpool2d(v, v, 2), x)
    same_error(lambda F, v: F.max_unpool2d(v, (v * 0 + 99).long(), 2), x)
    same_error(lambda F, v: F.max_unpool2d(v, (v * 0).long(), 2, output_size=(9, 9)), x)
    same_error(lambda F, v: F.max_unpool3d(v[0], (v[0] * 0 + 99).long(), 2), x)
    same_error(lambda F, v: F.max_unpool3d(v[0, 0], (v[0, 0] * 0).long(), 2), x)
    same_error(lambda F, v: F.max_unpool1d(v[0], (v[0] * 0).long(), 2, output_size=(1, 2)), x)


LAYERS = {
    "avg1": (lambda nn: nn.AvgPool1d(3, 2, 1), (2, 3, 8)),
    "avg2": (lambda nn: nn.AvgPool2d(3, 2, 1, True, False), (2, 3, 8, 7)),
    "avg2_divisor": (lambda nn: nn.AvgPool2d(2, divisor_override=3), (2, 3, 6, 6)),
    "avg3": (lambda nn: nn.AvgPool3d((1, 2, 3)), (2, 3, 4, 4, 6)),
    "max1": (lambda nn: nn.MaxPool1d(2), (2, 3, 8)),
    "max3": (lambda nn: nn.MaxPool3d(2, 1, 1), (2, 3, 4, 4, 4)),
    "adaptive_avg1": (lambda nn: nn.AdaptiveAvgPool1d(3), (2, 3, 8)),
    "adaptive_avg2": (lambda nn: nn.AdaptiveAvgPool2d((None, 2)), (2, 3, 5, 5)),
    "adaptive_avg3": (lambda nn: nn.AdaptiveAvgPool3d(2), (2, 3, 5, 5, 5)),
    "adaptive_max1": (lambda nn: nn.AdaptiveMaxPool1d(3), (2, 3, 8)),
    "adaptive_max2": (lambda nn: nn.AdaptiveMaxPool2d(2), (2, 3, 5, 5)),
    "adaptive_max3": (lambda nn: nn.AdaptiveMaxPool3d((2, 1, 3)), (2, 3, 5, 5, 5)),
    "lp1": (lambda nn: nn.LPPool1d(2, 3), (2, 3, 8)),
    "lp2": (lambda nn: nn.LPPool2d(2.0, (2, 3), 1), (2, 3, 5, 5)),
    "lp3": (lambda nn: nn.LPPool3d(2, 2), (2, 3, 4, 4, 4)),
}


@pytest.mark.parametrize("name", list(LAYERS))
def test_pool_layers_match_torch(name):
    make, shape = LAYERS[name]
    ours, theirs = twin(lambda lib: make(lib.nn))
    assert repr(ours) == repr(theirs)
    data = np.abs(rand(*shape)) + 0.1 if name.startswith("lp") else rand(*shape)
    run_module(ours, theirs, data)


def test_unpool_layer_matches_torch():
    import torch
    for lib in (numgrad, torch):
        x = lib.tensor(rand(2, 3, 6, 6), requires_grad=True)
        out, idx = lib.nn.MaxPool2d(2, return_indices=True)(x)
        y = lib.nn.MaxUnpool2d(2)(out, idx)
        y.sum().backward()
        assert repr(lib.nn.MaxUnpool2d(2)) == "MaxUnpool2d(kernel_size=(2, 2), stride=(2, 2), padding=(0, 0))"
        assert repr(lib.nn.MaxUnpool3d(2, 1)) == \
            "MaxUnpool3d(kernel_size=(2, 2, 2), stride=(1, 1, 1), padding=(0, 0, 0))"
        assert repr(lib.nn.MaxUnpool1d(2)) == "MaxUnpool1d(kernel_size=(2,), stride=(2,), padding=(0,))"
        if lib is numgrad:
            ours = (y.detach().numpy(), x.grad.numpy(), y.grad_fn.name())
    np.testing.assert_allclose(ours[0], y.detach().numpy())
    np.testing.assert_allclose(ours[1], x.grad.numpy())
    assert ours[2] == y.grad_fn.name()

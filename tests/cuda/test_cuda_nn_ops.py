"""The padding, pooling, convolution, resampling and shuffle ops on CUDA tensors: those built from tensor ops
(circular padding, a 1x1 adaptive average) run there and match the CPU; the others, host-only as conv2d is,
refuse with a clear NotImplementedError."""
import numpy as np
import pytest

import numgrad

F = numgrad.nn.functional

HOST_ONLY = {
    "pad_constant": lambda x: F.pad(x, (1, 2)),
    "pad_reflect": lambda x: F.pad(x, (1, 2, 1, 1), mode="reflect"),
    "pad_replicate": lambda x: F.pad(x, (1, 2, 0, 1), mode="replicate"),
    "avg_pool2d": lambda x: F.avg_pool2d(x, 2),
    "avg_pool1d": lambda x: F.avg_pool1d(x[0], 2),
    "adaptive_avg_pool2d": lambda x: F.adaptive_avg_pool2d(x, 2),
    "adaptive_max_pool2d": lambda x: F.adaptive_max_pool2d(x, 2),
    "max_pool3d": lambda x: F.max_pool3d(x[None], 1),
    "max_pool1d": lambda x: F.max_pool1d(x[0], 2),
    "conv1d": lambda x: F.conv1d(x[0], numgrad.ones(2, 3, 2, device="cuda")),
    "conv_transpose2d": lambda x: F.conv_transpose2d(x, numgrad.ones(3, 2, 2, 2, device="cuda")),
    "interpolate": lambda x: F.interpolate(x, scale_factor=2, mode="bilinear"),
    "unfold": lambda x: F.unfold(x, 2),
    "pixel_shuffle": lambda x: F.pixel_shuffle(numgrad.ones(1, 4, 2, 2, device="cuda"), 2),
}


@pytest.mark.parametrize("name", list(HOST_ONLY))
def test_host_only_ops_refuse_cuda_tensors(name):
    x = numgrad.randn(2, 3, 4, 4, device="cuda")
    with pytest.raises(NotImplementedError, match="not implemented for CUDA tensors yet"):
        HOST_ONLY[name](x)


@pytest.mark.parametrize("fn", [lambda x: F.pad(x, (1, 2, 2, 1), mode="circular"),
                                lambda x: F.adaptive_avg_pool2d(x, 1)], ids=["circular", "adaptive_mean"])
def test_ops_built_from_tensor_ops_run_on_cuda(fn):
    data = np.random.default_rng(0).standard_normal((2, 3, 4, 4))
    results = []
    for device in ("cpu", "cuda"):
        x = numgrad.tensor(data, device=device, requires_grad=True)
        out = fn(x)
        out.sum().backward()
        assert out.device.type == device
        results.append((out.detach().cpu().numpy(), x.grad.cpu().numpy()))
    for a, b in zip(*results):
        np.testing.assert_allclose(a, b, rtol=1e-12)

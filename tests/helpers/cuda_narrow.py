"""Shared helpers of the narrow-dtype CUDA tests: inputs made on the CPU and copied up (both devices read the same
bits), and comparisons of a CUDA result with the CPU's, bit for bit or within the dtype's rounding."""
import ml_dtypes
import numpy as np

import numgrad

NARROW = ("uint8", "int8", "int16", "int32", "float16", "bfloat16")
HALF = ("float16", "bfloat16")
# one unit in the last place of each half type, relative: the float32 transcendental functions of the GPU (or of
# the simulator's double math) may differ from the CPU's in the last bits, and a rounding to half rarely hides it;
# a float32 result (an integer's exp) gets the float32 tolerance of tests/cuda/test_cuda_ops.py (libdevice's
# functions are within a few ulps, not correctly rounded)
ULP = {"float16": 2.0 ** -10, "bfloat16": 2.0 ** -7, "float32": 1e-5, "float64": 2.0 ** -52}


def np_dtype(name):
    return np.dtype(ml_dtypes.bfloat16) if name == "bfloat16" else np.dtype(name)


def pair(values, dtype, requires_grad=False):
    """The same tensor on the CPU and on the GPU: `values` (a NumPy array) cast to `dtype` on the host."""
    cpu = numgrad.tensor(np.asarray(values)).to(getattr(numgrad, dtype))
    gpu = cpu.to("cuda")
    if requires_grad:
        cpu.requires_grad_()
        gpu.requires_grad_()
    return cpu, gpu


def host(t):
    assert isinstance(t, numgrad.Tensor), t
    return t.detach().cpu().numpy()


def _is_float(arr):
    return arr.dtype.kind == "f" or arr.dtype == ml_dtypes.bfloat16


def _float_arrays(cpu, gpu):
    """The host arrays of both results once device, dtype, shape and grad_fn name agree; None when they are not
    floating point, after checking them equal."""
    assert gpu.device == numgrad.device("cuda", 0), gpu.device
    assert cpu.dtype == gpu.dtype and cpu.shape == gpu.shape, (cpu.dtype, gpu.dtype, cpu.shape, gpu.shape)
    assert type(cpu.grad_fn).__name__ == type(gpu.grad_fn).__name__
    a, b = host(cpu), host(gpu)
    if not _is_float(a):
        np.testing.assert_array_equal(b, a)
        return None
    return a, b


def same_bits(cpu, gpu):
    """The GPU's result is the CPU's: device, dtype, shape, grad_fn name, and every bit (a NaN as any NaN: the GPU's
    float16 conversion keeps no payload)."""
    arrays = _float_arrays(cpu, gpu)
    if arrays is None:
        return
    a, b = arrays
    nan = np.isnan(a.astype(np.float64))
    np.testing.assert_array_equal(np.isnan(b.astype(np.float64)), nan)
    as_bits = np.dtype(f"u{a.itemsize}")
    np.testing.assert_array_equal(b.view(as_bits)[~nan], a.view(as_bits)[~nan])


def close(cpu, gpu, ulps=2):
    """As same_bits, within `ulps` units in the last place of the result's dtype."""
    arrays = _float_arrays(cpu, gpu)
    if arrays is None:
        return
    a, b = arrays
    tol = ulps * ULP[str(cpu.dtype).removeprefix("torch.")]
    np.testing.assert_allclose(b.astype(np.float64), a.astype(np.float64), rtol=tol, atol=tol, equal_nan=True)


def same_error(fn):
    """fn("cpu") and fn("cuda") raise the same exception type and message, or return results; returns them."""
    results, errors = {}, {}
    for device in ("cpu", "cuda"):
        try:
            results[device] = fn(device)
        except Exception as e:  # noqa: BLE001 - the point is comparing whatever was raised
            errors[device] = e
    if errors:
        assert set(errors) == {"cpu", "cuda"}, errors
        assert type(errors["cpu"]) is type(errors["cuda"]) and str(errors["cpu"]) == str(errors["cuda"]), errors
        return None
    return results["cpu"], results["cuda"]

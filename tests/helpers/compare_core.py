"""What the torch comparisons share (autograd_compare and seed_harness, and the inputs of op_compare and
nn_compare): text made independent of the run, fixed random inputs, tensor fields, values within tolerance,
and warnings recorded as torch and Python show them. Imports neither torch nor numgrad: the seed harness's
self-check runs torch on both sides."""

import contextlib
import math
import re
import warnings

import numpy as np

RTOL = 1e-5
ATOL = 1e-6

_ADDRESS = re.compile(r"0x[0-9a-fA-F]+")
# torch appends the C++ source location of its own build to warnings raised in C++,
# e.g. " (Triggered internally at /__w/pytorch/pytorch/.../TensorBody.h:493.)".
# That is a build path, not part of the message a user is meant to read.
_TRIGGERED = re.compile(r"\s*\(Triggered internally at [^)]*\)\s*$")


def strip_addresses(text):
    """Replaces object addresses so that two runs print the same text."""
    return _ADDRESS.sub("0x\u2026", text)


def normalize(text):
    """strip_addresses, and torch's C++ source location at the end of the text dropped (a warning's)."""
    return strip_addresses(_TRIGGERED.sub("", text))


def fixed(shape, seed, low=None, high=None, dtype=np.float32):
    """A reproducible array standing in for randn (or uniform(low, high) for rand)."""
    rng = np.random.default_rng(seed)
    data = rng.standard_normal(shape) if low is None else rng.uniform(low, high, shape)
    return np.asarray(data, dtype=dtype)


def rand(*shape, dtype=np.float32, seed=0):
    """fixed() with randn's signature: the standard-normal inputs of the op and nn tests."""
    return fixed(shape, seed, dtype=dtype)


def grad_fn_name(t):
    """The class name of a tensor's grad_fn, or None."""
    return None if t.grad_fn is None else type(t.grad_fn).__name__


def tensor_fields(t):
    """(type name, dtype name, shape, requires_grad, is_leaf, grad_fn name) of a tensor of either library."""
    return (type(t).__name__, str(t.dtype).rsplit(".", 1)[-1], tuple(int(s) for s in t.shape),
            bool(t.requires_grad), bool(t.is_leaf), grad_fn_name(t))


def tensor_data(t):
    """A copy of the tensor's values as a numpy array."""
    return np.array(t.detach().numpy(), copy=True)


def floats_close(x, y, rtol=RTOL, atol=ATOL):
    """Two Python floats within tolerance, or both NaN."""
    return (math.isnan(x) and math.isnan(y)) or math.isclose(x, y, rel_tol=rtol, abs_tol=atol)


def values_mismatch(ref, got, rtol=RTOL, atol=ATOL):
    """None when `got` matches the reference array `ref` (floating and complex: within rtol/atol of ref, NaN
    where NaN; other dtypes exactly), else numpy's assertion message."""
    try:
        if ref.dtype.kind in "fc":
            np.testing.assert_allclose(got, ref, rtol=rtol, atol=atol)
        else:
            np.testing.assert_array_equal(got, ref)
    except AssertionError as exc:
        return str(exc)
    return None


@contextlib.contextmanager
def recorded_warnings(lib):
    """Records every warning raised in the block (the "always" filter) into the list it yields. warn-always is
    on meanwhile (torch's and numgrad's): their TORCH_WARN_ONCE warnings then show on every run, as Python's do."""
    warn_always = lib.is_warn_always_enabled()
    lib.set_warn_always(True)
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            yield caught
    finally:
        lib.set_warn_always(warn_always)


def warning_entry(w):
    """(category name, normalized message) of a recorded warning; None for JIT-compiler chatter (numba,
    llvmlite), which is not something a user of either library is shown."""
    module = getattr(w.category, "__module__", "")
    if module.startswith(("numba", "llvmlite")):
        return None
    return (w.category.__name__, normalize(str(w.message)))

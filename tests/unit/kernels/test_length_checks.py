"""Kernels that index several arrays by one length check the lengths before they launch: a short array is a
clear RuntimeError, never a read or write past its end."""
import numpy as np
import pytest

from numgrad.kernels.cpu import kernels
from numgrad.kernels.dispatch import optim

ADD = (("a", "b"), (("out", "a + b"),))


def test_elementwise_short_input_raises():
    a, b = np.ones(8, np.float32), np.ones(3, np.float32)
    with pytest.raises(RuntimeError, match="runs over 8 elements but was given an array of 3 elements"):
        kernels.run_elementwise("add", *ADD, [a, b], [np.float32], 8, "float32")


def test_elementwise_short_out_raises():
    a = np.ones(8, np.float32)
    with pytest.raises(RuntimeError, match="runs over 8 elements but was given an array of 2 elements"):
        kernels.run_elementwise("add", *ADD, [a, a], None, 8, "float32", outs=[np.empty(2, np.float32)])


def test_elementwise_right_lengths_run():
    a = np.arange(8, dtype=np.float32)
    out = np.empty(8, np.float32)
    kernels.run_elementwise("add", *ADD, [a, a], None, 8, "float32", outs=[out])
    np.testing.assert_array_equal(out, 2 * a)


def test_optimizer_kernel_checks_state_shape():
    p, g, buf = np.ones(5, np.float32), np.ones(5, np.float32), np.ones(3, np.float32)
    with pytest.raises(RuntimeError, match=r"The size of tensor a \(3\) must match the size of tensor b \(5\)"):
        optim.run("sgd", p, g, buf, -0.1, 0.0, 0.9, 1.0, False, False, False)
    np.testing.assert_array_equal(p, 1)  # nothing written


def test_optimizer_kernel_updates_non_contiguous_parameter():
    base = np.ones((4, 2), np.float32)
    p = base[:, 0]  # a strided view: the kernel works on a copy that is written back
    optim.run("sgd", p, np.ones(4, np.float32), None, -0.5, 0.0, 0.0, 1.0, False, False, True)
    np.testing.assert_array_equal(base[:, 0], 0.5)
    np.testing.assert_array_equal(base[:, 1], 1)

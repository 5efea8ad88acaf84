"""F.rms_norm / nn.RMSNorm (torch's composite: nodes, eps defaults per dtype, upcasting) and nn.BatchNorm3d against
torch: values, gradients, dtypes, state_dicts, reprs and errors."""
import os
import subprocess
import sys

import numpy as np
import pytest
import torch

import numgrad
from numgrad import testing as ngt
from helpers.autograd_compare import leaf, raises, same, tree
from helpers.compare_core import rand


@pytest.mark.parametrize("shape,eps", [((4,), None), ((3, 4), 1e-3), ([4], 0.5), ((2, 3, 4), None)])
@pytest.mark.parametrize("with_weight", [True, False])
def test_rms_norm_values_gradients_nodes(shape, eps, with_weight):
    def fn(L):
        x = leaf(L, rand(2, 3, 4))
        w = leaf(L, rand(*shape, seed=5)) if with_weight else None
        y = L.nn.functional.rms_norm(x, shape, w, eps)
        y.backward(L.tensor(rand(2, 3, 4, seed=1)))
        return y, x.grad, None if w is None else w.grad, tree(y.grad_fn)
    same(fn, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float64"])
@pytest.mark.parametrize("eps", [None, 1e-6, 0.1])
def test_rms_norm_dtypes_and_eps(dtype, eps):
    def fn(L):
        x = leaf(L, rand(2, 4) * 1e-3)
        w = leaf(L, rand(4, seed=2))
        dt = getattr(L, dtype)
        y = L.nn.functional.rms_norm(x.to(dt), (4,), w.to(dt), eps)
        y.sum().backward()
        return str(y.dtype).rsplit(".")[-1], y.double(), x.grad, tree(y.grad_fn)
    same(fn, rtol=1e-2, atol=1e-3)


def test_rms_norm_default_eps_is_the_dtypes_epsilon():
    def fn(L):
        zeros = L.zeros(1, 3, dtype=L.float64)
        return L.nn.functional.rms_norm(zeros + 1e-9, [3]), L.nn.functional.rms_norm((zeros + 1e-5).float(), [3])
    same(fn)


def test_rms_norm_errors():
    def fn(L):
        F, x = L.nn.functional, L.tensor(rand(2, 3, 4))
        return (raises(F.rms_norm, x, (5,)), raises(F.rms_norm, x, (2, 4)), raises(F.rms_norm, x, (4,), L.ones(3)),
                raises(F.rms_norm, x.long(), (4,)), raises(F.rms_norm, x, 4), raises(F.rms_norm, L.tensor(1.0), (1,)),
                raises(F.rms_norm, L.ones(3), (2, 3)), raises(F.rms_norm, L.ones(3), ()))
    same(fn)


def test_rms_norm_gradcheck_float64():
    x = numgrad.tensor(rand(2, 3, dtype=np.float64), requires_grad=True)
    w = numgrad.tensor(rand(3, seed=3, dtype=np.float64), requires_grad=True)
    assert ngt.gradcheck(lambda a, b: numgrad.nn.functional.rms_norm(a, (3,), b, 1e-3), (x, w))
    assert ngt.gradgradcheck(lambda a, b: numgrad.nn.functional.rms_norm(a, (3,), b), (x, w))


def test_rms_norm_module_state_dict_and_repr():
    def fn(L):
        m, plain = L.nn.RMSNorm([3, 4], eps=1e-5), L.nn.RMSNorm(4, elementwise_affine=False)
        x = leaf(L, rand(2, 3, 4))
        y = m(x)
        y.sum().backward()
        return (repr(m), repr(plain), repr(L.nn.RMSNorm(4)), list(m.state_dict()), m.weight, y, x.grad,
                plain(x), plain.weight, m.normalized_shape, L.nn.RMSNorm(2, dtype=L.float64).weight.dtype)
    same(fn, rtol=1e-5, atol=1e-6)
    t = torch.nn.RMSNorm(4)
    with torch.no_grad():
        t.weight.copy_(torch.tensor(rand(4, seed=9)))
    n = numgrad.nn.RMSNorm(4)
    n.load_state_dict({k: numgrad.tensor(v.numpy()) for k, v in t.state_dict().items()})
    x = rand(2, 4)
    np.testing.assert_allclose(n(numgrad.tensor(x)).detach().numpy(), t(torch.tensor(x)).detach().numpy(), rtol=1e-6)


@pytest.mark.parametrize("train", [True, False])
def test_batchnorm3d(train):
    def fn(L):
        L.manual_seed(0)
        m = L.nn.BatchNorm3d(3, momentum=0.2)
        m.train(train)
        x = leaf(L, rand(2, 3, 2, 2, 3))
        y = m(x)
        y.backward(L.tensor(rand(2, 3, 2, 2, 3, seed=4)))
        return (y, x.grad, m.weight.grad, m.running_mean, m.running_var, m.num_batches_tracked, repr(m),
                list(m.state_dict()), raises(m, L.tensor(rand(2, 3, 4, 4))), repr(L.nn.BatchNorm3d(2, affine=False)))
    same(fn, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("x_dtype,w_dtype", [("float32", "float64"), ("float64", "float32"), ("float16", "float32"),
                                             ("float32", "float16"), ("bfloat16", "float64")])
def test_rms_norm_weight_of_another_dtype(x_dtype, w_dtype):
    def fn(L):
        x = L.tensor(rand(3, 4)).to(getattr(L, x_dtype)).requires_grad_()
        w = L.tensor(rand(4, seed=1)).to(getattr(L, w_dtype)).requires_grad_()
        y = L.nn.functional.rms_norm(x, [4], w)
        y.sum().backward()
        return str(y.dtype).rsplit(".")[-1], y.double(), x.grad.double(), w.grad.double(), tree(y.grad_fn)
    # (torch's "Mismatch dtype between input and weight" warning is a C++ warn-once: whether it shows depends on
    # what ran before in the process, so warnings are not compared here)
    same(fn, rtol=1e-6, atol=1e-6, check_warnings=False)


_WARN_ONCE = """
import sys, warnings
L = __import__(sys.argv[1])
x = L.ones(2, 4)
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    L.nn.functional.rms_norm(x, [4], L.ones(4))
    L.nn.functional.rms_norm(x.half(), [4], L.ones(4))
    L.nn.functional.rms_norm(x, [4], L.ones(4, dtype=L.float64))
print([(w.category.__name__, str(w.message).split(" (Triggered")[0]) for w in caught])
"""


def test_rms_norm_dtype_mismatch_warns_once_per_process():
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    outputs = [subprocess.run([sys.executable, "-c", _WARN_ONCE, lib], capture_output=True, text=True, env=env,
                              check=True).stdout for lib in ("torch", "numgrad")]
    assert outputs[0] == outputs[1] and "c10::Half" in outputs[0]

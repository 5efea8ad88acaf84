"""One torch.nn.functional call run in torch and numgrad on the same inputs: values, dtype, grad_fn name and
input gradients compared, a float64 finite-difference check of numgrad's gradients, and errors compared in
type and wording."""
import numpy as np
import pytest
import torch
import torch.nn.functional as F

import numgrad
import numgrad.nn.functional as G
from numgrad.testing import gradcheck
from helpers.compare_core import grad_fn_name, rand

TOLERANCES = {np.float32: dict(rtol=1e-4, atol=1e-5), np.float64: dict(rtol=1e-9, atol=1e-10)}


def compare(fn, *shapes, dtype=np.float64, seed=0, check_name=True):
    """fn(F, *tensors) against fn(G, *tensors): each returned tensor's values, dtype and grad_fn name, and the
    inputs' gradients of a random-weighted sum of the (first) output."""
    arrays = [rand(*s, dtype=dtype, seed=seed + i) for i, s in enumerate(shapes)]
    compare_arrays(fn, *arrays, check_name=check_name, **TOLERANCES[dtype])


def compare_arrays(fn, *arrays, grads=None, check_name=True, rtol=1e-4, atol=1e-5):
    """compare() on given arrays; `grads`: the indices of the inputs that require grad (None: every floating
    one)."""
    grads = [i for i, a in enumerate(arrays) if a.dtype.kind == "f"] if grads is None else list(grads)
    results = []
    for lib, module in ((numgrad, G), (torch, F)):
        xs = [lib.tensor(a, requires_grad=i in grads) for i, a in enumerate(arrays)]
        out = fn(module, *xs)
        first = out[0] if isinstance(out, tuple) else out
        if first.requires_grad:
            weight = lib.tensor(rand(*first.shape, dtype=np.float64, seed=99)).to(first.dtype)
            (first * weight).sum().backward()
        results.append((xs, out, first))
    (ours_in, ours_out, ours), (theirs_in, theirs_out, theirs) = results
    outs = zip(ours_out, theirs_out) if isinstance(theirs_out, tuple) else [(ours_out, theirs_out)]
    for a, b in outs:
        assert tuple(a.shape) == tuple(b.shape)
        assert str(a.dtype) == str(b.dtype)
        np.testing.assert_allclose(_values(a), _values(b), rtol=rtol, atol=atol)
    if check_name:
        assert grad_fn_name(ours) == grad_fn_name(theirs)
    for i in grads:
        a, b = ours_in[i].grad, theirs_in[i].grad
        assert (a is None) == (b is None)
        if b is not None:
            np.testing.assert_allclose(_values(a), _values(b), rtol=rtol, atol=atol)


def _values(t):
    """A tensor's values as a NumPy array (half types as float32, which NumPy can hold)."""
    t = t.detach()
    return (t.float() if str(t.dtype) in ("torch.float16", "torch.bfloat16") else t).numpy()


def check_gradients(fn, *shapes, seed=0):
    """numgrad's gradients of fn(G, *inputs) against finite differences in float64."""
    check_gradients_of(fn, *[rand(*s, dtype=np.float64, seed=seed + i) for i, s in enumerate(shapes)])


def check_gradients_of(fn, *arrays, grads=None):
    """check_gradients on given arrays (`grads`: the indices differentiated; None: every floating one)."""
    grads = [i for i, a in enumerate(arrays) if a.dtype.kind == "f"] if grads is None else list(grads)
    xs = [numgrad.tensor(a.astype(np.float64) if a.dtype.kind == "f" else a, requires_grad=i in grads)
          for i, a in enumerate(arrays)]

    def first(*args):
        out = fn(G, *args)
        return out[0] if isinstance(out, tuple) else out
    assert gradcheck(first, xs)


def same_error(fn, *arrays):
    """fn(F, *tensors) and fn(G, *tensors) raise the same exception type with the same message."""
    with pytest.raises(Exception) as theirs:
        fn(F, *[torch.tensor(a) for a in arrays])
    with pytest.raises(type(theirs.value)) as ours:
        fn(G, *[numgrad.tensor(a) for a in arrays])
    assert str(ours.value) == str(theirs.value)

"""Shared by the op tests: run one function on torch and numgrad and compare values, grad_fn names,
gradients of a random-weighted sum, errors; and a float64 central-difference gradient check."""
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, settings
import torch

import numgrad
from helpers.compare_core import rand

LIBS = (torch, numgrad)
F32, F64, I64 = np.float32, np.float64, np.int64


def leaves(lib, arrays):
    """numpy arrays become tensors (floating ones require grad); anything else passes through."""
    return [lib.tensor(a, requires_grad=a.dtype.kind == "f") if isinstance(a, np.ndarray) else a for a in arrays]


def name(t):
    return t.grad_fn.name() if t.grad_fn is not None else None


def check(fn, *arrays, rtol=1e-5, atol=1e-6, names=True):
    """Runs fn(lib, *tensors) in both libraries; compares values, dtypes, grad_fn names and the gradients of a
    randomly weighted sum of the outputs."""
    results = []
    for lib in LIBS:
        ins = leaves(lib, arrays)
        out = fn(lib, *ins)
        outs = list(out) if isinstance(out, (tuple, list)) else [out]
        loss = None
        for i, o in enumerate(outs):
            if o.requires_grad:
                w = lib.tensor(rand(*o.shape, dtype=np.float64, seed=i + 1)).to(o.dtype)
                loss = (o * w).sum() if loss is None else loss + (o * w).sum()
        if loss is not None:
            loss.backward()
        results.append((ins, outs))
    (tin, tout), (nin, nout) = results
    assert len(tout) == len(nout)
    for a, b in zip(tout, nout):
        assert tuple(b.shape) == tuple(a.shape) and str(b.dtype) == str(a.dtype)
        assert b.requires_grad == a.requires_grad
        np.testing.assert_allclose(b.detach().numpy(), a.detach().numpy(), rtol=rtol, atol=atol)
        if names:
            assert name(b) == name(a)
    for a, b in zip(tin, nin):
        if isinstance(a, torch.Tensor) and a.requires_grad:
            assert (a.grad is None) == (b.grad is None)
            if a.grad is not None:
                assert str(b.grad.dtype) == str(a.grad.dtype)
                np.testing.assert_allclose(b.grad.numpy(), a.grad.numpy(), rtol=rtol, atol=atol)
    return results


def check_error(fn, *arrays):
    errors = []
    for lib in LIBS:
        ins = leaves(lib, arrays)
        with pytest.raises(Exception) as info, warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fn(lib, *ins)
        errors.append(info.value)
    assert type(errors[1]) is type(errors[0]) and str(errors[1]) == str(errors[0])


def grad_fd(fn, *arrays, eps=1e-6):
    """Central differences of the numgrad scalar fn(*tensors) against its backward, in float64."""
    ins = [numgrad.tensor(a, requires_grad=True) for a in arrays]
    fn(*ins).backward()
    for t, a in zip(ins, arrays):
        numeric = np.zeros_like(a)
        for i in np.ndindex(a.shape):
            hi, lo = a.copy(), a.copy()
            hi[i] += eps
            lo[i] -= eps
            args = lambda x: [numgrad.tensor(x if u is a else u) for u in arrays]
            numeric[i] = (fn(*args(hi)).item() - fn(*args(lo)).item()) / (2 * eps)
        np.testing.assert_allclose(t.grad.numpy(), numeric, rtol=1e-6, atol=1e-7)


def param_grid(names, *dtypes):
    """pytest params: the names, or every (name, dtype) pair when dtypes are given."""
    if not dtypes:
        return list(names)
    return [pytest.param(n, d, id=f"{n}-{d}") for n in names for d in dtypes]


def hyp(max_examples):
    """Hypothesis settings for the generated op tests (on top of conftest's profile: no deadline,
    derandomized so CI sees the developer's examples); the draws happen inside one test function."""
    return settings(max_examples=max_examples, database=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])

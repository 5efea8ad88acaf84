"""Shared by the nn/optim tests: the same module built in torch and numgrad with torch's initial weights,
run on the same inputs, compared in outputs, gradients and grad_fn names."""
import numpy as np
import torch

import numgrad
from helpers.compare_core import grad_fn_name, rand


def to_numgrad_state(torch_module):
    """torch's state_dict as numpy arrays, ready for numgrad's load_state_dict."""
    return {k: v.detach().numpy().copy() for k, v in torch_module.state_dict().items()}


def twin(build):
    """build(lib) -> module for lib in (torch, numgrad); numgrad's gets torch's initial weights."""
    theirs = build(torch)
    ours = build(numgrad)
    ours.load_state_dict(to_numgrad_state(theirs))
    return ours, theirs


def assert_same(ours, theirs, rtol=1e-5, atol=1e-6):
    """Values, dtype and shape of a numgrad tensor against a torch tensor."""
    assert tuple(ours.shape) == tuple(theirs.shape), (ours.shape, theirs.shape)
    assert str(ours.dtype) == str(theirs.dtype), (ours.dtype, theirs.dtype)
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=rtol, atol=atol)


def run_module(ours, theirs, *inputs, rtol=1e-5, atol=1e-6, input_grad=True, check_name=True, seed=1):
    """Forward both modules on the same numpy inputs, backward a random-weighted sum of the output, then
    compare outputs, grad_fn names, input gradients and every parameter gradient (by name)."""
    results = []
    for lib, module in ((numgrad, ours), (torch, theirs)):
        xs = [lib.tensor(x, requires_grad=input_grad and x.dtype.kind == "f") if isinstance(x, np.ndarray) else x
              for x in inputs]
        out = module(*xs)
        if out.requires_grad:
            w = lib.tensor(rand(*out.shape, seed=seed, dtype=np.float64)).to(out.dtype)
            (out * w).sum().backward()
        results.append((xs, out))
    (our_in, our_out), (their_in, their_out) = results
    assert_same(our_out, their_out, rtol, atol)
    if check_name:
        assert grad_fn_name(our_out) == grad_fn_name(their_out)
    for a, b in zip(our_in, their_in):
        if isinstance(b, torch.Tensor) and b.requires_grad:
            assert_same(a.grad, b.grad, rtol, atol)
    compare_grads(ours, theirs, rtol, atol)
    return our_out, their_out


def compare_grads(ours, theirs, rtol=1e-5, atol=1e-6):
    their_params = dict(theirs.named_parameters())
    our_params = dict(ours.named_parameters())
    assert list(our_params) == list(their_params)
    for name, p in their_params.items():
        q = our_params[name]
        assert (q.grad is None) == (p.grad is None), name
        if p.grad is not None:
            assert_same(q.grad, p.grad, rtol, atol)


def compare_params(ours, theirs, rtol=1e-5, atol=1e-6):
    for (name, q), (_, p) in zip(ours.state_dict().items(), theirs.state_dict().items()):
        assert_same(q, p, rtol, atol)

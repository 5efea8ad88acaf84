"""nn.utils against torch: clip_grad_norm_ (norm types, no clipping below the limit, parameters without
gradients, a single tensor, an empty generator's warning, error_if_nonfinite, foreach), get_total_norm,
clip_grad_value_, parameters_to_vector / vector_to_parameters (values, gradients through the vector, errors)."""
import warnings

import numpy as np
import pytest
import torch

import numgrad
from helpers.nn_compare import assert_same, compare_grads, twin
from helpers.outcomes import outcome


def model(lib):
    return lib.nn.Sequential(lib.nn.Linear(4, 3), lib.nn.Tanh(), lib.nn.Linear(3, 2))


def with_grads(lib_model, lib, scale=1.0):
    x = lib.tensor(np.linspace(-2, 2, 20, dtype=np.float32).reshape(5, 4) * scale)
    (lib_model(x) ** 2).sum().mul(scale).backward()
    return lib_model


@pytest.mark.parametrize("norm_type", [2.0, 1, 3.5, float("inf"), 0.5])
@pytest.mark.parametrize("max_norm", [0.1, 1e6])
def test_clip_grad_norm_matches_torch(norm_type, max_norm):
    ours, theirs = twin(model)
    with_grads(ours, numgrad), with_grads(theirs, torch)
    a = numgrad.nn.utils.clip_grad_norm_(ours.parameters(), max_norm, norm_type=norm_type)
    b = torch.nn.utils.clip_grad_norm_(theirs.parameters(), max_norm, norm_type=norm_type)
    assert_same(a, b, rtol=1e-5)
    assert a.grad_fn is None and not a.requires_grad
    compare_grads(ours, theirs, rtol=1e-5)


@pytest.mark.parametrize("foreach", [None, True, False])
def test_clip_grad_norm_single_tensor_missing_grads_and_foreach(foreach):
    results = []
    for lib in (numgrad, torch):
        p, q, r = (lib.tensor([3.0, 4.0], requires_grad=True), lib.tensor([1.0], requires_grad=True),
                   lib.tensor([2.0, -2.0], requires_grad=True))
        (p * p).sum().backward()
        (r * 3).sum().backward()
        total = lib.nn.utils.clip_grad_norm_([p, q, r], 1.0, foreach=foreach)
        single = lib.nn.utils.clip_grad_norm_(p, 0.5)
        results.append((total, single, p.grad, q.grad, r.grad))
    for a, b in zip(*results):
        if b is None:
            assert a is None
        else:
            assert_same(a, b)


def test_total_norm_of_no_gradients_and_the_empty_generator_warning():
    def run(lib):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            total = lib.nn.utils.clip_grad_norm_((p for p in []), 1.0)
            nograd = lib.nn.utils.clip_grad_norm_([lib.zeros(2, requires_grad=True)], 1.0)
        return total, nograd, [str(x.message) for x in w]
    assert outcome(run, numgrad) == outcome(run, torch)


@pytest.mark.parametrize("bad", [float("inf"), float("nan")])
@pytest.mark.parametrize("error", [True, False])
def test_error_if_nonfinite(bad, error):
    def run(lib):
        p = lib.tensor([1.0, 2.0], requires_grad=True)
        (p * lib.tensor([bad, 1.0])).sum().backward()
        total = lib.nn.utils.clip_grad_norm_([p], 1.0, error_if_nonfinite=error)
        return total, p.grad
    assert outcome(run, numgrad) == outcome(run, torch)


def test_get_total_norm_and_deprecated_clip_grad_norm():
    def run(lib):
        ts = [lib.tensor([3.0, 4.0]), lib.tensor([[12.0]])]
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            p = lib.tensor([3.0, 4.0], requires_grad=True)
            p.sum().backward()
            old = lib.nn.utils.clip_grad_norm(p, 1.0)
        return (lib.nn.utils.get_total_norm(ts), lib.nn.utils.get_total_norm(ts, 1), old,
                [(x.category.__name__, str(x.message)) for x in w])
    assert outcome(run, numgrad) == outcome(run, torch)


@pytest.mark.parametrize("clip", [0.05, 2, 100.0])
def test_clip_grad_value_matches_torch(clip):
    ours, theirs = twin(model)
    with_grads(ours, numgrad, scale=3.0), with_grads(theirs, torch, scale=3.0)
    assert numgrad.nn.utils.clip_grad_value_(ours.parameters(), clip) is None
    torch.nn.utils.clip_grad_value_(theirs.parameters(), clip)
    compare_grads(ours, theirs, atol=1e-5)  # gradients up to ~30: float32 rounding before the clamp
    for lib in (numgrad, torch):
        t = lib.tensor([-3.0, 0.5], requires_grad=True)
        (t * lib.tensor([-3.0, 0.5])).sum().backward()
        lib.nn.utils.clip_grad_value_(t, 1)
        assert t.grad.tolist() == [-1.0, 0.5]


def test_parameters_to_vector_and_back():
    ours, theirs = twin(model)
    va = numgrad.nn.utils.parameters_to_vector(ours.parameters())
    vb = torch.nn.utils.parameters_to_vector(theirs.parameters())
    assert_same(va, vb)
    assert va.grad_fn.name() == vb.grad_fn.name()
    (va * va).sum().backward()
    (vb * vb).sum().backward()
    compare_grads(ours, theirs)
    new = np.arange(va.numel(), dtype=np.float32) / 10
    numgrad.nn.utils.vector_to_parameters(numgrad.tensor(new), ours.parameters())
    torch.nn.utils.vector_to_parameters(torch.tensor(new), theirs.parameters())
    for (name, p), (_, q) in zip(ours.named_parameters(), theirs.named_parameters()):
        assert_same(p, q)
        assert p.requires_grad and type(p).__name__ == "Parameter", name


@pytest.mark.parametrize("vec", [3, "a", [1.0], None, np.zeros(1)])
def test_vector_to_parameters_needs_a_tensor(vec):
    assert outcome(lambda lib: lib.nn.utils.vector_to_parameters(vec, []), numgrad) == \
        outcome(lambda lib: lib.nn.utils.vector_to_parameters(vec, []), torch)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("max_norm", [1e-3, 1e9])
def test_clip_grad_norm_over_many_gradients_in_one_pass(dtype, max_norm):
    """The 2-norm over all gradients without a numgrad op per gradient: torch's total and scaling, strided and
    one-element gradients (a tiny one's norm is its abs, not its underflowed square) included; a factor of
    one leaves the gradients' values as they were but still counts as torch's in-place mul_."""
    rng = np.random.default_rng(2)
    grads = [rng.standard_normal((7, 5)).astype(dtype).T, rng.standard_normal(300).astype(dtype),
             np.array([1e-30], dtype), rng.standard_normal((2, 3, 4)).astype(dtype)]
    results = []
    for lib in (numgrad, torch):
        params = [lib.zeros(g.shape, dtype=getattr(lib, np.dtype(dtype).name), requires_grad=True) for g in grads]
        for p, g in zip(params, grads):
            p.grad = lib.tensor(np.ascontiguousarray(g.T)).t() if g.ndim == 2 else lib.tensor(g.copy())
        versions = [p.grad._version for p in params]
        total = lib.nn.utils.clip_grad_norm_(params, max_norm)
        assert [p.grad._version for p in params] == [v + 1 for v in versions]
        results.append((total.numpy(), [p.grad.numpy().copy() for p in params]))
    (ours, our_grads), (theirs, their_grads) = results
    assert ours.dtype == theirs.dtype and ours.shape == theirs.shape == ()
    np.testing.assert_allclose(ours, theirs, rtol=1e-6 if dtype == np.float32 else 1e-13)
    for a, b in zip(our_grads, their_grads):
        np.testing.assert_allclose(a, b, rtol=1e-6 if dtype == np.float32 else 1e-13)
    if max_norm > 1:
        for a, g in zip(our_grads, grads):
            np.testing.assert_array_equal(a, g)


def test_clip_grad_norm_inside_a_compiled_step_follows_each_call():
    """Recorded in a trace, the clipping replays with each call's norm (the trace's coefficient is not kept)."""
    def make(lib):
        p = lib.tensor(np.ones(4, np.float32), requires_grad=True)

        def step(scale):
            p.grad = None
            (p * scale).sum().backward()
            return lib.nn.utils.clip_grad_norm_([p], 1.0)
        return p, step
    p, step = make(numgrad)
    compiled = numgrad.compile(step)
    q, reference = make(torch)
    for scale in (0.1, 5.0, 0.2, 3.0):
        a, b = compiled(numgrad.tensor(scale)), reference(torch.tensor(scale))
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-6)
        np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=1e-6)

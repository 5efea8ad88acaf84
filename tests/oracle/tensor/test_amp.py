"""autocast (CPU op lists, nesting, decorator, refusals) and GradScaler (scaling, skipped steps, scale updates,
disabled on 'cuda' without a GPU) against torch."""
import warnings

import numpy as np
import pytest
import torch

import numgrad

RNG = np.random.default_rng(0)
A, B, W = (RNG.random(s).astype(np.float32) for s in ((3, 4), (4, 2), (2, 4)))
IMAGE, KERNEL = RNG.random((1, 2, 5, 5)).astype(np.float32), RNG.random((3, 2, 2, 2)).astype(np.float32)


def _values(t):
    return t.detach().double().numpy() if t.dtype.is_floating_point else t.numpy()


def _same(fn, **autocast):
    """fn(lib) inside lib.autocast(**autocast) in both libraries: outputs of the same dtypes and values (exact:
    each op rounds as torch's), and the same warnings."""
    results = []
    for L in (torch, numgrad):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            with L.autocast(**{k: getattr(L, v) if k == "dtype" else v for k, v in autocast.items()}):
                out = fn(L)
        out = out if isinstance(out, tuple) else (out,)
        results.append(([(str(o.dtype), _values(o)) for o in out], [(w.category, str(w.message)) for w in caught]))
    (theirs, their_warnings), (ours, our_warnings) = results
    assert our_warnings == their_warnings
    for (da, va), (db, vb) in zip(theirs, ours, strict=True):
        assert db == da
        np.testing.assert_allclose(vb, va, rtol=1e-6, atol=1e-6)


def _leaf(L, a):
    return L.tensor(a, requires_grad=True)


CASES = {
    "matmul": lambda L: L.tensor(A) @ L.tensor(B),
    "mm": lambda L: L.mm(L.tensor(A), L.tensor(B)),
    "bmm": lambda L: L.tensor(A)[None].bmm(L.tensor(B)[None]),
    "vector matmul": lambda L: L.tensor(A[0]) @ L.tensor(B[:, 0]),
    "double stays": lambda L: L.tensor(A).double() @ L.tensor(B).double(),
    "linear": lambda L: L.nn.functional.linear(L.tensor(A), L.tensor(W), L.tensor(W[:, 0])),
    "conv2d": lambda L: L.nn.functional.conv2d(L.tensor(IMAGE), L.tensor(KERNEL)),
    "elementwise after": lambda L: ((L.tensor(A) @ L.tensor(B)).relu() + 1, (L.tensor(A) @ L.tensor(B)).sum()),
    "softmax stays": lambda L: (L.tensor(A) @ L.tensor(B)).softmax(-1),
    "mse_loss in float": lambda L: L.nn.functional.mse_loss(L.tensor(A) @ L.tensor(B), L.zeros(3, 2)),
    "cross_entropy in float": lambda L: L.nn.functional.cross_entropy(L.tensor(A) @ L.tensor(B), L.tensor([0, 1, 0])),
    "cat promotes": lambda L: L.cat([L.tensor(A) @ L.tensor(B), L.tensor(A[:, :2])]),
    "module": lambda L: (L.manual_seed(0), L.nn.Linear(4, 2)(L.tensor(A)))[1],
}


@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize("dtype", [None, "float16"])
def test_cpu_autocast_ops(case, dtype):
    if case == "module":  # (the two libraries draw other initial weights: compare the dtype only)
        for L in (torch, numgrad):
            with L.autocast("cpu"):
                assert str(CASES[case](L).dtype) == "torch.bfloat16"
        return
    _same(CASES[case], device_type="cpu", **({"dtype": dtype} if dtype else {}))


def test_gradients_flow_back_in_the_leaf_dtype():
    grads = []
    for L in (torch, numgrad):
        w = _leaf(L, W)
        with L.autocast("cpu"):
            out = L.nn.functional.linear(L.tensor(A), w)
        out.float().pow(2).sum().backward()
        grads.append((str(out.dtype), str(out.grad_fn.name()), str(w.grad.dtype), w.grad.double().numpy()))
    assert grads[0][:3] == grads[1][:3]
    np.testing.assert_allclose(grads[1][3], grads[0][3], rtol=1e-6)


def test_state_nesting_and_decorator():
    for L in (torch, numgrad):
        assert not L.is_autocast_enabled("cpu") and str(L.get_autocast_dtype("cpu")) == "torch.bfloat16"
        with L.autocast("cpu", dtype=L.float16):
            assert L.is_autocast_enabled("cpu") and not L.is_autocast_enabled()
            assert str(L.get_autocast_dtype("cpu")) == "torch.float16"
            with L.autocast("cpu", enabled=False):
                assert not L.is_autocast_enabled("cpu") and (L.tensor(A) @ L.tensor(B)).dtype is L.float32
            assert L.is_autocast_enabled("cpu")
        assert not L.is_autocast_enabled("cpu")

        @L.autocast("cpu")
        def product(x):
            return x @ x.t()
        assert product(L.tensor(A)).dtype is L.bfloat16 and not L.is_autocast_enabled("cpu")
        assert L.autocast is L.amp.autocast
    assert repr(numgrad.autocast) == repr(torch.autocast)


def _outcome(fn):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            out = repr(fn())
        except Exception as exc:  # noqa: BLE001  an error is a result to compare
            out = (type(exc), str(exc))
    return out, [(w.category, str(w.message)) for w in caught]


@pytest.mark.parametrize("call", [
    pytest.param(lambda L: L.autocast("cuda").__enter__().__exit__(None, None, None), id="cuda without a GPU"),
    pytest.param(lambda L: L.autocast("cpu", dtype=L.float32).__enter__().__exit__(None, None, None), id="float32"),
    pytest.param(lambda L: L.autocast("xpu2"), id="unknown device"),
    pytest.param(lambda L: L.autocast(3), id="not a string"),
    pytest.param(lambda L: L.autocast("cpu")(3), id="decorating a number"),
    pytest.param(lambda L: L.cuda.amp.autocast().__enter__().__exit__(None, None, None), id="cuda.amp.autocast"),
])
def test_autocast_warnings_and_errors(call):
    assert _outcome(lambda: call(numgrad)) == _outcome(lambda: call(torch))


# ---- GradScaler ------------------------------------------------------------------------------------

def _scaler_run(L, scaler, steps, poison=(), unscale=False):
    """A few SGD steps through `scaler`; loss is inf at the steps in `poison`. Returns what is observable."""
    p = L.nn.Parameter(L.tensor([1.0, 2.0]))
    opt = L.optim.SGD([p], lr=0.1)
    seen = []
    for step in range(steps):
        opt.zero_grad()
        loss = (p * p).sum() * (float("inf") if step in poison else 1.0)
        scaler.scale(loss).backward()
        if unscale:
            scaler.unscale_(opt)
            seen.append(p.grad.tolist())
        scaler.step(opt)
        scaler.update()
        seen.append((p.tolist(), scaler.get_scale(), scaler.state_dict()))
    return seen


@pytest.mark.parametrize("kwargs,steps,poison,unscale", [
    (dict(device="cpu"), 3, (1,), False),
    (dict(device="cpu", growth_interval=2), 5, (), True),
    (dict(device="cpu", init_scale=4.0, growth_interval=1, growth_factor=3.0, backoff_factor=0.25), 4, (0, 2), True),
])
def test_grad_scaler_on_the_cpu(kwargs, steps, poison, unscale):
    ours = _scaler_run(numgrad, numgrad.amp.GradScaler(**kwargs), steps, poison, unscale)
    theirs = _scaler_run(torch, torch.amp.GradScaler(**kwargs), steps, poison, unscale)
    assert ours == theirs


def test_grad_scaler_disabled_without_cuda():
    for make in (lambda L: L.amp.GradScaler("cuda"), lambda L: L.amp.GradScaler(), lambda L: L.cuda.amp.GradScaler()):
        def observe(L):
            scaler = make(L)
            return (scaler.is_enabled(), scaler.get_scale(), scaler.state_dict(),
                    repr(scaler.scale(L.tensor(2.0))), _scaler_run(L, scaler, 2))
        ours, theirs = _outcome(lambda: observe(numgrad)), _outcome(lambda: observe(torch))
        assert ours[0] == theirs[0] and [m for _, m in ours[1]] == [m for _, m in theirs[1]]


@pytest.mark.parametrize("call", [
    pytest.param(lambda L, s, o: (s.unscale_(o), s.unscale_(o)), id="unscale twice"),
    pytest.param(lambda L, s, o: (s.step(o), s.step(o)), id="step twice"),
    pytest.param(lambda L, s, o: (s.step(o), s.unscale_(o)), id="unscale after step"),
    pytest.param(lambda L, s, o: s.step(o, closure=lambda: 0), id="closure"),
    pytest.param(lambda L, s, o: L.amp.GradScaler("cpu", growth_factor=0.5), id="growth factor"),
    pytest.param(lambda L, s, o: L.amp.GradScaler("cpu", backoff_factor=2.0), id="backoff factor"),
])
def test_grad_scaler_errors(call):
    def run(L):
        p = L.nn.Parameter(L.tensor([1.0, 2.0]))
        opt = L.optim.SGD([p], lr=0.1)
        scaler = L.amp.GradScaler("cpu")
        scaler.scale((p * p).sum()).backward()
        return call(L, scaler, opt)
    ours, theirs = _outcome(lambda: run(numgrad)), _outcome(lambda: run(torch))
    assert type(ours[0]) is type(theirs[0]) and (isinstance(ours[0], str) or ours[0] == theirs[0])

"""numgrad.func against torch.func in float64: grad, grad_and_value, vjp, jvp, jacrev, jacfwd (equal to jacrev),
hessian, vmap (in_dims/out_dims, nesting, randomness, per-sample gradients equal to the loop), functional_call."""
import numpy as np
import pytest
import torch
import torch.func  # noqa: F401

import numgrad
import numgrad.func  # noqa: F401

LIBS = (torch, numgrad)
TOL = dict(rtol=1e-10, atol=1e-12)


def _rand(*shape, seed=0):
    return np.random.default_rng(seed * 7 + len(shape)).standard_normal(shape)


def _arrays(x):
    """Nested results as numpy arrays (tensors detached), to compare the two libraries' outputs."""
    if isinstance(x, (tuple, list)):
        return [_arrays(v) for v in x]
    if isinstance(x, dict):
        return {k: _arrays(v) for k, v in x.items()}
    if hasattr(x, "detach"):
        return x.detach().numpy()
    return x


def assert_same(ours, theirs):
    if isinstance(theirs, (list, tuple)):
        assert isinstance(ours, (list, tuple)) and len(ours) == len(theirs)
        for a, b in zip(ours, theirs):
            assert_same(a, b)
    elif isinstance(theirs, dict):
        assert sorted(ours) == sorted(theirs)
        for k in theirs:
            assert_same(ours[k], theirs[k])
    elif isinstance(theirs, np.ndarray):
        assert ours.shape == theirs.shape and ours.dtype == theirs.dtype
        np.testing.assert_allclose(ours, theirs, **TOL)
    else:
        assert ours == theirs


def both(run):
    """run(L) on torch and numgrad; their results (as arrays) must agree."""
    theirs, ours = (_arrays(run(L)) for L in LIBS)
    assert_same(ours, theirs)
    return ours


def outcome(run, L):
    try:
        return "ok", _arrays(run(L))
    except Exception as e:  # noqa: BLE001 - the type and message are compared
        return type(e).__name__, str(e)


def same_outcome(run):
    theirs, ours = (outcome(run, L) for L in LIBS)
    assert ours[0] == theirs[0]
    if theirs[0] == "ok":
        assert_same(ours[1], theirs[1])
    else:
        assert ours[1] == theirs[1]


def t(L, *shape, seed=0):
    return L.tensor(_rand(*shape, seed=seed))


# functions of one or two tensors, written once for both libraries
FUNCS = {
    "sin_times": (lambda L, a: (a.sin() * a).sum(), [(3,)]),
    "matrix": (lambda L, a, b: (a @ b).tanh().sum(), [(2, 3), (3, 4)]),
    "softmax_loss": (lambda L, a: -L.log_softmax(a, 1)[:, 0].mean(), [(3, 4)]),
    "norm_exp": (lambda L, a, b: (a.exp() * b).norm(), [(4,), (4,)]),
    "mlp": (lambda L, x, w: L.nn.functional.gelu(x @ w).pow(2).mean(), [(5, 3), (3, 2)]),
    "reductions": (lambda L, a: a.max(1).values.sum() + a.logsumexp(0).sum() + a.var(), [(3, 4)]),
}
VECTOR_FUNCS = {
    "elementwise": (lambda L, a: a.sin() * a, [(3,)]),
    "two_outputs": (lambda L, a, b: (a * b, (a @ b.t()).exp()), [(2, 3), (2, 3)]),
    "shapes": (lambda L, a: L.cat([a.t(), a.t() ** 2], 0).reshape(-1, 2), [(2, 3)]),
    "softmax": (lambda L, a: L.softmax(a, 0), [(4,)]),
    "linear": (lambda L, x, w: L.nn.functional.linear(x, w).relu(), [(2, 3), (4, 3)]),
}


def _call(fn, shapes, transform, L, **kwargs):
    args = [t(L, *s, seed=i) for i, s in enumerate(shapes)]
    return transform(L)(lambda *xs: fn(L, *xs), **kwargs)(*args)


@pytest.mark.parametrize("name", sorted(FUNCS))
@pytest.mark.parametrize("argnums", [0, -1, (0,), "all"])
def test_grad_matches_torch(name, argnums):
    fn, shapes = FUNCS[name]
    argnums = tuple(range(len(shapes))) if argnums == "all" else argnums
    both(lambda L: _call(fn, shapes, lambda L: L.func.grad, L, argnums=argnums))
    both(lambda L: _call(fn, shapes, lambda L: L.func.grad_and_value, L, argnums=argnums))


def test_grad_with_aux_and_nested():
    both(lambda L: L.func.grad(lambda a: ((a ** 3).sum(), a.cos()), has_aux=True)(t(L, 3)))
    both(lambda L: L.func.grad(lambda a: L.func.grad(lambda b: (b.sin() * b).sum())(a).sum())(t(L, 3)))
    both(lambda L: L.func.grad(lambda a, b: (a * b).sum(), argnums=1)(t(L, 3), t(L, 3, seed=1)))
    both(lambda L: L.func.grad(lambda d: (d["w"] * d["b"][0]).sum())({"w": t(L, 3), "b": [t(L, 3, seed=1)]}))
    # an input the function does not use gets zeros
    both(lambda L: L.func.grad(lambda a, b: a.sum(), argnums=(0, 1))(t(L, 3), t(L, 2)))


def test_grad_result_is_differentiable_when_its_input_requires_grad():
    def run(L):
        x = t(L, 3).requires_grad_()
        g = L.func.grad(lambda a: (a ** 3).sum())(x)
        return L.autograd.grad(g.sum(), x)[0], g.requires_grad
    both(run)


GRAD_ERRORS = {
    "not scalar": lambda L: L.func.grad(lambda a: a * 2)(t(L, 3)),
    "not tensor": lambda L: L.func.grad(lambda a: [a.sum()])(t(L, 3)),
    "aux not tuple": lambda L: L.func.grad(lambda a: a.sum(), has_aux=True)(t(L, 3)),
    "argnum out of range": lambda L: L.func.grad(lambda a, b: a.sum(), argnums=2)(t(L, 3), t(L, 3)),
    "float input": lambda L: L.func.grad(lambda a: a.sum())(3.0),
}


@pytest.mark.parametrize("case", sorted(GRAD_ERRORS))
def test_grad_errors_match_torch(case):
    same_outcome(GRAD_ERRORS[case])


@pytest.mark.parametrize("name", sorted(VECTOR_FUNCS))
def test_vjp_and_jvp_match_torch(name):
    fn, shapes = VECTOR_FUNCS[name]

    def run_vjp(L):
        args = [t(L, *s, seed=i) for i, s in enumerate(shapes)]
        out, vjp_fn = L.func.vjp(lambda *xs: fn(L, *xs), *args)
        outs = out if isinstance(out, tuple) else (out,)
        cot = tuple(L.tensor(_rand(*o.shape, seed=9 + i)) for i, o in enumerate(outs))
        return out, vjp_fn(cot if isinstance(out, tuple) else cot[0]), vjp_fn(cot if isinstance(out, tuple) else cot[0])

    def run_jvp(L):
        args = tuple(t(L, *s, seed=i) for i, s in enumerate(shapes))
        tangents = tuple(t(L, *s, seed=5 + i) for i, s in enumerate(shapes))
        return L.func.jvp(lambda *xs: fn(L, *xs), args, tangents)
    both(run_vjp)
    both(run_jvp)


def test_vjp_and_jvp_aux_and_errors():
    both(lambda L: L.func.vjp(lambda a: (a.exp(), a.sum()), t(L, 3), has_aux=True)[2])
    both(lambda L: L.func.jvp(lambda a: (a.exp(), a.sum()), (t(L, 3),), (t(L, 3, seed=1),), has_aux=True))
    same_outcome(lambda L: L.func.jvp(lambda a: a * 2, t(L, 3), (t(L, 3),)))
    same_outcome(lambda L: L.func.jvp(lambda a: a * 2, (t(L, 3),), (t(L, 4),)))


@pytest.mark.parametrize("name", sorted(VECTOR_FUNCS))
def test_jacrev_and_jacfwd_match_torch_and_each_other(name):
    fn, shapes = VECTOR_FUNCS[name]
    argnums = tuple(range(len(shapes)))
    rev = both(lambda L: _call(fn, shapes, lambda L: L.func.jacrev, L, argnums=argnums))
    fwd = both(lambda L: _call(fn, shapes, lambda L: L.func.jacfwd, L, argnums=argnums))
    assert_same(fwd, rev)


@pytest.mark.parametrize("name", sorted(FUNCS))
def test_hessian_matches_torch(name):
    fn, shapes = FUNCS[name]
    both(lambda L: _call(fn, shapes, lambda L: L.func.hessian, L))
    both(lambda L: _call(fn, shapes, lambda L: L.func.jacrev, L, argnums=0) if len(shapes) == 1 else
         L.func.jacrev(L.func.jacrev(lambda *xs: fn(L, *xs)))(*[t(L, *s, seed=i) for i, s in enumerate(shapes)]))


def test_hessian_is_jacfwd_of_jacrev_and_equals_jacrev_of_jacrev():
    f = lambda a: (a.sin() * a.cos().sum()).sum()  # noqa: E731
    x = numgrad.tensor(_rand(4))
    h = numgrad.func.hessian(f)(x)
    np.testing.assert_allclose(h.numpy(), numgrad.func.jacrev(numgrad.func.jacrev(f))(x).numpy(), **TOL)
    np.testing.assert_allclose(h.numpy(), numgrad.func.jacfwd(numgrad.func.jacrev(f))(x).numpy(), **TOL)
    assert not h.requires_grad


# ---- vmap -----------------------------------------------------------------------------------------------

VMAPS = {
    "elementwise": lambda L: L.func.vmap(lambda a: a.sin() * 2)(t(L, 4, 3)),
    "reduction": lambda L: L.func.vmap(lambda a: a.sum())(t(L, 4, 3)),
    "matmul": lambda L: L.func.vmap(lambda a, b: a @ b)(t(L, 5, 2, 3), t(L, 5, 3, 4, seed=1)),
    "in_dims_none": lambda L: L.func.vmap(lambda a, b: a @ b, in_dims=(0, None))(t(L, 5, 3), t(L, 3, 4, seed=1)),
    "in_dim_1": lambda L: L.func.vmap(lambda a: a.softmax(0), in_dims=1)(t(L, 3, 4)),
    "in_dim_negative": lambda L: L.func.vmap(lambda a: a * a.sum(), in_dims=-1)(t(L, 3, 4)),
    "out_dims_1": lambda L: L.func.vmap(lambda a: a.exp(), out_dims=1)(t(L, 2, 3)),
    "tuple_outputs": lambda L: L.func.vmap(lambda a: (a.max(), a.t()), out_dims=(0, 2))(t(L, 2, 3, 4)),
    "nested": lambda L: L.func.vmap(L.func.vmap(lambda a, b: a * b))(t(L, 2, 3), t(L, 2, 3, seed=1)),
    "nested_dims": lambda L: L.func.vmap(L.func.vmap(lambda a: a.sum(), in_dims=1), in_dims=0)(t(L, 2, 3, 4)),
    "dict_input": lambda L: L.func.vmap(lambda d: d["a"] + d["b"], in_dims=({"a": 0, "b": None},))(
        {"a": t(L, 3, 2), "b": t(L, 2, seed=1)}),
    "kwargs_unmapped": lambda L: L.func.vmap(lambda a, scale=1.0: a * scale)(t(L, 3, 2), scale=2.0),
    "shape_ops": lambda L: L.func.vmap(lambda a: L.cat([a, a * 2], 0).reshape(2, -1))(
        t(L, 3, 4)),
    "jacrev_batched": lambda L: L.func.vmap(L.func.jacrev(lambda a: a.sin() * a.sum()))(t(L, 3, 4)),
}


@pytest.mark.parametrize("case", sorted(VMAPS))
def test_vmap_matches_torch(case):
    both(VMAPS[case])


VMAP_ERRORS = {
    "sizes differ": lambda L: L.func.vmap(lambda a, b: a * b)(t(L, 3), t(L, 4)),
    "in_dim out of range": lambda L: L.func.vmap(lambda a: a * 2, in_dims=1)(t(L, 3)),
    "in_dims None": lambda L: L.func.vmap(lambda a: a * 2, in_dims=None)(t(L, 3)),
    "returns a float": lambda L: L.func.vmap(lambda a: 3.0)(t(L, 3)),
    "random": lambda L: L.func.vmap(lambda a: a + L.randn(()))(t(L, 3)),
    "bad randomness": lambda L: L.func.vmap(lambda a: a, randomness="foo")(t(L, 3)),
}


@pytest.mark.parametrize("case", sorted(VMAP_ERRORS))
def test_vmap_errors_match_torch(case):
    same_outcome(VMAP_ERRORS[case])


def test_vmap_randomness_same_and_different():
    numgrad.manual_seed(0)
    same = numgrad.func.vmap(lambda a: a + numgrad.randn(3), randomness="same")(numgrad.zeros(4, 3))
    assert all(np.array_equal(same[0].numpy(), same[i].numpy()) for i in range(4))
    different = numgrad.func.vmap(lambda a: a + numgrad.randn(3), randomness="different")(numgrad.zeros(4, 3))
    assert not np.array_equal(different[0].numpy(), different[1].numpy())
    numgrad.randn(2)  # the global generator is back after an 'error' vmap that raised
    with pytest.raises(RuntimeError):
        numgrad.func.vmap(lambda a: a + numgrad.randn(()))(numgrad.zeros(2))
    assert numgrad.randn(2).shape == (2,)


def _per_sample_setup(L):
    model = L.nn.Sequential(L.nn.Linear(3, 4), L.nn.Tanh(), L.nn.Linear(4, 2)).double()
    with L.no_grad():
        for i, p in enumerate(model.parameters()):
            p.copy_(t(L, *p.shape, seed=20 + i))
    params = {k: v.detach() for k, v in model.named_parameters()}
    x, y = t(L, 6, 3, seed=3), L.tensor([0, 1, 1, 0, 1, 0])

    def loss(p, xi, yi):
        out = L.func.functional_call(model, p, (xi.unsqueeze(0),))
        return L.nn.functional.cross_entropy(out, yi.unsqueeze(0))
    return model, params, x, y, loss


def test_per_sample_gradients_by_vmap_of_grad_equal_the_loop_and_torch():
    def run(L):
        model, params, x, y, loss = _per_sample_setup(L)
        return L.func.vmap(L.func.grad(loss), in_dims=(None, 0, 0))(params, x, y)
    batched = both(run)
    model, params, x, y, loss = _per_sample_setup(numgrad)
    for i in range(6):
        looped = numgrad.func.grad(loss)(params, x[i], y[i])
        for k in params:
            np.testing.assert_allclose(batched[k][i], looped[k].numpy(), **TOL)
    # and as plain backward on each sample
    for i in range(6):
        model.zero_grad()
        numgrad.nn.functional.cross_entropy(model(x[i:i + 1]), y[i:i + 1]).backward()
        for k, p in model.named_parameters():
            np.testing.assert_allclose(batched[k][i], p.grad.numpy(), **TOL)


# ---- functional_call ------------------------------------------------------------------------------------

class _Tied:
    @staticmethod
    def make(L):
        class Tied(L.nn.Module):
            def __init__(self):
                super().__init__()
                self.a = L.nn.Linear(3, 3, bias=False).double()
                self.b = L.nn.Linear(3, 3, bias=False).double()
                self.b.weight = self.a.weight
                self.register_buffer("scale", L.ones(3, dtype=L.float64))

            def forward(self, x):
                return self.b(self.a(x)) * self.scale
        return Tied()


FUNCTIONAL_CALLS = {
    "one_param": lambda L: L.func.functional_call(L.nn.Linear(3, 2).double(), {"weight": t(L, 2, 3)},
                                                  (t(L, 3, seed=1),)).shape,
    "all_params": lambda L: L.func.functional_call(L.nn.Linear(3, 2).double(), {"weight": t(L, 2, 3), "bias": t(L, 2)},
                                                   t(L, 4, 3, seed=1)),
    "two_dicts": lambda L: L.func.functional_call(L.nn.Linear(3, 2).double(), ({"weight": t(L, 2, 3)},
                                                  {"bias": t(L, 2)}), (t(L, 3, seed=1),)),
    "duplicate": lambda L: L.func.functional_call(L.nn.Linear(3, 2).double(), ({"weight": t(L, 2, 3)},
                                                  {"weight": t(L, 2, 3)}), (t(L, 3, seed=1),)),
    "strict_missing": lambda L: L.func.functional_call(L.nn.Linear(3, 2).double(), {"weight": t(L, 2, 3)},
                                                       (t(L, 3),), strict=True),
    "strict_unexpected": lambda L: L.func.functional_call(
        L.nn.Linear(3, 2).double(), {"weight": t(L, 2, 3), "bias": t(L, 2), "foo": t(L, 1)}, (t(L, 3),), strict=True),
    "tied": lambda L: L.func.functional_call(_Tied.make(L), {"a.weight": t(L, 3, 3)}, (t(L, 3, seed=1),)),
    "tied_off": lambda L: L.func.functional_call(_Tied.make(L), {"a.weight": t(L, 3, 3)}, (t(L, 3, seed=1),),
                                                 tie_weights=False).shape,
    "tied_conflict": lambda L: L.func.functional_call(_Tied.make(L), {"a.weight": t(L, 3, 3), "b.weight": t(L, 3, 3)},
                                                      (t(L, 3, seed=1),)),
    "buffer": lambda L: L.func.functional_call(_Tied.make(L), {"scale": t(L, 3)}, (t(L, 3, seed=1),)).shape,
    "kwargs": lambda L: L.func.functional_call(L.nn.Linear(3, 2).double(), {"weight": t(L, 2, 3), "bias": t(L, 2)},
                                               (), {"input": t(L, 3, seed=1)}),
}


@pytest.mark.parametrize("case", sorted(FUNCTIONAL_CALLS))
def test_functional_call_matches_torch(case):
    same_outcome(FUNCTIONAL_CALLS[case])


def test_functional_call_restores_the_module_and_differentiates_the_given_tensors():
    def run(L):
        m = L.nn.Linear(3, 2).double()
        before = m.weight
        w = t(L, 2, 3).requires_grad_()
        out = L.func.functional_call(m, {"weight": w, "bias": t(L, 2)}, (t(L, 3, seed=1),))
        out.sum().backward()
        assert m.weight is before and m.weight.grad is None
        return w.grad
    both(run)


# ---- linearize, stack_module_state ------------------------------------------------------------------------

def test_linearize_matches_torch():
    def run(L):
        out, jvp_fn = L.func.linearize(lambda a, b: (a.sin() * b).exp(), t(L, 3), t(L, 3, seed=1))
        return out, jvp_fn(t(L, 3, seed=2), t(L, 3, seed=3)), jvp_fn(t(L, 3, seed=4), t(L, 3, seed=5))
    both(run)
    same_outcome(lambda L: L.func.linearize(L.sin, t(L, 3))[1](t(L, 4)))
    same_outcome(lambda L: L.func.linearize(L.sin, t(L, 3))[1](t(L, 3).float()))


def _ensemble(L, n=3):
    models = [L.nn.Linear(3, 2).double() for _ in range(n)]
    with L.no_grad():
        for i, m in enumerate(models):
            m.weight.copy_(t(L, 2, 3, seed=30 + i))
            m.bias.copy_(t(L, 2, seed=40 + i))
    return models


def test_stack_module_state_and_an_ensemble_by_vmap_match_torch():
    def run(L):
        models = _ensemble(L)
        params, buffers = L.func.stack_module_state(models)
        out = L.func.vmap(lambda p, b, x: L.func.functional_call(models[0], (p, b), (x,)), in_dims=(0, 0, None))(
            params, buffers, t(L, 5, 3, seed=9))
        return params, out, [p.requires_grad and p.is_leaf for p in params.values()]
    both(run)


STACK_ERRORS = {
    "empty": lambda L: L.func.stack_module_state([]),
    "modes": lambda L: L.func.stack_module_state([L.nn.Linear(2, 2), L.nn.Linear(2, 2).eval()]),
    "classes": lambda L: L.func.stack_module_state([L.nn.Linear(2, 2), L.nn.Tanh()]),
}


@pytest.mark.parametrize("case", sorted(STACK_ERRORS))
def test_stack_module_state_errors_match_torch(case):
    same_outcome(STACK_ERRORS[case])


# ---- vmap's batching rules: one call of the function for the whole batch ----------------------------------

def _matmul_cases():
    cases = {}
    shapes = {1: (4,), 2: (3, 4), 3: (2, 3, 4)}
    right = {1: (4,), 2: (4, 5), 3: (2, 4, 5)}
    for la in (1, 2, 3):
        for lb in (1, 2, 3):
            for mapped in ((0, 0), (0, None), (None, 0)):
                sa = ((6,) if mapped[0] == 0 else ()) + shapes[la]
                sb = ((6,) if mapped[1] == 0 else ()) + right[lb]
                cases[f"matmul_{la}d_{lb}d_{mapped}"] = (lambda L, a, b: a @ b, [sa, sb], mapped)
    return cases


BATCHED = {
    "elementwise_broadcast": (lambda L, a, b: a.sin() * 2 + b, [(6, 3, 4), (4,)], (0, None)),
    "ranks_differ": (lambda L, a, b: a * b - a / (b.exp() + 1), [(6, 3, 4), (6, 4)], 0),
    "unbatched_wider": (lambda L, a, w: a * w + w, [(6, 4), (3, 4)], (0, None)),
    "reflected": (lambda L, a, w: (2 - a) * (1 / (a.abs() + 1)) + w * a + 2 ** a, [(6, 3), (3,)], (0, None)),
    "comparisons": (lambda L, a, b: (a > 0) * a + (a <= b) * b + a.maximum(b), [(6, 3), (6, 3)], 0),
    "unary_table": (lambda L, a: a.tanh() + a.sigmoid() + a.relu() + a.exp().log() + a.abs().sqrt(), [(6, 5)], 0),
    "reductions": (lambda L, a: (a.sum(), a.sum(1), a.mean((0, 1), keepdim=True), a.amax(-1), a.logsumexp(0)),
                   [(6, 3, 4)], 0),
    "softmax": (lambda L, a: (a.softmax(-1), a.log_softmax(0)), [(6, 3, 4)], 0),
    "shapes": (lambda L, a: (a.reshape(-1), a.view(2, -1), a.permute(1, 0), a.transpose(0, 1), a.t(),
                             a.unsqueeze(0), a.unsqueeze(-1), a.flatten()), [(6, 3, 4)], 0),
    "squeeze_expand": (lambda L, a: (a.squeeze(), a.squeeze(0), a.expand(2, a.size(0), len(a) * 4) * 1),
                       [(6, 1, 4)], 0),
    "in_dim_1_out_dim_1": (lambda L, a, b: (a * b).sum(0), [(3, 6, 4), (4, 6)], (1, 1)),
    "mlp_by_methods": (lambda L, x, w1, w2: ((x @ w1).tanh() @ w2).softmax(-1), [(6, 3), (3, 5), (5, 2)],
                       (0, None, None)),
    **_matmul_cases(),
}


@pytest.mark.parametrize("case", sorted(BATCHED))
def test_vmap_batching_rules_match_torch_in_one_call(case):
    fn, shapes, in_dims = BATCHED[case]
    calls = {}

    def run(L):
        calls[L.__name__] = 0

        def counted(*xs):
            calls[L.__name__] += 1
            return fn(L, *xs)
        out_dims = 1 if case == "in_dim_1_out_dim_1" else 0
        args = [t(L, *s, seed=i).requires_grad_() for i, s in enumerate(shapes)]
        out = L.func.vmap(counted, in_dims=in_dims, out_dims=out_dims)(*args)
        leaves = [o for o in (out if isinstance(out, tuple) else (out,)) if hasattr(o, "requires_grad")]
        sum(((o.double() * L.tensor(_rand(*o.shape, seed=50 + i))).sum() for i, o in enumerate(leaves)
             if o.dtype == L.float64)).backward()
        return out, [a.grad for a in args]
    both(run)
    assert calls["numgrad"] == 1


def test_vmap_falls_back_to_the_loop_for_a_function_without_rules():
    calls = []

    def f(a):
        calls.append(1)
        return numgrad.sin(a[0]) if a.sum() > 0 else a.cos()[0]  # indexing, a numgrad function, control flow
    x = numgrad.tensor(_rand(4, 3))
    out = numgrad.func.vmap(f)(x)
    expected = [f(x[i]).numpy() for i in range(4)]
    np.testing.assert_allclose(out.numpy(), np.stack(expected), **TOL)
    assert len(calls) == 1 + 4 + 4  # the batched attempt, the loop, and the check above


def test_vmap_randomness_same_in_one_call():
    numgrad.manual_seed(1)
    out = numgrad.func.vmap(lambda a: a + numgrad.randn(3), randomness="same")(numgrad.zeros(4, 3))
    assert all(np.array_equal(out[0].numpy(), out[i].numpy()) for i in range(4))

"""Forward-mode AD (autograd.forward_ad) against torch's in float64: tangents of every differentiable op-table entry
(also against central finite differences), of matmul, reductions, shape, indexing, join and nn ops, and the API."""
import numpy as np
import pytest
import torch
import torch.autograd.forward_ad as tfw
from hypothesis import given

import numgrad
import numgrad.autograd.forward_ad as nfw
from helpers.op_compare import hyp, param_grid
from oracle.ops.test_ops_table import CALLS, DIFFERENTIABLE, cases, make_args
from numgrad.spec.table import ELEMENTWISE

LIBS = {"torch": (torch, tfw), "numgrad": (numgrad, nfw)}


def tangents_of(lib_name, fn, args, tangents, requires_grad=False):
    """fn's outputs and their tangents with the float arrays of `args` made dual with `tangents` (arrays)."""
    lib, fw = LIBS[lib_name]
    with fw.dual_level():
        duals = []
        for a, t in zip(args, tangents):
            if isinstance(a, np.ndarray):
                x = lib.tensor(a, requires_grad=requires_grad and a.dtype.kind == "f")
                a = fw.make_dual(x, lib.tensor(t)) if t is not None else x
            duals.append(a)
        out = fn(lib, *duals)
        outs = out if isinstance(out, (tuple, list)) else (out,)
        return [(o.detach().numpy().copy(), None if fw.unpack_dual(o).tangent is None else
                 fw.unpack_dual(o).tangent.detach().numpy().copy()) for o in outs]


def random_tangents(args, seed):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(a.shape) if isinstance(a, np.ndarray) and a.dtype.kind == "f" else None
            for a in args]


def assert_same_tangents(fn, args, seed=0, rtol=1e-10, atol=1e-10):
    tangents = random_tangents(args, seed)
    ours = tangents_of("numgrad", fn, args, tangents)
    theirs = tangents_of("torch", fn, args, tangents)
    assert len(ours) == len(theirs)
    for (ov, ot), (tv, tt) in zip(ours, theirs):
        np.testing.assert_allclose(ov, tv, rtol=rtol, atol=atol)
        assert (ot is None) == (tt is None)
        if tt is not None:
            assert ot.shape == tt.shape and ot.dtype == tt.dtype
            np.testing.assert_allclose(ot, tt, rtol=rtol, atol=atol)
    return ours, tangents


def finite_difference(fn, args, tangents, eps=1e-6):
    """(f(x + eps t) - f(x - eps t)) / 2 eps, the directional derivative along the tangents."""
    def at(sign):
        moved = [numgrad.tensor(a + sign * eps * t) if t is not None else
                 (numgrad.tensor(a) if isinstance(a, np.ndarray) else a) for a, t in zip(args, tangents)]
        out = fn(numgrad, *moved)
        return [o.numpy() for o in (out if isinstance(out, (tuple, list)) else (out,))]
    return [(p - m) / (2 * eps) for p, m in zip(at(1), at(-1))]


# ---- every differentiable op-table entry, generated from the table ----------------------------------

@pytest.mark.parametrize("name", param_grid(DIFFERENTIABLE))
def test_elementwise_tangents_match_torch_and_finite_differences(name):
    entry, fn = ELEMENTWISE[name], CALLS[name]

    @hyp(6)
    @given(case=cases(entry, max_side=3))
    def check(case):
        args = make_args(entry, case, "float64")
        ours, tangents = assert_same_tangents(fn, args, seed=case.seed)
        for (_, ot), fd in zip(ours, finite_difference(fn, args, tangents)):
            np.testing.assert_allclose(ot, fd, rtol=1e-5, atol=1e-5)
    check()


def test_an_entry_without_derivative_refuses_forward_ad_as_torch():
    args = [np.array([1.5, 2.5]), np.array([0.5, 1.5])]
    errors = []
    for lib_name in LIBS:
        with pytest.raises(Exception) as info:
            tangents_of(lib_name, lambda L, a, b: a // b, args, random_tangents(args, 0))
        errors.append((type(info.value), str(info.value)))
    assert errors[0] == errors[1]


# ---- ops with JVP rules of their own (or computed from their backward) --------------------------------

def _rand(*shape, seed=0):
    return np.random.default_rng(seed + len(shape)).standard_normal(shape)


OPS = {
    "matmul": (lambda L, a, b: a @ b, [_rand(3, 4), _rand(4, 2, seed=1)]),
    "matmul_batched": (lambda L, a, b: L.matmul(a, b), [_rand(2, 3, 4), _rand(4, 2, seed=1)]),
    "mv": (lambda L, a, b: L.mv(a, b), [_rand(3, 4), _rand(4, seed=1)]),
    "dot": (lambda L, a, b: L.dot(a, b), [_rand(4), _rand(4, seed=1)]),
    "bmm": (lambda L, a, b: L.bmm(a, b), [_rand(2, 3, 4), _rand(2, 4, 5, seed=1)]),
    "sum": (lambda L, a: a.sum(), [_rand(3, 4)]),
    "sum_dim": (lambda L, a: a.sum(1, keepdim=True), [_rand(3, 4)]),
    "mean_dims": (lambda L, a: a.mean((0, 2)), [_rand(2, 3, 4)]),
    "prod": (lambda L, a: a.prod(1), [_rand(3, 4)]),
    "max": (lambda L, a: a.max(), [_rand(3, 4)]),
    "max_dim": (lambda L, a: a.max(1)[0], [_rand(3, 4)]),
    "amax": (lambda L, a: L.amax(a, 0), [_rand(3, 4)]),
    "min_dim": (lambda L, a: a.min(0).values, [_rand(3, 4)]),
    "logsumexp": (lambda L, a: L.logsumexp(a, 1), [_rand(3, 4)]),
    "var": (lambda L, a: a.var(1), [_rand(3, 4)]),
    "std": (lambda L, a: a.std(), [_rand(3, 4)]),
    "norm": (lambda L, a: a.norm(), [_rand(3, 4)]),
    "reshape": (lambda L, a: a.reshape(4, 3), [_rand(3, 4)]),
    "view": (lambda L, a: a.view(-1), [_rand(3, 4)]),
    "permute": (lambda L, a: a.permute(2, 0, 1), [_rand(2, 3, 4)]),
    "transpose": (lambda L, a: a.transpose(0, 1), [_rand(3, 4)]),
    "t": (lambda L, a: a.t(), [_rand(3, 4)]),
    "unsqueeze": (lambda L, a: a.unsqueeze(1), [_rand(3, 4)]),
    "squeeze": (lambda L, a: a.squeeze(), [_rand(3, 1, 4)]),
    "expand": (lambda L, a: a.expand(2, 3, 4), [_rand(3, 1)]),
    "flatten": (lambda L, a: a.flatten(), [_rand(2, 3, 4)]),
    "contiguous_after_t": (lambda L, a: a.t().contiguous(), [_rand(3, 4)]),
    "clone": (lambda L, a: a.clone(), [_rand(3, 4)]),
    "to_float32": (lambda L, a: a.to(L.float32), [_rand(3, 4)]),
    "cat": (lambda L, a, b: L.cat([a, b], 1), [_rand(3, 4), _rand(3, 2, seed=1)]),
    "cat_one_dual": (lambda L, a: L.cat([a, a.detach() * 0 + 1], 0), [_rand(3, 4)]),
    "stack": (lambda L, a, b: L.stack([a, b], 0), [_rand(3, 4), _rand(3, 4, seed=1)]),
    "split": (lambda L, a: a.split(2, 1), [_rand(3, 4)]),
    "unbind": (lambda L, a: a.unbind(0), [_rand(3, 4)]),
    "index_basic": (lambda L, a: a[1:, ::2], [_rand(3, 4)]),
    "index_advanced": (lambda L, a: a[[0, 2, 2]], [_rand(3, 4)]),
    "index_mask": (lambda L, a: a[a > 0], [_rand(3, 4)]),
    "index_select": (lambda L, a: L.index_select(a, 1, L.tensor([0, 3])), [_rand(3, 4)]),
    "gather": (lambda L, a: L.gather(a, 1, L.tensor([[0, 1], [2, 3], [1, 1]])), [_rand(3, 4)]),
    "where": (lambda L, a, b: L.where(a > 0, a, b), [_rand(3, 4), _rand(3, 4, seed=1)]),
    "masked_fill": (lambda L, a: a.masked_fill(a > 0, 2.0), [_rand(3, 4)]),
    "softmax": (lambda L, a: L.softmax(a, 1), [_rand(3, 4)]),
    "log_softmax": (lambda L, a: L.log_softmax(a, 0), [_rand(3, 4)]),
    "linear": (lambda L, x, w, b: L.nn.functional.linear(x, w, b), [_rand(5, 3), _rand(4, 3, seed=1), _rand(4)]),
    "linear_no_bias": (lambda L, x, w: L.nn.functional.linear(x, w), [_rand(5, 3), _rand(4, 3, seed=1)]),
    "relu": (lambda L, a: L.relu(a), [_rand(3, 4)]),
    "gelu": (lambda L, a: L.nn.functional.gelu(a), [_rand(3, 4)]),
    "sigmoid_tanh_chain": (lambda L, a: (a.sigmoid() * a.tanh()).exp().sum(0), [_rand(3, 4)]),
    "mse_loss": (lambda L, a, b: L.nn.functional.mse_loss(a, b), [_rand(3, 4), _rand(3, 4, seed=1)]),
    "cross_entropy": (lambda L, a: L.nn.functional.cross_entropy(a, L.tensor([0, 3, 1])), [_rand(3, 4)]),
    "layer_norm": (lambda L, a: L.nn.functional.layer_norm(a, (4,)), [_rand(3, 4)]),
    "conv2d": (lambda L, x, w: L.nn.functional.conv2d(x, w), [_rand(1, 2, 5, 5), _rand(3, 2, 3, 3, seed=1)]),
}


@pytest.mark.parametrize("name", sorted(OPS))
def test_op_tangents_match_torch(name):
    fn, args = OPS[name]
    ours, tangents = assert_same_tangents(fn, args)
    for (_, ot), fd in zip(ours, finite_difference(fn, args, tangents)):
        if ot is not None and ot.dtype == np.float64:
            np.testing.assert_allclose(ot, fd, rtol=1e-5, atol=1e-5)


def test_in_place_op_updates_the_tangent():
    fn = lambda L, a, b: a.clone().mul_(b).add_(1.0)  # noqa: E731
    assert_same_tangents(fn, [_rand(3, 4), _rand(3, 4, seed=1)])


def test_in_place_write_of_a_non_dual_into_a_dual_zeroes_its_tangent():
    def fn(L, a):
        b = a * 2
        b.zero_()
        return b
    assert_same_tangents(fn, [_rand(3)])


def test_tangent_is_differentiable_as_torch():
    """The tangent of a function of inputs requiring grad has a graph (forward-over-reverse needs it)."""
    grads = []
    for lib_name, (lib, fw) in LIBS.items():
        x = lib.tensor(_rand(3, 4), requires_grad=True)
        with fw.dual_level():
            d = fw.make_dual(x, lib.tensor(_rand(3, 4, seed=1)))
            tangent = fw.unpack_dual((d.sin() * d).sum()).tangent
            assert tangent.requires_grad
            grads.append(lib.autograd.grad(tangent, x)[0].numpy())
    np.testing.assert_allclose(grads[1], grads[0], rtol=1e-12, atol=1e-12)


# ---- the API ---------------------------------------------------------------------------------------------

def _outcome(fn):
    try:
        result = fn()
    except Exception as e:  # noqa: BLE001 - the type and message are what is compared
        return type(e).__name__, str(e)
    return "ok", result


def _api_cases(lib, fw):
    x = lib.tensor([1.0, 2.0, 3.0], dtype=lib.float64)
    return {
        "make_dual without level": lambda: fw.make_dual(x, lib.ones(3, dtype=lib.float64)),
        "exit without level": lambda: fw.exit_dual_level(),
        "exit level 0 without level": lambda: fw.exit_dual_level(level=0),
        "unpack outside": lambda: fw.unpack_dual(x).tangent,
    }


def _in_level_cases(lib, fw):
    x = lib.tensor([1.0, 2.0, 3.0], dtype=lib.float64, requires_grad=True)
    t = lib.ones(3, dtype=lib.float64)
    return {
        "size": lambda: fw.make_dual(x, lib.ones(4, dtype=lib.float64)),
        "int tangent": lambda: fw.make_dual(x, lib.ones(3, dtype=lib.int64)),
        "int primal": lambda: fw.make_dual(lib.arange(3), lib.ones(3, dtype=lib.int64)),
        "bad level": lambda: fw.make_dual(x, t, level=5),
        "nested": lambda: fw.enter_dual_level(),
        "dual of dual": lambda: fw.make_dual(fw.make_dual(x, t), t),
        "exit other level": lambda: fw.exit_dual_level(level=3),
        "dual view": lambda: fw.make_dual(x, t).grad_fn.name(),
        "unpack type": lambda: type(fw.unpack_dual(fw.make_dual(x, t))).__name__,
        "unpack fields": lambda: fw.unpack_dual(fw.make_dual(x, t))._fields,
        "tangent of integer result": lambda: fw.unpack_dual(fw.make_dual(x, t).argmax()).tangent,
        "detach drops tangent": lambda: fw.unpack_dual(fw.make_dual(x, t).detach()).tangent,
        "repr": lambda: repr(fw.make_dual(x.detach(), t) * 2),
        "repr wide": lambda: repr(fw.make_dual(lib.arange(30.).reshape(3, 10), lib.ones(3, 10))),
        "primal has no tangent": lambda: fw.unpack_dual(fw.unpack_dual(fw.make_dual(x, t)).primal).tangent,
    }


def test_api_outcomes_match_torch():
    results = []
    for lib, fw in LIBS.values():
        outcomes = {k: _outcome(f) for k, f in _api_cases(lib, fw).items()}
        with fw.dual_level() as level:
            outcomes["level"] = ("ok", level)
            outcomes.update({k: _outcome(f) for k, f in _in_level_cases(lib, fw).items()})
        results.append(outcomes)
    assert results[1] == results[0]


def test_tangents_are_dropped_when_the_level_exits():
    with nfw.dual_level():
        y = nfw.make_dual(numgrad.ones(2), numgrad.ones(2)).exp()
        assert nfw.unpack_dual(y).tangent is not None
    assert y._fw_grad is None and nfw.unpack_dual(y).tangent is None
    with nfw.dual_level():
        assert nfw.unpack_dual(y).tangent is None


def test_custom_function_without_jvp_refuses_as_torch():
    errors = []
    for lib, fw in LIBS.values():
        class Double(lib.autograd.Function):
            @staticmethod
            def forward(ctx, a):
                return a * 2

            @staticmethod
            def backward(ctx, g):
                return g * 2
        with fw.dual_level():
            errors.append(_outcome(lambda: Double.apply(fw.make_dual(lib.ones(2), lib.ones(2)))))
    assert errors[1] == errors[0] and errors[0][0] == "NotImplementedError"


def test_custom_function_jvp_gives_the_tangent():
    tangents = []
    for lib, fw in LIBS.values():
        class Cube(lib.autograd.Function):
            @staticmethod
            def forward(ctx, a):
                ctx.a = a
                return a ** 3

            @staticmethod
            def backward(ctx, g):
                return g * 3 * ctx.a ** 2

            @staticmethod
            def jvp(ctx, t):
                return t * 3 * ctx.a ** 2
        with fw.dual_level():
            out = Cube.apply(fw.make_dual(lib.tensor([1.0, 2.0]), lib.tensor([0.5, -1.0])))
            tangents.append(fw.unpack_dual(out * 2).tangent.tolist())
    assert tangents[1] == tangents[0]

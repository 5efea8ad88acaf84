"""numgrad.autograd.functional (jacobian, hessian, vjp, jvp, hvp, vhp) against torch.autograd.functional in float64:
values, create_graph, strict, vectorize and strategy, tuple structures, and the errors."""
import numpy as np
import pytest
import torch
import torch.autograd.functional  # noqa: F401

import numgrad

LIBS = (torch, numgrad)
TOL = dict(rtol=1e-10, atol=1e-12)


def _rand(*shape, seed=0):
    return np.random.default_rng(seed * 11 + len(shape)).standard_normal(shape)


def t(L, *shape, seed=0):
    return L.tensor(_rand(*shape, seed=seed))


def _summary(x):
    """Nested results as (array, requires_grad) pairs, structure kept."""
    if isinstance(x, (tuple, list)):
        return type(x).__name__, [_summary(v) for v in x]
    return x.detach().numpy(), x.requires_grad


def _assert_same(ours, theirs):
    if isinstance(theirs[0], str):
        assert ours[0] == theirs[0] and len(ours[1]) == len(theirs[1])
        for a, b in zip(ours[1], theirs[1]):
            _assert_same(a, b)
        return
    assert ours[0].shape == theirs[0].shape and ours[0].dtype == theirs[0].dtype
    np.testing.assert_allclose(ours[0], theirs[0], **TOL)
    assert ours[1] == theirs[1]


def outcome(run, L):
    try:
        return "ok", _summary(run(L))
    except Exception as e:  # noqa: BLE001 - the type and message are compared
        return type(e).__name__, str(e)


def same_outcome(run):
    theirs, ours = (outcome(run, L) for L in LIBS)
    assert ours[0] == theirs[0], (ours, theirs)
    if theirs[0] == "ok":
        _assert_same(ours[1], theirs[1])
    else:
        assert ours[1] == theirs[1]


SCALAR = lambda a: (a.sin() * a.exp()).sum()  # noqa: E731
SCALAR2 = lambda a, b: ((a @ b).tanh() ** 2).sum()  # noqa: E731
VECTOR = lambda a: a.softmax(0) * a  # noqa: E731
TWO_OUT = lambda a, b: (a * b.sum(), (a.exp() @ b).reshape(-1))  # noqa: E731


def _args(L, shapes):
    return tuple(t(L, *s, seed=i) for i, s in enumerate(shapes))


CASES = {
    "jacobian": lambda L: L.autograd.functional.jacobian(VECTOR, t(L, 4)),
    "jacobian_tuple": lambda L: L.autograd.functional.jacobian(TWO_OUT, _args(L, [(3,), (3, 2)])),
    "jacobian_tuple_input_single_output": lambda L: L.autograd.functional.jacobian(lambda a: a * 2, (t(L, 3),)),
    "jacobian_create_graph": lambda L: L.autograd.functional.jacobian(VECTOR, t(L, 4), create_graph=True),
    "jacobian_vectorize": lambda L: L.autograd.functional.jacobian(TWO_OUT, _args(L, [(3,), (3, 2)]), vectorize=True),
    "jacobian_forward": lambda L: L.autograd.functional.jacobian(TWO_OUT, _args(L, [(3,), (3, 2)]), vectorize=True,
                                                                 strategy="forward-mode"),
    "jacobian_unused_input": lambda L: L.autograd.functional.jacobian(lambda a, b: a * 2, _args(L, [(3,), (2,)])),
    "hessian": lambda L: L.autograd.functional.hessian(SCALAR, t(L, 4)),
    "hessian_tuple": lambda L: L.autograd.functional.hessian(SCALAR2, _args(L, [(2, 3), (3, 2)])),
    "hessian_create_graph": lambda L: L.autograd.functional.hessian(SCALAR, t(L, 3), create_graph=True),
    "hessian_vectorize": lambda L: L.autograd.functional.hessian(SCALAR2, _args(L, [(2, 3), (3, 2)]),
                                                                 vectorize=True),
    "hessian_forward_over_reverse": lambda L: L.autograd.functional.hessian(
        SCALAR, t(L, 4), vectorize=True, outer_jacobian_strategy="forward-mode"),
    "vjp": lambda L: L.autograd.functional.vjp(VECTOR, t(L, 4), t(L, 4, seed=3)),
    "vjp_tuple": lambda L: L.autograd.functional.vjp(TWO_OUT, _args(L, [(3,), (3, 2)]), (t(L, 3, seed=5),
                                                                                        t(L, 6, seed=6))),
    "vjp_scalar_no_v": lambda L: L.autograd.functional.vjp(SCALAR, t(L, 3)),
    "vjp_create_graph": lambda L: L.autograd.functional.vjp(VECTOR, t(L, 4), t(L, 4, seed=3), create_graph=True),
    "jvp": lambda L: L.autograd.functional.jvp(VECTOR, t(L, 4), t(L, 4, seed=3)),
    "jvp_tuple": lambda L: L.autograd.functional.jvp(TWO_OUT, _args(L, [(3,), (3, 2)]), _args(L, [(3,), (3, 2)])),
    "jvp_create_graph": lambda L: L.autograd.functional.jvp(VECTOR, t(L, 4), t(L, 4, seed=3), create_graph=True),
    "hvp": lambda L: L.autograd.functional.hvp(SCALAR, t(L, 4), t(L, 4, seed=3)),
    "hvp_tuple": lambda L: L.autograd.functional.hvp(SCALAR2, _args(L, [(2, 3), (3, 2)]),
                                                     tuple(t(L, *s, seed=7) for s in [(2, 3), (3, 2)])),
    "vhp": lambda L: L.autograd.functional.vhp(SCALAR, t(L, 4), t(L, 4, seed=3)),
    "vhp_create_graph": lambda L: L.autograd.functional.vhp(SCALAR, t(L, 4), t(L, 4, seed=3), create_graph=True),
    "strict_ok": lambda L: L.autograd.functional.jacobian(VECTOR, t(L, 3), strict=True),
    # errors
    "inputs_not_tensor": lambda L: L.autograd.functional.jacobian(lambda a: a * 2, 3.0),
    "outputs_not_tensor": lambda L: L.autograd.functional.jacobian(lambda a: 3.0, t(L, 3)),
    "outputs_tuple_with_float": lambda L: L.autograd.functional.vjp(lambda a: (a, 1.0), t(L, 3)),
    "strict_independent": lambda L: L.autograd.functional.jacobian(lambda a, b: a * 2, _args(L, [(3,), (3,)]),
                                                                   strict=True),
    "strict_vectorize": lambda L: L.autograd.functional.jacobian(VECTOR, t(L, 3), strict=True, vectorize=True),
    "forward_without_vectorize": lambda L: L.autograd.functional.jacobian(VECTOR, t(L, 3), strategy="forward-mode"),
    "forward_create_graph": lambda L: L.autograd.functional.jacobian(VECTOR, t(L, 3), strategy="forward-mode",
                                                                     vectorize=True, create_graph=True),
    "bad_strategy": lambda L: L.autograd.functional.jacobian(VECTOR, t(L, 3), strategy="foo"),
    "vjp_needs_v": lambda L: L.autograd.functional.vjp(VECTOR, t(L, 3)),
    "vjp_v_size": lambda L: L.autograd.functional.vjp(VECTOR, t(L, 3), t(L, 4)),
    "vjp_v_length": lambda L: L.autograd.functional.vjp(VECTOR, t(L, 3), (t(L, 3), t(L, 3))),
    "vjp_tuple_v_size": lambda L: L.autograd.functional.vjp(TWO_OUT, _args(L, [(3,), (3, 2)]), (t(L, 3), t(L, 5))),
    "jvp_needs_v": lambda L: L.autograd.functional.jvp(VECTOR, t(L, 3)),
    "hvp_not_scalar": lambda L: L.autograd.functional.hvp(VECTOR, t(L, 3), t(L, 3)),
    "hvp_tuple_output": lambda L: L.autograd.functional.hvp(lambda a: (a.sum(), a), t(L, 3), t(L, 3)),
    "vhp_size": lambda L: L.autograd.functional.vhp(SCALAR, t(L, 3), t(L, 2)),
    "hessian_not_scalar": lambda L: L.autograd.functional.hessian(VECTOR, t(L, 3)),
    "strict_linear_hessian": lambda L: L.autograd.functional.hessian(lambda a: a.sum() * 2, t(L, 3), strict=True),
    "strict_vjp_no_grad_output": lambda L: L.autograd.functional.vjp(lambda a: a.detach(), t(L, 3), t(L, 3),
                                                                     strict=True),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_matches_torch(case):
    same_outcome(CASES[case])


def test_jacobian_forward_and_reverse_agree():
    args = _args(numgrad, [(3,), (3, 2)])
    rev = numgrad.autograd.functional.jacobian(TWO_OUT, args)
    fwd = numgrad.autograd.functional.jacobian(TWO_OUT, args, vectorize=True, strategy="forward-mode")
    for r_row, f_row in zip(rev, fwd):
        for r, f in zip(r_row, f_row):
            np.testing.assert_allclose(f.numpy(), r.numpy(), **TOL)


def test_create_graph_results_differentiate_as_torch():
    grads = []
    for L in LIBS:
        x = t(L, 3).requires_grad_()
        h = L.autograd.functional.hessian(SCALAR, x, create_graph=True)
        grads.append(L.autograd.grad(h.sum(), x)[0].numpy())
    np.testing.assert_allclose(grads[1], grads[0], **TOL)


def test_jacobian_equals_finite_differences():
    x = _rand(4)
    jac = numgrad.autograd.functional.jacobian(VECTOR, numgrad.tensor(x)).numpy()
    eps = 1e-6
    for k in range(4):
        e = np.zeros(4)
        e[k] = eps
        column = (VECTOR(numgrad.tensor(x + e)).numpy() - VECTOR(numgrad.tensor(x - e)).numpy()) / (2 * eps)
        np.testing.assert_allclose(jac[:, k], column, rtol=1e-6, atol=1e-8)

"""numgrad.compile with the backward outside the call, through a detach() of an argument made in the call: the
detached tensor shares the argument's version counter, so the version its backward expects is the count at
the replay (the compile fuzz's seed 0, program 674), and an in-place write between the call and the backward
raises eager's and torch's error."""
import numpy as np
import pytest
import torch

import numgrad

LEAF = [[[-0.38986909313199175]]]
OTHER = [[-1.8341502968450065], [0.060446267217024605], [-2.512538304222153]]


def _program_674(lib, v0, v1, v2):
    v3 = v2 * v2
    v5 = v0.detach().unbind(2)[0]
    v6 = v5 % v1
    v7 = v6.logical_or(v3)
    v9 = v6.unsqueeze(1).rsqrt()
    return [v0, v1, v2, v3, v5, v6, v7, v9]  # v6 has a graph but gets no gradient: the trace's own graph runs


def _calls_674(lib, compiled):
    """Each call: the leaf written in place first (its version moves), the call, then the backward of its last
    result outside it: per call (leaf0.grad, leaf1.grad) or the error."""
    leaf0 = lib.tensor(np.array(LEAF), requires_grad=True)
    leaf1 = lib.tensor(np.array(OTHER), requires_grad=True)
    leaf2 = lib.tensor(np.array(2.0))
    fn = (lambda *a: _program_674(lib, *a))
    if compiled:
        fn = numgrad.compile(fn)
    out = []
    for _ in range(3):
        with lib.no_grad():
            leaf0.copy_(lib.tensor(np.array(LEAF)))
        leaf0.grad = leaf1.grad = None
        try:
            fn(leaf0, leaf1, leaf2)[-1].sum().backward()
        except RuntimeError as e:
            out.append(str(e))
            continue
        out.append((leaf0.grad, leaf1.grad.detach().numpy().copy()))
    return fn, out


def test_program_674_backward_outside_through_a_detached_argument():
    fn, got = _calls_674(numgrad, True)
    _, want = _calls_674(numgrad, False)
    _, ref = _calls_674(torch, False)
    assert fn.variants[0].hits == 2, fn.eager_reason
    for g, w, r in zip(got, want, ref):
        assert not isinstance(g, str), g
        assert g[0] is None and w[0] is None and r[0] is None
        np.testing.assert_array_equal(g[1], w[1])
        np.testing.assert_allclose(g[1], r[1], equal_nan=True)


def _written_between(lib, compiled, of):
    """Per call: the error of a backward after an in-place write, between the call and the backward, to the
    tensor whose detach() the call's graph saved (an argument that needs no grad, or a leaf)."""
    w = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
    leaf = lib.tensor([[0.5]], requires_grad=True)
    x = lib.tensor([0.5, 0.25, 1.0])

    def step(x, leaf):
        if of == "argument":
            return [x.detach() * w]
        d = leaf.detach()
        return [d, (d.unbind(1)[0] * w).exp()]
    fn = numgrad.compile(step) if compiled else step
    errors = []
    for _ in range(3):
        w.grad = None
        result = fn(x, leaf)
        with lib.no_grad():
            (x if of == "argument" else leaf).add_(1)
        with pytest.raises(RuntimeError) as e:
            result[-1].sum().backward()
        errors.append(str(e.value))
    return fn, errors


@pytest.mark.parametrize("of", ["argument", "leaf"])
def test_a_write_between_the_call_and_the_backward_to_a_detached_tensor_raises_eager_error(of):
    fn, got = _written_between(numgrad, True, of)
    assert got == _written_between(numgrad, False, of)[1]
    assert got == _written_between(torch, False, of)[1]
    assert fn.variants[0].hits == 1  # (then the results that never got their backward make calls run eager)

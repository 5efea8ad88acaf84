"""Nodes that no gradient reaches (norm(p=0) sends none): torch's engine still runs them. Its error nodes raise
(floor_divide's), saved tensors are unpacked (version errors), a custom Function's backward is called with zeros,
and tensor, leaf and node hooks see None. numgrad skipped such nodes (fuzz seed 12121, program 7612)."""
import pytest

from helpers.autograd_compare import same_outcome

CALLS = []


def _program(lib, case):
    CALLS.clear()
    class Twice(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            CALLS.append(("backward", g.tolist() if g is not None else None))
            return g * 2
    x = lib.tensor([1.0, -2.0], requires_grad=True)
    if case == "error node":
        (x // -0.0).sign().norm(p=0).relu().backward()
    elif case == "saved tensor written":
        y = x.exp()
        z = y.sin().norm(p=0)
        y.add_(1)
        z.backward()
    elif case == "custom function":
        Twice.apply(x).norm(p=0).backward()
    elif case == "tensor hook":
        y = x * 1
        y.register_hook(lambda g: CALLS.append(("hook", g)))
        y.norm(p=0).backward()
    elif case == "leaf hook":
        x.register_hook(lambda g: CALLS.append(("leaf hook", g)))
        (x * 1).norm(p=0).backward()
    elif case == "hook replacing None":
        y = x * 1
        y.register_hook(lambda g: lib.ones(2))
        y.norm(p=0).backward()
    elif case == "materialize_grads":
        return lib.autograd.grad((x * 1).norm(p=0), x, materialize_grads=True)
    return x.grad, list(CALLS)


@pytest.mark.parametrize("case", ["error node", "saved tensor written", "custom function", "tensor hook", "leaf hook",
                                  "hook replacing None", "materialize_grads"])
def test_nodes_without_a_gradient_run_as_in_torch(case):
    same_outcome(lambda lib: _program(lib, case))

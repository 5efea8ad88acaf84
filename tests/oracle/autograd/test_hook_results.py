"""What a hook may return, checked as torch checks it: a tensor hook a tensor of the gradient's type and size, a
node hook a tuple of as many values; anything else raises torch's error (numgrad took lists, ints, bool or 0-d
tensors and went on with them, or failed later with an AttributeError)."""
import pytest

from helpers.autograd_compare import same_outcome

_RETURNS = {
    "list": lambda g: list(g) if isinstance(g, tuple) else [g],
    "int": lambda g: 3,
    "None in the tuple": lambda g: (None,) * len(g) if isinstance(g, tuple) else None,
    "bool": lambda g: tuple(t.bool() for t in g) if isinstance(g, tuple) else g.bool(),
    "double": lambda g: tuple(t.double() for t in g) if isinstance(g, tuple) else g.double(),
    "0-d": lambda g: tuple(t.sum() for t in g) if isinstance(g, tuple) else g.sum(),
    "callable without a name": type("Hook", (), {"__call__": lambda self, g: g.double() if not isinstance(g, tuple)
                                                 else tuple(t.double() for t in g)})(),
    "same": lambda g: g,
}


def _run(lib, where, ret):
    x = lib.ones(3, requires_grad=True)
    y = x * 2
    if where == "node post hook":
        y.grad_fn.register_hook(lambda grad_inputs, grad_outputs: ret(grad_inputs))
    elif where == "node pre hook":
        y.grad_fn.register_prehook(ret)
    elif where == "tensor hook":
        y.register_hook(ret)
    else:
        x.register_hook(ret)
    (y * 3).sum().backward()
    return x.grad


@pytest.mark.parametrize("ret", list(_RETURNS))
@pytest.mark.parametrize("where", ["node post hook", "node pre hook", "tensor hook", "leaf hook"])
def test_hook_results_are_checked_as_torch(where, ret):
    same_outcome(lambda lib: _run(lib, where, _RETURNS[ret]))



def test_a_node_hook_cannot_replace_a_missing_gradient():
    def run(lib):
        x = lib.ones(3, requires_grad=True)
        y = x * 2  # its second input, the number 2, gets no gradient
        y.grad_fn.register_hook(lambda grad_inputs, grad_outputs: (lib.ones(3), lib.ones(1)))
        (y * 3).sum().backward()
    same_outcome(run)


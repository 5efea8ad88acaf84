"""Examples of seed document 003 (pytorch 的自动求导: requires_grad, grad_fn, backward, no_grad, Function) run on torch and numgrad and compared."""

import sys

import numpy as np
from helpers import seed_harness as H

run_example = H.run_example
fixed = H.fixed


X55 = fixed((5, 5), seed=3)  # stands in for torch.randn(5, 5, requires_grad=True)
Y55 = fixed((5, 5), seed=4)  # stands in for torch.randn(5, 5)


# --- 示例 ----------------------------------------------------------------------


def ex_add_sum(lib, out):
    a = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
    b = lib.tensor([4.0, 5.0, 6.0], requires_grad=True)

    c = a + b
    d = lib.sum(c)

    out.print(c.requires_grad)  # True
    out.print(c.grad_fn)  # <AddBackward0 object at 0x7f7e8f272fd0>

    out.print(d.requires_grad)  # True
    out.print(d.grad_fn)  # <SumBackward0 object at 0x7f7e8f272fd0>
    out.value("c", c)
    out.value("d", d)


def test_add_sum():
    run_example(
        ex_add_sum,
        doc=[
            "True",
            "<AddBackward0 object at 0x7b09aa6f5cf0>",
            "True",
            "<SumBackward0 object at 0x7b09aa6f5cf0>",
        ],
    )


def ex_requires_grad_propagates(lib, out):
    # every tensor produced from a tensor that requires grad requires grad too
    a = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
    k = lib.tensor([2.0, 2.0, 2.0])
    out.print(k.requires_grad, (k * 3).requires_grad)
    e = (a * k + 1) / 2 - k
    out.print(e.requires_grad, e.grad_fn)
    out.print(e)


def test_requires_grad_propagates():
    run_example(
        ex_requires_grad_propagates,
        doc=[
            "False False",
            "True <SubBackward0 object at 0x1>",
            "tensor([-0.5000,  0.5000,  1.5000], grad_fn=<SubBackward0>)",
        ],
    )


# --- backward()方法 ------------------------------------------------------------


def ex_backward_with_gradient(lib, out):
    a = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
    b = lib.tensor([4.0, 5.0, 6.0], requires_grad=True)
    c = a + b
    d = lib.sum(c)
    out.print(c.size())
    out.print(d)
    # torch.ones(c.size()) * 2: a weight of 2 for every element of c
    c.backward(lib.ones(c.size()) * 2)
    out.print(a.grad)
    out.print(b.grad)
    out.value("a.grad", a.grad)
    out.value("b.grad", b.grad)


def test_backward_with_gradient():
    run_example(
        ex_backward_with_gradient,
        doc=[
            "torch.Size([3])",
            "tensor(21., grad_fn=<SumBackward0>)",
            "tensor([2., 2., 2.])",
            "tensor([2., 2., 2.])",
        ],
    )


def ex_retain_graph(lib, out):
    a = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
    d = (a * a).sum()
    d.backward(retain_graph=True)  # keep the graph for another backward
    out.print(a.grad)
    d.backward()
    out.print(a.grad)  # accumulated
    out.raises(d.backward)  # freed now
    out.value("a.grad", a.grad)


def test_retain_graph():
    run_example(
        ex_retain_graph,
        doc=["tensor([2., 4., 6.])", "tensor([ 4.,  8., 12.])"],
    )


def ex_create_graph(lib, out):
    # create_graph=True builds a graph of the backward pass: second derivatives
    x = lib.tensor(2.0, requires_grad=True)
    y = x ** 3
    y.backward(create_graph=True)  # torch warns about a reference cycle
    out.value("dy/dx", x.grad.detach())
    out.print(x.grad.requires_grad)
    g = x.grad
    x.grad = None
    g.backward()
    out.print(x.grad)  # d2y/dx2 = 6x = 12
    out.value("d2y/dx2", x.grad)


def test_create_graph():
    run_example(ex_create_graph, doc=["True", "tensor(12.)"])


def ex_autograd_grad(lib, out):
    # higher-order derivatives with torch.autograd.grad
    x = lib.tensor(2.0, requires_grad=True)
    y = x ** 3
    (g,) = lib.autograd.grad(y, x, create_graph=True)
    out.print(g)
    (g2,) = lib.autograd.grad(g, x)
    out.print(g2)
    out.print(x.grad)


def test_autograd_grad():
    run_example(
        ex_autograd_grad,
        doc=["tensor(12., grad_fn=<MulBackward0>)", "tensor(12.)", "None"],
    )


# --- torch.no_grad() -----------------------------------------------------------


def ex_no_grad_backward_error(lib, out):
    x = lib.tensor(X55, requires_grad=True)
    y = lib.tensor(Y55)

    with lib.no_grad():
        z = x + y  # no gradient is tracked for z

    out.print(z.requires_grad, z.grad_fn)
    out.value("z", z)
    out.raises(z.backward)  # z was computed in no_grad: nothing to differentiate
    out.print(x.grad)


def test_no_grad_backward_error():
    run_example(ex_no_grad_backward_error, doc=["False None", "None"])


def ex_randn_5x5(lib, out):
    x = lib.randn(5, 5, requires_grad=True)
    y = lib.randn(5, 5)
    out.meta("randn(5, 5, requires_grad=True)", x)
    out.meta("randn(5, 5)", y)
    out.print(x.shape, y.shape)
    out.check("finite", np.isfinite(x.detach().numpy()).all() and np.isfinite(y.numpy()).all())
    out.check("not all equal", len(np.unique(x.detach().numpy())) > 1)
    with lib.no_grad():
        z = x + y
    out.meta("z", z)
    out.raises(z.backward)


def test_randn_5x5():
    run_example(ex_randn_5x5)


# --- torch.set_grad_enabled() --------------------------------------------------


def ex_set_grad_enabled_calls(lib, out):
    x = lib.tensor(X55, requires_grad=True)
    y = lib.tensor(Y55)

    out.print(lib.is_grad_enabled())
    lib.set_grad_enabled(False)
    try:
        out.print(lib.is_grad_enabled())
        z = x + y  # not tracked
        out.print(z.requires_grad, z.grad_fn)
        out.raises(z.backward)  # grad mode is disabled: nothing to differentiate
    finally:
        lib.set_grad_enabled(True)  # enable gradient computation again
    out.print(lib.is_grad_enabled())

    z = x + y  # recompute z
    out.print(z.requires_grad, z.grad_fn)
    out.raises(z.backward)  # z is 5x5, not a scalar
    z.backward(lib.ones(5, 5))  # the gradient of x
    out.value("x.grad", x.grad)
    out.value("z", z)


def test_set_grad_enabled_calls():
    try:
        run_example(
            ex_set_grad_enabled_calls,
            doc=["True", "False", "False None", "True", "True <AddBackward0 object at 0x1>"],
        )
    finally:
        import torch

        torch.set_grad_enabled(True)
        numgrad = sys.modules.get("numgrad")
        if numgrad is not None and hasattr(numgrad, "set_grad_enabled"):
            numgrad.set_grad_enabled(True)


def ex_set_grad_enabled_ctx(lib, out):
    x = lib.tensor(X55, requires_grad=True)
    y = lib.tensor(Y55)
    with lib.set_grad_enabled(False):
        z = x + y
        out.print(lib.is_grad_enabled())
    out.print(lib.is_grad_enabled(), z.requires_grad)
    is_train = True
    with lib.set_grad_enabled(is_train):
        z = (x + y).sum()
    out.print(z.requires_grad, z.grad_fn)


def test_set_grad_enabled_ctx():
    run_example(
        ex_set_grad_enabled_ctx,
        doc=["False", "True False", "True <SumBackward0 object at 0x1>"],
    )


# --- autograd的扩展: 为自己写的函数写微分 ---------------------------------------


def make_multiply_add(lib):
    Function = lib.autograd.Function  # from torch.autograd import Function

    class MultiplyAdd(Function):
        @staticmethod
        def forward(ctx, w, x, b):
            ctx.save_for_backward(w, x)
            output = w * x + b
            return output

        @staticmethod
        def backward(ctx, grad_output):
            w, x = ctx.saved_tensors
            grad_w = grad_output * x
            grad_x = grad_output * w
            grad_b = grad_output * 1
            return grad_w, grad_x, grad_b

    return MultiplyAdd


W1 = np.array([0.25], dtype=np.float32)  # stands in for t.rand(1, requires_grad=True)
B1 = np.array([0.625], dtype=np.float32)  # stands in for t.rand(1, requires_grad=True)


def ex_multiply_add(lib, out):
    MultiplyAdd = make_multiply_add(lib)
    x = lib.ones(1)
    w = lib.tensor(W1, requires_grad=True)
    b = lib.tensor(B1, requires_grad=True)
    # forward
    z = MultiplyAdd.apply(w, x, b)
    out.print(z.grad_fn)
    out.print(z)
    out.value("z", z)
    # backward
    z.backward()
    out.print(w.grad, b.grad, x.grad)
    out.value("w.grad", w.grad)
    out.value("b.grad", b.grad)


def test_multiply_add():
    run_example(
        ex_multiply_add,
        doc=[
            "<torch.autograd.function.MultiplyAddBackward object at 0x1>",
            "tensor([0.8750], grad_fn=<MultiplyAddBackward>)",
            "tensor([1.]) tensor([1.]) None",
        ],
    )


def ex_multiply_add_values(lib, out):
    # non-trivial x so that the saved tensors matter: dz/dw = x, dz/dx = w, dz/db = 1
    MultiplyAdd = make_multiply_add(lib)
    w = lib.tensor([1.5, -2.0], requires_grad=True)
    x = lib.tensor([3.0, 0.5], requires_grad=True)
    b = lib.tensor([0.25, 0.75], requires_grad=True)
    z = MultiplyAdd.apply(w, x, b)
    out.print(z)
    (z * lib.tensor([1.0, 10.0])).sum().backward()
    out.print(w.grad, x.grad, b.grad)


def test_multiply_add_values():
    run_example(
        ex_multiply_add_values,
        doc=[
            "tensor([ 4.7500, -0.2500], grad_fn=<MultiplyAddBackward>)",
            "tensor([3., 5.]) tensor([  1.5000, -20.0000]) tensor([ 1., 10.])",
        ],
    )


def ex_rand_1(lib, out):
    MultiplyAdd = make_multiply_add(lib)
    x = lib.ones(1)
    w = lib.rand(1, requires_grad=True)
    b = lib.rand(1, requires_grad=True)
    out.meta("rand(1, requires_grad=True)", w)
    out.print(w.shape)
    out.check("in [0, 1)", ((w.detach().numpy() >= 0) & (w.detach().numpy() < 1)).all())
    z = MultiplyAdd.apply(w, x, b)
    out.meta("z", z)
    z.backward()
    out.print(w.grad, b.grad, x.grad)


def test_rand_1():
    run_example(ex_rand_1, doc=["torch.Size([1])", "tensor([1.]) tensor([1.]) None"])

"""Examples of seed document 000 (Pytorch 中的 autograd 自动求导) run on torch and numgrad and compared."""

import numpy as np
from helpers import seed_harness as H

run_example = H.run_example
fixed = H.fixed


# --- Tensor 的操作 ------------------------------------------------------------


def ex_ones_print(lib, out):
    x1 = lib.ones(3, 3)
    out.print(x1)
    x = lib.ones(2, 2, requires_grad=True)
    out.print(x)
    out.value("x1", x1)
    out.value("x", x)


def test_ones_print():
    run_example(
        ex_ones_print,
        doc=[
            "tensor([[1., 1., 1.],\n        [1., 1., 1.],\n        [1., 1., 1.]])",
            "tensor([[1., 1.],\n        [1., 1.]], requires_grad=True)",
        ],
    )


def ex_add_grad_fn(lib, out):
    x = lib.ones(2, 2, requires_grad=True)
    y = x + 2
    out.print(y)
    out.print(x.grad_fn)
    out.print(y.grad_fn)
    out.value("y", y)
    out.check("x.grad_fn is None", x.grad_fn is None)


def test_add_grad_fn():
    run_example(
        ex_add_grad_fn,
        doc=[
            "tensor([[3., 3.],\n        [3., 3.]], grad_fn=<AddBackward0>)",
            "None",
            "<AddBackward0 object at 0x000002270F102CD0>",
        ],
    )


def ex_mul_mean(lib, out):
    x = lib.ones(2, 2, requires_grad=True)
    y = x + 2
    z = y * y * 3
    res = z.mean()
    out.print(z, res)
    out.value("z", z)
    out.value("out", res)


def test_mul_mean():
    run_example(
        ex_mul_mean,
        doc=[
            "tensor([[27., 27.],\n        [27., 27.]], grad_fn=<MulBackward0>)"
            " tensor(27., grad_fn=<MeanBackward0>)"
        ],
    )


# The document's `a = torch.randn(2, 2)`: this fixed input makes a*3/(a-1) print the
# same numbers as the document.
A_000 = np.array(
    [[0.8584297895431519, -0.8958544135093689], [-1.0879732370376587, 0.17042280733585358]],
    dtype=np.float32,
)


def ex_requires_grad_(lib, out):
    a = lib.tensor(A_000)
    a = (a * 3) / (a - 1)
    out.print(a.requires_grad)
    r = a.requires_grad_(True)
    out.check("requires_grad_ returns the tensor itself", r is a)
    out.print(a.requires_grad)
    b = (a * a).sum()
    out.print(b.requires_grad)
    out.print(b.grad_fn)
    out.print(a)
    out.print(b)
    out.value("a", a)
    out.value("b", b)


def test_requires_grad_():
    run_example(
        ex_requires_grad_,
        doc=[
            "False",
            "True",
            "True",
            "<SumBackward0 object at 0x000002270F3A5EB0>",
            "tensor([[-18.1909,   1.4176],\n        [  1.5632,  -0.6163]], requires_grad=True)",
            None,  # document: tensor(335.7415, ...) from its own unrounded random input
        ],
    )


def ex_randn_2x2(lib, out):
    a = lib.randn(2, 2)
    out.meta("randn(2, 2)", a)
    out.print(a.shape)
    out.print(a.requires_grad)
    out.check("finite", np.isfinite(a.numpy()).all())
    a = (a * 3) / (a - 1)
    out.print(a.requires_grad)
    a.requires_grad_(True)
    b = (a * a).sum()
    out.meta("b", b)


def test_randn_2x2():
    run_example(ex_randn_2x2)


# --- 梯度 Gradients ------------------------------------------------------------


def ex_backward(lib, out):
    x = lib.ones(2, 2, requires_grad=True)
    y = x + 2
    z = y * y * 3
    res = z.mean()
    out.print(x.grad)
    res.backward()
    out.print(x.grad)
    out.value("x.grad", x.grad)
    out.value("y.requires_grad", y.requires_grad)


def test_backward():
    run_example(
        ex_backward,
        doc=["None", "tensor([[4.5000, 4.5000],\n        [4.5000, 4.5000]])"],
    )


def ex_no_grad_pow(lib, out):
    x = lib.ones(2, 2, requires_grad=True)
    out.print(x.requires_grad)
    out.print((x ** 2).requires_grad)
    with lib.no_grad():
        out.print((x ** 2).requires_grad)
        out.value("x ** 2 in no_grad", x ** 2)
        out.print(lib.is_grad_enabled())
    out.print(lib.is_grad_enabled())
    out.value("x ** 2 after no_grad", x ** 2)


def test_no_grad_pow():
    run_example(ex_no_grad_pow, doc=["True", "True", "False", "False", "True"])


def ex_detach(lib, out):
    x = lib.ones(2, 2, requires_grad=True)
    out.print(x.requires_grad)
    y = x.detach()
    out.print(y.requires_grad)
    out.print(x.eq(y).all())
    out.value("y", y)
    out.value("x.eq(y)", x.eq(y))
    out.check("y is not x", y is not x)
    out.print(y.grad_fn)


def test_detach():
    run_example(ex_detach, doc=["True", "False", "tensor(True)", "None"])


def ex_detach_of_result(lib, out):
    # .detach() takes a tensor out of the graph: later backward passes do not reach it.
    x = lib.ones(2, 2, requires_grad=True)
    y = x * 3
    u = y.detach()
    out.print(u)
    out.value("u", u)
    w = (u * x).sum()
    w.backward()
    out.value("x.grad", x.grad)
    out.print(u.grad_fn, u.requires_grad, u.is_leaf)


def test_detach_of_result():
    run_example(ex_detach_of_result)

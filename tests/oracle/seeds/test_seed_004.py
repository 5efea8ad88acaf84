"""Examples of seed document 004 (自动求导: scalar/non-scalar backward, detach, control flow) run on torch and numgrad and compared."""

import numpy as np
import pytest
from helpers import seed_harness as H

run_example = H.run_example
fixed = H.fixed


# --- 1.1 标量变量的反向传播 -----------------------------------------------------


def ex_tensor_literal(lib, out):
    x = lib.tensor([0.0, 1, 2, 4])
    out.display(x)
    out.print(x)
    out.value("x", x)


def test_tensor_literal():
    run_example(ex_tensor_literal, doc=["tensor([0., 1., 2., 4.])", "tensor([0., 1., 2., 4.])"])


def ex_requires_grad_inplace(lib, out):
    x = lib.tensor([0.0, 1, 2, 4])
    r = x.requires_grad_(True)
    out.check("requires_grad_ returns the tensor itself", r is x)
    out.print(x)
    out.display(x.grad)  # None by default
    out.value("x.grad", x.grad)


def test_requires_grad_inplace():
    run_example(
        ex_requires_grad_inplace,
        doc=["tensor([0., 1., 2., 4.], requires_grad=True)", "None"],
    )


def ex_arange(lib, out):
    # the comment: equivalent to `x = torch.arange(4.0, requires_grad=True)`
    x = lib.arange(4.0, requires_grad=True)
    out.display(x)
    out.value("x", x)
    y = 2 * lib.dot(x, x)
    y.backward()
    out.display(x.grad)


def test_arange():
    run_example(
        ex_arange,
        doc=["tensor([0., 1., 2., 3.], requires_grad=True)", "tensor([ 0.,  4.,  8., 12.])"],
    )


def _x(lib):
    x = lib.tensor([0.0, 1, 2, 4])
    x.requires_grad_(True)
    return x


def ex_dot(lib, out):
    x = _x(lib)
    y = 2 * lib.dot(x, x)  # scalar function: its gradient has the shape of x
    out.display(y)
    out.value("y", y)
    y.backward()
    out.display(x.grad)
    out.display(x.grad == 4 * x)  # check the gradient
    out.value("x.grad == 4 * x", x.grad == 4 * x)
    out.display(x.grad.zero_())  # PyTorch accumulates gradients: clear them
    y = x.sum()
    out.display(y)
    y.backward()
    out.display(x.grad)
    out.value("x.grad", x.grad)


def test_dot():
    run_example(
        ex_dot,
        doc=[
            "tensor(42., grad_fn=<MulBackward0>)",
            "tensor([ 0.,  4.,  8., 16.])",
            "tensor([True, True, True, True])",
            "tensor([0., 0., 0., 0.])",
            "tensor(7., grad_fn=<SumBackward0>)",
            "tensor([1., 1., 1., 1.])",
        ],
    )


# --- 1.2 非标量变量的反向传播 ---------------------------------------------------


def ex_non_scalar(lib, out):
    x = _x(lib)
    y = x.sum()
    y.backward()
    x.grad.zero_()  # clear the previous gradient
    y = x * x
    out.display((y, y.shape))
    out.print(y.shape)
    out.value("y.shape", y.shape)
    y.sum().backward()  # y.backward(torch.ones(len(x)))
    out.display(x.grad)
    out.value("x.grad", x.grad)


def test_non_scalar():
    run_example(
        ex_non_scalar,
        doc=[
            "(tensor([ 0.,  1.,  4., 16.], grad_fn=<MulBackward0>), torch.Size([4]))",
            "torch.Size([4])",
            "tensor([0., 2., 4., 8.])",
        ],
    )


def ex_non_scalar_ones(lib, out):
    # the commented alternative: y.backward(torch.ones(len(x)))
    x = _x(lib)
    y = x * x
    out.print(len(x))
    y.backward(lib.ones(len(x)))
    out.display(x.grad)


def test_non_scalar_ones():
    run_example(ex_non_scalar_ones, doc=["4", "tensor([0., 2., 4., 8.])"])


# --- 1.3 分离计算 ---------------------------------------------------------------


def ex_detach(lib, out):
    x = _x(lib)
    x.sum().backward()
    x.grad.zero_()
    y = x * x
    u = y.detach()  # same values as y, no graph
    z = u * x  # u is a constant for the gradient of z
    z.sum().backward()
    out.display(x.grad == u)
    out.value("u", u)
    out.value("x.grad", x.grad)
    # the graph of y is still recorded
    x.grad.zero_()
    y.sum().backward()
    out.display(x.grad == 2 * x)
    out.value("x.grad (2x)", x.grad)


def test_detach():
    run_example(
        ex_detach,
        doc=["tensor([True, True, True, True])", "tensor([True, True, True, True])"],
    )


# --- 1.4 Python控制流的梯度计算 -------------------------------------------------


def f(a):
    b = a * 2
    while b.norm() < 1000:  # norm of the tensor
        b = b * 2
    if b.sum() > 0:
        c = b
    else:
        c = 100 * b

    return c


# The document's a = torch.randn(size=(), requires_grad=True) printed 0.6553 and d 1342.1163;
# 1342.1163 / 2048 reproduces both.  The other values take the other branches: negative
# (c = 100 * b), large enough that the while loop never runs, tiny, and many doublings.
A_VALUES = [1342.1163 / 2048, 1.5, -0.3, -2.7, 600.0, -750.0, 1e-3, -3.0e-5]


@pytest.mark.parametrize("a0", A_VALUES)
def test_control_flow(a0):
    def ex_control_flow(lib, out):
        a = lib.tensor(np.array(a0, dtype=np.float32), requires_grad=True)
        d = f(a)
        d.backward()
        out.display((a, d))
        out.value("a", a)
        out.value("d", d)
        out.value("a.grad", a.grad)
        out.display(a.grad == d / a)

    doc = None
    if a0 == A_VALUES[0]:
        doc = [
            "(tensor(0.6553, requires_grad=True), tensor(1342.1163, grad_fn=<MulBackward0>))",
            "tensor(True)",
        ]
    run_example(ex_control_flow, doc=doc)


def ex_randn_scalar(lib, out):
    a = lib.randn(size=(), requires_grad=True)
    out.meta("randn(size=(), requires_grad=True)", a)
    out.print(a.shape, a.dim())
    d = f(a)
    d.backward()
    out.meta("d", d)
    out.meta("a.grad", a.grad)
    # a differs between the libraries, and whether a.grad == d / a holds exactly in
    # float32 depends on a (rounding of 100 * b), so compare with a tolerance here.
    ratio = (d / a).detach().numpy()
    out.check("a.grad close to d / a", np.allclose(a.grad.numpy(), ratio, rtol=1e-5))


def test_randn_scalar():
    run_example(ex_randn_scalar, doc=["torch.Size([]) 0"])

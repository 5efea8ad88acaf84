"""Examples of seed document 002 (autograde notebook, pytorch-book chapter 3) run on torch and numgrad and compared."""

from helpers import seed_harness as H

run_example = H.run_example
fixed = H.fixed



# --- 使能autograde -------------------------------------------------------------


def ex_ones_requires_grad(lib, out):
    x = lib.ones(2, 3, requires_grad=True)
    out.print(x)
    out.value("x", x)


def test_ones_requires_grad():
    run_example(
        ex_ones_requires_grad,
        doc=["tensor([[1., 1., 1.],\n        [1., 1., 1.]], requires_grad=True)"],
    )


def ex_set_requires_grad_attr(lib, out):
    x = lib.ones(2, 3)
    out.print(x)
    x.requires_grad = True
    out.print(x)
    out.value("x", x)


def test_set_requires_grad_attr():
    run_example(
        ex_set_requires_grad_attr,
        doc=[
            "tensor([[1., 1., 1.],\n        [1., 1., 1.]])",
            "tensor([[1., 1., 1.],\n        [1., 1., 1.]], requires_grad=True)",
        ],
    )


# --- 使用autograde -------------------------------------------------------------


def ex_pow_grad_fn(lib, out):
    x = lib.ones(3, 3, requires_grad=True)
    out.print(x.grad_fn)  # None: nothing computed yet
    y = x ** 2
    out.print(y.grad_fn)
    z = (y + 1) * y
    out.print(z.grad_fn, z)
    out.value("y", y)
    out.value("z", z)


def test_pow_grad_fn():
    run_example(
        ex_pow_grad_fn,
        doc=[
            "None",
            "<PowBackward0 object at 0x7fb281656d68>",
            "<MulBackward0 object at 0x7fb281656dd8> tensor([[2., 2., 2.],\n"
            "        [2., 2., 2.],\n        [2., 2., 2.]], grad_fn=<MulBackward0>)",
        ],
    )


# --- 对单个元素进行反向传播 ----------------------------------------------------


def ex_element_backward(lib, out):
    x = lib.ones(3, 3, requires_grad=True)
    y = x ** 2
    z = (y + 1) * y
    # In [47]: backward must start from a 0-d tensor
    out.raises(z.backward)
    out.print(x.grad)
    # In [48]: backward from a single element
    z[0][0].backward()
    out.display(x.grad)
    out.value("x.grad", x.grad)
    # In [50]: the graph was freed by the first backward
    out.raises(lambda: z[0][0].backward())
    out.value("x.grad after failed backward", x.grad)


def test_element_backward():
    run_example(
        ex_element_backward,
        doc=[
            "None",
            "tensor([[6., 0., 0.],\n        [0., 0., 0.],\n        [0., 0., 0.]])",
        ],
    )


def test_backward_errors_as_documented():
    # The document shows the error text of an older torch; the harness compares with the
    # torch that is installed.  Check that the recorded messages at least start the same way.
    import torch

    def ex(lib, out):
        x = lib.ones(3, 3, requires_grad=True)
        z = (x ** 2 + 1) * x ** 2
        out.raises(z.backward)
        z[0][0].backward()
        out.raises(lambda: z[0][0].backward())

    run_example(ex)
    rec = H.Recorder()
    ex(torch, rec)
    assert rec.events[0] == (
        "raises",
        "RuntimeError",
        "grad can be implicitly created only for scalar outputs",
    )
    assert rec.events[1][1] == "RuntimeError"
    assert rec.events[1][2].startswith("Trying to backward through the graph a second time")


# --- 如何对所有的元素进行反向传播? --------------------------------------------


def ex_sum_backward(lib, out):
    x = lib.ones(3, 2, requires_grad=True)
    y = x ** 2
    z = (y + 1) * y
    s = z.sum()
    out.print(s)
    s.backward()
    out.display(x.grad)
    out.value("x.grad", x.grad)


def test_sum_backward():
    run_example(
        ex_sum_backward,
        doc=[
            "tensor(12., grad_fn=<SumBackward0>)",
            "tensor([[6., 6.],\n        [6., 6.],\n        [6., 6.]])",
        ],
    )


# --- grad 的自动累加 -----------------------------------------------------------


def ex_grad_accumulates(lib, out):
    x = lib.ones(3, 2, requires_grad=True)
    y = x ** 2
    z = (y + 1) * y
    s = z.sum()
    out.print(s)
    s.backward()
    out.print(x.grad)
    y = x ** 2
    z = (y + 1) * y
    s = z.sum()
    out.print(s)
    s.backward()
    out.print(x.grad)  # x.grad becomes 12
    out.value("x.grad", x.grad)


def test_grad_accumulates():
    run_example(
        ex_grad_accumulates,
        doc=[
            "tensor(12., grad_fn=<SumBackward0>)",
            "tensor([[6., 6.],\n        [6., 6.],\n        [6., 6.]])",
            "tensor(12., grad_fn=<SumBackward0>)",
            "tensor([[12., 12.],\n        [12., 12.],\n        [12., 12.]])",
        ],
    )


def ex_grad_data_zero(lib, out):
    # clear the gradient before the next backward
    x = lib.ones(3, 2, requires_grad=True)
    y = x ** 2
    z = (y + 1) * y
    s = z.sum()
    out.print(s)
    s.backward()
    out.print(x.grad)
    g = x.grad
    y = x ** 2
    z = (y + 1) * y
    s = z.sum()
    out.print(s)
    x.grad.data.zero_()
    out.print(x.grad)
    s.backward()
    out.print(x.grad)  # still 6
    out.value("x.grad", x.grad)
    out.check("x.grad is the same tensor object", x.grad is g)


def test_grad_data_zero():
    run_example(
        ex_grad_data_zero,
        doc=[
            "tensor(12., grad_fn=<SumBackward0>)",
            "tensor([[6., 6.],\n        [6., 6.],\n        [6., 6.]])",
            "tensor(12., grad_fn=<SumBackward0>)",
            "tensor([[0., 0.],\n        [0., 0.],\n        [0., 0.]])",
            "tensor([[6., 6.],\n        [6., 6.],\n        [6., 6.]])",
        ],
    )


# --- 中间节点的grad ------------------------------------------------------------


def ex_non_leaf_grad(lib, out):
    x = lib.ones(3, 2, requires_grad=True)
    y = x ** 2
    z = (y + 1) * y
    s = z.sum()
    out.print(s)
    s.backward()
    out.print(y.grad)  # None, with a UserWarning
    out.print(y.is_leaf, x.is_leaf)


def test_non_leaf_grad():
    run_example(
        ex_non_leaf_grad,
        doc=["tensor(12., grad_fn=<SumBackward0>)", "None", "False True"],
    )


def ex_retain_grad(lib, out):
    # How to get the gradient of an intermediate node: retain_grad() or a hook.
    x = lib.ones(3, 2, requires_grad=True)
    y = x ** 2
    y.retain_grad()
    z = (y + 1) * y
    z.register_hook(lambda g: out.print("hook on z:", g))
    s = z.sum()
    s.backward()
    out.print(y.grad)  # dz/dy = 2y + 1 = 3, no warning
    out.print(x.grad)
    out.value("y.grad", y.grad)


def test_retain_grad():
    run_example(
        ex_retain_grad,
        doc=[
            "hook on z: tensor([[1., 1.],\n        [1., 1.],\n        [1., 1.]])",
            "tensor([[3., 3.],\n        [3., 3.],\n        [3., 3.]])",
            "tensor([[6., 6.],\n        [6., 6.],\n        [6., 6.]])",
        ],
    )


def ex_hook_changes_grad(lib, out):
    # a hook that returns a tensor replaces the gradient flowing on
    x = lib.ones(3, requires_grad=True)
    y = x * 2
    y.register_hook(lambda g: g * 10)
    y.sum().backward()
    out.print(x.grad)


def test_hook_changes_grad():
    run_example(ex_hook_changes_grad, doc=["tensor([20., 20., 20.])"])

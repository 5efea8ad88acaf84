"""Examples of seed document 001 (PyTorch autograd mechanics notes) run on torch and numgrad and compared."""

import numpy as np
from helpers import seed_harness as H

run_example = H.run_example
fixed = H.fixed


X5 = fixed((5,), seed=1)  # stands in for torch.randn(5, requires_grad=True)


# --- 1.1 the graph is recreated from scratch at every iteration ----------------


def ex_dynamic_graph(lib, out):
    # Python control flow decides the shape of the graph on every iteration.
    w = lib.tensor([0.5, -1.0, 2.0], requires_grad=True)
    for step in range(4):
        h = w
        for _ in range(step):
            h = h * 2
        if step % 2 == 0:
            y = h.exp().sum()
        else:
            y = (h * h).sum()
        out.print(y.grad_fn)
        out.value("y at step %d" % step, y)
        y.backward()
        out.value("w.grad at step %d" % step, w.grad)
        w.grad = None


def test_dynamic_graph():
    run_example(ex_dynamic_graph)


# --- 1.2 Saved tensors ---------------------------------------------------------


def ex_saved_self(lib, out):
    x = lib.tensor(X5, requires_grad=True)
    y = x.pow(2)
    out.print(x.equal(y.grad_fn._saved_self))  # True
    out.print(x is y.grad_fn._saved_self)  # True
    out.print(y.grad_fn)
    out.value("y", y)
    out.value("_saved_exponent", y.grad_fn._saved_exponent)
    out.value("_saved_self", y.grad_fn._saved_self)


def test_saved_self():
    run_example(ex_saved_self, doc=["True", "True", "<PowBackward0 object at 0x1>"])


def ex_saved_result(lib, out):
    x = lib.tensor(X5, requires_grad=True)
    y = x.exp()
    out.print(y.equal(y.grad_fn._saved_result))  # True
    out.print(y is y.grad_fn._saved_result)  # False
    out.print(y.grad_fn)
    out.value("y", y)
    out.value("_saved_result", y.grad_fn._saved_result)


def test_saved_result():
    run_example(ex_saved_result, doc=["True", "False", "<ExpBackward0 object at 0x1>"])


def ex_randn_5(lib, out):
    x = lib.randn(5, requires_grad=True)
    out.meta("randn(5, requires_grad=True)", x)
    out.print(x.shape)
    out.check("finite", np.isfinite(x.detach().numpy()).all())
    y = x.pow(2)
    out.print(x.equal(y.grad_fn._saved_self))
    out.print(x is y.grad_fn._saved_self)
    y = x.exp()
    out.print(y.equal(y.grad_fn._saved_result))
    out.print(y is y.grad_fn._saved_result)


def test_randn_5():
    run_example(ex_randn_5)


def ex_custom_function_saved_tensors(lib, out):
    # 1.2: a custom Function saves tensors with save_for_backward() and reads them back
    # with saved_tensors during backward.
    class Square(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, grad_output):
            (x,) = ctx.saved_tensors
            return 2 * x * grad_output

    x = lib.tensor(X5, requires_grad=True)
    y = Square.apply(x)
    out.print(y.grad_fn)
    out.value("y", y)
    y.sum().backward()
    out.value("x.grad", x.grad)


def test_custom_function_saved_tensors():
    run_example(ex_custom_function_saved_tensors)


# --- 1.3 gradients of non-differentiable functions -----------------------------


def ex_nondifferentiable_points(lib, out):
    # relu at 0 (convex: min-norm subgradient 0), abs at 0, sqrt at 0 (inf by
    # continuity), sqrt(-1) (undefined: nan).
    for name in ("relu", "abs", "sqrt"):
        x = lib.tensor([0.0, -1.0, 4.0], requires_grad=True)
        y = getattr(lib, name)(x)
        out.print(name, y)
        y.sum().backward()
        out.print(x.grad)
        out.value(name + " grad", x.grad)


def test_nondifferentiable_points():
    run_example(
        ex_nondifferentiable_points,
        doc=[
            "relu tensor([0., 0., 4.], grad_fn=<ReluBackward0>)",
            "tensor([0., 0., 1.])",
            "abs tensor([0., 1., 4.], grad_fn=<AbsBackward0>)",
            "tensor([ 0., -1.,  1.])",
            "sqrt tensor([0., nan, 2.], grad_fn=<SqrtBackward0>)",
            "tensor([   inf,    nan, 0.2500])",
        ],
    )


# --- 1.4 locally disabling gradient computation --------------------------------


def ex_local_disable(lib, out):
    x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
    with lib.no_grad():
        y = x * 2  # not tracked
    out.print(y)
    out.value("y (no_grad)", y)

    with lib.set_grad_enabled(False):
        y = x * 2  # not tracked
        out.print(lib.is_grad_enabled())
    out.print(lib.is_grad_enabled())
    out.print(y)
    out.value("y (set_grad_enabled(False))", y)

    x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = lib.tensor([4.0, 5.0, 6.0], requires_grad=True)
    x.requires_grad = False  # no gradient for x
    z = x * y  # only y gets a gradient
    out.print(x)
    out.print(z)
    out.value("z", z)
    z.sum().backward()
    out.print(x.grad, y.grad)
    out.value("y.grad", y.grad)


def test_local_disable():
    run_example(
        ex_local_disable,
        doc=[
            "tensor([2., 4., 6.])",
            "False",
            "True",
            "tensor([2., 4., 6.])",
            "tensor([1., 2., 3.])",
            "tensor([ 4., 10., 18.], grad_fn=<MulBackward0>)",
            "None tensor([1., 2., 3.])",
        ],
    )


def ex_set_grad_enabled_true_ctx(lib, out):
    x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
    with lib.no_grad():
        with lib.set_grad_enabled(True):
            y = x * 2
        z = x * 2
    out.print(y)
    out.print(z)
    out.print(lib.is_grad_enabled())


def test_set_grad_enabled_true_ctx():
    run_example(ex_set_grad_enabled_true_ctx)


# --- 1.5 setting requires_grad -------------------------------------------------


def ex_requires_grad_forward_backward(lib, out):
    a = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
    b = lib.tensor([4.0, 5.0, 6.0])
    c = b * 2  # no input requires grad: not recorded
    out.print(c.requires_grad, c.grad_fn, c.is_leaf)
    d = a * b  # recorded
    out.print(d.requires_grad, d.grad_fn, d.is_leaf)
    e = (d + c).sum()
    out.print(e)
    e.backward()
    out.print(a.is_leaf, a.grad)
    out.print(b.is_leaf, b.grad)
    out.print(c.grad)
    out.print(d.grad)  # non-leaf: None and a warning
    out.value("a.grad", a.grad)


def test_requires_grad_forward_backward():
    run_example(
        ex_requires_grad_forward_backward,
        doc=[
            "False None True",
            "True <MulBackward0 object at 0x1> False",
            "tensor(62., grad_fn=<SumBackward0>)",
            "True tensor([4., 5., 6.])",
            "True None",
            "None",
            "None",
        ],
    )


def ex_requires_grad_non_leaf(lib, out):
    # requires_grad is only meant to be set on leaves.
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2

    def unset():
        y.requires_grad = False

    def set_again():
        y.requires_grad = True

    out.raises(unset)
    out.print(y.requires_grad)
    out.raises(set_again)
    out.print(y.requires_grad)
    out.raises(lambda: y.requires_grad_(False))
    v = y.detach()
    out.print(v.requires_grad, v.is_leaf)


def test_requires_grad_non_leaf():
    run_example(ex_requires_grad_non_leaf)


def ex_freeze(lib, out):
    # Freezing part of a "pretrained" model with .requires_grad_(False).
    x = lib.tensor([[1.0, 2.0], [3.0, 4.0]])
    w1 = lib.tensor([[0.5, -1.0], [1.5, 2.0]], requires_grad=True)
    w2 = lib.tensor([[1.0], [-2.0]], requires_grad=True)
    r = w1.requires_grad_(False)
    out.check("requires_grad_ returns the tensor itself", r is w1)
    out.print(w1)
    h = x @ w1  # frozen: not recorded
    out.print(h.requires_grad, h.grad_fn)
    loss = (h @ w2).sum()
    out.print(loss)
    loss.backward()
    out.print(w1.grad)
    out.print(w2.grad)
    out.value("w2.grad", w2.grad)
    w1.requires_grad_(True)  # unfreeze
    loss = ((x @ w1) @ w2).sum()
    loss.backward()
    out.value("w1.grad", w1.grad)
    out.value("w2.grad accumulated", w2.grad)


def test_freeze():
    run_example(ex_freeze)


# --- 1.6 grad modes ------------------------------------------------------------


def ex_grad_modes(lib, out):
    x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
    # default (grad) mode
    out.print(lib.is_grad_enabled(), lib.is_inference_mode_enabled(), (x * 2).requires_grad)
    with lib.no_grad():
        out.print(lib.is_grad_enabled(), lib.is_inference_mode_enabled(), (x * 2).requires_grad)
        t = lib.ones(2, requires_grad=True)  # leaf creation keeps the flag
        out.print(t.requires_grad, t.is_leaf)
        with lib.enable_grad():
            out.print(lib.is_grad_enabled(), (x * 2).requires_grad)
    with lib.inference_mode():
        out.print(lib.is_grad_enabled(), lib.is_inference_mode_enabled(), (x * 2).requires_grad)
    out.print(lib.is_grad_enabled(), lib.is_inference_mode_enabled(), (x * 2).requires_grad)


def test_grad_modes():
    run_example(
        ex_grad_modes,
        doc=[
            "True False True",
            "False False False",
            "True True",
            "True True",
            "False True False",
            "True False True",
        ],
    )


def ex_grad_mode_decorators(lib, out):
    x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)

    @lib.no_grad()
    def double_no_grad(a):
        return a * 2

    @lib.enable_grad()
    def double_enable_grad(a):
        return a * 2

    @lib.set_grad_enabled(False)
    def double_disabled(a):
        return a * 2

    @lib.inference_mode()
    def double_inference(a):
        return a * 2

    out.print(double_no_grad(x))
    with lib.no_grad():
        out.print(double_enable_grad(x))
    out.print(double_disabled(x))
    r = double_inference(x)
    out.print(r, r.is_inference())
    out.print(lib.is_grad_enabled(), lib.is_inference_mode_enabled())


def test_grad_mode_decorators():
    run_example(
        ex_grad_mode_decorators,
        doc=[
            "tensor([2., 4., 6.])",
            "tensor([2., 4., 6.], grad_fn=<MulBackward0>)",
            "tensor([2., 4., 6.])",
            "tensor([2., 4., 6.]) True",
            "True False",
        ],
    )


def ex_no_grad_optimizer_step(lib, out):
    # 1.6.2: update parameters in place under no_grad, then use them in grad mode.
    w = lib.tensor([1.0, 2.0], requires_grad=True)
    loss = (w * w).sum()
    loss.backward()
    out.print(w.grad)
    with lib.no_grad():
        w -= 0.1 * w.grad
    out.print(w)
    out.print(w.is_leaf, w.grad_fn)
    w.grad.zero_()
    loss = (w * w).sum()
    out.print(loss)
    loss.backward()
    out.print(w.grad)
    out.value("w", w)
    out.value("w.grad", w.grad)


def test_no_grad_optimizer_step():
    run_example(
        ex_no_grad_optimizer_step,
        doc=[
            "tensor([2., 4.])",
            "tensor([0.8000, 1.6000], requires_grad=True)",
            "True None",
            "tensor(3.2000, grad_fn=<SumBackward0>)",
            "tensor([1.6000, 3.2000])",
        ],
    )


def ex_no_grad_init(lib, out):
    # torch.nn.init style: initialise a parameter in place under no_grad.
    w = lib.ones(2, 3, requires_grad=True)
    with lib.no_grad():
        w.zero_()
        w.add_(0.5)
    out.print(w)
    out.print(w.is_leaf, w.grad_fn)
    (w * 2).sum().backward()
    out.print(w.grad)


def test_no_grad_init():
    run_example(ex_no_grad_init)


def ex_inference_mode(lib, out):
    x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
    with lib.inference_mode():
        t = x * 2  # not recorded
        out.print(t, t.requires_grad, t.grad_fn, t.is_inference())
        o = lib.ones(3)
        out.print(o.is_inference())
    out.print(x.is_inference())
    w = lib.tensor([1.0, 1.0, 1.0], requires_grad=True)
    # an inference tensor cannot be used in a computation recorded by autograd
    out.raises(lambda: w * t)

    def set_flag():
        o.requires_grad = True

    out.raises(set_flag)
    # workaround 1: clone it into a normal tensor
    c = t.clone()
    out.print(c.is_inference())
    (w * c).sum().backward()
    out.print(w.grad)
    # workaround 2: use no_grad instead of inference_mode
    with lib.no_grad():
        n = x * 2
    out.print(n.is_inference())
    w.grad = None
    (w * n).sum().backward()
    out.print(w.grad)


def test_inference_mode():
    run_example(
        ex_inference_mode,
        doc=[
            "tensor([2., 4., 6.]) False None True",
            "True",
            "False",
            "False",
            "tensor([2., 4., 6.])",
            "False",
            "tensor([2., 4., 6.])",
        ],
    )


# --- 1.7 in-place operations ---------------------------------------------------


def ex_inplace_overwrites_saved(lib, out):
    # an in-place op overwrote a value that backward needs
    x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = x.exp()
    y.add_(1)
    out.print(y)
    out.raises(lambda: y.sum().backward())


def test_inplace_overwrites_saved():
    run_example(ex_inplace_overwrites_saved)


def ex_inplace_rewrites_graph(lib, out):
    # an in-place op on a non-leaf re-bases the graph: its grad_fn changes
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    out.print(y.grad_fn)
    r = y.add_(1)
    out.check("add_ returns the tensor itself", r is y)
    out.print(y)
    y.mul_(3)
    out.print(y)
    y.sum().backward()
    out.print(x.grad)


def test_inplace_rewrites_graph():
    run_example(
        ex_inplace_rewrites_graph,
        doc=[
            "<MulBackward0 object at 0x1>",
            "tensor([3., 5.], grad_fn=<AddBackward0>)",
            "tensor([ 9., 15.], grad_fn=<MulBackward0>)",
            "tensor([6., 6.])",
        ],
    )


def ex_inplace_on_leaf(lib, out):
    w = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
    out.raises(lambda: w.add_(1))
    out.raises(lambda: w[0].mul_(2))  # a view shares the leaf's storage
    out.print(w)


def test_inplace_on_leaf():
    run_example(ex_inplace_on_leaf)

"""Custom autograd.Function (ctx, save_for_backward, marks, materialize_grads, once_differentiable) vs torch."""

import numpy as np

from helpers.autograd_compare import arr, edges, fixed, leaf, name_of, normalize, raises, same

X3 = [1.0, -2.0, 0.5]


def multiply_add(lib):
    class MultiplyAdd(lib.autograd.Function):
        @staticmethod
        def forward(ctx, w, x, b):
            ctx.save_for_backward(w, x)
            return w * x + b

        @staticmethod
        def backward(ctx, grad_output):
            w, x = ctx.saved_tensors
            return grad_output * x, grad_output * w, grad_output
    return MultiplyAdd


def cube(lib):
    class Cube(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x ** 3

        @staticmethod
        def backward(ctx, g):
            x, = ctx.saved_tensors
            return g * 3 * x ** 2
    return Cube


def test_multiply_add_scalars():
    def fn(lib):
        MultiplyAdd = multiply_add(lib)
        w = lib.tensor(2.0, requires_grad=True)
        x = lib.tensor(1.0, requires_grad=True)
        b = lib.tensor(3.0, requires_grad=True)
        y = MultiplyAdd.apply(w, x, b)
        y.backward()
        return (y, w.grad, x.grad, b.grad, y.grad_fn.name(), name_of(y.grad_fn), edges(y.grad_fn),
                normalize(repr(y)), y.is_leaf)
    out = same(fn)
    assert out[4] == "MultiplyAddBackward"
    assert out[7] == "tensor(5., grad_fn=<MultiplyAddBackward>)"


def test_function_node_repr():
    def fn(lib):
        MultiplyAdd = multiply_add(lib)
        w, x, b = leaf(lib, X3), leaf(lib, X3), leaf(lib, X3)
        y = MultiplyAdd.apply(w, x, b)
        return normalize(repr(y.grad_fn)), normalize(str(y.grad_fn))
    same(fn)


def test_multiply_add_vectors_with_broadcast_free_inputs():
    def fn(lib):
        MultiplyAdd = multiply_add(lib)
        w, x, b = leaf(lib, X3), leaf(lib, fixed(3, 1)), leaf(lib, fixed(3, 2))
        y = MultiplyAdd.apply(w, x, b)
        (y * y).sum().backward()
        return y, w.grad, x.grad, b.grad
    same(fn)


def test_function_output_without_grad_inputs():
    def fn(lib):
        MultiplyAdd = multiply_add(lib)
        w, x, b = (lib.tensor(arr(X3)) for _ in range(3))
        y = MultiplyAdd.apply(w, x, b)
        return y, y.requires_grad, y.grad_fn
    same(fn)


def test_function_under_no_grad():
    def fn(lib):
        MultiplyAdd = multiply_add(lib)
        w, x, b = leaf(lib, X3), leaf(lib, X3), leaf(lib, X3)
        with lib.no_grad():
            y = MultiplyAdd.apply(w, x, b)
        return y, y.requires_grad, y.grad_fn
    same(fn)


def test_forward_runs_without_grad_tracking():
    def fn(lib):
        seen = []

        class Probe(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                y = x * 2
                seen.append((lib.is_grad_enabled(), y.requires_grad, y.grad_fn))
                return y

            @staticmethod
            def backward(ctx, g):
                seen.append(lib.is_grad_enabled())
                return g * 2

        x = leaf(lib, X3)
        Probe.apply(x).sum().backward()
        return seen, x.grad
    same(fn)


def test_needs_input_grad():
    def fn(lib):
        seen = []

        class F(lib.autograd.Function):
            @staticmethod
            def forward(ctx, a, b, k):
                seen.append(ctx.needs_input_grad)
                return a * b * k

            @staticmethod
            def backward(ctx, g):
                seen.append(ctx.needs_input_grad)
                return g, g, None

        a, b = leaf(lib, X3), lib.tensor(arr(X3))
        F.apply(a, b, 2.0).sum().backward()
        return seen, type(seen[0]).__name__, a.grad
    same(fn)


def test_non_tensor_argument_gets_none():
    def fn(lib):
        class Scale(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x, k):
                ctx.k = k
                return x * k

            @staticmethod
            def backward(ctx, g):
                return g * ctx.k, None

        x = leaf(lib, X3)
        y = Scale.apply(x, 3.0)
        y.sum().backward()
        return y, x.grad, edges(y.grad_fn)
    same(fn)


def test_mark_non_differentiable():
    def fn(lib):
        class SignAndValue(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                s = x.sign()
                v = x * 2
                ctx.mark_non_differentiable(s)
                return v, s

            @staticmethod
            def backward(ctx, gv, gs):
                return gv * 2 + gs

        x = leaf(lib, X3)
        v, s = SignAndValue.apply(x)
        v.sum().backward()
        return v, s, s.requires_grad, s.grad_fn, x.grad
    same(fn)


def test_mark_dirty_in_place_forward():
    def fn(lib):
        class AddOne_(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                x.add_(1)
                ctx.mark_dirty(x)
                return x

            @staticmethod
            def backward(ctx, g):
                return g

        x = leaf(lib, X3)
        a = x * 2
        v0 = a._version
        out = AddOne_.apply(a)
        (out * out).sum().backward()
        return out is a, a, name_of(a.grad_fn), a._version - v0, x.grad
    same(fn)


def test_mark_dirty_on_leaf_requiring_grad_error():
    def fn(lib):
        class AddOne_(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                x.add_(1)
                ctx.mark_dirty(x)
                return x

            @staticmethod
            def backward(ctx, g):
                return g

        x = leaf(lib, X3)
        return raises(AddOne_.apply, x)
    same(fn)


def test_materialize_grads_default_gives_zeros():
    def fn(lib):
        seen = []

        class Two(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2, x * 3

            @staticmethod
            def backward(ctx, g1, g2):
                seen.append((g1, g2))
                return g1 * 2 + g2 * 3

        x = leaf(lib, X3)
        a, b = Two.apply(x)
        a.sum().backward()
        return seen, x.grad
    same(fn)


def test_set_materialize_grads_false_gives_none():
    def fn(lib):
        seen = []

        class Two(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.set_materialize_grads(False)
                return x * 2, x * 3

            @staticmethod
            def backward(ctx, g1, g2):
                seen.append((g1, g2))
                out = g1 * 2 if g1 is not None else 0
                return out + g2 * 3 if g2 is not None else out

        x = leaf(lib, X3)
        a, b = Two.apply(x)
        a.sum().backward()
        return seen, x.grad
    out = same(fn)
    assert out[0][0][1] is None


def test_once_differentiable_first_order():
    def fn(lib):
        class Square(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return x * x

            @staticmethod
            @lib.autograd.function.once_differentiable
            def backward(ctx, g):
                x, = ctx.saved_tensors
                return 2 * x * g

        x = leaf(lib, X3)
        Square.apply(x).sum().backward()
        return x.grad
    same(fn)


def test_once_differentiable_twice_error():
    def fn(lib):
        class Square(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return x * x

            @staticmethod
            @lib.autograd.function.once_differentiable
            def backward(ctx, g):
                x, = ctx.saved_tensors
                return 2 * x * g

        x = leaf(lib, X3)
        g, = lib.autograd.grad(Square.apply(x).sum(), x, create_graph=True)
        return g, raises(lambda: g.sum().backward())
    same(fn)


def test_function_used_twice():
    def fn(lib):
        Cube = cube(lib)
        x = leaf(lib, X3)
        y = Cube.apply(x) + Cube.apply(x * 2)
        y.sum().backward()
        return y, x.grad, [name_of(n) for n, _ in y.grad_fn.next_functions]
    same(fn)


def test_function_chained():
    def fn(lib):
        Cube = cube(lib)
        x = leaf(lib, [0.5, 1.0, -0.25])
        y = Cube.apply(Cube.apply(x))
        y.sum().backward()
        return y, x.grad
    same(fn)


def test_double_backward_through_function():
    def fn(lib):
        Cube = cube(lib)
        x = leaf(lib, X3)
        g1, = lib.autograd.grad(Cube.apply(x).sum(), x, create_graph=True)
        g2, = lib.autograd.grad(g1.sum(), x)
        return g1, g1.requires_grad, g2
    same(fn)


def test_wrong_number_of_gradients():
    def fn(lib):
        class Bad(lib.autograd.Function):
            @staticmethod
            def forward(ctx, w, x, b):
                return w * x + b

            @staticmethod
            def backward(ctx, g):
                return g, g

        w, x, b = leaf(lib, X3), leaf(lib, X3), leaf(lib, X3)
        return raises(Bad.apply(w, x, b).sum().backward)
    out = same(fn)
    assert out[2] == "function BadBackward returned an incorrect number of gradients (expected 3, got 2)"


def test_too_many_gradients_error():
    def fn(lib):
        class Bad(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2

            @staticmethod
            def backward(ctx, g):
                return g, g

        x = leaf(lib, X3)
        return raises(Bad.apply(x).sum().backward)
    same(fn)


def test_extra_none_gradients_allowed():
    def fn(lib):
        class Extra(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2

            @staticmethod
            def backward(ctx, g):
                return g * 2, None, None

        x = leaf(lib, X3)
        Extra.apply(x).sum().backward()
        return x.grad
    same(fn)


def test_gradient_of_wrong_shape_error():
    def fn(lib):
        class BadShape(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2

            @staticmethod
            def backward(ctx, g):
                return g[:2]

        x = leaf(lib, X3)
        return raises(BadShape.apply(x).sum().backward)
    same(fn)


def test_saved_tensors_freed_after_backward():
    def fn(lib):
        seen = []

        class Keep(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                seen.append(ctx)
                return x * 2

            @staticmethod
            def backward(ctx, g):
                return g * 2

        x = leaf(lib, X3)
        y = Keep.apply(x)
        before = seen[0].saved_tensors
        y.sum().backward()
        return before, raises(lambda: seen[0].saved_tensors)
    same(fn)


def test_save_for_backward_with_none():
    def fn(lib):
        class F(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x, None)
                return x * 2

            @staticmethod
            def backward(ctx, g):
                x, nothing = ctx.saved_tensors
                return g * 2 + (0 if nothing is None else 1)

        x = leaf(lib, X3)
        F.apply(x).sum().backward()
        return x.grad
    same(fn)


def test_saved_input_modified_in_place_error():
    def fn(lib):
        Cube = cube(lib)
        x = leaf(lib, X3)
        h = x * 1
        y = Cube.apply(h)
        h.add_(1)
        return raises(y.sum().backward)
    same(fn)


def test_integer_output_is_not_differentiable():
    def fn(lib):
        class ValueAndIndex(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2, x.argmax()

            @staticmethod
            def backward(ctx, g, gi):
                return g * 2

        x = leaf(lib, X3)
        v, i = ValueAndIndex.apply(x)
        v.sum().backward()
        return v, i, i.requires_grad, i.grad_fn, x.grad
    same(fn)


def test_ctx_is_grad_fn():
    def fn(lib):
        seen = []

        class F(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                seen.append(ctx)
                return x * 2

            @staticmethod
            def backward(ctx, g):
                return g * 2

        x = leaf(lib, X3)
        y = F.apply(x)
        return seen[0] is y.grad_fn
    same(fn)


def test_setup_context_style():
    def fn(lib):
        class MulConst(lib.autograd.Function):
            @staticmethod
            def forward(x, k):
                return x * k

            @staticmethod
            def setup_context(ctx, inputs, output):
                x, k = inputs
                ctx.k = k
                ctx.save_for_backward(x)

            @staticmethod
            def backward(ctx, g):
                x, = ctx.saved_tensors
                return g * ctx.k, None

        x = leaf(lib, X3)
        y = MulConst.apply(x, 4.0)
        y.sum().backward()
        return y, x.grad, name_of(y.grad_fn)
    same(fn)


def test_setup_context_receives_output():
    def fn(lib):
        seen = []

        class Exp(lib.autograd.Function):
            @staticmethod
            def forward(x):
                return x.exp()

            @staticmethod
            def setup_context(ctx, inputs, output):
                seen.append((len(inputs), output))
                ctx.save_for_backward(output)

            @staticmethod
            def backward(ctx, g):
                out, = ctx.saved_tensors
                return g * out

        x = leaf(lib, X3)
        Exp.apply(x).sum().backward()
        return seen, x.grad
    same(fn)


def test_function_returning_input_unchanged():
    def fn(lib):
        class Identity(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x

            @staticmethod
            def backward(ctx, g):
                return g * 5

        x = leaf(lib, X3)
        y = Identity.apply(x)
        y.sum().backward()
        return y is x, name_of(y.grad_fn), y.is_leaf, x.grad
    same(fn)


def test_function_hooks_and_retain_grad_on_output():
    def fn(lib):
        Cube = cube(lib)
        x = leaf(lib, X3)
        y = Cube.apply(x)
        y.retain_grad()
        y.register_hook(lambda g: g * 2)
        y.sum().backward()
        return y.grad, x.grad
    same(fn)


def test_backward_returns_int_dtype_mismatch_cast():
    def fn(lib):
        class Half(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 0.5

            @staticmethod
            def backward(ctx, g):
                return g.double() * 0.5

        x = leaf(lib, X3)
        Half.apply(x).sum().backward()
        return x.grad
    same(fn)


def test_forward_not_implemented():
    def fn(lib):
        class Nothing(lib.autograd.Function):
            pass

        return raises(Nothing.apply, lib.ones(1))
    same(fn)


def test_multiply_add_with_float64_inputs():
    def fn(lib):
        MultiplyAdd = multiply_add(lib)
        w, x, b = (lib.tensor(np.array(X3), requires_grad=True) for _ in range(3))
        y = MultiplyAdd.apply(w, x, b)
        y.sum().backward()
        return y, w.grad, b.grad
    same(fn)

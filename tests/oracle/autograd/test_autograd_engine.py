"""The backward engine, autograd.grad, higher-order gradients, saved tensors, graph structure and hooks vs torch."""


import numpy as np
import pytest

import numgrad
from helpers.autograd_compare import arr, caught_warnings, edges, fixed, leaf, name_of, raises, same, tree

X3 = [1.0, -2.0, 0.5]
X5 = fixed(5, 0)


# ---- backward ------------------------------------------------------------------------------------

def test_backward_scalar():
    def fn(lib):
        x = leaf(lib, X3)
        y = (x * x + 3 * x).sum()
        r = y.backward()
        return r, y, x.grad, x.grad.requires_grad, x.grad.is_leaf
    same(fn)


def test_backward_with_gradient():
    def fn(lib):
        x = leaf(lib, X3)
        y = x * 2 + x ** 2
        y.backward(gradient=lib.tensor(arr([1.0, 0.1, 0.01])))
        return x.grad
    same(fn)


def test_backward_gradient_positional_and_matrix():
    def fn(lib):
        x = leaf(lib, fixed((2, 3), 1))
        y = x.exp() * 3
        y.backward(lib.tensor(fixed((2, 3), 2)))
        return x.grad
    same(fn)


def test_autograd_backward_function():
    def fn(lib):
        x = leaf(lib, X3)
        a, b = x * 2, (x ** 2).sum()
        lib.autograd.backward([a, b], [lib.ones(3), None])
        return x.grad
    same(fn)


def test_retain_graph_second_backward_accumulates():
    def fn(lib):
        x = leaf(lib, X3)
        y = (x.sin() * x).sum()
        y.backward(retain_graph=True)
        first = x.grad.clone()
        y.backward()
        return first, x.grad
    same(fn)


def test_second_backward_without_retain_graph_raises():
    def fn(lib):
        x = leaf(lib, X3)
        y = (x * x).sum()
        y.backward()
        return raises(y.backward), x.grad
    out = same(fn)
    assert out[0][0] == "raises" and "Trying to backward through the graph a second time" in out[0][2]


def test_second_backward_of_exp_without_retain_graph_raises():
    def fn(lib):
        x = leaf(lib, X3)
        y = x.exp().sum()
        y.backward()
        return raises(y.backward)
    same(fn)


def test_second_backward_through_graph_without_saved_tensors():
    # x + 2 saves nothing, so torch lets a second backward through
    def fn(lib):
        x = leaf(lib, X3)
        y = (x + 2).sum()
        y.backward()
        return raises(y.backward), x.grad
    same(fn)


def test_accumulation_across_backward_calls():
    def fn(lib):
        x = leaf(lib, X3)
        (x * 3).sum().backward()
        first = x.grad.clone()
        (x * x).sum().backward()
        return first, x.grad
    same(fn)


def test_grad_reset_to_none():
    def fn(lib):
        x = leaf(lib, X3)
        (x * 3).sum().backward()
        x.grad = None
        before = x.grad
        (x * x).sum().backward()
        return before, x.grad
    same(fn)


def test_grad_zero_():
    def fn(lib):
        x = leaf(lib, X3)
        (x * 3).sum().backward()
        g = x.grad
        r = x.grad.zero_()
        (x * x).sum().backward()
        return r, g is x.grad, x.grad
    same(fn)


def test_grad_data_zero_():
    def fn(lib):
        x = leaf(lib, X3)
        (x * 3).sum().backward()
        x.grad.data.zero_()
        zeroed = x.grad.clone()
        (x * 5).sum().backward()
        return zeroed, x.grad
    same(fn)


def test_grad_is_not_aliased_to_incoming_gradient():
    # .grad must be a fresh tensor: accumulating into it must not change the gradient passed in
    def fn(lib):
        x = leaf(lib, X3)
        g = lib.tensor(arr([1.0, 2.0, 3.0]))
        (x * 1).backward(g)
        (x * 1).backward(g)
        return g, x.grad
    same(fn)


def test_non_scalar_output_error():
    def fn(lib):
        x = leaf(lib, X3)
        y = x * 2
        return raises(y.backward)
    out = same(fn)
    assert out[2] == "grad can be implicitly created only for scalar outputs"


def test_no_grad_fn_error():
    def fn(lib):
        x = lib.tensor(arr(X3))
        return raises(x.sum().backward)
    out = same(fn)
    assert out[2] == "element 0 of tensors does not require grad and does not have a grad_fn"


def test_no_grad_fn_error_second_element():
    def fn(lib):
        x = leaf(lib, X3)
        a = lib.tensor(arr(X3)).sum()
        return raises(lib.autograd.backward, [x.sum(), a])
    same(fn)


def test_gradient_shape_mismatch():
    def fn(lib):
        x = leaf(lib, X3)
        y = x * 2
        return raises(y.backward, lib.ones(2))
    out = same(fn)
    assert out[1] == "RuntimeError" and "Mismatch in shape" in out[2]


def test_gradient_shape_mismatch_scalar_root():
    def fn(lib):
        x = leaf(lib, X3)
        return raises(x.sum().backward, lib.ones(3))
    same(fn)


def test_backward_of_one_element_non_scalar():
    def fn(lib):
        x = leaf(lib, X3)
        y = (x * x).sum().reshape(1, 1)
        y.backward()
        return y.shape, x.grad
    same(fn)


def test_backward_gradient_of_other_dtype():
    def fn(lib):
        x = leaf(lib, X3)
        y = x * 2
        y.backward(lib.tensor(np.array([1.0, 2.0, 3.0])))
        return x.grad
    same(fn)


def test_float64_leaf_grad_dtype():
    def fn(lib):
        x = lib.tensor(np.array(X3), requires_grad=True)
        (x * 2.5 + x.exp()).sum().backward()
        return x.grad
    same(fn)


def test_mixed_dtype_graph_grads_keep_leaf_dtypes():
    def fn(lib):
        a = leaf(lib, X3)
        b = lib.tensor(np.array([0.5, 1.5, 2.5]), requires_grad=True)
        y = (a * b).sum()
        y.backward()
        return y, a.grad, b.grad
    same(fn)


def test_backward_on_leaf_itself():
    def fn(lib):
        x = leaf(lib, X3)
        x.backward(lib.tensor(arr([1.0, 2.0, 3.0])))
        return x.grad
    same(fn)


def test_backward_inputs_accumulates_only_there():
    def fn(lib):
        x, w = leaf(lib, X3), leaf(lib, [0.5, 0.25, 2.0])
        y = (x * w).sum()
        y.backward(inputs=[x])
        return x.grad, w.grad
    same(fn)


def test_backward_inputs_non_leaf():
    def fn(lib):
        x = leaf(lib, X3)
        h = x * 2
        y = (h * h).sum()
        y.backward(inputs=[h])
        return x.grad, h.grad, h.retains_grad
    same(fn)


def test_backward_inputs_empty_error():
    def fn(lib):
        x = leaf(lib, X3)
        return raises((x * 2).sum().backward, inputs=[])
    same(fn)


# ---- diamonds, shared subexpressions, long chains --------------------------------------------------

def test_diamond_graph():
    def fn(lib):
        x = leaf(lib, X3)
        a = x.sin()
        b = x * 3
        y = (a * b).sum()
        y.backward()
        return x.grad, tree(y.grad_fn)
    same(fn)


def test_shared_subexpression():
    def fn(lib):
        x = leaf(lib, X3)
        h = x.exp()
        y = (h * h + h.sin() + h).sum()
        y.backward()
        return x.grad, tree(y.grad_fn)
    same(fn)


def test_same_tensor_twice_in_one_op():
    def fn(lib):
        x = leaf(lib, X3)
        y = (x * x).sum()
        y.backward()
        return x.grad, edges(y.grad_fn.next_functions[0][0])
    same(fn)


def test_two_leaves_broadcast():
    def fn(lib):
        a = leaf(lib, fixed((2, 3), 3))
        b = leaf(lib, fixed((3,), 4))
        ((a * b + b) / (a.abs() + 1)).sum().backward()
        return a.grad, b.grad
    same(fn)


def test_long_chain_no_recursion_error():
    n = 100_000
    x = numgrad.tensor(arr([1.0]), requires_grad=True)
    y = x
    for _ in range(n):
        y = y * 1.0001
    y.sum().backward()
    # the factor is rounded to float32 once; rounding of the 100 000 products stays inside 1e-3
    expected = float(np.float32(1.0001)) ** n
    assert y.item() == pytest.approx(expected, rel=1e-3)
    assert x.grad.item() == pytest.approx(expected, rel=1e-3)
    assert name_of(y.grad_fn) == "MulBackward0"


def test_long_add_chain_with_wide_fan_in():
    # one leaf feeding 50 000 nodes: deep chain and a wide fan-in into one AccumulateGrad
    n = 50_000
    x = numgrad.tensor(arr([2.0]), requires_grad=True)
    y = numgrad.tensor(arr([0.0]))
    for _ in range(n):
        y = y + x
    y.backward()
    assert x.grad.tolist() == [float(n)]
    assert y.item() == pytest.approx(2.0 * n)


# ---- higher order ----------------------------------------------------------------------------------

def test_third_derivative_of_cube_via_grad():
    def fn(lib):
        x = leaf(lib, X3)
        y = (x ** 3).sum()
        g1, = lib.autograd.grad(y, x, create_graph=True)
        g2, = lib.autograd.grad(g1.sum(), x, create_graph=True)
        g3, = lib.autograd.grad(g2.sum(), x)
        return g1, g2, g3
    same(fn)


def test_second_derivative_graph_names():
    # only the top node: the inner shape of a derivative's graph is an implementation choice
    def fn(lib):
        x = leaf(lib, X3)
        g1, = lib.autograd.grad((x ** 3).sum(), x, create_graph=True)
        return g1, g1.grad_fn.name(), g1.grad_fn.next_functions[0]
    same(fn)


def test_second_derivative_of_sin():
    def fn(lib):
        x = leaf(lib, X5)
        g1, = lib.autograd.grad(x.sin().sum(), x, create_graph=True)
        g2, = lib.autograd.grad(g1.sum(), x)
        return g1, g2
    same(fn)


def test_second_derivative_of_exp_tanh_sigmoid():
    def fn(lib):
        x = leaf(lib, X3)
        out = []
        for f in (lambda t: t.exp(), lambda t: t.tanh(), lambda t: t.sigmoid(), lambda t: t.sqrt()):
            g1, = lib.autograd.grad(f(x.abs() + 0.5).sum(), x, create_graph=True)
            g2, = lib.autograd.grad(g1.sum(), x)
            out.append((g1, g2))
        return out
    same(fn, rtol=1e-4)


def test_higher_order_exp_log_chain():
    def fn(lib):
        x = leaf(lib, [0.5, 1.5, 3.0])
        y = (x.exp() * x.log() + (x * x).log()).sum()
        g1, = lib.autograd.grad(y, x, create_graph=True)
        g2, = lib.autograd.grad(g1.sum(), x, create_graph=True)
        g3, = lib.autograd.grad(g2.sum(), x)
        return g1, g2, g3
    same(fn, rtol=1e-4)


def test_higher_order_sum_mean_softmax():
    def fn(lib):
        x = leaf(lib, fixed((2, 4), 5))
        w = lib.tensor(fixed((2, 4), 6))
        y = (x.softmax(dim=1) * w).sum() + (x * x).mean()
        g1, = lib.autograd.grad(y, x, create_graph=True)
        g2, = lib.autograd.grad((g1 * g1).sum(), x)
        return y, g1, g2
    same(fn, rtol=1e-4, atol=1e-5)


def test_double_backward_via_backward_create_graph():
    def fn(lib):
        x = leaf(lib, X3)
        y = (x ** 3).sum()
        y.backward(create_graph=True)
        g = x.grad
        first = g.clone()
        x.grad = None
        g.sum().backward()
        return first, g.requires_grad, name_of(g.grad_fn), x.grad
    same(fn, check_warnings=False)


def test_backward_create_graph_warning():
    def fn(lib):
        x = leaf(lib, X3)
        (x ** 3).sum().backward(create_graph=True)
        return x.grad.detach()
    same(fn)


def test_backward_create_graph_accumulates_with_graph():
    def fn(lib):
        x = leaf(lib, X3)
        (x * x).sum().backward(create_graph=True)
        (x * x).sum().backward(create_graph=True)
        return x.grad
    same(fn, check_warnings=False)


def test_grad_create_graph_false_result_is_detached():
    def fn(lib):
        x = leaf(lib, X3)
        g, = lib.autograd.grad((x ** 3).sum(), x)
        return g, g.requires_grad
    same(fn)


def test_hessian_vector_product():
    def fn(lib):
        x = leaf(lib, X3)
        v = lib.tensor(arr([1.0, 0.0, -1.0]))
        y = (x.sin() * x.exp()).sum()
        g, = lib.autograd.grad(y, x, create_graph=True)
        hv, = lib.autograd.grad(g, x, grad_outputs=v)
        return hv
    same(fn, rtol=1e-4)


def test_mixed_second_derivative():
    def fn(lib):
        x, w = leaf(lib, X3), leaf(lib, [0.5, 2.0, -1.0])
        y = (x * x * w).sum()
        gx, = lib.autograd.grad(y, x, create_graph=True)
        gw, = lib.autograd.grad(gx.sum(), w)
        return gx, gw
    same(fn)


# ---- autograd.grad -----------------------------------------------------------------------------

def test_grad_with_grad_outputs():
    def fn(lib):
        x = leaf(lib, X3)
        y = x * x
        g = lib.autograd.grad(y, x, grad_outputs=lib.tensor(arr([1.0, 2.0, 3.0])))
        return g, x.grad
    same(fn)


def test_grad_returns_tuple_for_single_tensor_input():
    def fn(lib):
        x = leaf(lib, X3)
        g = lib.autograd.grad((x * 2).sum(), x)
        return type(g).__name__, len(g), g[0]
    same(fn)


def test_grad_multiple_outputs_and_inputs():
    def fn(lib):
        x, w = leaf(lib, X3), leaf(lib, [0.5, 0.25, 2.0])
        a = (x * w).sum()
        b = (x.exp() + w).sum()
        return lib.autograd.grad([a, b], [x, w])
    same(fn)


def test_grad_multiple_outputs_with_grad_outputs():
    def fn(lib):
        x = leaf(lib, X3)
        a, b = x * 2, x * x
        return lib.autograd.grad((a, b), x, grad_outputs=(lib.ones(3), lib.tensor(arr([1.0, 0.0, 2.0]))))
    same(fn)


def test_grad_allow_unused():
    def fn(lib):
        x, z = leaf(lib, X3), leaf(lib, [1.0])
        y = (x * 2).sum()
        return lib.autograd.grad(y, [x, z], allow_unused=True)
    out = same(fn)
    assert out[1] is None


def test_grad_unused_error():
    def fn(lib):
        x, z = leaf(lib, X3), leaf(lib, [1.0])
        y = (x * 2).sum()
        return raises(lib.autograd.grad, y, [x, z])
    out = same(fn)
    assert "appears to not have been used in the graph" in out[2]


def test_grad_materialize_grads():
    def fn(lib):
        x, z = leaf(lib, X3), leaf(lib, [1.0, 2.0])
        y = (x * 2).sum()
        return lib.autograd.grad(y, [x, z], materialize_grads=True)
    same(fn)


def test_grad_non_leaf_inputs():
    def fn(lib):
        x = leaf(lib, X3)
        h = x.exp()
        y = (h * h).sum()
        gh, gx = lib.autograd.grad(y, [h, x])
        return gh, gx, x.grad
    same(fn)


def test_grad_does_not_touch_leaf_grad():
    def fn(lib):
        x, w = leaf(lib, X3), leaf(lib, X3)
        y = (x * w).sum()
        lib.autograd.grad(y, [x])
        return x.grad, w.grad
    same(fn)


def test_grad_input_not_requiring_grad():
    def fn(lib):
        x = leaf(lib, X3)
        c = lib.tensor(arr(X3))
        return raises(lib.autograd.grad, (x * c).sum(), c)
    same(fn)


def test_grad_retain_graph_allows_second_call():
    def fn(lib):
        x = leaf(lib, X3)
        y = (x * x).sum()
        g1 = lib.autograd.grad(y, x, retain_graph=True)
        g2 = lib.autograd.grad(y, x)
        third = raises(lib.autograd.grad, y, x)
        return g1, g2, third
    same(fn)


def test_grad_of_linear_function_with_create_graph():
    # the gradient of a linear function is constant: it does not require grad even with create_graph
    def fn(lib):
        x = leaf(lib, X3)
        g, = lib.autograd.grad((x * 2).sum(), x, create_graph=True)
        return g, g.requires_grad, raises(lambda: g.sum().backward())
    same(fn)


def test_grad_wrt_output_itself():
    def fn(lib):
        x = leaf(lib, X3)
        y = (x * 3).sum()
        return lib.autograd.grad(y, y)
    same(fn)


def test_grad_non_scalar_output_error():
    def fn(lib):
        x = leaf(lib, X3)
        return raises(lib.autograd.grad, x * 2, x)
    same(fn)


# ---- saved tensors ------------------------------------------------------------------------------

def test_saved_tensors_freed_after_backward():
    def fn(lib):
        x = leaf(lib, X3)
        y = x * x
        before = y.grad_fn._saved_self
        y.sum().backward()
        return before, raises(lambda: y.grad_fn._saved_self), raises(lambda: y.grad_fn._saved_other)
    out = same(fn)
    assert out[1][0] == "raises"


def test_saved_tensors_kept_with_retain_graph():
    def fn(lib):
        x = leaf(lib, X3)
        y = x.exp()
        y.sum().backward(retain_graph=True)
        return y.grad_fn._saved_result
    same(fn)


def test_saved_self_and_other_of_mul():
    def fn(lib):
        x, w = leaf(lib, X3), leaf(lib, [4.0, 5.0, 6.0])
        y = x * w
        node = y.grad_fn
        return (node._saved_self, node._saved_other, node._saved_self is x, node._saved_other is w,
                node._saved_self.requires_grad)
    same(fn)


def test_saved_self_identity_for_pow():
    def fn(lib):
        x = leaf(lib, X3)
        y = x ** 3
        node = y.grad_fn
        return node._saved_self is x, node._saved_self, node._saved_exponent, type(node._saved_exponent).__name__
    out = same(fn)
    assert out[0] is True


def test_saved_result_of_exp_equal_but_not_identical():
    def fn(lib):
        x = leaf(lib, X3)
        y = x.exp()
        r = y.grad_fn._saved_result
        return y is r, r, bool(lib.equal(r, y)), name_of(r.grad_fn)
    out = same(fn)
    assert out[0] is False


def test_saved_result_of_tanh_and_sigmoid():
    def fn(lib):
        x = leaf(lib, X3)
        return x.tanh().grad_fn._saved_result, x.sigmoid().grad_fn._saved_result
    same(fn)


def test_saved_exponent_float():
    def fn(lib):
        x = leaf(lib, [1.0, 2.0])
        e = (x ** 2.5).grad_fn._saved_exponent
        return e, type(e).__name__
    same(fn)


def test_saved_other_absent_for_scalar_add():
    def fn(lib):
        x = leaf(lib, X3)
        return raises(lambda: (x + 2).grad_fn._saved_other)
    out = same(fn)
    assert out[1] == "AttributeError"


def test_saved_self_of_sin_is_input():
    def fn(lib):
        x = leaf(lib, X3)
        y = x.sin()
        return y.grad_fn._saved_self is x, y.grad_fn._saved_self
    same(fn)


# ---- node structure -----------------------------------------------------------------------------

def test_grad_fn_names():
    def fn(lib):
        x = leaf(lib, X3)
        ys = [x + 2, x - 1, x * 3, x / 2, -x, x ** 2, x.exp(), x.sin(), x.sum(), x.mean(), 2 - x, x + x,
              x * x, x / x, x.abs(), x.relu(), x.tanh(), x.sigmoid(), x.clamp(0, 1), 2 / x, 2 ** x]
        return [(y.grad_fn.name(), name_of(y.grad_fn)) for y in ys]
    same(fn)


def test_next_functions_add_scalar():
    def fn(lib):
        x = leaf(lib, X3)
        y = x + 2
        nf = y.grad_fn.next_functions
        return edges(y.grad_fn), nf[1][0] is None, type(nf).__name__, type(nf[0]).__name__
    out = same(fn)
    assert out[0] == (("AccumulateGrad", 0), (None, 0))


def test_next_functions_mul_scalar_and_tensors():
    def fn(lib):
        x, w = leaf(lib, X3), leaf(lib, X3)
        c = lib.tensor(arr(X3))
        return edges((x * 3).grad_fn), edges((x * w).grad_fn), edges((x * c).grad_fn), edges((c * x).grad_fn)
    same(fn)


def test_next_functions_nested():
    def fn(lib):
        x = leaf(lib, X3)
        y = x + 2
        z = y * y * 3
        out = z.mean()
        return tree(out.grad_fn)
    same(fn)


def test_accumulate_grad_variable_is_leaf():
    def fn(lib):
        x = leaf(lib, X3)
        y = x * 2
        acc = y.grad_fn.next_functions[0][0]
        acc2 = (x + 1).grad_fn.next_functions[0][0]
        return acc.variable is x, acc.name(), acc is acc2, acc.next_functions
    out = same(fn)
    assert out[0] is True


def test_grad_fn_repr():
    def fn(lib):
        x = leaf(lib, X3)
        y = x + 2
        return repr(y.grad_fn), str(y.grad_fn), repr(y.grad_fn.next_functions[0][0])
    same(fn)


def test_leaf_and_non_leaf_flags():
    def fn(lib):
        x = leaf(lib, X3)
        c = lib.tensor(arr(X3))
        y = x * c
        z = c * 2
        return (x.is_leaf, y.is_leaf, c.is_leaf, z.is_leaf, x.grad_fn, z.grad_fn, z.requires_grad,
                y.requires_grad)
    same(fn)


def test_node_callable_directly():
    def fn(lib):
        x = leaf(lib, X3)
        y = x * 3
        return y.grad_fn(lib.ones(3))
    same(fn)


# ---- hooks --------------------------------------------------------------------------------------

def test_hook_on_leaf_sees_gradient():
    def fn(lib):
        seen = []
        x = leaf(lib, X3)
        x.register_hook(lambda g: seen.append(g.clone()))
        (x * x).sum().backward()
        return seen, x.grad
    same(fn)


def test_hook_on_leaf_replaces_gradient():
    def fn(lib):
        x = leaf(lib, X3)
        x.register_hook(lambda g: g * 10)
        (x * x).sum().backward()
        return x.grad
    same(fn)


def test_hook_on_non_leaf_replaces_gradient_flowing_down():
    def fn(lib):
        seen = []
        x = leaf(lib, X3)
        h = x * 2
        h.register_hook(lambda g: seen.append(g.clone()) or g * 0.5)
        (h * h).sum().backward()
        return seen, x.grad
    same(fn)


def test_hook_handle_remove():
    def fn(lib):
        calls = []
        x = leaf(lib, X3)
        handle = x.register_hook(lambda g: calls.append(1) or g * 100)
        (x * 1).sum().backward()
        handle.remove()
        x.grad = None
        (x * 1).sum().backward()
        return len(calls), x.grad
    same(fn)


def test_hooks_order_and_chaining():
    def fn(lib):
        order = []
        x = leaf(lib, X3)
        h = x * 1
        h.register_hook(lambda g: order.append(("h1", g.tolist())) or g + 1)
        h.register_hook(lambda g: order.append(("h2", g.tolist())) or g * 2)
        x.register_hook(lambda g: order.append(("x", g.tolist())))
        (h * 3).sum().backward()
        return order, x.grad
    same(fn)


def test_hook_called_once_per_backward_with_summed_gradient():
    def fn(lib):
        seen = []
        x = leaf(lib, X3)
        h = x * 1
        h.register_hook(lambda g: seen.append(g.tolist()))
        (h * 2 + h * 3).sum().backward()
        return seen
    same(fn)


def test_leaf_hook_called_once_with_summed_gradient():
    def fn(lib):
        seen = []
        x = leaf(lib, X3)
        x.register_hook(lambda g: seen.append(g.tolist()))
        (x * 2 + x.sin()).sum().backward()
        return seen, x.grad
    same(fn)


def test_hook_changing_shape_error():
    def fn(lib):
        x = leaf(lib, X3)
        h = x * 2
        h.register_hook(lambda g: g[:2])
        return raises(h.sum().backward)
    same(fn)


def test_hook_handle_remove_twice_and_context():
    def fn(lib):
        calls = []
        x = leaf(lib, X3)
        h1 = x.register_hook(lambda g: calls.append("a"))
        h1.remove()
        h1.remove()
        (x * 1).sum().backward()
        return calls, x.grad
    same(fn)


def test_hooks_run_with_create_graph():
    def fn(lib):
        x = leaf(lib, X3)
        h = x * x
        h.register_hook(lambda g: g * 3)
        g, = lib.autograd.grad(h.sum(), x, create_graph=True)
        g2, = lib.autograd.grad(g.sum(), x)
        return g, g2
    same(fn)


def test_grad_fn_metadata_is_dict():
    def fn(lib):
        y = leaf(lib, X3) * 2
        y.grad_fn.metadata["k"] = 1
        return y.grad_fn.metadata, type(y.grad_fn.metadata).__name__
    same(fn)


def test_hook_on_tensor_not_requiring_grad_error():
    def fn(lib):
        x = lib.tensor(arr(X3))
        return raises(x.register_hook, lambda g: g)
    same(fn)


def test_retain_grad_on_non_leaf():
    def fn(lib):
        x = leaf(lib, X3)
        h = x * 2
        h.retain_grad()
        y = (h * h).sum()
        y.backward()
        return h.retains_grad, h.grad, x.grad
    same(fn)


def test_retain_grad_accumulates():
    def fn(lib):
        x = leaf(lib, X3)
        h = x * 2
        h.retain_grad()
        y = (h * h).sum()
        y.backward(retain_graph=True)
        y.backward()
        return h.grad
    same(fn)


def test_non_leaf_grad_warns():
    def fn(lib):
        x = leaf(lib, X3)
        h = x * 2
        h.sum().backward()
        g, warns = caught_warnings(lambda: h.grad)
        return g, warns
    out = same(fn)
    assert out[1] and out[1][0][0] == "UserWarning"
    assert "not a leaf Tensor is being accessed" in out[1][0][1]


def test_retain_grad_on_leaf_is_noop():
    def fn(lib):
        x = leaf(lib, X3)
        x.retain_grad()
        (x * 2).sum().backward()
        return x.retains_grad, x.grad
    same(fn)


def test_retain_grad_sees_hook_modified_gradient():
    def fn(lib):
        x = leaf(lib, X3)
        h = x * 1
        h.retain_grad()
        h.register_hook(lambda g: g * 2)
        (h * 3).sum().backward()
        return h.grad, x.grad
    same(fn)


def test_node_register_hook():
    def fn(lib):
        seen = []
        x = leaf(lib, X3)
        y = x * 3
        y.grad_fn.register_hook(lambda gi, go: seen.append((gi, go)))
        y.sum().backward()
        return seen
    same(fn)


def test_node_register_hook_replaces_grad_inputs():
    def fn(lib):
        x = leaf(lib, X3)
        y = x * 3
        y.grad_fn.register_hook(lambda gi, go: (gi[0] * 0 + 1, None))
        y.sum().backward()
        return x.grad
    same(fn)


def test_node_register_prehook():
    def fn(lib):
        seen = []
        x = leaf(lib, X3)
        y = x * 3
        y.grad_fn.register_prehook(lambda go: seen.append(go) or (go[0] * 2,))
        y.sum().backward()
        return seen, x.grad
    same(fn)


def test_node_hook_handle_remove():
    def fn(lib):
        calls = []
        x = leaf(lib, X3)
        y = x * 3
        handle = y.grad_fn.register_prehook(lambda go: calls.append(1))
        handle.remove()
        y.sum().backward()
        return calls, x.grad
    same(fn)

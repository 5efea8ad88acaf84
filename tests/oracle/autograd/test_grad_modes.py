"""Grad modes (no_grad, enable_grad, set_grad_enabled, inference_mode), detach and requires_grad flags vs torch."""

import numpy as np

import numgrad
from helpers.autograd_compare import LIBS, arr, leaf, raises, same

X3 = [1.0, -2.0, 0.5]


# ---- no_grad / enable_grad / set_grad_enabled --------------------------------------------------

def test_no_grad_context():
    def fn(lib):
        x = leaf(lib, X3)
        with lib.no_grad():
            inside = lib.is_grad_enabled()
            y = x * 2
        z = x * 2
        return inside, lib.is_grad_enabled(), y, z, y.requires_grad, y.grad_fn
    same(fn)


def test_no_grad_context_returns_none():
    def fn(lib):
        with lib.no_grad() as ctx:
            return ctx
    same(fn)


def test_no_grad_decorator_with_and_without_call():
    def fn(lib):
        x = leaf(lib, X3)

        @lib.no_grad()
        def f(t):
            return t * 2, lib.is_grad_enabled()

        @lib.no_grad
        def g(t):
            return t * 3, lib.is_grad_enabled()

        return f(x), g(x), lib.is_grad_enabled(), f.__name__, g.__name__
    same(fn)


def test_enable_grad_inside_no_grad():
    def fn(lib):
        x = leaf(lib, X3)
        with lib.no_grad():
            with lib.enable_grad():
                y = x * 2
                inner = lib.is_grad_enabled()
            z = x * 2
            after = lib.is_grad_enabled()
        return y, z, inner, after
    same(fn)


def test_enable_grad_decorator():
    def fn(lib):
        x = leaf(lib, X3)

        @lib.enable_grad()
        def f(t):
            return t * 2

        with lib.no_grad():
            y = f(x)
            state = lib.is_grad_enabled()
        return y, state
    same(fn)


def test_set_grad_enabled_plain_call():
    def fn(lib):
        x = leaf(lib, X3)
        lib.set_grad_enabled(False)
        off = lib.is_grad_enabled()
        y = x * 2
        lib.set_grad_enabled(True)
        z = x * 2
        return off, y, z, lib.is_grad_enabled()
    same(fn)


def test_set_grad_enabled_context():
    def fn(lib):
        x = leaf(lib, X3)
        results = []
        for mode in (False, True):
            with lib.set_grad_enabled(mode):
                results.append((lib.is_grad_enabled(), x * 2))
            results.append(lib.is_grad_enabled())
        with lib.no_grad():
            with lib.set_grad_enabled(True):
                results.append(x * 3)
            results.append(lib.is_grad_enabled())
        return results
    same(fn)


def test_set_grad_enabled_decorator():
    def fn(lib):
        x = leaf(lib, X3)

        @lib.set_grad_enabled(False)
        def f(t):
            return t * 2, lib.is_grad_enabled()

        before = lib.is_grad_enabled()
        return before, f(x), f(x), lib.is_grad_enabled()
    same(fn)


def test_no_grad_object_reused():
    def fn(lib):
        x = leaf(lib, X3)
        ng = lib.no_grad()
        out = []
        for _ in range(2):
            with ng:
                out.append((x * 2).requires_grad)
            out.append(lib.is_grad_enabled())
        return out
    same(fn)


def test_plain_set_grad_enabled_inside_no_grad_is_undone_on_exit():
    def fn(lib):
        with lib.no_grad():
            lib.set_grad_enabled(True)
            inside = lib.is_grad_enabled()
        after = lib.is_grad_enabled()
        with lib.enable_grad():
            lib.set_grad_enabled(False)
        return inside, after, lib.is_grad_enabled()
    same(fn)


def test_nested_modes_restore_on_exception():
    def fn(lib):
        try:
            with lib.no_grad():
                with lib.enable_grad():
                    raise ValueError("boom")
        except ValueError:
            pass
        return lib.is_grad_enabled()
    same(fn)


def test_no_grad_then_backward_of_earlier_graph():
    def fn(lib):
        x = leaf(lib, X3)
        y = (x * x).sum()
        with lib.no_grad():
            y.backward()
            inside = x.grad.clone()
        return inside, x.grad
    same(fn)


def test_no_grad_factory_functions_keep_requires_grad():
    def fn(lib):
        with lib.no_grad():
            a = lib.ones(2, requires_grad=True)
            b = lib.tensor(arr(X3), requires_grad=True)
        return a, b, a.is_leaf
    same(fn)


def test_no_grad_in_place_on_leaf():
    def fn(lib):
        w = leaf(lib, X3)
        with lib.no_grad():
            w.mul_(2)
            w += 1
        return w, w.requires_grad, w.is_leaf, w.grad_fn, w._version
    same(fn)


# ---- inference_mode -----------------------------------------------------------------------------

def test_inference_mode_created_tensors():
    def fn(lib):
        x = leaf(lib, X3)
        with lib.inference_mode():
            a = lib.ones(3)
            b = x * 2
            flags = (lib.is_grad_enabled(), lib.is_inference_mode_enabled())
        return (a.is_inference(), b.is_inference(), b.requires_grad, b.grad_fn, x.is_inference(), flags,
                lib.is_inference_mode_enabled(), lib.is_grad_enabled(), b)
    same(fn)


def test_inference_mode_decorator():
    def fn(lib):
        @lib.inference_mode()
        def f():
            return lib.ones(2), lib.is_inference_mode_enabled()

        @lib.inference_mode
        def g():
            return lib.zeros(2), lib.is_inference_mode_enabled()

        (a, fa), (b, fb) = f(), g()
        return a.is_inference(), fa, b.is_inference(), fb, lib.is_inference_mode_enabled()
    same(fn)


def test_inference_mode_false():
    def fn(lib):
        with lib.inference_mode(False):
            a = lib.ones(2)
            state = (lib.is_inference_mode_enabled(), lib.is_grad_enabled())
        return a.is_inference(), state
    same(fn)


def test_inference_tensor_saved_for_backward_error():
    def fn(lib):
        with lib.inference_mode():
            a = lib.tensor(arr(X3))
        w = leaf(lib, [1.0, 2.0, 3.0])
        return raises(lambda: w * a)
    out = same(fn)
    assert out[0] == "raises" and out[2].startswith("Inference tensors cannot be saved for backward.")


def test_inference_tensor_not_saved_is_fine():
    def fn(lib):
        with lib.inference_mode():
            a = lib.tensor(arr(X3))
        w = leaf(lib, [1.0, 2.0, 3.0])
        y = w + a  # add saves neither operand
        y.sum().backward()
        return y, w.grad
    same(fn)


def test_inference_tensor_in_place_outside_error():
    def fn(lib):
        with lib.inference_mode():
            a = lib.ones(3)
        # only the errors: torch writes the data before its version-counter check raises
        return raises(a.add_, 1), raises(a.mul_, 2), raises(a.zero_), raises(a.copy_, lib.zeros(3))
    out = same(fn)
    assert out[0][0] == "raises"


def test_inference_tensor_in_place_inside_is_fine():
    def fn(lib):
        with lib.inference_mode():
            a = lib.ones(3)
            a.add_(1)
        return a
    same(fn)


def test_inference_tensor_clone_outside_is_normal():
    def fn(lib):
        with lib.inference_mode():
            a = lib.ones(3)
        b = a.clone()
        w = leaf(lib, X3)
        y = (w * b).sum()
        y.backward()
        return b.is_inference(), w.grad
    same(fn)


def test_inference_tensor_requires_grad_error():
    def fn(lib):
        with lib.inference_mode():
            a = lib.ones(3)
        return raises(a.requires_grad_), a.requires_grad
    same(fn)


# ---- detach, requires_grad -----------------------------------------------------------------------

def test_detach():
    def fn(lib):
        x = leaf(lib, X3)
        y = x * 2
        d = y.detach()
        return d, d.requires_grad, d.is_leaf, d.grad_fn, y.requires_grad
    same(fn)


def test_detach_shares_storage_and_version():
    def fn(lib):
        x = leaf(lib, X3)
        y = x * 2
        d = y.detach()
        d.add_(1)
        return y, d, y._version, d._version
    same(fn)


def test_detach_blocks_gradient():
    def fn(lib):
        x = leaf(lib, X3)
        y = (x * x.detach()).sum()
        y.backward()
        return x.grad
    same(fn)


def test_detach_in_place():
    def fn(lib):
        x = leaf(lib, X3)
        y = x * 2
        r = y.detach_()
        return r is y, y, y.requires_grad, y.is_leaf, y.grad_fn
    same(fn)


def test_requires_grad_default_and_setter():
    def fn(lib):
        x = lib.tensor(arr(X3))
        before = x.requires_grad
        r = x.requires_grad_()
        after = x.requires_grad
        x.requires_grad = False
        return before, r is x, after, x.requires_grad, x.is_leaf
    same(fn)


def test_requires_grad_false_on_leaf_stops_tracking():
    def fn(lib):
        x = leaf(lib, X3)
        x.requires_grad = False
        y = x * 2
        return y.requires_grad, y.grad_fn, raises(y.sum().backward)
    same(fn)


def test_requires_grad_false_on_non_leaf_error():
    def fn(lib):
        x = leaf(lib, X3)
        y = x * 2
        return raises(y.requires_grad_, False), raises(setattr, y, "requires_grad", False)
    out = same(fn)
    assert out[0][2].startswith("you can only change requires_grad flags of leaf variables.")


def test_requires_grad_true_on_non_leaf():
    def fn(lib):
        x = leaf(lib, X3)
        y = x * 2
        return raises(y.requires_grad_, True), y.requires_grad
    same(fn)


def test_requires_grad_on_int_tensor_error():
    def fn(lib):
        i = lib.tensor(np.array([1, 2, 3]))
        return (raises(i.requires_grad_), raises(lib.tensor, [1, 2], requires_grad=True),
                raises(lib.ones, 2, dtype=lib.int64, requires_grad=True), raises(i.requires_grad_, False))
    out = same(fn)
    assert out[0][0] == "raises"


def test_requires_grad_on_bool_tensor_error():
    def fn(lib):
        return raises(lib.tensor(np.array([True])).requires_grad_)
    same(fn)


def test_requires_grad_propagates():
    def fn(lib):
        a = leaf(lib, X3)
        b = lib.tensor(arr(X3))
        return (a + b).requires_grad, (b + b).requires_grad, (b * 2).requires_grad, (a * 0).requires_grad
    same(fn)


def test_int_ops_on_requires_grad_float():
    def fn(lib):
        x = leaf(lib, X3)
        return (x > 0), (x > 0).requires_grad, x.argmax(), x.argmax().requires_grad
    same(fn)


def test_grad_mode_is_per_library():
    # numgrad keeps its own switch: flipping it must not leak into torch and back
    import torch
    with numgrad.no_grad():
        assert torch.is_grad_enabled()
        assert not numgrad.is_grad_enabled()
    assert numgrad.is_grad_enabled()
    assert all(lib.is_grad_enabled() for lib in LIBS)

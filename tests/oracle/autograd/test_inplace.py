"""In-place ops: values, rebased grad_fn, gradients, version counters, modified-saved errors, saved-tensor hooks."""

import numpy as np
import pytest

from helpers.autograd_compare import arr, edges, fixed, leaf, name_of, params, raises, same, tree

X3 = [1.0, -2.0, 0.5]
X5 = fixed(5, 0)

# (name, op applied to a non-leaf tensor in place)
INPLACE_OPS = [
    ("add_", lambda t, lib: t.add_(2)),
    ("add_tensor", lambda t, lib: t.add_(lib.tensor(arr([1.0, 2.0, 3.0])))),
    ("add_alpha", lambda t, lib: t.add_(lib.tensor(arr([1.0, 2.0, 3.0])), alpha=2)),
    ("sub_", lambda t, lib: t.sub_(1.5)),
    ("mul_", lambda t, lib: t.mul_(3)),
    ("mul_tensor", lambda t, lib: t.mul_(lib.tensor(arr([1.0, 2.0, 3.0])))),
    ("div_", lambda t, lib: t.div_(4)),
    ("div_tensor", lambda t, lib: t.div_(lib.tensor(arr([1.0, 2.0, 4.0])))),
    ("zero_", lambda t, lib: t.zero_()),
    ("fill_", lambda t, lib: t.fill_(7)),
    ("fill_tensor", lambda t, lib: t.fill_(lib.tensor(7.0))),
    ("copy_", lambda t, lib: t.copy_(lib.tensor(arr([4.0, 5.0, 6.0])))),
    ("clamp_", lambda t, lib: t.clamp_(-1, 0.7)),
    ("clamp_min_", lambda t, lib: t.clamp_(min=0.0)),
    ("relu_", lambda t, lib: t.relu_()),
    ("neg_", lambda t, lib: t.neg_()),
    ("exp_", lambda t, lib: t.exp_()),
    ("sigmoid_", lambda t, lib: t.sigmoid_()),
    ("tanh_", lambda t, lib: t.tanh_()),
    ("pow_", lambda t, lib: t.pow_(2)),
    ("abs_", lambda t, lib: t.abs_()),
]


@pytest.mark.parametrize("name,op", params(INPLACE_OPS))
def test_inplace_op_on_non_leaf(name, op):
    def fn(lib):
        x = leaf(lib, X3)
        y = x * 2
        r = op(y, lib)
        z = (y * y).sum()
        z.backward()
        return r is y, y, name_of(y.grad_fn), edges(y.grad_fn), y._version, x.grad
    same(fn)


def test_zero_grad_fn_name():
    def fn(lib):
        y = leaf(lib, X3) * 2
        y.zero_()
        return name_of(y.grad_fn)
    assert same(fn) == "ZeroBackward0"


AUGMENTED = [
    ("iadd", lambda t: t.__iadd__(3)),
    ("isub", lambda t: t.__isub__(3)),
    ("imul", lambda t: t.__imul__(3)),
    ("itruediv", lambda t: t.__itruediv__(3)),
]


@pytest.mark.parametrize("name,op", params(AUGMENTED))
def test_augmented_assignment_on_non_leaf(name, op):
    def fn(lib):
        x = leaf(lib, X3)
        y = x * 2
        alias = y
        y = op(y)
        (y * x).sum().backward()
        return alias is y, y, name_of(y.grad_fn), y._version, x.grad
    same(fn)


def test_augmented_assignment_statements():
    def fn(lib):
        x = leaf(lib, X3)
        y = x + 0
        y += x
        y -= 1
        y *= x
        y /= 2
        y.sum().backward()
        return y, tree(y.grad_fn), y._version, x.grad
    same(fn)


def test_augmented_assignment_int_tensor_true_divide_error():
    def fn(lib):
        i = lib.tensor(np.array([1, 2, 3]))

        def go():
            j = i
            j /= 2
            return j
        return raises(go)
    same(fn)


def test_inplace_dtype_promotion_error():
    def fn(lib):
        i = lib.tensor(np.array([1, 2, 3]))
        return raises(i.add_, 0.5), raises(i.mul_, lib.tensor(arr([1.0, 2.0, 3.0])))
    same(fn)


def test_inplace_broadcast_shape_error():
    def fn(lib):
        a = lib.zeros(3)
        return raises(a.add_, lib.ones(2, 3))
    same(fn)


def test_inplace_broadcast_into_larger():
    def fn(lib):
        a = lib.zeros(2, 3)
        a.add_(lib.tensor(arr([1.0, 2.0, 3.0])))
        return a, a._version
    same(fn)


# ---- version counter ----------------------------------------------------------------------------

def test_version_counter_increments():
    def fn(lib):
        x = lib.tensor(arr(X3))
        versions = [x._version]
        x.add_(1)
        versions.append(x._version)
        x.mul_(2)
        x += 1
        versions.append(x._version)
        x.zero_()
        x.fill_(2)
        x.copy_(lib.ones(3))
        versions.append(x._version)
        y = x + 1  # out of place: no bump
        versions.append(x._version)
        versions.append(y._version)
        return versions
    same(fn)


def test_version_counter_of_clone_and_detach():
    def fn(lib):
        x = lib.tensor(arr(X3))
        c = x.clone()
        d = x.detach()
        x.add_(1)
        d.mul_(2)
        return x._version, c._version, d._version, x, c
    same(fn)


def test_version_counter_of_data_is_separate():
    def fn(lib):
        x = leaf(lib, X3)
        x.data.mul_(2)
        return x._version, x
    same(fn)


def test_version_bump_on_leaf_under_no_grad():
    def fn(lib):
        w = leaf(lib, X3)
        with lib.no_grad():
            w.sub_(1)
        return w._version, w, w.requires_grad, w.is_leaf
    same(fn)


# ---- modified saved tensors -------------------------------------------------------------------

def test_modified_saved_result_error_exp():
    def fn(lib):
        x = leaf(lib, X5)
        y = x.exp()
        y.add_(1)
        return raises(y.sum().backward)
    out = same(fn)
    assert out[0] == "raises"
    assert "one of the variables needed for gradient computation has been modified by an inplace operation: " \
           "[torch.FloatTensor [5]], which is output 0 of" in out[2]


def test_modified_saved_result_error_via_other_use():
    def fn(lib):
        x = leaf(lib, X5)
        y = x.exp()
        z = y * 2
        y.mul_(3)
        return raises(z.sum().backward)
    same(fn)


def test_modified_saved_input_error():
    def fn(lib):
        x = leaf(lib, X3)
        h = x * 1
        y = h * x  # saves h
        h.add_(1)
        return raises(y.sum().backward), h._version
    out = same(fn)
    assert out[0][0] == "raises"


def test_modified_saved_input_of_sin():
    def fn(lib):
        x = leaf(lib, fixed((2, 3), 1))
        h = x + 0
        y = h.sin()
        h.zero_()
        return raises(y.sum().backward)
    same(fn)


def test_modified_saved_double_tensor_message():
    def fn(lib):
        x = lib.tensor(np.array(X3), requires_grad=True)
        y = x.exp()
        y.sub_(1)
        return raises(y.sum().backward)
    same(fn)


def test_modified_saved_leaf_message():
    def fn(lib):
        x = leaf(lib, X3)
        w = leaf(lib, X3)
        y = x * w
        with lib.no_grad():
            w.add_(1)
        return raises(y.sum().backward)
    same(fn)


def test_modified_unsaved_tensor_is_fine():
    def fn(lib):
        x = leaf(lib, X3)
        h = x * 1
        y = h + 3  # add saves nothing
        h.mul_(2)
        (y.sum() + h.sum()).backward()
        return y, h, x.grad
    same(fn)


def test_in_place_then_use_is_correct():
    def fn(lib):
        x = leaf(lib, X3)
        h = x.sin()  # saves x, not its result
        h.mul_(x)  # mul_ needs the old h for x's gradient
        y = (h * h).sum()
        y.backward()
        return h, name_of(h.grad_fn), x.grad
    same(fn)


def test_in_place_mul_by_itself_raises_as_torch():
    """h.mul_(h) saved h (as `other`) before overwriting it: backward raises torch's modified-by-inplace
    error (numgrad once kept a copy and differentiated h * h; see test_inplace_version_regressions)."""
    def fn(lib):
        x = leaf(lib, X3)
        h = x * 1
        h.mul_(h)
        return raises(h.sum().backward)
    same(fn)


def test_modified_after_backward_with_retain_graph():
    def fn(lib):
        x = leaf(lib, X3)
        y = x.exp()
        s = y.sum()
        s.backward(retain_graph=True)
        y.add_(1)
        return raises(s.backward), x.grad
    same(fn)


def test_detached_alias_modified_error():
    def fn(lib):
        x = leaf(lib, X3)
        y = x.exp()
        y.detach().zero_()  # detach shares the version counter
        return raises(y.sum().backward), y._version
    same(fn)


def test_data_alias_modified_is_silent():
    def fn(lib):
        x = leaf(lib, X3)
        y = x.exp()
        y.data.mul_(2)  # .data hides the change from autograd: gradients use the new values
        y.sum().backward()
        return y._version, x.grad
    same(fn)


def test_in_place_on_view_of_non_leaf():
    def fn(lib):
        x = leaf(lib, X3)
        y = x * 2
        v = y[1:]
        v.mul_(3)
        y.sum().backward()
        return y, name_of(y.grad_fn), y._version, v._version, x.grad
    same(fn)


def test_in_place_on_view_of_leaf_error():
    def fn(lib):
        x = leaf(lib, X3)
        return raises(lambda: x[1:].add_(1))
    same(fn)


def test_in_place_on_view_of_leaf_under_no_grad():
    def fn(lib):
        x = leaf(lib, X3)
        with lib.no_grad():
            x[:2].mul_(10)
        return x, x._version, x.is_leaf
    same(fn)


# ---- leaves ------------------------------------------------------------------------------------

LEAF_OPS = [
    ("add_", lambda t, lib: t.add_(1)),
    ("mul_", lambda t, lib: t.mul_(2)),
    ("zero_", lambda t, lib: t.zero_()),
    ("fill_", lambda t, lib: t.fill_(1)),
    ("copy_", lambda t, lib: t.copy_(lib.ones(3))),
    ("clamp_", lambda t, lib: t.clamp_(0, 1)),
    ("relu_", lambda t, lib: t.relu_()),
    ("iadd", lambda t, lib: t.__iadd__(1)),
    ("isub", lambda t, lib: t.__isub__(1)),
    ("imul", lambda t, lib: t.__imul__(2)),
    ("itruediv", lambda t, lib: t.__itruediv__(2)),
]


@pytest.mark.parametrize("name,op", params(LEAF_OPS))
def test_in_place_on_leaf_requiring_grad_error(name, op):
    def fn(lib):
        w = leaf(lib, X3)
        return raises(op, w, lib), w, w._version
    out = same(fn)
    assert out[0] == ("raises", "RuntimeError",
                      "a leaf Variable that requires grad is being used in an in-place operation.")


def test_in_place_on_leaf_not_requiring_grad_is_fine():
    def fn(lib):
        w = leaf(lib, X3, requires_grad=False)
        w.add_(1)
        return w, w.grad_fn, w._version
    same(fn)


def test_in_place_on_leaf_with_grad_input_makes_it_non_leaf():
    def fn(lib):
        w = lib.tensor(arr(X3))
        x = leaf(lib, [2.0, 2.0, 2.0])
        w.mul_(x)
        w.sum().backward()
        return w, w.is_leaf, w.requires_grad, name_of(w.grad_fn), x.grad
    same(fn)


def test_sgd_step_under_no_grad():
    def fn(lib):
        w = leaf(lib, X3)
        xs = lib.tensor(fixed((4, 3), 7))
        target = lib.tensor(fixed(4, 8))
        losses = []
        for _ in range(3):
            loss = (((xs * w).sum(dim=1) - target) ** 2).mean()
            loss.backward()
            losses.append(loss.item())
            with lib.no_grad():
                w -= 0.1 * w.grad
            w.grad.zero_()
        return losses, w, w.is_leaf, w.requires_grad, w.grad_fn, w._version
    same(fn, rtol=1e-5)


def test_sgd_step_via_data():
    def fn(lib):
        w = leaf(lib, X3)
        (w * w).sum().backward()
        w.data -= 0.5 * w.grad.data
        return w, w._version, w.is_leaf
    same(fn)


# ---- saved tensor hooks ---------------------------------------------------------------------

def test_saved_tensors_hooks_calls():
    def fn(lib):
        packed, unpacked = [], []

        def pack(t):
            packed.append(t)
            return t

        def unpack(t):
            unpacked.append(t)
            return t

        x, w = leaf(lib, X3), leaf(lib, [4.0, 5.0, 6.0])
        with lib.autograd.graph.saved_tensors_hooks(pack, unpack):
            y = x * w
        n_packed = len(packed)
        identity = (packed[0] is x or packed[0] is w, packed[1] is x or packed[1] is w)
        y.sum().backward()
        return n_packed, identity, len(unpacked), x.grad, w.grad
    same(fn)


def test_saved_tensors_hooks_pack_receives_values_and_unpack_result_is_used():
    def fn(lib):
        packed = []

        def pack(t):
            packed.append(t.detach().clone())
            return t.detach().numpy().copy()

        def unpack(a):
            return lib.tensor(a * 2)

        x = leaf(lib, X3)
        with lib.autograd.graph.saved_tensors_hooks(pack, unpack):
            y = x.sin()
        y.sum().backward()
        return packed, x.grad
    same(fn)


def test_saved_tensors_hooks_on_saved_result():
    def fn(lib):
        packed = []

        def pack(t):
            packed.append(t)
            return t

        x = leaf(lib, X3)
        with lib.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
            y = x.exp()
        y.sum().backward()
        return len(packed), packed[0], x.grad
    same(fn)


def test_saved_tensors_hooks_not_active_outside():
    def fn(lib):
        calls = []
        x = leaf(lib, X3)
        with lib.autograd.graph.saved_tensors_hooks(lambda t: calls.append("p") or t,
                                                    lambda t: calls.append("u") or t):
            pass
        y = x * x
        y.sum().backward()
        return calls, x.grad
    same(fn)


def test_saved_tensors_hooks_nested_inner_wins():
    def fn(lib):
        calls = []
        x = leaf(lib, X3)
        with lib.autograd.graph.saved_tensors_hooks(lambda t: calls.append("outer") or t, lambda t: t):
            with lib.autograd.graph.saved_tensors_hooks(lambda t: calls.append("inner") or t, lambda t: t):
                y = x.sin()
        y.sum().backward()
        return calls
    same(fn)


def test_saved_tensors_hooks_accessing_saved_attribute_unpacks():
    def fn(lib):
        calls = []
        x = leaf(lib, X3)
        with lib.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: calls.append(1) or t):
            y = x.sin()
        s = y.grad_fn._saved_self
        return len(calls), s
    same(fn)


# ---- in place through indexing -------------------------------------------------------------------

def test_setitem_on_non_leaf():
    def fn(lib):
        x = leaf(lib, X3)
        y = x * 2
        y[0] = 10.0
        y.sum().backward()
        return y, name_of(y.grad_fn), y._version, x.grad
    same(fn)


def test_setitem_on_leaf_requiring_grad_error():
    def fn(lib):
        x = leaf(lib, X3)

        def go():
            x[1] = 0.0
        return raises(go)
    same(fn)

"""Regression tests for what the fuzz test's extra family (ops_extra.py) found: one test per root cause, each against torch, numgrad fused and unfused; the docstring says what went wrong."""
import numpy as np
import pytest
import torch
from helpers.compare_core import recorded_warnings, warning_entry
from oracle.fuzz.test_regressions import same

import numgrad


def test_nonzero_of_zero_dim_and_as_tuple_views():
    """nonzero of a 0-d tensor raised NumPy's ValueError; torch reads it as one element (a (1, 0) or (0, 0)
    result, one column of [0] or [] as a tuple). nonzero(as_tuple=True) gave fresh tensors where torch unbinds
    its result: the columns are views, which detach_ refuses."""
    same(lambda lib: lib.tensor(-4).nonzero())
    same(lambda lib: lib.tensor(0.0).nonzero())
    same(lambda lib: lib.nonzero(lib.tensor(2.5), as_tuple=True))
    same(lambda lib: lib.tensor(False).nonzero(as_tuple=True))
    same(lambda lib: lib.tensor([[0, 1], [2, 0]]).nonzero(as_tuple=True)[1].detach_())


def test_mT_of_zero_dim_is_itself_with_a_warning():
    """Tensor.mT of a 0-d tensor raised; torch returns the tensor itself and warns that this is deprecated."""
    same(lambda lib: lib.tensor(1.5, requires_grad=True).mT)
    seen = []
    for lib in (torch, numgrad):
        with recorded_warnings(lib) as caught:  # torch warns once per process unless warn-always is on
            _ = lib.tensor(2.0).mT
        seen.append([warning_entry(w) for w in caught])
    message = "Tensor.mT is deprecated on 0-D tensors. This function is the identity in these cases."
    assert seen[0] == seen[1] == [("UserWarning", message)]


def test_mv_of_zero_dim_input():
    """mv with a 0-d matrix gave the 'vector + matrix @ vector' message; torch reads the input's size(0) first."""
    same(lambda lib: lib.mv(lib.tensor(1.0), lib.tensor([1.0])))
    same(lambda lib: lib.mv(lib.ones(2, 1), lib.tensor(1.0)))


def test_bool_products_with_empty_results():
    """A bool mm/mv/bmm whose result is empty (or whose inner dim is) raised "not implemented for 'Bool'";
    torch runs no kernel then. dot of empty bools still refuses."""
    b = lambda lib, *shape: lib.ones(*shape, dtype=lib.bool)
    same(lambda lib: b(lib, 3, 1).mm(b(lib, 1, 0)))
    same(lambda lib: b(lib, 0, 2).mm(b(lib, 2, 3)))
    same(lambda lib: b(lib, 2, 0).mm(b(lib, 0, 3)))
    same(lambda lib: b(lib, 3, 2).mm(b(lib, 2, 3)))
    same(lambda lib: b(lib, 0, 2).mv(b(lib, 2)))
    same(lambda lib: b(lib, 2, 0).mv(b(lib, 0)))
    same(lambda lib: b(lib, 1, 0, 2).bmm(b(lib, 1, 2, 2)))
    same(lambda lib: b(lib, 2, 0, 2) @ b(lib, 2, 4))
    same(lambda lib: lib.dot(b(lib, 0), b(lib, 0)))


def test_bmm_with_an_empty_operand_skips_the_dtype_check():
    """bmm of operands of different dtypes raised when one was empty; torch returns zeros (of mat2's dtype)
    first. With both non-empty, a bool batch1 is refused before the dtypes are compared."""
    f, i = np.ones((2, 3, 4)), np.ones((2, 4, 0), np.int64)
    same(lambda lib: lib.tensor(f).bmm(lib.tensor(i)))
    same(lambda lib: lib.tensor(np.ones((2, 3, 0))).bmm(lib.tensor(np.ones((2, 0, 3), np.int64))))
    same(lambda lib: lib.tensor(np.ones((1, 2, 2), bool)).bmm(lib.tensor(np.ones((1, 2, 2)))))
    same(lambda lib: lib.tensor(np.ones((2, 4, 3))).permute(2, 0, 1) @ lib.tensor(np.ones((4, 0), np.int64)))


def test_vector_matrix_product_is_no_view():
    """matmul of a vector and a matrix returned a view of the mm result (so detach_ refused it); torch squeezes
    in place: the product is no view."""
    same(lambda lib: lib.matmul(lib.tensor([2, -1]), lib.tensor([[3, -2], [1, 4]])).detach_())


def test_clamp_bounds_mixing_a_tensor_and_a_number():
    """clamp/clip with one Tensor bound and one number computed; torch's binding refuses the mix (TypeError
    naming the arguments, without self for a method), unless the tensor is 0-d and does not require grad, which
    it reads as a number (the number overload's checks then apply)."""
    x = lambda lib: lib.tensor([[0.5], [2.0]])
    same(lambda lib: x(lib).clip(lib.ones(1), 1))
    same(lambda lib: lib.clip(x(lib), lib.ones(1), 1.5))
    same(lambda lib: lib.clamp(x(lib), 1, lib.ones(1)))
    same(lambda lib: x(lib).clamp_(lib.ones(1), 1))
    same(lambda lib: x(lib).clip(None, lib.ones(1)))
    same(lambda lib: x(lib).clamp(lib.tensor(1), 1.5))
    same(lambda lib: x(lib).clamp(lib.tensor(1.0, requires_grad=True), 3))
    same(lambda lib: lib.tensor(0.2, dtype=lib.float64).clamp_(lib.tensor(0.2, dtype=lib.float64), 3))
    same(lambda lib: lib.tensor(True).clip_(lib.tensor(False), 0))


def test_clamp_min_max_with_a_tensor_bound_are_their_own_nodes():
    """clamp_min/clamp_max with a Tensor bound recorded ClampBackward0; torch records ClampMinBackward1 /
    ClampMaxBackward1, which a version error names."""
    def fn(lib, op):
        x = lib.zeros(4, 1, requires_grad=True) * 1
        y = getattr(x, op + "_")(x)
        y.sum().backward()
        return y
    same(lambda lib: fn(lib, "clamp_min"))
    same(lambda lib: fn(lib, "clamp_max"))

    def grads(lib, op):
        x = lib.tensor([1.0, 2.0, float("nan"), 3.0], requires_grad=True)
        m = lib.tensor([2.0, 2.0, 0.0, float("nan")], requires_grad=True)
        y = getattr(lib, op)(x, m)
        y.sum().backward()
        return y, x.grad, m.grad
    same(lambda lib: grads(lib, "clamp_min"))
    same(lambda lib: grads(lib, "clamp_max"))


def test_sum_to_size_of_an_empty_shape_and_of_no_size():
    """sum_to_size(()) returned a bool 0-d tensor itself; torch's sum_to returns sum() for an empty shape (int64
    for bool). sum_to_size() without a size summed everything; torch's binding requires the size."""
    same(lambda lib: lib.tensor(True).sum_to_size(()))
    same(lambda lib: lib.tensor([True]).sum_to_size(1))
    same(lambda lib: lib.tensor([[1, 2]]).sum_to_size(()))
    same(lambda lib: lib.tensor([1.0, 2.0]).sum_to_size())


def test_scatter_and_gather_read_a_zero_dim_tensor_as_one_element():
    """scatter/scatter_add/gather with a 0-d tensor and a one-element 1-d one raised "Index tensor must have the
    same number of dimensions"; torch reads a 0-d tensor as one dim of size 1. Gradients flow as torch's."""
    def fn(lib, self_shape, index, src_shape, op="scatter"):
        t = lib.tensor(np.full(self_shape, 3.0), requires_grad=True)
        s = lib.tensor(np.full(src_shape, 5.0), requires_grad=True)
        out = getattr(lib, op)(t * 1, 0, lib.tensor(index), s)
        out.sum().backward()
        return out, t.grad, s.grad
    same(lambda lib: fn(lib, (), [0], (1,)))
    same(lambda lib: fn(lib, (1,), 0, ()))
    same(lambda lib: fn(lib, (), [0], (1,), "scatter_add"))
    same(lambda lib: fn(lib, (2,), [1], ()))
    same(lambda lib: lib.tensor(3.0).scatter(0, lib.tensor([0]), 7.0))
    same(lambda lib: lib.tensor(3.0).scatter(0, lib.tensor([[0]]), lib.tensor([[5.0]])))

    def gather(lib, index):
        x = lib.tensor(3.0, requires_grad=True)
        out = lib.gather(x, 0, lib.tensor(index))
        out.sum().backward()
        return out, x.grad
    same(lambda lib: gather(lib, [0, 0]))
    same(lambda lib: gather(lib, 0))
    same(lambda lib: lib.gather(lib.tensor([3.0]), 0, lib.tensor(0)))


def test_scatter_backward_refuses_a_src_larger_than_index():
    """scatter's backward gave a src larger than the index zeros where it was not read; torch's engine refuses
    the index-shaped gradient ("returned an invalid gradient at index 1")."""
    def fn(lib, op, src_shape, index_shape):
        src = lib.ones(*src_shape, requires_grad=True)
        out = getattr(lib, op)(lib.zeros(3, 3)[:len(src_shape)] if len(src_shape) == 2 else lib.zeros(3), 0,
                               lib.zeros(*index_shape, dtype=lib.int64), src)
        out.sum().backward()
        return out, src.grad
    for op in ("scatter", "scatter_add"):
        same(lambda lib: fn(lib, op, (2,), (1,)))
        same(lambda lib: fn(lib, op, (2, 3), (2, 2)))
        same(lambda lib: fn(lib, op, (3,), (3,)))


def test_scatter_inplace_memory_checks_in_torch_order():
    """scatter_/scatter_add_ wrote through a src or index sharing self's memory; torch refuses any shared memory
    (after its dtype and shape checks, before the index bounds), and an expanded self before the shapes."""
    same(lambda lib: lib.zeros(2).scatter_(0, lib.tensor([0]), lib.zeros(2)))  # no sharing
    def alias(lib, op, index, src=None):
        x = lib.zeros(2)
        return getattr(x, op)(0, lib.tensor(index), x if src is None else src(x))
    for op in ("scatter_", "scatter_add_"):
        same(lambda lib: alias(lib, op, [0]))
        same(lambda lib: alias(lib, op, [5]))
        same(lambda lib: alias(lib, op, [0, 1, 0]))
        same(lambda lib: alias(lib, op, [0], lambda x: x[1:]))
    same(lambda lib: lib.tensor(4).scatter_(0, lib.tensor(1), lib.tensor(4)))
    same(lambda lib: (lambda v: v.scatter_(0, lib.tensor(1), v))(lib.tensor(4)))
    same(lambda lib: (lambda i: i.scatter_(0, i, 5))(lib.tensor([0, 1])))
    same(lambda lib: lib.zeros(1).expand(3).scatter_(0, lib.tensor([0, 0, 0, 0]), lib.ones(4)))
    same(lambda lib: lib.zeros(1, 2, dtype=lib.float64).expand(2, 2).scatter_(
        0, lib.tensor([[1, 1], [0, 0]]), lib.ones(2, 2, dtype=lib.bool)))


def test_scatter_value_that_does_not_fit_an_integer_tensor():
    """scatter of a NaN or infinite value into an integer tensor raised Python's ValueError/OverflowError; torch
    raises its RuntimeError, and nothing when the index is empty (its kernel does not run)."""
    for value in (float("nan"), float("inf")):
        same(lambda lib: lib.tensor([3, 4]).scatter(0, lib.tensor([0]), value))
        same(lambda lib: lib.tensor([3, 4]).scatter_(0, lib.tensor([0]), value=value))
        same(lambda lib: lib.tensor([3, 4]).scatter(0, lib.tensor([], dtype=lib.int64), value=value))
    same(lambda lib: lib.tensor([3]).scatter(0, lib.tensor([0]), 2.7))


def test_scatter_compares_dtypes_before_the_index_bounds():
    """scatter_add with src of another dtype and an index out of bounds named the index; torch's
    scatter_gather_dtype_check comes first."""
    same(lambda lib: lib.zeros(1, 0).scatter_add(1, lib.tensor([[0]]), lib.ones(1, 1, dtype=lib.float64)))
    same(lambda lib: lib.zeros(2, 0, dtype=lib.bool).scatter_add_(1, lib.zeros(2, 2, dtype=lib.int64),
                                                                  lib.ones(2, 2, dtype=lib.int64)))


def test_index_put_counts_its_index_tensors_after_the_leaf_check():
    """index_put/index_put_ with more index tensors than dims gave indexing's message; torch's names how many
    it got, and index_put_ refuses a leaf that requires grad before anything."""
    i = lambda lib: lib.tensor([0])
    same(lambda lib: lib.tensor(3.0).index_put((i(lib),), lib.tensor(1.0)))
    same(lambda lib: lib.tensor([3.0]).index_put((i(lib), i(lib)), lib.tensor(1.0)))
    same(lambda lib: lib.tensor(3.0).index_put_((lib.tensor(True),), lib.tensor(1.0)))
    same(lambda lib: lib.tensor(3.0, requires_grad=True).index_put_((i(lib),), lib.tensor(1.0)))
    same(lambda lib: lib.tensor([3.0], requires_grad=True).index_put_((i(lib), i(lib)), lib.tensor(1.0)))


def test_index_put_of_self_into_itself():
    """index_put_ with self as the values (empty too) went on; torch judges the values as given (itself: full
    overlap). Through setitem torch first drops the value's leading 1-dims, a new tensor, which an empty one
    does not overlap."""
    def direct(lib, shape, accumulate):
        x = lib.zeros(*shape, dtype=lib.int64)
        return x.index_put_((lib.tensor([0]),), x, accumulate=accumulate)
    for accumulate in (True, False):
        same(lambda lib: direct(lib, (1, 0), accumulate))
        same(lambda lib: direct(lib, (2, 3), accumulate))

    def setitem(lib):
        x = lib.zeros(1, 0, requires_grad=True)
        with lib.no_grad():
            x[lib.zeros(1, 0, dtype=lib.bool)] = x
        return x
    same(setitem)


def test_index_put_result_starts_at_version_zero():
    """index_put's result was at version 1 (numgrad wrote into a clone); torch's op gives a new tensor at version
    0, which a later version error reports."""
    def fn(lib):
        x = lib.tensor([[3.0, -1.0], [2.0, 0.5]], requires_grad=True)
        v1 = x.index_put((lib.tensor([1]), lib.tensor([0])), lib.tensor(2.5))
        v2 = v1.expand_as(v1)
        v3 = v1.clip(v2, None)
        v2.index_put_((lib.tensor([0]), lib.tensor([1])), lib.tensor(-2.0))
        v3.sum().backward()
        return v3
    same(fn)


def test_split_messages_name_split_and_the_dim_as_given():
    """split_with_sizes of a 0-d tensor said 'split_with_sizes expects'; torch says 'split expects' for both.
    Sizes not adding up named the wrapped dim; torch names the dim as given."""
    same(lambda lib: lib.tensor(1.0).split_with_sizes([1], 0))
    same(lambda lib: lib.split(lib.tensor(1.0), [1], 0))
    same(lambda lib: lib.ones(4).split_with_sizes([3, 0, 2], -1))
    same(lambda lib: lib.ones(2).split([1, 0, 0, 2], -1))


def test_divide_with_rounding_mode_of_bools():
    """divide(bool, bool, rounding_mode=...) divided (or raised 'ZeroDivisionError'); torch has no kernel for a
    bool result ("div_trunc_cpu"/"div_floor_cpu" not implemented for 'Bool')."""
    b = lambda lib: lib.tensor([[False, True], [True, True]])
    same(lambda lib: lib.divide(b(lib), False, rounding_mode="trunc"))
    same(lambda lib: lib.divide(b(lib), b(lib), rounding_mode="floor"))
    same(lambda lib: b(lib).div(True, rounding_mode="trunc"))
    same(lambda lib: lib.divide(b(lib), 2, rounding_mode="trunc"))
    same(lambda lib: lib.divide(lib.tensor([1]), True, rounding_mode="trunc"))


def test_round_with_decimals_of_integers():
    """round(decimals=0) of an integer tensor returned it; only round() without decimals does in torch, whose
    round(decimals=0) runs the float kernel ("round_vml_cpu" not implemented for 'Long')."""
    for decimals in (None, 0, 1, -1):
        kw = {} if decimals is None else {"decimals": decimals}
        same(lambda lib: lib.tensor([1, -2]).round(**kw))
        same(lambda lib: lib.tensor([True]).round(**kw))
        same(lambda lib: lib.tensor([1, -2]).round_(**kw))
        same(lambda lib: lib.tensor([1.25, -2.5]).round(**kw))


def test_pow_inplace_of_integers_to_a_negative_power():
    """bool.pow_(-1) gave the result-type cast message; torch refuses the negative integer power first."""
    same(lambda lib: lib.tensor([True]).pow_(-1))
    same(lambda lib: lib.tensor([2]).pow_(-1))
    same(lambda lib: lib.tensor([True]).pow_(2))
    same(lambda lib: lib.tensor([2.0]).pow_(-1))


def test_view_requires_grad_follows_its_base():
    """A view made before its base was made to require grad, or made under no_grad, did not require grad; torch's
    view requires grad when its base does (its grad_fn stays None: ops on it require grad, their gradient flows
    nowhere). An in-place write to a view that requires grad of a leaf names 'a view of a leaf Variable'."""
    def later(lib):
        x = lib.zeros(3)
        w = x[1:]
        x.requires_grad_()
        y = w * 2
        y.sum().backward()
        return w, y
    same(later)

    def no_grad_view(lib):
        x = lib.tensor([[1.0, 2.0]], requires_grad=True)
        with lib.no_grad():
            v = x.unflatten(-1, (2, -1))
        (v * 2).sum().backward()
        return (v,)
    same(no_grad_view)

    def split_then(lib):
        x = lib.full((3,), float("inf"))
        pieces = x.split_with_sizes([0, 0, 3], 0)
        x.requires_grad_()
        pieces[2].sum().backward()
        return pieces
    same(split_then)

    def write(lib, make):
        base = lib.zeros(3, 2)
        v = base[:, ::2]
        v.requires_grad_()
        return make(v).clamp_min_(0.5)
    same(lambda lib: write(lib, lambda v: v))
    same(lambda lib: write(lib, lambda v: v.expand(3, 4)))
    same(lambda lib: lib.zeros(0, 3, dtype=lib.float64).transpose(0, 1).requires_grad_().pow_(2))


def test_leaf_that_stopped_requiring_grad_gets_no_gradient():
    """A leaf used by an op and then made not to require grad still received .grad; torch's AccumulateGrad drops
    it. A leaf an in-place op later gave a history raises 'moved into the graph interior' in torch's backward."""
    def stopped(lib):
        x = lib.tensor([-1.5, 0.25], requires_grad=True)
        y = -x
        x.requires_grad_(False)
        y.sum().backward()
        return y, lib.tensor(x.grad is None)
    same(stopped)

    def moved(lib):
        x = lib.tensor([2.0, -1.0, 0.5], requires_grad=True)
        _, b = x.split([0, 3], -1)
        x.requires_grad_(False)
        c = b.ceil()
        x.div_(c)
        c.sum().backward()
        return c
    same(moved)


def test_retain_grad_follows_an_inplace_write():
    """retain_grad on a tensor later written in place kept the gradient of its old value; torch moves the
    retained grad to the new grad_fn (the gradient of the tensor's latest value)."""
    def fn(lib):
        x = lib.tensor([-1.5, 0.5, 2.0], requires_grad=True)
        v = x * 1
        v.retain_grad()
        v.abs_()
        (v * lib.tensor([1.0, 2.0, 3.0])).sum().backward()
        return v.grad, x.grad
    same(fn)

    def fails(lib):
        x = lib.zeros(4, 0, requires_grad=True)
        v = lib.scatter_add(x, 0, lib.zeros(1, 0, dtype=lib.int64), lib.zeros(1, 0))
        v.retain_grad()
        v.clamp_min_(v)
        try:
            v.sum().backward()
        except RuntimeError:
            pass
        return (v.grad,)
    same(fails)


def test_floor_divide_inplace_derivative_names_the_inplace_op():
    """The backward of floor_divide_ said 'aten::floor_divide'; torch's error names 'aten::floor_divide_'."""
    def fn(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = lib.tensor([3.0, 4.0])
        y.floor_divide_(x)
        y.sum().backward()
        return y
    same(fn)


def test_take_along_dim_saves_a_view_of_its_input():
    """take_along_dim gathered from its input itself when no broadcast was needed; torch gathers from a
    broadcast_to view, so a version error after a write to the input names that view's grad_fn (AsStrided)."""
    def fn(lib):
        x = lib.tensor([[-0.39], [0.54]], dtype=lib.float64, requires_grad=True)
        v1 = -x
        v3 = lib.reciprocal(v1.take_along_dim(lib.tensor([[0]]), dim=0))
        v1.sub_(v3)
        x.remainder(v3.chunk(3, -2)[0]).sum().backward()
        return v1
    same(fn)
    same(lambda lib: lib.tensor([[1.0, 2.0]]).take_along_dim(lib.tensor([[1, 0]]), dim=1))


@pytest.mark.parametrize("op", ["remainder_", "fmod_", "floor_divide_"])
def test_inplace_integer_division_by_zero_raises(op):
    """The error of an in-place integer division by a zero is torch's (what torch wrote before raising is
    undefined: see known.py's PARTIAL_WRITE, which the fuzz test recognizes only for those values)."""
    same(lambda lib: getattr(lib.tensor([4, 0, 3]), op)(lib.tensor([2, 0, 1])))


def test_views_made_in_no_grad_mode():
    """A view made in no_grad mode of a tensor that requires grad (or a view of such a view) was a plain leaf
    view: torch's CreationMeta::NO_GRAD_MODE refuses its in-place writes in grad mode when anything involved
    requires grad (naming the view's grad_fn when it has one), refuses reading its grad_fn once its base was
    written in place, and lets retain_grad through (it requires grad, as its base does)."""
    def view(lib, base_op=None):
        leaf = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        base = leaf if base_op is None else base_op(leaf)
        with lib.no_grad():
            v = base[1:]
        return base, v
    same(lambda lib: view(lib)[1].mul_(2))
    same(lambda lib: view(lib)[1][:1].mul_(2))
    same(lambda lib: view(lib, lambda x: x * 1)[1].mul_(2))
    same(lambda lib: (lambda v: (v.retain_grad(), v)[1])(view(lib)[1]))

    def untracked(lib):
        x = lib.zeros(3)
        with lib.no_grad():
            v = x[1:]
        v.mul_(2)  # nothing requires grad: allowed
        return v.mul_(lib.tensor([1.0, 2.0], requires_grad=True))
    same(untracked)

    def rebased(lib, grad_mode):
        base, v = view(lib, lambda x: x * 1)
        with lib.set_grad_enabled(grad_mode):
            base.mul_(2)
        return lib.tensor(v.requires_grad), v.grad_fn
    same(lambda lib: rebased(lib, False))
    same(lambda lib: rebased(lib, True))

    def backward(lib, index):
        leaf = lib.zeros(2, 3, 1, dtype=lib.float64, requires_grad=True)
        with lib.no_grad():
            v = leaf[index]
        v.backward()  # it requires grad (its base does), yet has no edge: torch's implicit-grad check comes first
        return v
    same(lambda lib: backward(lib, (slice(None),)))
    same(lambda lib: backward(lib, (0, 0, 0)))


def test_vector_matrix_product_is_at_version_one():
    """matmul of a vector and a matrix was at version 0; torch's squeeze_ of the mm result leaves it at version 1,
    which a later version error reports."""
    def fn(lib):
        x = lib.tensor([0.5, 2.0, 1.0], dtype=lib.float64, requires_grad=True)
        v = lib.matmul(x, lib.ones(3, 3, dtype=lib.float64))
        v.div_(v)
        v.sum().backward()
        return v
    same(fn)


def test_like_ops_keep_the_input_strides():
    """ones_like/zeros_like/full_like of a transposed dense tensor were C-contiguous; torch's preserve_format keeps
    the input's strides (those of size-1 dims too), on which matmul's choice of kernel (and so its message) turns."""
    def fn(lib, make):
        x = lib.ones(1, 3, 1).transpose(0, 1)
        y = make(lib, x)
        return lib.tensor(y.stride()), y, y @ lib.tensor([True])
    same(lambda lib: fn(lib, lambda lib, x: lib.ones_like(x)))
    same(lambda lib: fn(lib, lambda lib, x: lib.zeros_like(x, dtype=lib.float64)))
    same(lambda lib: fn(lib, lambda lib, x: lib.full_like(x, 2.5)))
    same(lambda lib: (lambda y: (lib.tensor(y.stride()), y))(lib.ones_like(lib.ones(2, 3).t())))


def test_bmm_with_an_empty_operand_gradients_keep_each_dtype():
    """bmm with an empty operand of another dtype gave the float32 input a float64 gradient (the result's dtype);
    torch's gradients are zeros of each input's own dtype."""
    def fn(lib):
        a = lib.zeros(2, 4, 3, requires_grad=True)
        b = lib.zeros(2, 3, 0, dtype=lib.float64, requires_grad=True)
        out = lib.bmm(a, b)
        out.sum().backward()
        return out, a.grad, b.grad
    same(fn)


def test_write_order_of_a_split_output_made_to_require_grad():
    """An in-place write to an output of split made without grad, later made to require grad itself, named a
    view of a leaf; torch's view check (a multi-output view made in no_grad mode) comes first. A floor_divide_
    through a view names the in-place op in its backward error."""
    def fn(lib):
        parts = lib.zeros(1, 1, 3, dtype=lib.float64).split_with_sizes([1, 0, 1, 0, 0, 1], -1)
        v = parts[5].requires_grad_(True)
        return v.scatter_(2, lib.zeros(1, 1, 0, dtype=lib.int64), parts[4])
    same(fn)

    def view_write(lib):
        x = lib.tensor([[-1.5, -2.25, 0.75]], dtype=lib.float64, requires_grad=True) * 1
        y = x.mT.floor_divide_(2)
        y.sum().backward()
        return y
    same(view_write)


def test_retain_grad_follows_a_regenerated_view():
    """retain_grad on a view whose memory was then written under no_grad kept the old grad_fn's hook (no .grad);
    torch moves it to the view's regenerated grad_fn."""
    def fn(lib):
        x = lib.tensor([-0.25, -1.25, -0.5], dtype=lib.float64, requires_grad=True)
        v = x.swapdims(0, -1)
        v.retain_grad()
        with lib.set_grad_enabled(False):
            v.zero_()
        v.sum().backward()
        return v.grad, x.grad
    same(fn)

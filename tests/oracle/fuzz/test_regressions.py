"""Regression tests for what the differential fuzz test found: one test per root cause, each against torch,
numgrad fused and unfused; the docstring says what went wrong."""
import numpy as np
import pytest
import torch

import numgrad
from helpers.compare_core import values_mismatch


def _run(lib, fn):
    try:
        out = fn(lib)
    except Exception as exc:  # the error is the result to compare
        return ("error", type(exc), str(exc).splitlines()[0] if str(exc) else "")
    outs = out if isinstance(out, (tuple, list)) else (out,)
    return ("ok", [(str(t.dtype), tuple(t.shape), t.requires_grad, np.array(t.detach().numpy())) for t in outs])


def same(fn):
    """fn(lib) gives torch's result, error included, in numgrad with fusion on and off."""
    ref = _run(torch, fn)
    for fused in (True, False):
        with numgrad.fusion(fused):
            got = _run(numgrad, fn)
        assert got[0] == ref[0], (fused, ref, got)
        if ref[0] == "error":
            assert got[1:] == ref[1:], (fused, ref, got)
            continue
        assert len(got[1]) == len(ref[1])
        for r, g in zip(ref[1], got[1]):
            assert g[:3] == r[:3], (fused, r[:3], g[:3])
            assert values_mismatch(r[3], g[3]) is None, (fused, r[3], g[3])


def _grad_of(fn, *arrays):
    """fn on leaves made from arrays, backward of its sum; returns the result and the leaves' grads."""
    def run(lib):
        xs = [lib.tensor(a, requires_grad=True) for a in arrays]
        out = fn(lib, *xs)
        out.sum().backward()
        return (out,) + tuple(x.grad for x in xs)
    return run


@pytest.mark.parametrize("op", ["and_", "or_", "xor"])
@pytest.mark.parametrize("a,b", [("f", "f"), ("i", 2.5), ("b", 3), ("b", "i"), ("i", "b"), ("b", True), (3, "b"),
                                 ("d", "d")])
def test_bitwise_operators_promote_as_torch(op, a, b):
    """`&`, `|`, `^` kept the left operand's dtype (bool & int gave bool) and ran NumPy's bitwise ufunc on floats
    (a NumPy TypeError) where torch promotes (bool with an int gives int64) and refuses a floating result type with
    NotImplementedError '"bitwise_and_cpu" not implemented for 'Float''."""
    import operator
    make = {"f": lambda lib: lib.tensor([1.5, -2.0]), "d": lambda lib: lib.tensor([1.5], dtype=lib.float64),
            "i": lambda lib: lib.tensor([3, 6]), "b": lambda lib: lib.tensor([True, False])}
    arg = lambda lib, v: make[v](lib) if isinstance(v, str) else v
    same(lambda lib: getattr(operator, op)(arg(lib, a), arg(lib, b)))


def test_invert_of_float_and_of_zero_dim_int():
    """`~` on a float tensor raised NumPy's TypeError wording instead of torch's; `~` on a 0-d int tensor stored a
    NumPy scalar, so reading it or computing with it failed ('numpy.int64' object has no attribute ...)."""
    same(lambda lib: ~lib.tensor([1.5]))
    same(lambda lib: ~lib.tensor(-1))
    same(lambda lib: float("inf") / ~~lib.tensor(1))


def test_squeeze_and_transpose_of_zero_dim():
    """squeeze(-1) and transpose(0, -1) of a 0-d tensor (dims 0 and -1 are valid for it) raised IndexError /
    NumPy's AxisError; torch returns the 0-d tensor."""
    same(lambda lib: lib.tensor(True).squeeze(-1))
    same(lambda lib: lib.tensor(2.5).transpose(0, -1))
    same(_grad_of(lambda lib, x: x.transpose(-1, 0) * 2, np.float64(1.5)))


def test_view_of_empty_with_ambiguous_minus_one():
    """reshape/view of 0 elements into a shape with 0 and -1 gave the 'is invalid for input of size 0' message;
    torch says the -1 is ambiguous."""
    same(lambda lib: lib.zeros(0).view(2, 0, -1))
    same(lambda lib: lib.zeros(0, 3).reshape(-1, 0))
    same(lambda lib: lib.zeros(3).view(0, -1))


def test_unflatten_of_zero_dim():
    """unflatten of a 0-d tensor failed with an IndexError from a tuple; torch raises its RuntimeError."""
    same(lambda lib: lib.tensor(1.0).unflatten(-1, (1, -1)))


def test_copy_into_integer_tensor_is_not_differentiable():
    """copy_ from a tensor that requires grad into a bool or int64 tensor made the destination require grad;
    an integer result is not differentiable in torch."""
    def fn(lib):
        x = lib.tensor([0.5, -1.0], requires_grad=True)
        flags = x >= 0
        return flags.copy_(x), lib.zeros(2, dtype=lib.int64).copy_(x * 3)
    same(fn)


def test_copy_with_shapes_that_do_not_broadcast_into_self():
    """copy_ from a source that broadcasts to a larger shape than self raised NumPy's ValueError; torch raises
    "output with shape [4, 1] doesn't match the broadcast shape [1, 3, 4, 1]"."""
    same(lambda lib: lib.zeros(4, 1).copy_(lib.ones(1, 3, 4, 1)))
    same(lambda lib: lib.zeros(2).copy_(lib.ones(3)))


def test_setitem_one_mask_and_one_element_value_casts():
    """x[mask] = value with a one-element tensor value of another dtype raised "Index put requires the source and
    destination dtypes match"; torch writes it as masked_fill_, which casts (only for a single bool-tensor index)."""
    def put(key, value):
        def fn(lib):
            x = lib.tensor([[1, 2], [3, 4]])
            k = tuple(lib.tensor(v) if isinstance(v, list) else v for v in key)
            x[k if len(k) > 1 else k[0]] = lib.tensor(value)
            return x
        return fn
    same(put(([True, False],), [2.7]))
    same(put((slice(None), [True, False]), [[2.7]]))
    same(put(([[True, False], [False, True]],), 2.7))
    same(put(([True, False], [True, False]), [2.7]))  # two masks: torch refuses
    same(put(([0, 1],), [2.7]))  # an integer index: torch refuses


def test_index_select_of_zero_dim_and_of_empty_dim():
    """index_select on a 0-d tensor with other than one index returned values, and on an empty dim 1 gave the
    kernel's 'INDICES element is out of DATA bounds' message; torch checks both first."""
    same(lambda lib: lib.tensor(1.0).index_select(0, lib.tensor([0, 0])))
    same(lambda lib: lib.tensor(1.0).index_select(0, lib.tensor([], dtype=lib.int64)))
    same(lambda lib: lib.zeros(4, 0).index_select(1, lib.tensor([0])))


def test_take_along_dim_of_zero_dim():
    """take_along_dim of a 0-d tensor with a dim failed with 'tuple index out of range'; torch raises IndexError
    'Dimension specified as 0 but tensor has no dimensions'."""
    same(lambda lib: lib.tensor(False).take_along_dim(lib.tensor(-1), dim=0))


def test_index_tensor_into_empty_dim_message():
    """An integer tensor index into a dim of size 0 named the index and the dim; torch's message does not."""
    same(lambda lib: lib.zeros(0, dtype=lib.int64)[lib.tensor([[0, 0], [0, 0]])])
    same(lambda lib: lib.zeros(2, 0)[:, lib.tensor([1])])


@pytest.mark.parametrize("call", [
    lambda lib: lib.tensor([1]).sub_(lib.tensor([1]), alpha=0.5),
    lambda lib: lib.tensor([1]).add(2, alpha=0.5),
    lambda lib: lib.tensor([1]).add(lib.tensor([2.0]), alpha=0.5),
    lambda lib: lib.tensor([1]).add_(lib.tensor([2.0]), alpha=0.5),
    lambda lib: lib.tensor([1.0]).sub(lib.tensor([2.0]), alpha=True),
    lambda lib: lib.tensor([True]).add(lib.tensor([True]), alpha=0.5),
])
def test_alpha_checked_against_result_dtype(call):
    """add/sub with a float alpha on an integer result computed and then failed to cast (or not at all), and a
    bool alpha on a non-bool result was accepted; torch checks alpha against the result dtype first."""
    same(call)


def test_add_number_with_alpha():
    """tensor.add(number, alpha=...) and add_(inf, alpha=0.5) failed with IndexError: alpha was applied to the
    number through a tensor op with no tensor."""
    same(lambda lib: lib.tensor([1]).add(2.0, alpha=0.5))
    same(lambda lib: lib.tensor([1.0]).sub(3, alpha=2))
    same(lambda lib: lib.tensor([1.0, 2.0]).add_(float("inf"), alpha=0.5))


def test_clamp_inplace_cast_error_names_the_cpp_type():
    """clamp_ with number bounds whose result cannot be written back said 'desired output type Bool' / 'Long';
    torch's clamp checks on its own and names the destination as C++ does ('bool', 'long int'), while the other
    in-place ops (TensorIterator) keep 'Bool' / 'Long'."""
    same(lambda lib: lib.tensor([True]).clamp_(0.5))
    same(lambda lib: lib.tensor([True]).clamp_(1))
    same(lambda lib: lib.tensor([1]).clamp_(max=0.5))
    same(lambda lib: lib.tensor([1]).clip_(0.5))
    same(lambda lib: lib.tensor([True]).clamp_(lib.tensor(1)))
    same(lambda lib: lib.tensor([True]).mul_(2))
    same(lambda lib: lib.tensor([1]).sqrt_())


def test_version_error_names_pow_variant():
    """The 'modified by an inplace operation' message named PowBackward1's tensor 'output 0 of Pow'; torch keeps
    the variant number ('Pow1', 'Pow2') and drops only a 0."""
    def fn(base):
        def run(lib):
            x = lib.ones(2, requires_grad=True)
            e = lib.tensor([2.0, 3.0], requires_grad=True)
            y = x.pow(e) if base == "tensor" else 2 ** x
            z = y.exp()
            y.mul_(1)
            z.sum().backward()
            return x.grad
        return run
    same(fn("tensor"))
    same(fn("number"))


def test_softmax_and_logsumexp_of_empty():
    """softmax/log_softmax over any dim of an empty tensor, and logsumexp over an empty dim, raised amax's 'Expected
    reduction dim 0 to have non-zero size'; torch gives an empty result, and -inf for logsumexp of nothing."""
    same(lambda lib: lib.softmax(lib.zeros(0, 3), 0))
    same(lambda lib: lib.log_softmax(lib.zeros(2, 0), 1))
    same(lambda lib: lib.softmax(lib.zeros(0, dtype=lib.bool), 0, dtype=lib.float32))
    same(lambda lib: lib.logsumexp(lib.zeros(0), 0))
    same(lambda lib: lib.logsumexp(lib.zeros(0, 2), 0))
    same(lambda lib: lib.logsumexp(lib.zeros(0, 2), 1))
    same(_grad_of(lambda lib, x: lib.logsumexp(x, 0), np.zeros((0, 2))))


def test_fused_reduction_over_trailing_dims_of_empty_tensor():
    """With fusion on, sum/mean/amax/max over non-empty trailing dims of a tensor with a 0-sized leading dim
    built a fused fold with no element and failed with IndexError; torch gives an empty result."""
    same(lambda lib: lib.zeros(0, 2).sum(1))
    same(lambda lib: lib.zeros(0, 2).mean(1))
    same(lambda lib: lib.zeros(0, 2).amax(1))
    same(lambda lib: lib.zeros(0, 2, 3).max(-1)[0])


def test_gather_of_zero_dim_backward():
    """The backward of gather on a 0-d tensor failed with IndexError in the CPU scatter (the CUDA path knew 0-d)."""
    same(_grad_of(lambda lib, x: x.gather(-1, lib.tensor(0)) * 3, np.float64(1.25)))
    same(lambda lib: lib.zeros(()).scatter_add(0, lib.tensor(0), lib.tensor(2.0)))


@pytest.mark.parametrize("name", ["maximum", "minimum", "logical_and", "logical_or", "logical_xor"])
def test_two_tensor_ops_refuse_numbers(name):
    """maximum/minimum/logical_and/or/xor accepted a Python number; torch's signature takes Tensors only and raises
    TypeError naming the argument (position 2 as a function, 1 as a method)."""
    same(lambda lib: getattr(lib, name)(lib.tensor([1.0]), 2.0))
    same(lambda lib: getattr(lib, name)(True, lib.tensor([1.0])))
    same(lambda lib: getattr(lib.tensor([1.0]), name)(2))
    same(lambda lib: getattr(lib.tensor([1.0, 0.0]), name)(lib.tensor([0.5])))


def test_shape_errors_come_before_dtype_errors():
    """In-place ops, `|` and x[index] = value checked the dtypes first and reported a cast or dtype mismatch where
    torch reports the shapes that do not broadcast (TensorIterator and index_put_ check shapes first)."""
    same(lambda lib: lib.tensor([False, True]).div_(lib.zeros(2, 1, dtype=lib.bool)))
    same(lambda lib: lib.tensor([1]).add_(lib.zeros(2, 0)))
    same(lambda lib: lib.zeros(3, 4, dtype=lib.float64) | lib.zeros(0, 1, 2))

    def put(lib):
        x = lib.tensor([-4, -4])
        x[lib.tensor([], dtype=lib.int64)] = lib.tensor([False, False])
        return x
    same(put)


def test_reductions_of_zero_dim_and_empty():
    """all/any with dim 1 of a 0-d tensor raised NumPy's AxisError; unbind(-2) of a 0-d tensor gave the 0-d message
    before the range check; softmax of an empty int/bool tensor refused the dtype (torch returns it as it is);
    norm with p=+-inf of an empty tensor raised amax's error instead of torch's 'no identity' message."""
    same(lambda lib: lib.all(lib.tensor(3), 1, keepdim=True))
    same(lambda lib: lib.tensor(3).any(0))
    same(lambda lib: lib.tensor(False).unbind(-2))
    same(lambda lib: lib.tensor(False).unbind(0))
    same(lambda lib: lib.softmax(lib.zeros(0, 1, dtype=lib.int64), 0))
    same(lambda lib: lib.log_softmax(lib.zeros(2, 0, dtype=lib.bool), 1))
    same(lambda lib: lib.zeros(1, 0).norm(p=float("-inf")))
    same(lambda lib: lib.zeros(1, 0).norm(p=float("inf"), dim=1))
    same(lambda lib: lib.zeros(1, 0).norm(p=float("-inf"), dim=0))


@pytest.mark.parametrize("make", [
    lambda lib, x: (x * 1).unbind(0)[1],
    lambda lib, x: x.unbind(0)[1],
    lambda lib, x: (x * 1).chunk(2)[1],
    lambda lib, x: (x * 1).split(1)[0],
    lambda lib, x: (x * 1).unbind(0)[0][...],
    lambda lib, x: x.detach().unbind(0)[1],
    lambda lib, x: (x * 1).chunk(2, 1)[0].unbind(0)[1],
])
def test_inplace_on_a_multi_output_view(make):
    """In-place writes into an output of unbind/split/chunk (or a view of one) that requires grad went through (or
    gave the view-of-a-leaf error); torch refuses them: 'Output 1 of Unbind is a view and is being modified
    inplace. This view is the output of a function that returns multiple views...'."""
    def fn(lib):
        x = lib.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
        return make(lib, x).fill_(2.0)
    same(fn)

    def no_grad(lib):
        x = lib.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
        with lib.no_grad():
            return make(lib, x * 1).fill_(2.0)
    same(no_grad)


def test_flatten_of_zero_dim_checks_dims():
    """flatten(1, -1) of a 0-d tensor returned a 1-element tensor; torch checks the dims first (0 and -1 only)."""
    same(lambda lib: lib.tensor(1.0).flatten(1, -1))
    same(lambda lib: lib.tensor(1.0).flatten(0, -2))
    same(lambda lib: lib.tensor(1.0).flatten(-1, 0))


def test_sub_of_bool_with_alpha():
    """sub with a bool operand and alpha != 1 multiplied the bool by alpha first, so the bool error was lost and the
    subtraction ran; torch refuses any bool operand of sub."""
    same(lambda lib: lib.zeros(0).sub_(True, alpha=-1))
    same(lambda lib: lib.zeros(1).sub(lib.tensor([True]), alpha=2))
    same(lambda lib: lib.tensor([True]).sub(1, alpha=2))


def test_gather_names_the_first_bad_index_in_torch_order():
    """gather/scatter named the first out-of-range index in C order; torch's kernel loops over the positions along
    dim outside the others (unless dim is the last), so it meets and names another one."""
    same(lambda lib: lib.zeros(3, 4, 1).gather(-2, lib.tensor([[[1], [-4]], [[-1], [3]], [[1], [3]]])))
    same(lambda lib: lib.zeros(2, 3).gather(0, lib.tensor([[0, 5, -1], [7, 0, 0]])))
    same(lambda lib: lib.zeros(2, 3).gather(1, lib.tensor([[0, 5, -1], [7, 0, 0]])))


def test_index_tensor_bounds_over_an_empty_region():
    """x[:, idx] and x[:, idx] = v on a tensor with another dim of size 0 raised 'index 4 is out of bounds'; torch's
    kernel checks the bounds as it runs and over no elements it does not (a dim of size 0 itself still raises), so
    a bad value shape is what it reports."""
    same(lambda lib: lib.zeros(0, 4, 2)[:, lib.tensor([4])])
    same(lambda lib: lib.zeros(0, 4, 2)[lib.tensor([4])])

    def put(value):
        def fn(lib):
            y = lib.zeros(0, 4, 2)
            y[:, lib.tensor([4])] = value(lib)
            return y
        return fn
    same(put(lambda lib: 1.0))
    same(put(lambda lib: lib.zeros(0, 4, 2)))


def test_number_to_the_power_of_bools():
    """False ** bool_tensor computed; torch has no bool pow kernel and raises '"pow" not implemented for 'Bool''
    (bool_tensor ** True and 2 ** bool_tensor are fine)."""
    same(lambda lib: False ** lib.tensor([False, True]))
    same(lambda lib: lib.pow(True, lib.tensor([False, True])))
    same(lambda lib: lib.tensor([False, True]) ** True)
    same(lambda lib: 2 ** lib.tensor([False, True]))


def test_setitem_with_a_basic_index_expands_before_the_inplace_check():
    """x[()] = value on a view of a leaf that requires grad reported the in-place error where torch first expands
    the value ('expand(torch.LongTensor{[4, 3]}, size=[1]): ...'); an index tensor keeps the in-place check first."""
    def put(key, value):
        def fn(lib):
            v = lib.tensor([1.3, 2.0], requires_grad=True)
            view = v[:1]
            view[key(lib)] = value(lib)
            return view
        return fn
    same(put(lambda lib: (), lambda lib: lib.zeros(4, 3, dtype=lib.int64)))
    same(put(lambda lib: 0, lambda lib: lib.zeros(4, 3)))
    same(put(lambda lib: (), lambda lib: lib.zeros(1)))
    same(put(lambda lib: lib.tensor([0]), lambda lib: lib.zeros(4, 3)))


def test_amax_names_the_empty_dim_as_given():
    """amax/amin over an empty dim named it wrapped ('dim 1'); torch names it as the user wrote it ('dim -2'), while
    max/min/argmax name the wrapped dim."""
    for call in ("amax(-2)", "amax((0, -2))", "amin((2, 1))", "amin(1)", "max(-2)", "argmax(-2)", "min(-2)"):
        same(lambda lib: eval(f"x.{call}", {"x": lib.zeros(2, 0, 3)}))
    same(lambda lib: lib.tensor(1.0).take_along_dim(lib.tensor(0), dim=-2))


def test_maximum_and_clamp_keep_the_first_operand_on_a_tie():
    """maximum/minimum (and clamp, built on them) returned the second operand on a tie, so maximum(0.0, -0.0) was
    -0.0 and 1 / it -inf; torch returns the first operand on a tie."""
    for name in ("maximum", "minimum"):
        same(lambda lib: 1 / getattr(lib, name)(lib.tensor([0.0, -0.0]), lib.tensor([-0.0, 0.0])))
    same(lambda lib: 1 / lib.tensor([-0.0]).clamp(min=0.0))
    same(lambda lib: 1 / lib.tensor([0.0]).clamp(max=-0.0))
    same(lambda lib: 1 / lib.tensor([False]).maximum(lib.tensor([-0.0])))


def test_integer_power_with_negative_exponents():
    """An int64 tensor to negative int64 powers raised OverflowError unfused and gave -2**63 fused; torch's integer
    power gives 1 for a base of 1, +-1 for -1 and 0 otherwise, and wraps on overflow."""
    same(lambda lib: lib.tensor([0, 1, 2, -1, -1, -2, 3]) ** lib.tensor([-1, -2, -1, -3, -2, -2, 0]))
    same(lambda lib: lib.tensor([True, False]) ** lib.tensor([-1, -3]))
    same(lambda lib: lib.tensor([3, -5, 7]) ** lib.tensor([50, 41, 23]))
    same(lambda lib: (lib.tensor([3, 2]) ** lib.tensor([2, 5]) + 1) ** lib.tensor([3, -1]))


def test_inplace_into_a_multi_output_view_made_without_grad():
    """An in-place op with an operand that requires grad, into an unbind/chunk output of a tensor that did not,
    went through; torch refuses it ('A view was created in no_grad mode and is being modified inplace with grad
    mode enabled. This view is the output of a function that returns multiple views...')."""
    a = lambda lib: lib.tensor(-1.5, requires_grad=True)
    same(lambda lib: lib.ones(2).chunk(2)[0].div_(a(lib)))
    same(lambda lib: lib.ones(2).unbind(0)[0][...].mul_(a(lib)))
    same(lambda lib: lib.ones(2).unbind(0)[0].mul_(2))


def test_flatten_that_merges_nothing_is_the_tensor_itself():
    """flatten() of a 1-d tensor (start == end) made a new view; torch returns the tensor itself, so an in-place op
    through it is an op on the same tensor (x.flatten().mul_(x) is x.mul_(x))."""
    def fn(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True) * 1
        y = lib.zeros(2, 3)
        return lib.tensor([x.flatten() is x, y.flatten(1, 1) is y, y.flatten(-1, 1) is y, y.flatten() is y])
    same(fn)


def test_messages_of_zero_dim_unflatten_multi_output_squeeze_and_setitem_value():
    """unflatten(1, ...) of a 0-d tensor gave the wrapped 'unexpected error' where the dim is simply out of range;
    the multi-output view error named 'Squeeze' for SqueezeBackward1 (torch: 'Squeeze1'); the setitem shape
    mismatch showed the value's shape with its leading 1-dims, which torch drops first."""
    same(lambda lib: lib.tensor(0.0).unflatten(1, (1, -1)))
    same(lambda lib: lib.tensor(0.0).unflatten(0, (1, -1)))

    def squeeze(lib):
        x = lib.tensor([0.5, 1.5, 2.5], requires_grad=True)
        return x.chunk(3, 0)[2].squeeze(0).mul_(x)
    same(squeeze)

    def put(lib):
        y = lib.zeros(3, 4, 0, dtype=lib.bool)
        y[lib.tensor([0, -1, 2])] = lib.tensor([[1.25, 0.5]], dtype=lib.float64)
        return y
    same(put)


def test_expand_error_names_a_bool_tensor_by_its_backend_type():
    """expand's 'number of sizes' error named a bool tensor 'torch.BoolTensor'; torch prints 'CPUBoolType' for
    bool (it keeps torch.LongTensor, torch.FloatTensor, torch.DoubleTensor for the others), in setitem too."""
    for dtype in ("bool", "int64", "float32", "float64"):
        same(lambda lib: lib.zeros(2, 3, dtype=getattr(lib, dtype)).expand(3))

    def put(lib):
        y = lib.zeros(2, dtype=lib.bool)
        y[()] = lib.zeros(0, 1, dtype=lib.bool)
        return y
    same(put)


@pytest.mark.parametrize("key", [
    lambda lib: (slice(None), lib.tensor([0, 0])),
    lambda lib: (slice(1, None), lib.tensor([0, 0])),
    lambda lib: (5, lib.tensor([0, 0])),
    lambda lib: (Ellipsis, lib.tensor([0])),
    lambda lib: lib.tensor([3]),
])
def test_setitem_on_a_leaf_checks_in_place_before_index_bounds(key):
    """leaf[:, idx] = v with an index out of range (or into a dim of size 0) reported the index error; torch checks
    the in-place write on a leaf that requires grad before index_put_'s kernel looks at the indices (an int index
    out of range in the basic part is still reported first)."""
    def fn(lib):
        v = lib.zeros(1, 0, requires_grad=True)
        v[key(lib)] = 1.0
        return v
    same(fn)


def test_inplace_output_shape_checked_first_and_logical_not_is_not_differentiable():
    """An in-place op whose operand broadcasts beyond self reported alpha or dtype errors first; torch's
    TensorIterator checks the output shape first. logical_not_ on a leaf that requires grad (or a view of one)
    raised the in-place autograd errors; it is not differentiable and torch runs it."""
    same(lambda lib: lib.tensor(3).add_(lib.tensor([1]), alpha=0.5))
    same(lambda lib: lib.tensor(3).add_(lib.tensor([[1.0]])))
    same(lambda lib: lib.zeros(2).mul_(lib.zeros(3)))
    same(lambda lib: lib.zeros(2, 1).clamp_(lib.zeros(3)))
    same(lambda lib: lib.ones(2, 2, dtype=lib.bool).sub_(lib.ones(1, 2, 2)))  # sub's bool check comes first
    same(lambda lib: lib.ones(2).sub_(lib.tensor([True])))
    same(lambda lib: lib.tensor([0.5, 0.0], requires_grad=True).logical_not_())

    def view(lib):
        x = lib.tensor([0.5, 0.0], requires_grad=True)
        x[:1].logical_not_()
        return x
    same(view)


def test_norm_of_an_empty_dim_names_it_as_given():
    """norm with p=-inf over an empty dim named it wrapped ('dimension 0'); torch names it as written ('-3')."""
    same(lambda lib: lib.norm(lib.zeros(0, 2, 3), dim=(-3, -1), p=float("-inf")))
    same(lambda lib: lib.norm(lib.zeros(2, 0), dim=-1, p=float("inf")))


@pytest.mark.parametrize("key", [True, False, (), Ellipsis, None])
def test_setitem_with_a_python_bool_index(key):
    """x[True] = float64 value on a float32 tensor raised index_put_'s dtype error, and x[False] = v recorded a
    CopySlices node; torch copies into the new axis for a bare True (copy_ casts) and does nothing for False."""
    def fn(lib):
        x = lib.tensor(0.47)
        v = lib.tensor(1.48, dtype=lib.float64, requires_grad=True)
        x[key] = v * 1
        return x
    same(fn)


def test_grad_fn_repr_is_the_class_name():
    """A tensor's repr showed grad_fn=<torch::autograd::CopySlices> (the node's name()); torch shows the class
    name, grad_fn=<CopySlices>."""
    def reprs(lib):
        x = lib.zeros(2, requires_grad=True) * 1
        x[0] = 1.0
        y = lib.zeros(2, requires_grad=True) * 1
        y.copy_(lib.ones(2))
        return repr(x), repr(y)
    assert reprs(numgrad) == reprs(torch)


@pytest.mark.parametrize("value", [float("nan"), float("inf"), 0.0, 2.0])
@pytest.mark.parametrize("dim", [None, 0, -1])
def test_prod_of_zero_dim_passes_the_gradient(value, dim):
    """The gradient of prod of a 0-d tensor was g * out / x, NaN for NaN or inf; torch passes g unchanged."""
    def fn(lib):
        x = lib.tensor(value, requires_grad=True)
        y = x.prod() if dim is None else x.prod(dim)
        y.backward(lib.tensor(-0.25))
        return x.grad
    same(fn)


@pytest.mark.parametrize("write", [lambda lib, y: y.zero_(), lambda lib, y: y.fill_(2.0),
                                   lambda lib, y: y.copy_(lib.ones(2, dtype=lib.float64))])
def test_overwritten_values_get_zero_gradient_even_from_nan(write):
    """zero_/fill_/copy_ gave the overwritten values g * 0 as gradient, NaN where g was inf or NaN; torch gives
    zeros_like(grad)."""
    def fn(lib):
        x = lib.tensor([-1.0, 2.0], dtype=lib.float64, requires_grad=True)
        y = x * x
        z = write(lib, y).masked_fill(lib.tensor([True, False]), 1.5) * 0
        (z / z).sum().backward()  # 0 / 0: a NaN gradient reaches the write
        return x.grad
    same(fn)


def test_take_along_dim_into_an_empty_dim():
    """take_along_dim along a dim of size 0 with indices to take raised IndexError's message; torch's CPU
    kernel raises RuntimeError: ZeroDivisionError (it wraps the indices by the size), and an empty result is
    fine (found when known.py stopped counting ZeroDivisionError as the integer-division item)."""
    def run(L):
        out = []
        for x, idx, dim in ((L.zeros(0), L.tensor([0]), 0), (L.zeros(2, 0), L.tensor([[0]]), 1),
                            (L.zeros(2, 0), L.zeros(2, 1, dtype=L.int64), 0), (L.zeros(0), L.tensor([0]), None)):
            try:
                r = L.take_along_dim(x, idx, dim=dim)
                out.append(tuple(r.shape))
            except Exception as e:  # noqa: BLE001 - the type and message are compared
                out.append((type(e).__name__, str(e)))
        return out
    assert run(numgrad) == run(torch)


def test_masked_fill_of_an_integer_tensor_with_a_value_that_requires_grad():
    """An integer or bool tensor filled from a value that requires grad: torch refuses ("Autograd not support
    dtype"), since the result cannot carry a gradient; numgrad returned it."""
    def run(L):
        out = []
        for dtype in (L.int64, L.bool):
            try:
                L.zeros(2, dtype=dtype).masked_fill(L.tensor([True, False]), L.tensor(1.0, requires_grad=True))
                out.append("no error")
            except RuntimeError as e:
                out.append(str(e))
        return out
    assert run(numgrad) == run(torch)


def test_checks_in_torch_order_around_memory_overlap():
    """Found by the long profile after the overlap checks landed: clamp_ with number bounds checks its result
    type, and add_ with alpha the cast of its result, before the overlap and alpha checks; copy_ into a view
    of a leaf is autograd's refusal before any overlap; matrix_norm checks the dtype before its dims."""
    cases = [
        lambda L: L.tensor([True]).expand(2).clamp_(1.5, 2),
        lambda L: L.tensor([True, False]).add_(L.tensor([1, 2]), alpha=1.5),
        lambda L: L.ones(2, requires_grad=True)[0:1].copy_(L.ones(1)),
        lambda L: (lambda x: x[1:].copy_(x[:1]))(L.ones(3, requires_grad=True).view(3)),
        lambda L: L.zeros(2, 2, 2, dtype=L.int64).norm(dim=(0, 1, 2)),
    ]

    def run(L):
        out = []
        for case in cases:
            try:
                out.append(case(L).tolist())
            except Exception as e:  # noqa: BLE001 - the type and message are compared
                out.append((type(e).__name__, str(e)))
        return out
    assert run(numgrad) == run(torch)


def test_bool_alpha_with_a_number_and_integer_division_of_empty_results():
    """Found by the long profile: bool.add_(True, alpha=2) turned the number into an int (torch keeps a bool
    result); integer // and % of an empty result raised ZeroDivisionError (torch divides no element); bool
    operands of mismatched shapes gave the dtype's refusal before torch's shape error."""
    cases = [
        lambda L: L.tensor([True]).add_(True, alpha=2),
        lambda L: L.tensor([True, False]).add_(L.tensor([False, True]), alpha=0),
        lambda L: L.zeros(0, 0, dtype=L.int64) % False,
        lambda L: L.zeros(0, dtype=L.int64) // L.zeros(0, dtype=L.int64),
        lambda L: L.ones(2, dtype=L.int64) // 0,
        lambda L: L.ones(3, 8, dtype=L.bool)[:, ::2] // L.zeros(0, dtype=L.bool),
        lambda L: L.ones(2, 3, dtype=L.bool) % L.ones(2, dtype=L.bool),
    ]

    def run(L):
        out = []
        for case in cases:
            try:
                r = case(L)
                out.append((r.tolist(), str(r.dtype).split(".")[-1]))
            except Exception as e:  # noqa: BLE001 - the type and message are compared
                out.append((type(e).__name__, str(e)))
        return out
    assert run(numgrad) == run(torch)


def test_setitem_with_true_and_views_of_one_element():
    """Found by the long profile: x[True] = x on a 0-d tensor raised an overlap error (a bare True is a new
    axis, a copy into x itself, which torch allows); two views of one element are the same data whatever the
    strides of their size-1 dims; a shifted add_ still raises."""
    def run(L):
        out = []
        for case in (lambda: (lambda v: (v.__setitem__(True, v), v)[1])(L.tensor(True)),
                     lambda: (lambda v: (v.__setitem__(True, L.tensor([1.0, 2.0])), v)[1])(L.zeros(2)),
                     lambda: (lambda x: x[1:].add_(x[:-1]))(L.arange(5.0))):
            try:
                out.append(case().tolist())
            except RuntimeError as e:
                out.append(str(e))
        return out
    assert run(numgrad) == run(torch)


def test_index_select_out_of_bounds_on_an_empty_input():
    """Found by the long profile: index_select on an empty input of two or more dims words an out-of-range
    index as torch's kernel does for that path ("INDICES element is out of DATA bounds"), on any dim."""
    def run(L):
        out = []
        for shape, dim, idx in (((0, 0, 4), -1, [1, -4]), ((2, 0), 0, [1, -2]), ((0,), 0, [0]), ((0, 3), 1, [5]),
                                ((0, 3), 1, [1]), ((3, 0), 0, [5]), ((2, 0, 3), 2, [-4]), ((2, 3), 0, [5])):
            try:
                out.append(tuple(L.index_select(L.zeros(shape), dim, L.tensor(idx)).shape))
            except (RuntimeError, IndexError) as e:
                out.append((type(e).__name__, str(e)))
        return out
    assert run(numgrad) == run(torch)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("op", ["fmod", "remainder"])
@pytest.mark.parametrize("create_graph", [False, True])
def test_divisor_gradient_of_fmod_and_remainder_at_special_values(dtype, op, create_graph):
    """Found by the long profile (seed 404): fmod's gradient for the divisor, -g * trunc(a / b), was written
    a / b - fmod(a / b, 1), which is NaN where a / b is infinite (b == 0) and torch gives -+inf. Both divisor
    gradients are compared at zeros, infinities and NaN, fused and unfused, with and without create_graph."""
    vals = [-2.5, -1.0, -0.0, 0.0, 0.7, 3.0, float("inf"), float("-inf"), float("nan")]
    a = np.array([x for x in vals for _ in vals], dtype=dtype)
    b = np.array([y for _ in vals for y in vals], dtype=dtype)

    def grads(L):
        x, y = L.tensor(a, requires_grad=True), L.tensor(b, requires_grad=True)
        return [g.detach().numpy() for g in L.autograd.grad(getattr(L, op)(x, y).sum(), [x, y],
                                                            create_graph=create_graph)]
    ref = grads(torch)
    for fused in (True, False):
        with numgrad.fusion(fused):
            for r, g in zip(ref, grads(numgrad)):
                np.testing.assert_array_equal(g, r)


def _accumulated_before_error(L, make):
    a, b, c = (L.tensor([v], requires_grad=True) for v in (1.5, 2.0, 3.0))
    try:
        make(a // b, c).sum().backward()
    except RuntimeError as e:
        msg = str(e)
    return msg, [None if t.grad is None else t.grad.tolist() for t in (a, b, c)]


@pytest.mark.parametrize("make", [lambda v, c: v * c, lambda v, c: c * v, lambda v, c: v.fmod(c),
                                  lambda v, c: c.sin() * v + c])
def test_backward_order_of_error_nodes_and_leaves(make):
    """Found by the long profile (seed 505): whether a leaf's .grad is written before floor_divide's
    NotImplemented node raises depends on torch's ready queue: AccumulateGrad and error nodes both take the
    largest sequence number and ties go as std::priority_queue breaks them. numgrad numbered them as ordinary
    nodes and broke ties by id (leaf grads written where torch's stay None, and the other way)."""
    ref = _accumulated_before_error(torch, make)
    for fused in (True, False):
        with numgrad.fusion(fused):
            assert _accumulated_before_error(numgrad, make) == ref


def _hook_order(L, seed):
    """A random graph over 2-4 leaves with hooks on the leaves and some intermediates: the order the hooks
    run in, any error, and the leaves' grads."""
    import random
    rng, log = random.Random(seed), []
    leaves = [L.tensor([rng.uniform(0.5, 2) for _ in range(3)], dtype=L.float64, requires_grad=True)
              for _ in range(rng.randint(2, 4))]
    for i, leaf in enumerate(leaves):
        leaf.register_hook(lambda g, i=i: log.append(f"leaf{i}"))
    values = list(leaves)
    for k in range(rng.randint(1, 8)):
        op, a, b = rng.choice(["add", "mul", "sin", "exp", "sub", "floordiv", "sum"]), rng.choice(values), \
            rng.choice(values)
        v = {"add": lambda: a + b, "mul": lambda: a * b, "sub": lambda: a - b, "sin": lambda: a.sin(),
             "exp": lambda: (a * 0.1).exp(), "floordiv": lambda: a // b, "sum": lambda: a.sum() * b}[op]()
        if rng.random() < 0.5:
            v.register_hook(lambda g, k=k: log.append(f"v{k}"))
        values.append(v)
    picked = rng.sample(values[len(leaves):], min(len(values) - len(leaves), rng.randint(1, 3)))
    try:
        sum(v.sum() for v in picked).backward()
    except RuntimeError as e:
        log.append(str(e))
    return log + [None if t.grad is None else np.round(t.grad.numpy(), 9).tolist() for t in leaves]


def test_hooks_run_in_torch_order_fused_and_unfused():
    """Found while fixing the ready queue: a fused backward region sent all its members' gradients at once,
    so leaves below it accumulated (and ran their hooks) in another order than torch's, which runs each
    member as it pops. Members now wait in the queue with their results precomputed. 300 random graphs."""
    for seed in range(300):
        ref = _hook_order(torch, seed)
        for fused in (True, False):
            with numgrad.fusion(fused):
                assert _hook_order(numgrad, seed) == ref, (seed, fused)


def test_leaf_hooks_run_before_accumulate_grad_prehooks_and_in_autograd_grad():
    """A leaf's register_hook hooks ran inside AccumulateGrad: after that node's own pre-hooks, and never in
    autograd.grad, which returned the gradient the hooks would have changed (torch applies them: a silent
    wrong number)."""
    def run(L):
        log = []
        x = L.tensor([1., 2.], requires_grad=True)
        x.register_hook(lambda g: log.append(("hook", g.tolist())) or g * 10)
        y = (x * 3).sum()
        log.append(("grad", L.autograd.grad(y, x, retain_graph=True)[0].tolist()))
        (x * 1).grad_fn.next_functions[0][0].register_prehook(lambda gs: log.append("prehook"))
        y.backward(inputs=[x], retain_graph=True)
        y.backward()
        return log + [x.grad.tolist()]
    assert run(numgrad) == run(torch)


def test_cat_of_only_legacy_empty_tensors_takes_any_dim():
    """Found by the long profile (seed 404): torch.cat of 1-d empty tensors only accepts any dim (it wraps
    the dim against a tensor it keeps, and there is none); a dim that is not an int is torch's TypeError."""
    def run(L):
        out = []
        for ts, dim in (([L.zeros(0)], -2), ([L.zeros(0), L.zeros(0, dtype=L.float64)], 7), ([L.zeros(2)], 1.5),
                        ([L.zeros(0)], None), ([L.zeros(2, 3), L.zeros(0)], -1), ([L.zeros(2)], True)):
            try:
                r = L.cat(ts, dim)
                out.append((tuple(r.shape), str(r.dtype)))
            except (TypeError, IndexError, RuntimeError) as e:
                out.append((type(e).__name__, str(e)))
        x = L.zeros(0, requires_grad=True)
        L.cat([x, x], -3).sum().backward()
        return out + [tuple(x.grad.shape)]
    assert run(numgrad) == run(torch)


def test_fused_backward_region_leaves_out_nodes_that_raise_or_unpack_through_hooks():
    """Found by the long profile (seed 202): a fused backward region unpacked a member's saved tensor, modified
    in place since, when the region ran, so the version error came before the gradient torch writes into a
    leaf first (leaf0.grad None where torch has it). Members with such a tensor, or with saved-tensor hooks
    (whose unpack runs when the node does, in order with other hooks), now run on their own."""
    def version_error(L):
        leaf0 = L.tensor(0.6069231033325195, requires_grad=True)
        leaf2 = L.tensor([-1.0, 1.5, -1.5, -1.5], requires_grad=True)
        v5 = leaf2[::2].tan().div_(leaf0)
        try:
            v5.take_along_dim(L.tensor([1, 1, 0]), dim=0).sum().backward()
        except RuntimeError as e:
            return str(e), leaf0.grad.item(), leaf2.grad
        return None

    def hooks(L):
        log = []
        x = L.tensor([0.5, 1.5], requires_grad=True)
        y = L.tensor([2.0, 3.0], requires_grad=True)
        y.register_hook(lambda g: log.append("y"))
        with L.autograd.graph.saved_tensors_hooks(lambda t: (log.append("pack"), t)[1],
                                                  lambda t: (log.append("unpack"), t)[1]):
            out = ((x.sin() * y).exp() + x).sum()
        out.backward()
        return log, x.grad.tolist(), y.grad.tolist()
    for case in (version_error, hooks):
        ref = case(torch)
        for fused in (True, False):
            with numgrad.fusion(fused):
                assert case(numgrad) == ref, (case.__name__, fused)


def test_bool_base_power_backward_where_torch_fails_its_own_assert():
    """The long profile met torch's INTERNAL ASSERT ('unknown ivalue tag') in the backward of `False ** x`:
    a torch bug, not a refusal. numgrad gives the gradient of the same math with an int base, which is what
    the fuzz runner now takes as the reference there (runner.torch_reference)."""
    from oracle.fuzz.program import Input, Program, Ref, Step, Backward
    from oracle.fuzz.runner import check_program, torch_reference
    for base in (False, True):
        program = Program([Input(np.array([-1.0, 0.0, 2.0], dtype=np.float32), requires_grad=True)],
                          [Step("op", "pow", (base, Ref(0)))], Backward(1, "sum"))
        ref = torch_reference(program)
        assert ref.error is None and ref.grads[0] is not None
        assert check_program(program)[1] == []


def test_fused_backward_region_whose_gradients_are_all_zeros():
    """Found by the long profile (seed 707): `(x.sign() - 1).sum().backward()` raised an IndentationError with
    fusion on: the region (SubBackward0, SignBackward0) had no gradient for the kernel to compute (sign's is a
    zero of its own), and the generated loop had an empty body. No kernel runs for such a region now."""
    same(_grad_of(lambda L, x: x.sign() - (-1), np.array([[-1.0, 2.0]], dtype=np.float32)))
    same(_grad_of(lambda L, x: ((x.sign() - 1) * x.round()).exp(), np.array([-1.5, 0.0, 2.0])))


@pytest.mark.parametrize("make", [lambda L, x: x ** L.tensor([True, False]), lambda L, x: x ** L.tensor(True),
                                  lambda L, x: L.pow(x, L.tensor([True, False])) * 1,
                                  lambda L, x: x.clone().pow_(L.tensor([True, False])),
                                  lambda L, x: L.tensor([True, False]) ** x, lambda L, x: x ** L.tensor([2, 3])])
def test_power_with_a_bool_exponent_tensor_refuses_its_backward(make):
    """Found by the long profile (seed 707): torch's derivative of pow for the base computes `exponent - 1`,
    which a bool exponent refuses ('Subtraction, the `-` operator, with a bool tensor is not supported'), so
    the backward raises; numgrad gave a gradient. Declared in the op table (backward_refuses)."""
    same(_grad_of(make, np.array([0.5, -2.0], dtype=np.float32)))


def test_power_saves_its_result_for_the_version_check_as_torch():
    """Found by the long profile (seed 808): torch saves an op's result whenever some derivative reads it, even
    when that derivative is not needed (pow's for a tensor exponent, with only the base requiring grad), so
    writing the result in place makes the backward raise the version error, before the bool-exponent
    refusal. numgrad saved only what the needed derivatives read."""
    def run(L, exponent):
        x = L.tensor([0.5, 2.0], requires_grad=True)
        y = x.clone() ** exponent(L)
        y.add_(1) if y.dtype.is_floating_point else y.clamp_(-1, 0.5)
        y.sum().backward()
        return x.grad
    same(lambda L: run(L, lambda L: L.tensor([2.0, 3.0])))
    same(lambda L: run(L, lambda L: L.tensor([True, False])))
    same(lambda L: run(L, lambda L: 2.0))  # a number exponent: PowBackward0 saves no result


def test_var_and_std_of_equal_values_follow_torch_algorithms():
    """Found by the long profile (seed 909): the std over a dim of equal values (an expanded input) was a
    rounding residue (2.7e-16, its sqrt 1.6e-8) where torch's Welford pass gives exactly 0. Over dims numgrad
    now refines its mean once (exact for equal values); a reduction to one result follows torch's two passes
    about the mean in the input's dtype."""
    def run(L):
        a = L.tensor([[[1.9467063028777711]]], dtype=L.float64).expand(4, 3, 1)
        return (a.std(1), a.var(1, keepdim=True), L.tensor([[0.7] * 5] * 3).var(1), a.std(),
                L.tensor([0.1] * 7, dtype=L.float64).var(), L.tensor([0.3] * 13, dtype=L.float64).std(0))
    ref = run(torch)
    for fused in (True, False):
        with numgrad.fusion(fused):
            for r, g in zip(ref, run(numgrad)):
                np.testing.assert_array_equal(g.numpy(), r.numpy())


_INTEGER_GRAD_OPS = {
    "neg": lambda L, v: -v, "mul": lambda L, v: v * 2, "add": lambda L, v: v + v, "mul_float": lambda L, v: v * 1.5,
    "floor_divide": lambda L, v: v // 2, "remainder": lambda L, v: v % 2, "pow": lambda L, v: v ** 2,
    "rpow": lambda L, v: 2 ** v, "sign": lambda L, v: v.sign(), "where": lambda L, v: L.where(v > 2, v, 0),
    "clamp": lambda L, v: v.clamp(0, 3), "maximum": lambda L, v: v.maximum(v), "sin": lambda L, v: v.sin(),
    "eq": lambda L, v: v == 2, "neg_": lambda L, v: v.neg_(), "mul_": lambda L, v: v.mul_(2),
    "add_": lambda L, v: v.add_(v), "abs_": lambda L, v: v.abs_(), "clamp_": lambda L, v: v.clamp_(0, 3),
    "floor_divide_": lambda L, v: v.floor_divide_(2)}


@pytest.mark.parametrize("op", _INTEGER_GRAD_OPS)
def test_elementwise_ops_on_an_integer_tensor_that_requires_grad(op):
    """An integer tensor requires grad after an index_put_ of a value that does. torch then refuses an
    out-of-place integer result a grad_fn ('Autograd not support dtype: Long'), records an in-place one, and
    records nothing for floor_divide (no derivative); numgrad recorded a node for every one."""
    def run(L):
        v = L.tensor([4, 5, 2])
        v[L.tensor([True, False, False])] = L.tensor(1.5, requires_grad=True)
        r = _INTEGER_GRAD_OPS[op](L, v)
        return r, str(r.grad_fn.name() if r.grad_fn is not None else None)
    def described(L):
        r, name = run(L)
        return str(r.dtype), r.requires_grad, name, r.tolist()
    _same_outcome(described)


def _same_outcome(run):
    """run(lib)'s result, or its RuntimeError's message, is torch's in numgrad fused and unfused."""
    def outcome(L):
        try:
            return run(L)
        except RuntimeError as e:
            return str(e)
    ref = outcome(torch)
    for fused in (True, False):
        with numgrad.fusion(fused):
            assert outcome(numgrad) == ref


def test_version_error_names_a_bool_tensor_by_its_type():
    """Found by the long profile (seed 1111): torch names a modified bool tensor CPUBoolType in the version
    error (bool has no legacy type name such as torch.FloatTensor); numgrad wrote torch.BoolTensor."""
    def run(L, c):
        x = L.tensor([1., 2.], requires_grad=True)
        y = L.where(c, x, 0.) if c.dim() else x * c
        c.logical_not_()
        y.sum().backward()
    for make in (lambda L: L.tensor([True, False]), lambda L: L.tensor(True), lambda L: L.tensor([1, 2])):
        same(lambda L: run(L, make(L)))


def test_autograd_grad_with_no_inputs():
    """autograd.grad with an empty `inputs` returned an empty tuple; torch refuses it before anything else."""
    def run(L, detach):
        x = L.tensor([[1., 2.], [3., 4.]], requires_grad=True)
        return L.autograd.grad((x.detach() if detach else x) * 2, [])
    same(lambda L: run(L, False))
    same(lambda L: run(L, True))


@pytest.mark.parametrize("write", [lambda v, s: v.copy_(s), lambda v, s: v.fill_(s.sum()), lambda v, s: v.add_(s),
                                   lambda v, s: v.mul_(s), lambda v, s: v.copy_(s.detach()),
                                   lambda v, s: v.add_(s.detach())])
@pytest.mark.parametrize("src_shape", [(1,), (1, 4, 3)])
def test_write_into_an_unbind_output_made_without_grad(write, src_shape):
    """Found by the long profile (seed 2025): an output of unbind made from a tensor that did not require grad
    refuses a write of one that does, and torch checks that (handle_view_on_rebase) before the op's own checks
    of its operands (broadcast shape); numgrad raised the shape error first."""
    def run(L):
        v3, v4, v5 = (L.tensor([[0.5, -0.5, 0.0]], dtype=L.float64) ** 2).unbind(-1)
        src = L.ones(src_shape, dtype=L.float64, requires_grad=True)
        return write(v5, src)
    same(run)


_LAYOUT_OPS = {
    "any": lambda L, x: x.bool().any(2), "sum": lambda L, x: x.sum(2), "amax": lambda L, x: x.amax((0, 2)),
    "max": lambda L, x: x.max(2)[0], "argmax": lambda L, x: x.argmax(2), "std": lambda L, x: x.std(2),
    "log_softmax": lambda L, x: x.log_softmax(0), "softmax": lambda L, x: x.softmax(2), "clone": lambda L, x: x.clone(),
    "clone_then_inplace": lambda L, x: x.clone().mul_(2), "contiguous": lambda L, x: x.contiguous(),
    "clone_of_expanded": lambda L, x: x[:, :1].expand(4, 3, 3).clone(), "masked_fill": lambda L, x: x.masked_fill(x > 3, 0.),
    "index_select": lambda L, x: x.index_select(1, L.tensor([0, 2])), "advanced_index": lambda L, x: x[:, [0, 2]],
    "cat": lambda L, x: L.cat([x, x], 1), "stack": lambda L, x: L.stack([x, x]), "matmul": lambda L, x: x @ x.transpose(1, 2)}


@pytest.mark.parametrize("op", _LAYOUT_OPS)
def test_memory_layout_of_non_elementwise_results(op):
    """Found by the final long profile (seed 2024) once elementwise results follow their inputs' layout: NumPy's
    reductions, fancy indexing, concatenate and stack keep a transposed input's memory order (order 'K') where
    torch's results are contiguous, and a view of an elementwise result of one then failed where torch's works;
    torch's clone keeps a dense input's strides (and makes others contiguous) where numgrad's was C order."""
    def run(L):
        x = L.tensor(np.arange(36.).reshape(3, 4, 3)).transpose(0, 1)
        r = _LAYOUT_OPS[op](L, x)
        return tuple(r.shape), r.stride(), r.is_contiguous(), r.tolist()
    assert run(numgrad) == run(torch)


@pytest.mark.parametrize("value", [[1, 2], np.array([1., 2.]), None, "a", 2 ** 70, 1e300, float("inf"), np.float64(2.5),
                                   True, 3.5e38])
@pytest.mark.parametrize("dtype", ["int64", "float32", "bool"])
def test_setitem_value_is_converted_before_indexing(value, dtype):
    """Found by the final long profile (seed 2024): torch converts a number to the tensor's dtype before it
    looks at the index (an out-of-range number raises even with an out-of-range index), refuses other values
    by type ("can't assign a list to a torch.LongTensor"), and reads a Python int as a C long long."""
    def run(L):
        t = L.zeros(3, dtype=getattr(L, dtype))
        t[-4 if isinstance(value, float) else 0:2] = value
        return t
    same(run)


def test_refused_dtype_comes_after_the_broadcast_shape_and_bool_expand_names_its_type():
    """Found by the final long profile (seed 2024): a kernel's refusal of a dtype ('"pow" not implemented for
    'Bool'') comes after the broadcast shape's error in torch (bool subtraction's refusal comes before it); and
    `x[True] = v` expands v in its own dtype, so the error names a bool v CPUBoolType."""
    same(lambda L: L.zeros(3, dtype=L.bool) ** L.zeros(2, dtype=L.bool))
    same(lambda L: L.zeros(3, dtype=L.bool).pow_(L.zeros(2, dtype=L.bool)))
    same(lambda L: L.zeros(3, dtype=L.bool) - L.zeros(2, dtype=L.bool))
    same(lambda L: L.zeros(3, dtype=L.bool) ** L.zeros(3, dtype=L.bool))
    def put(L, value):
        t = L.zeros(0, 2)
        t[True] = value
        return t
    same(lambda L: put(L, L.zeros(0, 2, dtype=L.bool)))
    same(lambda L: put(L, L.zeros(3, 2, dtype=L.int64)))


def test_leaf_grad_follows_torch_layout_contract():
    """.grad takes the leaf's strides when the leaf is dense (a transposed leaf gets a transposed grad) and C
    order otherwise, as torch's AccumulateGrad (clone_obey_contract), whatever layout the gradient came in."""
    def run(L):
        w = L.tensor(np.arange(6.).reshape(2, 3)).t().detach().requires_grad_(True)
        (w * 2).sum().backward()
        v = L.tensor(np.arange(12.).reshape(2, 6))[:, ::2].detach().requires_grad_(True)
        (v.t() * 2).sum().backward()
        x = L.ones(2, 3, requires_grad=True)
        (x.t().exp() * 2).sum().backward()
        return [(t.grad.stride(), t.grad.tolist()) for t in (w, v, x)]
    for fused in (True, False):
        with numgrad.fusion(fused):
            assert run(numgrad) == run(torch)


def test_in_place_write_into_a_view_of_a_non_contiguous_root():
    """Found by the final long profile (seed 2025): once elementwise results take their inputs' memory order, a
    root can be a transposed tensor, and an in-place write into a view of it raised numgrad's own 'needs the
    viewed tensor to be contiguous'. CopySlices and the view's AsStrided now work in the root's own memory
    layout, as torch's: values and gradients for five views, four writes and three root layouts."""
    a = np.arange(1., 13.).reshape(3, 4)

    def run(L):
        out = []
        for mk in (lambda x: x.t().exp(), lambda x: x.t().tan().t(), lambda x: (x.t() * 2).permute(1, 0)):
            for write in (lambda v: v.mul_(v), lambda v: v.add_(1), lambda v: v.copy_(v * 3), lambda v: v.fill_(2.)):
                for view in (lambda r: r[0], lambda r: r[:, 1], lambda r: r.narrow(0, 1, 2), lambda r: r[1:, ::2],
                             lambda r: r.t()[0]):
                    x = L.tensor(a, requires_grad=True)
                    r = mk(x)
                    try:  # v.mul_(v) makes backward raise the version error, in torch too
                        write(view(r))
                        (r * L.tensor(np.arange(r.numel(), dtype=np.float64).reshape(r.shape))).sum().backward()
                    except RuntimeError as e:
                        out.append(str(e))
                        continue
                    out.append((r.stride(), np.round(r.detach().numpy(), 6).tolist(),
                                np.round(x.grad.numpy(), 6).tolist()))
        return out
    ref = run(torch)
    for fused in (True, False):
        with numgrad.fusion(fused):
            assert run(numgrad) == ref


_STALE_VIEW_USES = {
    "eq": lambda L, v: v == 1, "or": lambda L, v: v | 1, "or_tensor": lambda L, v: L.ones(2, dtype=L.int64) | v,
    "sign": lambda L, v: v.sign(), "floor_divide": lambda L, v: v // 2, "mul": lambda L, v: v * 2,
    "argmax": lambda L, v: v.argmax(), "isnan": lambda L, v: v.isnan(), "long": lambda L, v: v.long(),
    "detach": lambda L, v: v.detach(), "sum": lambda L, v: v.sum(), "item": lambda L, v: v[0].item(),
    "clone": lambda L, v: v.clone(), "logical_not": lambda L, v: v.logical_not(),
    "requires_grad": lambda L, v: v.requires_grad, "is_leaf": lambda L, v: v.is_leaf,
    "backward": lambda L, v: v.sum().backward()}


@pytest.mark.parametrize("use", _STALE_VIEW_USES)
def test_split_output_after_its_base_was_written_in_place(use):
    """Found by the final long profile (seed 3032): an output of split/unbind whose base was written in place
    cannot take the write's history. torch raises ('Output 0 of Split is a view and its base or another view of
    its base has been modified inplace...') wherever it reads the view's grad_fn: a differentiable op, a bitwise
    op (it records a NotImplemented node), is_leaf, backward; not for requires_grad, comparisons or detach.
    numgrad regenerated the view's history silently."""
    def run(L):
        x = L.tensor([1.0, 2.0, 3.0], requires_grad=True).clone()
        a, b = x.split(2)
        x.mul_(2)
        r = _STALE_VIEW_USES[use](L, a)
        return r if isinstance(r, (bool, float, type(None))) else r.tolist()
    _same_outcome(run)


def test_bool_exponent_takes_no_zero_shortcut():
    """Found by the final long profile (seed 4042): torch's pow backward skips its zero-exponent shortcut for a
    bool exponent, so x ** False has gradient 0 * x ** -1 (NaN at 0); numgrad gave 0 everywhere."""
    for e in (False, True, 0, 0.0):
        same(_grad_of(lambda L, x: x ** e, np.array([0.0, -2.0, 1.5], dtype=np.float32)))
        same(_grad_of(lambda L, x: x.transpose(0, 1) ** e, np.array([[0.0, -2.0], [1.5, 0.0]], dtype=np.float32)))


def test_view_written_through_another_view_then_used_as_an_op_input():
    """Found by the final long profile (seed 4042): a transposed view written through a slice of it (with a value
    requiring grad) requires grad in torch, and an op on it records a node; numgrad's ops read the view's stale
    flag (no node, then 'element 0 of tensors does not require grad' at backward)."""
    def run(L):
        v0 = L.tensor([[-2.0], [-2.0], [0.0]]).transpose(0, 1)
        leaf1 = L.tensor([[1.0, -1.13, -1.28]], requires_grad=True)
        v0[0::2] = leaf1[::2]
        v3 = L.erf(v0)
        v3.backward(L.tensor([[0.5, -0.4, 0.4]]))
        return v3, leaf1.grad
    same(run)


def test_bool_negation_in_place_is_refused_before_the_overlap_check():
    """Found by the final long profile (seed 5052): torch refuses `neg_` of a bool tensor before it looks at
    the written tensor's memory (an expanded one raised numgrad's overlap error first)."""
    same(lambda L: L.tensor([[True], [False]]).expand(2, 3).neg_())
    same(lambda L: L.tensor([[1.], [2.]]).expand(2, 3).neg_())


def test_a_node_checks_every_saved_tensor_before_its_backward():
    """Found by the final long profile (seed 5052): torch's nodes unpack every saved tensor when they run, so a
    tensor written since raises there even when the derivative does not read it (gather saves its input);
    numgrad's reached another node's saved tensor first, and named it in the error."""
    def run(L):
        x = L.tensor([1., 2., 3.], requires_grad=True)
        y = x * 1
        z = y.gather(0, L.tensor([0, 2]))
        y.add_(1)
        z.sum().backward()
        return x.grad
    same(run)


def test_runner_accepts_a_rounding_difference_carried_through_a_jump():
    """Found by the final long profile (seed 5051): numgrad's float32 exp(4) is one ulp from torch's (both
    within SLEEF's and Cephes' bounds), and fmod of its expm1 by a large divisor turned that ulp into a whole
    step. The runner now checks such a step's result against torch's op on numgrad's own inputs; a wrong op
    still fails (its inputs would be bit-identical, or torch's op on them would disagree)."""
    from oracle.fuzz.program import Input, Program, Ref, Step
    from oracle.fuzz.runner import check_program
    program = Program([Input(np.array([[4, 1, 2, 4], [1, 0, 4, -3]], dtype=np.int64))],
                      [Step("fn", "exp", (Ref(0),)), Step("method", "amax", (Ref(1),)),
                       Step("method", "expm1", (Ref(1),)), Step("fn", "fmod", (Ref(3), Ref(2)))])
    assert check_program(program)[1] == []


@pytest.mark.parametrize("op", ["mul", "div", "pow", "mm", "mv", "dot", "bmm", "amax", "softmax"])
def test_backward_reports_the_first_modified_saved_tensor_in_torchs_unpack_order(op):
    """When several saved tensors of one node were modified in place, numgrad reported `self` first where torch's
    generated backward unpacks the saved inputs in alphabetical order of their names (mul: other before self; mm:
    mat2 before self), then the saved outputs; a stale unbind view among them then raised the multi-output view
    error instead of the version error (fuzz seed 6061, program 9684)."""
    def prog(lib):
        a = lib.tensor(np.array([[0.5, 1.5, 2.0], [1.0, -1.0, 0.25]]), requires_grad=True)
        b = lib.tensor(np.array([[1.0, 2.0, 3.0], [0.5, 0.5, 2.0]]), requires_grad=True)
        x, y = a * 1, b * 1
        z = {"mul": lambda: x * y, "div": lambda: x / y, "pow": lambda: x ** y, "mm": lambda: x.mm(y.t()),
             "mv": lambda: x.mv(y[0]), "dot": lambda: lib.dot(x[0], y[0]), "bmm": lambda: x[None].bmm(y.t()[None]),
             "amax": lambda: x.amax(0) * y, "softmax": lambda: lib.softmax(x, 0) * y}[op]()
        x.mul_(1)
        y.add_(1)
        z.sum().backward()
        return z
    same(prog)


def test_unbind_view_saved_by_a_node_then_written_through_its_base():
    """seed 6061, program 9684: mul saved an unbind output and its base, then the base was written in place; torch
    raises the saved base's version error (it is unpacked first), numgrad raised the unbind view error."""
    def prog(lib):
        v1 = lib.tensor(np.array([[1.5, -1.5], [-0.5, 0.0]], dtype=np.float32), requires_grad=True) * 1
        v1.cos_()
        _, v7 = v1.unbind(-2)
        v1.mul_(v7 * v1)
        v1.sum().backward()
        return v1
    same(prog)


def test_result_saved_by_an_in_place_op_through_a_view_shares_the_views_version():
    """seed 6062, program 4570: relu_ through an expand view saves its result, the view; a later write through the
    base bumps that version, so torch's backward raises (naming the view's regenerated AsStrided grad_fn), where
    numgrad had saved a tensor with a version counter of its own and gave gradients. torch holds the view's
    grad_fn weakly: once the view is gone its error names the op (Relu) instead."""
    def prog(lib, method, keep):
        v3 = lib.tensor(np.array([-1.0, 0.25, 2.0, 3.0]), requires_grad=True).sin()
        view = v3.expand((-1,))
        getattr(view, method)()
        if not keep:
            del view
        v3.add_(float("nan"))
        v3.sum().backward()
        return v3
    for method in ("relu_", "exp_", "tanh_", "sigmoid_", "sqrt_"):
        for keep in (True, False):
            same(lambda lib: prog(lib, method, keep))


@pytest.mark.parametrize("seed", range(6))
def test_gather_and_scatter_name_the_first_bad_index_in_torchs_loop_order(seed):
    """seed 8081, program 4409: with several indices out of range, torch names the first its kernel meets; its
    TensorIterator over the index (dim squashed) loops over the outer dims, then along dim, then over the fastest
    coalesced dims, ordered by the output's strides (scatter_ writes self: its layout), where numgrad read the
    index as if dim were outermost."""
    rng = np.random.default_rng(seed)
    for _ in range(60):
        nd = int(rng.integers(2, 5))
        shape = tuple(int(rng.integers(1, 4)) for _ in range(nd))
        d = int(rng.integers(0, nd))
        ishape = tuple(int(rng.integers(1, n + 1)) if k != d else int(rng.integers(1, 4)) for k, n in enumerate(shape))
        idx = rng.integers(-3, shape[d] + 3, size=ishape)
        perm_t, perm_i = rng.permutation(nd), rng.permutation(nd)
        x = rng.standard_normal(tuple(shape[p] for p in perm_t))
        ia = np.ascontiguousarray(np.transpose(idx, perm_i))
        op = ["gather", "scatter", "scatter_add", "scatter_", "scatter_add_"][int(rng.integers(0, 5))]

        def run(lib):
            t = lib.tensor(x).permute(*[int(v) for v in np.argsort(perm_t)])
            i = lib.tensor(ia).permute(*[int(v) for v in np.argsort(perm_i)])
            if op == "gather":
                return lib.gather(t, d, i)
            src = lib.ones(ishape, dtype=t.dtype)
            return getattr(t, op)(d, i, src) if op.endswith("_") else getattr(lib, op)(t, d, i, src)
        same(run)


def test_relu_of_bool_is_refused_before_the_overlap_check():
    """seed 8081, program 4462: torch's relu_ refuses bool before TensorIterator's overlap check; numgrad raised
    the overlap error for an expanded bool tensor."""
    same(lambda lib: lib.tensor([[[True]], [[True]]]).expand(2, 2, 3).relu_())


def test_pow_exponent_gradient_keeps_a_nan_incoming_gradient_at_zero_to_the_zero():
    """seed 8081, program 6662: torch's pow_backward_exponent multiplies the incoming gradient outside its where,
    so a NaN gradient stays NaN where base and exponent are 0; numgrad's formula had g inside and gave 0."""
    def run(lib):
        a = lib.tensor([0.0, 0.0, 2.0, 0.0], requires_grad=True)
        b = lib.tensor([0.0, 1.0, 0.0, -1.0], requires_grad=True)
        g = lib.tensor([float("nan"), float("nan"), float("nan"), 1.0])
        y = a ** b
        z = 0.0 ** b
        (y * g + z * g).sum().backward()
        return y, a.grad, b.grad
    same(run)


def test_saved_result_of_an_in_place_op_through_a_view_names_the_op_once_the_view_took_another_grad_fn():
    """seed 9091, program 635: tanh_ through a view saved the view; a later write through it gave the view another
    grad_fn, and torch's weak reference to the first died, so its version error names Tanh, not AsStrided."""
    def prog(lib):
        v1 = lib.tensor(np.array(-0.6193547620964238), requires_grad=True).abs()
        v1.div_(3.0)
        v3 = v1.permute(())
        v3.tanh_()
        v3[True] = False
        v3.backward(lib.tensor(1.5, dtype=lib.float64))
        return v3
    same(prog)


def test_setitem_into_a_multi_output_view_made_without_grad_refuses_a_value_requiring_grad_first():
    """seed 10101, program 9894: writing a value that requires grad into a chunk of a bool tensor: torch's
    index_put_ refuses the multi-output view before it compares the value's shape; numgrad judged the shape first
    (its check was given no inputs, so it never saw the value require grad)."""
    def prog(lib):
        v0 = lib.tensor(np.array([[[-0.8]], [[1.2]], [[2.0]]], dtype=np.float32), requires_grad=True)
        v2 = lib.tensor(2.0, requires_grad=True).fmod(v0)
        (v4,) = (v0 == v0).chunk(3, -2)
        v4[lib.tensor([[3, 3], [3, 3]])] = v2
        return v4
    same(prog)
    for value in ("index_put_", "masked_fill_", "fill_", "setitem int"):
        def write(lib, value=value):
            part = lib.ones(3, 2).chunk(3, 0)[1]
            v = lib.tensor(2.0, requires_grad=True) * 1
            if value == "index_put_":
                return part.index_put_((lib.tensor([0]),), v)
            if value == "masked_fill_":
                return part.masked_fill_(lib.tensor([True, False]), v)
            if value == "fill_":
                return part.fill_(v)
            part[0] = v
            return part
        same(write)


@pytest.mark.parametrize("use", ["dot", "mul and exp", "sin"])
def test_a_saved_tensor_detached_in_place_is_refused_by_backward(use):
    """Found by the extra fuzz family: detach_() of a non-leaf that a node saved; torch's backward refuses to use it
    ("Trying to use a saved tensor that has been detached in-place"), numgrad used it."""
    def prog(lib):
        x = lib.tensor([0.18, -0.71], dtype=lib.float64, requires_grad=True)
        y = lib.tensor([-1.5, -2.0], dtype=lib.float64, requires_grad=True)
        f = x * 2
        out = {"dot": lambda: f.dot(y), "mul and exp": lambda: (f * f + f.exp()).sum(),
               "sin": lambda: f.sin().sum()}[use]()
        f.detach_()
        out.backward()
        return x.grad
    same(prog)


def test_rounded_division_gives_zero_gradients_whatever_reaches_it():
    """seed 14141, program 6701: torch's DivBackward2 (div with a rounding mode) returns zeros_like(grad), so a
    NaN gradient (amax of a NaN) gives zeros; numgrad computed grad * 0, NaN."""
    def prog(lib):
        x = lib.tensor([[0.4, 0.2, -0.2], [0.7, 1.3, -1.5]], dtype=lib.float64, requires_grad=True)
        y = lib.tensor([2.0, 1.0, 1.5], requires_grad=True)
        v2 = lib.take_along_dim(lib.rsqrt(x), lib.tensor([[0, 1, 0]]), dim=0)
        v2.divide(v2, rounding_mode="trunc").amax().backward(lib.tensor(0.97, dtype=lib.float64))
        z = lib.div(x, y, rounding_mode="floor")
        z.backward(lib.full_like(z, float("nan")))
        return x.grad, y.grad
    same(prog)


def test_a_non_differentiable_in_place_op_does_not_rename_the_history_it_keeps():
    """seed 15151, program 8148: logical_not_ records nothing, so self keeps floor_divide's node; numgrad's
    in-place wrapper took that node for its own and the backward error named floor_divide_."""
    def prog(lib):
        v0 = lib.tensor([float("inf"), -0.69, -0.0, -float("inf")], dtype=lib.float64, requires_grad=True)
        v1 = lib.tensor([[-1.5, 1.5, -1.0, -1.5]], dtype=lib.float64, requires_grad=True)
        (v0 // v1).logical_not_().sum().backward()
    same(prog)


def test_an_error_node_raises_even_when_none_of_its_inputs_takes_a_gradient():
    """seed 16161, program 3815: floor_divide of a view made under no_grad (it requires grad through its base but
    has no edge): torch's NotImplemented node raises whenever it runs; numgrad's raised only for a needed input."""
    def prog(lib):
        leaf = lib.tensor([[[0.7]], [[-0.4]]], dtype=lib.float64, requires_grad=True)
        with lib.set_grad_enabled(False):
            (part,) = leaf.permute(2, 1, 0).split(3, -3)
        (part // part).sum().backward()
    same(prog)


@pytest.mark.parametrize("case", ["transposed mask", "row of self", "float mask", "1-d value", "broadcast",
                                  "broadcast beyond self", "same tensor"])
def test_masked_fill_in_place_checks_in_torchs_order(case):
    """seed 16161, program 6165: masked_fill_ with a mask that is a transposed view of self: torch refuses the
    partial overlap, numgrad wrote; and torch's in-place checks come in masked_fill__cpu's order (the value's dims,
    the mask's dtype, overlap, then the mask broadcast to self, named self first)."""
    def prog(lib):
        x = lib.tensor([[True, False], [False, True]])
        if case == "transposed mask":
            return x.masked_fill_(x.t(), False)
        if case == "row of self":
            return x.masked_fill_(x[0], False)
        if case == "float mask":
            return lib.ones(2).masked_fill_(lib.ones(2), 1.0)
        if case == "1-d value":
            return lib.ones(2).masked_fill_(lib.ones(2), lib.ones(1))
        if case == "broadcast":
            return lib.ones(2).masked_fill_(lib.tensor([True, False, True]), 1.0)
        if case == "broadcast beyond self":
            return lib.ones(3).masked_fill_(lib.tensor([[True, False, True]] * 2), 1.0)
        return x.masked_fill_(x, False)
    same(prog)


@pytest.mark.parametrize("source,sizes", [((1, 1), (1, 1, 2)), ((3, 1), (2, 1, 3, 4)), ((3,), (1, 1, 3)),
                                          ((), (1, 1)), ((), (2, 1)), ((2, 3), (1, 3, 2)), ((2, 3), (4, 1, 3, 2))])
def test_expand_gives_torchs_strides_to_new_dims_of_size_one(source, sizes):
    """seed 18181, program 2765: a new leading dim of size 1 continues the next dim's stride in torch's
    infer_expand_geometry (stride 0 only where the size changes, or for a 0-d tensor); numgrad gave every new dim
    stride 0, so matmul judged the expanded tensor unfoldable and took bmm (another error for bool)."""
    def prog(lib):
        t = lib.ones(*source) if source else lib.tensor(1.0)
        if len(source) == 2 and source == (2, 3):
            t = t.t()
        e = t.expand(*sizes)
        return e, lib.tensor(e.stride()), lib.tensor(e.is_contiguous())
    same(prog)
    same(lambda lib: lib.tensor(True).reshape((1, -1)).expand((1, 1, 2)).matmul(
        lib.tensor([[False, False, True], [True, False, True]])))


def test_copy_into_a_non_differentiable_multi_output_view_takes_a_value_requiring_grad():
    """seed 18181, program 8738: torch's copy_ asks autograd's in-place refusals only of a differentiable self, so
    copying a value that requires grad into a split of a bool tensor is allowed; numgrad refused it."""
    def prog(lib):
        v1 = lib.log_softmax(lib.tensor([[2.6]], dtype=lib.float64, requires_grad=True), -2)
        (part,) = (v1 > True).split(1, -1)
        return part.copy_(v1)
    same(prog)


@pytest.mark.parametrize("case", ["unsqueezed self", "2-d", "same", "transposed", "new leading dim", "expanded"])
def test_setitem_with_a_mask_judges_overlap_with_the_mask_unsqueezed_to_self(case):
    """seed 20202, program 5025: `v1[v0] = 0.5` with v1 = v0.unsqueeze(-1): torch's canDispatchToMaskedFill
    unsqueezes the mask to self's dims before masked_fill_'s overlap check (the same memory, the same strides: no
    error); numgrad compared the mask as given and refused a partial overlap. An expanded self also gets
    masked_fill_'s own warning after index_put_'s."""
    def prog(lib):
        v0 = lib.tensor([[False, True], [True, True]]) if case != "unsqueezed self" else lib.tensor([False, True])
        if case in ("unsqueezed self", "2-d"):
            v1 = v0.unsqueeze(-1)
            v1[v0] = True
            return v1
        if case == "same":
            v0[v0] = True
        elif case == "transposed":
            v0[v0.t()] = True
        elif case == "new leading dim":
            v1 = v0.unsqueeze(0)
            v1[:, v0] = True
            return v1
        else:
            v = lib.tensor([False, True, True])
            v1 = v.unsqueeze(-1).expand(3, 2)
            v1[v] = True
            return v1
        return v0
    same(prog)


def test_a_formula_refusal_needs_a_wanted_gradient():
    """seed 20202, program 5081: pow of a view made under no_grad (no edge) with a bool exponent: torch computes
    no gradient for it, so the bool subtraction of its formula never runs; numgrad refused regardless."""
    def prog(lib):
        v3 = lib.tensor([1.5, 2.0], requires_grad=True) * 2
        with lib.no_grad():
            v4 = v3.expand_as(v3)
        v6 = v4 ** ((-2) != v4)
        v6.backward(lib.ones(2))
        return v6
    same(prog)


@pytest.mark.parametrize("n,m", [(1, 1), (1, 3), (2, 1), (2, 2), (3, 5)])
def test_mm_with_an_inner_dim_of_one_keeps_the_products_signed_zeros_as_torch(n, m):
    """seed 22222, program 47: torch's gemm with an inner dim of 1 (and more than one row and column) stores the
    products as they are, so 0 * -x is -0.0 and its reciprocal -inf; numgrad's matmul summed from +0 (+0.0)."""
    def prog(lib):
        a = lib.tensor([[0.0], [-2.0], [0.0]][:n], dtype=lib.float64)
        b = lib.tensor([[-0.2, 0.5, -1.0, 2.0, -0.0]], dtype=lib.float64)[:, :m]
        return lib.reciprocal(a @ b), lib.reciprocal(a[None] @ b), lib.reciprocal(a.float().mm(b.float()))
    same(prog)

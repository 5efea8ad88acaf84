"""Regression tests for what the differential fuzz test found around __setitem__ and index_put_: one test per root
cause, each against torch, numgrad fused and unfused; the docstring says what went wrong."""
import numpy as np
import pytest
import torch
from oracle.fuzz.test_regressions import same

import numgrad

# index_put_ and masked_fill_ on an expanded tensor warn (deprecated) in torch and numgrad alike
pytestmark = pytest.mark.filterwarnings("ignore:Use of .* on expanded tensors is deprecated")


def _ret(write):
    """Runs write(x) on the tensor it is applied to and gives x back."""
    return lambda x: (write(x), x)[1]


def _mask(lib):
    return lib.tensor([True, False, True])


def _long(lib):
    return lib.tensor([0, 2, 1])


@pytest.mark.parametrize("case", [
    lambda T: _ret(lambda v: v.__setitem__(T.tensor([0, 0, 0]), v))(T.tensor(np.zeros((0, 3))).erf_()),
    lambda T: _ret(lambda v: v.__setitem__(v, T.tensor([1, 3])))(T.lt(T.zeros(1, 0, dtype=T.int64), 0)),
    lambda T: _ret(lambda x: x.__setitem__(x, T.tensor([5, 6])))(_long(T)),
    lambda T: _ret(lambda x: x.__setitem__(x + 5, x))(_long(T)),
    lambda T: _ret(lambda x: x.__setitem__(T.tensor([7]), x))(_long(T)),
    lambda T: _ret(lambda x: x.__setitem__(T.tensor([0]), x[1:]))(_long(T)),
    lambda T: _ret(lambda x: x.__setitem__((0, x[0]), T.tensor([5, 6])))(T.tensor([[0, 1], [1, 0]])),
    lambda T: _ret(lambda x: x.index_put_((x,), T.tensor([5, 6, 7])))(T.tensor([0, 5, 1])),
    lambda T: _ret(lambda x: x.__setitem__(T.tensor([True, False]), x))(T.zeros(3)),
    lambda T: _ret(lambda x: x.__setitem__((T.tensor([0, 1]), T.tensor([0, 1, 0])), x))(T.zeros(3, 3)),
    lambda T: _ret(lambda x: x.__setitem__(T.tensor([0.0]), x))(T.zeros(3)),
    lambda T: _ret(lambda x: x.__setitem__(T.tensor([0]), x))(T.zeros(1, 0, 3)),
    lambda T: _ret(lambda x: x.__setitem__(x.view(-1), T.tensor([1])))(T.tensor([], dtype=T.int64)),
])
def test_index_put_judges_overlap_before_the_index(case):
    """index_put_ (and setitem with a tensor index) checked the indices (bounds, an empty dim, mask shapes, their
    broadcast, their dtype) and the value's shape before memory overlap, where torch's _index_put_impl_ asserts
    no overlap of the written region with the value, then with each index tensor (the very same tensor counts
    even when empty; a view of it does not), and only then builds the index (make_info)."""
    same(case)


@pytest.mark.parametrize("case", [
    lambda T: _ret(lambda m: m.__setitem__(m, False))(_mask(T)),
    lambda T: _ret(lambda m: m.__setitem__(m, T.tensor(False)))(_mask(T)),
    lambda T: _ret(lambda m: m.index_put_((m,), T.tensor(False)))(_mask(T)),
    lambda T: _ret(lambda m: m[1:].__setitem__(m[:2], True))(_mask(T)),
    lambda T: _ret(lambda m: m.__setitem__(m[:2], True))(_mask(T)),
    lambda T: _ret(lambda x: x.index_put_((T.tensor([True, False, True]),), T.tensor(2.5)))(_long(T)),
])
def test_single_mask_with_one_value_is_masked_fill(case):
    """A single bool index with a one-element value is torch's masked_fill_ (index_put_ too, unless it
    accumulates): it casts the value and judges only partial overlap of the region with the mask, so a tensor
    masking itself is no error; index_put_ raised the full-overlap error and refused the dtype."""
    same(case)


@pytest.mark.parametrize("case", [
    lambda T: _ret(lambda v: v.__setitem__(T.tensor([4]), T.tensor([[-3, -4, -3]])))(
        T.where(T.tensor([[False], [True], [False], [True]]), T.tensor([[4, 1, 1, 3]]).transpose(0, 1), True)),
    lambda T: _ret(lambda x: x.__setitem__(T.tensor([5]), T.tensor([1.0])))(_long(T)),
    lambda T: _ret(lambda x: x.__setitem__(T.tensor([5]), T.tensor([1.0, 2.0])))(_long(T)),
])
def test_value_shape_and_dtype_before_index_bounds(case):
    """An index out of bounds was refused while the index was parsed, before the value's shape and dtype; torch
    checks those when it builds the index_put_ iterator, and the bounds only in the kernel."""
    same(case)


def test_copy_of_a_tensor_into_itself_is_no_overlap():
    """x[...] = x where x has leading 1-dims: the value was stripped of them and expanded back, a layout that no
    longer matched x's, so the copy judged a partial overlap; torch copies a value of the region's shape as it is
    (copy_to), and copy_ of the same data returns early (the version still counts, as backward then says)."""
    def fn(T):
        leaf = T.tensor(np.array([[[1.358], [-1.29], [-0.64]]], dtype=np.float32), requires_grad=True)
        values, indices = leaf.min(-3, keepdim=True)
        indices[...] = indices
        values.sum().backward()
    same(fn)
    same(lambda T: _ret(lambda x: (x.__setitem__(Ellipsis, x), x)[1])(T.tensor([[1, 2, 3]])))


def _expanded_write(write, value="number"):
    """A row expanded to two rows (from a leaf that requires grad) written by `write`; backward of a weighted
    sum; returns the view, its base and the leaf's grad (and the value's, when it is a leaf too)."""
    def fn(T):
        leaf = T.tensor([[1.5, -2.0, 3.0]], requires_grad=True)
        w = 7.0 if value == "number" else T.tensor(7.0, requires_grad=value == "leaf")
        base = leaf * 1
        view = base.expand(2, 3)
        write(T, view, w)
        (view * T.arange(6.0).reshape(2, 3)).sum().backward()
        return (view, base, leaf.grad) + ((w.grad,) if value == "leaf" else ())
    return fn


@pytest.mark.parametrize("write", [
    lambda T, v, w: v.masked_fill_(T.tensor([[False, True, False], [False, False, False]]), w),
    lambda T, v, w: v.fill_(w),
    lambda T, v, w: v.zero_(),
    lambda T, v, w: v.__setitem__(T.tensor([[True, False, False], [False, False, True]]), w),
    lambda T, v, w: v.__setitem__((1, T.tensor([0, 2])), w),
    lambda T, v, w: v.__setitem__(1, w),
    lambda T, v, w: v.__setitem__((slice(None), slice(1, 2)), w),
    lambda T, v, w: v.index_put_((T.tensor([0]), T.tensor([1])), w.reshape(1) if hasattr(w, "reshape") else
                                 T.tensor([w]), accumulate=True),
])
@pytest.mark.parametrize("value", ["number", "tensor", "leaf"])
def test_in_place_write_into_an_expanded_view(write, value):
    """Writes into an expanded (internally overlapping) view of a tensor that requires grad: backward passed,
    where torch's CopySlices copies the base's gradient into grad.as_strided(the written view), which refuses a
    view whose elements meet (an int or slice index writes a view that does not: no error there, and the one
    element all rows share is written, where numgrad copied the whole result and the last row won); fill_ of a
    tensor is a copy_, refused in forward; an index_put_ that adds kept only the last row; and the view's own
    gradient (as_strided backward) kept one row's instead of adding up the rows'."""
    same(_expanded_write(write, value))


def test_sign_of_amax_of_a_masked_fill_into_an_expanded_view():
    """The fuzz program: backward through masked_fill_ into an expanded view raised no error."""
    def fn(T):
        leaf = T.tensor([[-float("inf")]], dtype=T.float32, requires_grad=True)
        v = leaf.sum(0).expand((3,)).masked_fill_(T.tensor([False, True, False]), 2)
        T.sign(T.amax(v, 0)).backward()
        return leaf.grad
    same(fn)


def test_expanded_view_of_a_tensor_without_grad_written_with_a_value_that_requires_grad():
    """The view's gradient reaches the value through as_strided backward, which adds up the gradients of the
    elements that share a location (numgrad kept one of them)."""
    def fn(T):
        view = T.tensor([1.5]).expand(3)
        w = T.tensor(2.0, requires_grad=True)
        view.masked_fill_(T.tensor([False, True, False]), w)
        (view * T.tensor([1.0, 2.0, 4.0])).sum().backward()
        return view, w.grad
    same(fn)


def _integer_requiring_grad(lib, kind="bool", write="mask"):
    """An integer (or bool) tensor that a write of a value requiring grad made require grad, and the leaf."""
    leaf = lib.tensor([1.3442823886871338, 0.5], requires_grad=True)
    v = lib.tensor([True, False, True]) if kind == "bool" else lib.tensor([3, 4, 5])
    if write == "mask":
        v[lib.tensor([True, False, True])] = leaf[:1].rsqrt()
    elif write == "fill":
        v[...] = leaf[0]
    elif write == "masked_fill_":
        v.masked_fill_(lib.tensor([False, True, False]), leaf[0])
    else:
        v[::2][()] = leaf[0]
    return v, leaf


def _requires_grad_and_grad_fn(*tensors):
    return [(t.requires_grad, None if t.grad_fn is None else t.grad_fn.name()) for t in tensors]


@pytest.mark.parametrize("kind", ["bool", "long"])
@pytest.mark.parametrize("write", ["mask", "fill", "masked_fill_", "view"])
@pytest.mark.parametrize("then", [
    lambda T, v: v,
    lambda T, v: v.fill_(2),
    lambda T, v: v.zero_(),
    lambda T, v: T.reciprocal(v),
    lambda T, v: T.cos(v),
    lambda T, v: v.float(),
    lambda T, v: v.sum(),
    lambda T, v: v.clone(),
    lambda T, v: v.view(3),
    lambda T, v: v[0],
    lambda T, v: v.max(),
    lambda T, v: T.cat([v, v]),
    lambda T, v: v.detach(),
    lambda T, v: v.requires_grad_(True),
    lambda T, v: v.requires_grad_(False),
])
def test_integer_tensor_written_with_a_value_that_requires_grad(kind, write, then):
    """Writing a value that requires grad into an integer or bool tensor left it without history, where torch's
    index_put_ (as masked_fill_), fill_ and masked_fill_ record their node whatever self's dtype (copy_ alone asks
    for a differentiable dtype): the tensor requires grad, in-place ops on it record (FillBackward2, ...), ops
    with a floating result record, an op with an integer result is refused ('Autograd not support dtype'),
    requires_grad_ judges its dtype, and a gradient flowing into it fails torch's engine assert."""
    same(lambda T: then(T, _integer_requiring_grad(T, kind, write)[0]))


@pytest.mark.parametrize("kind", ["bool", "long"])
@pytest.mark.parametrize("backward", [
    lambda T, v: T.cos(v).sum().backward(),
    lambda T, v: (v * 2.5).sum().backward(),
    lambda T, v: v.float().sum().backward(),
    lambda T, v: v.fill_(2).reciprocal().sum().backward(),
    lambda T, v: v.backward(T.ones_like(v)),
    lambda T, v: T.autograd.grad(v.float().sum(), v),
])
def test_gradient_into_an_integer_tensor_fails_as_torch(kind, backward):
    """The backward of such a tensor's consumers: torch casts the gradient to the integer dtype and fails its
    isDifferentiableType assert; numgrad gave no error (or said the tensor did not require grad)."""
    def fn(T):
        v, leaf = _integer_requiring_grad(T, kind)
        backward(T, v)
        return leaf
    same(fn)


def test_integer_grad_fn_names():
    """The grad_fn names torch gives: IndexPutBackward0 (the masked_fill_ path), FillBackward3 (a 0-d value over
    the whole tensor), MaskedFillBackward1, CopySlices through a view, then FillBackward2 and ZeroBackward0."""
    for write in ("mask", "fill", "masked_fill_", "view"):
        names = []
        for lib in (torch, numgrad):
            v, _ = _integer_requiring_grad(lib, "long", write)
            row = _requires_grad_and_grad_fn(v)
            v.fill_(2)
            row += _requires_grad_and_grad_fn(v)
            v.zero_()
            names.append(row + _requires_grad_and_grad_fn(v))
        assert names[0] == names[1], (write, names)


def _transposed_into_itself(y):
    y[...] = y.t()


def _arange_1_2_1_4(lib):
    return lib.arange(8.0).reshape(1, 2, 1, 4)


@pytest.mark.parametrize("write", [
    lambda x: x.__setitem__(0, x),
    lambda x: x.__setitem__((0, Ellipsis), x),
    lambda x: x.__setitem__(slice(0, 1), x),
    lambda x: x.__setitem__((0, 0), x[0, 0:1]),
    lambda x: x.__setitem__((0, 1), x[0, 0:1]),
    lambda x: x.__setitem__((None, Ellipsis), x),
    lambda x: x.__setitem__(None, x),
    lambda x: x.__setitem__(None, x[0]),
    lambda x: x.__setitem__(True, x),
    lambda x: x.__setitem__((0, slice(None), 0), x[0, :1, 0]),
    lambda x: _transposed_into_itself(x.reshape(8)[:4].reshape(2, 2)),
])
def test_copy_into_a_region_judges_strides_as_torch(write):
    """x[0] = x for x of shape (1, 1, 4) (the fuzz program) and x[None] = x raised a partial overlap where torch
    copies the same data: torch's expand strides a new leading dim of size 1 over its inner neighbour and its
    unsqueeze strides a new axis likewise, where NumPy says 0, and overlap compares strides."""
    same(lambda T: _ret(write)(_arange_1_2_1_4(T)))
    same(lambda T: _ret(write)(T.tensor([[[1.24, 0.77, 0.56, -0.47]]])))
    same(lambda T: _ret(write)(T.tensor([[-float("inf")]], dtype=T.float64)))


@pytest.mark.parametrize("case", [
    lambda T: T.zeros(3, requires_grad=True).fill_(T.ones(2)),
    lambda T: T.zeros(1, requires_grad=True).expand(3).fill_(T.tensor(1.0)),
    lambda T: T.zeros(1).expand(3).fill_(T.ones(2)),
    lambda T: T.zeros(1).expand(3).fill_(T.tensor(1.0, requires_grad=True)),
])
def test_fill_checks_autograd_then_the_value_then_overlap(case):
    """fill_ of a tensor refuses an expanded self (it is a copy_), after torch's autograd refusals (a leaf, a view
    of one) and the value's dimension."""
    same(case)

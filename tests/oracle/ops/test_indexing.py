"""getitem, setitem, index_put_, masked_fill, index_select, gather, scatter, narrow and select against torch."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import numgrad

from helpers.op_compare import F64, I64, LIBS, check, check_error, grad_fd, rand



# ---- getitem ---------------------------------------------------------------------------------------

T = lambda lib, a: lib.tensor(np.array(a))  # an index tensor

GETITEM = [
    lambda lib, x: x[0], lambda lib, x: x[-1], lambda lib, x: x[1:], lambda lib, x: x[None], lambda lib, x: x[...],
    lambda lib, x: x[:], lambda lib, x: x[1:, 0], lambda lib, x: x[0, 1:], lambda lib, x: x[..., None],
    lambda lib, x: x[::2], lambda lib, x: x[1::2, ::3, -2:], lambda lib, x: x[0, 0, 0], lambda lib, x: x[:, None, 0],
    lambda lib, x: x[:, :, :], lambda lib, x: x[:, 0:100], lambda lib, x: x[0:100], lambda lib, x: x[10:],
    lambda lib, x: x[T(lib, 1)], lambda lib, x: x[(0,)], lambda lib, x: x[0, ..., 0], lambda lib, x: x[None, ..., None],
    lambda lib, x: x[[0, 1], [1, 2]], lambda lib, x: x[[0, 0, 2]], lambda lib, x: x[x > 0],
    lambda lib, x: x[range(2), T(lib, [0, 3])], lambda lib, x: x[0, [1, 2]], lambda lib, x: x[1:, [1, 1]],
    lambda lib, x: x[None, [1]], lambda lib, x: x[True], lambda lib, x: x[False], lambda lib, x: x[T(lib, True)],
    lambda lib, x: x[T(lib, [True, False, True])], lambda lib, x: x[[0, 1], :, [1, 2]], lambda lib, x: x[0, :, [1, 2]],
    lambda lib, x: x[:, 0, [1, 2]], lambda lib, x: x[[]], lambda lib, x: x[(x > 0)[:, :, 0]],
    lambda lib, x: x[T(lib, [[0, 1], [2, 2]])], lambda lib, x: x[[[0, 1]], [[1], [2]]],
    lambda lib, x: x[0:2, None, [1, 2], None], lambda lib, x: x[:, [[0, 1], [2, 3]]],
    lambda lib, x: x[[0, 1], 0, [1, 2]],
    lambda lib, x: x[2, [0, 1], 0], lambda lib, x: x[T(lib, [0, 1]), ...], lambda lib, x: x[..., T(lib, [-1, 0, -1])],
    lambda lib, x: x[..., ...], lambda lib, x: x[()], lambda lib, x: x[(x > 0).sum(2) > 2],
    lambda lib, x: x[1][None][0, 2:], lambda lib, x: x[T(lib, 0), [1, 2]], lambda lib, x: x[slice(T(lib, 1), None)],
]


@pytest.mark.parametrize("case", range(len(GETITEM)))
def test_getitem_cases(case):
    check(GETITEM[case], rand(3, 4, 5))


def test_getitem_other_dtypes_and_strides():
    check(lambda lib, x: x[[0, 2], 1:], np.arange(12).reshape(3, 4))
    check(lambda lib, x: x[x], np.array([True, False, True]))
    check(lambda lib, x: x.transpose(0, 2)[1:, [0, 0, 1], None, -1], rand(3, 4, 5))
    check(lambda lib, x: x.expand(2, 3, 4)[:, [1, 1]][0, ::2], rand(3, 4))


def test_getitem_list_as_tuple_warns():
    for key in ([[0, 1], [1, 2]], [0, slice(None)], [0, [1, 2]]):
        with pytest.warns(UserWarning, match="non-tuple sequence"):
            check(lambda lib, x: x[key], rand(3, 4, 5))


@pytest.mark.parametrize("fn", [lambda lib, x: x[None], lambda lib, x: x[...], lambda lib, x: x[()],
                                lambda lib, x: x[True], lambda lib, x: x[None, None, ...]])
def test_getitem_zero_dim(fn):
    check(fn, rand())


GETITEM_ERRORS = [
    lambda lib, x: x[5], lambda lib, x: x[0, 7], lambda lib, x: x[1:, 7], lambda lib, x: x[:, -5],
    lambda lib, x: x[0, 0, 0, 0], lambda lib, x: x[[5]], lambda lib, x: x[:, [0, 7]], lambda lib, x: x[0, [0, 7]],
    lambda lib, x: x[[0, 1], [0, -7]], lambda lib, x: x[[0, 1], [0, 1, 2]],
    lambda lib, x: x[T(lib, [True, False])], lambda lib, x: x[:, T(lib, [True, False])],
    lambda lib, x: x[T(lib, np.ones((3, 5), bool))], lambda lib, x: x[1, (x > 0)[0, 0]],
    lambda lib, x: x[T(lib, [0.5])], lambda lib, x: x[1.5], lambda lib, x: x["a"], lambda lib, x: x[::-1],
    lambda lib, x: x[::0], lambda lib, x: x[-4], lambda lib, x: x[None, 7], lambda lib, x: x[T(lib, 1.0)],
    lambda lib, x: x[..., 0, 0, 0, 0],
]


@pytest.mark.parametrize("case", range(len(GETITEM_ERRORS)))
def test_getitem_errors(case):
    check_error(GETITEM_ERRORS[case], rand(3, 4, 5))


def test_getitem_zero_dim_error():
    check_error(lambda lib, x: x[0], rand())


def test_basic_index_is_a_view():
    for lib in LIBS:
        base = lib.tensor(rand(3, 4, 5))
        v = base[1:, 0]
        v[0] = 7.0
        assert base[1, 0, 0].item() == 7.0 and base._version == v._version == 1
        base[2, 0, 1] = -1.0
        assert v[1, 1].item() == -1.0
        assert base[[0]]._version == 0  # advanced indexing copies
        w = base[None, 2]
        with lib.no_grad():
            w.mul_(0)
        assert base[2].abs().sum().item() == 0


def test_iteration():
    check(lambda lib, x: list(x), rand(3, 2))


@st.composite
def _dims_items(draw, shape, start, stop, adv_shape, mask_ok):
    """Index elements consuming exactly dims [start, stop) of shape (None may appear anywhere)."""
    items, dim = [], start
    while dim < stop or (draw(st.booleans()) and draw(st.booleans())):
        if dim == stop:
            items.append(("none",))
            continue
        size = shape[dim]
        kinds = ["slice", "none"] + (["int", "int_t"] if size else [])
        if adv_shape is not None and size:
            kinds += ["list", "tensor"] + (["range"] if len(adv_shape) == 1 else [])
        if mask_ok[0]:
            kinds.append("mask")
        kind = draw(st.sampled_from(kinds))
        if kind == "none":
            items.append(("none",))
            continue
        if kind == "mask":
            k = draw(st.integers(1, stop - dim))
            mask = np.array(dtype=bool, object=draw(st.lists(st.booleans(), min_size=int(np.prod(shape[dim:dim + k])),
                                          max_size=int(np.prod(shape[dim:dim + k]))))).reshape(shape[dim:dim + k])
            items.append(("mask", mask))
            mask_ok[0] = False
            dim += k
            continue
        if kind in ("int", "int_t"):
            items.append((kind, draw(st.integers(-size, size - 1))))
        elif kind == "slice":
            bound = st.none() | st.integers(-size - 2, size + 2)
            items.append(("slice", slice(draw(bound), draw(bound), draw(st.sampled_from([None, 1, 2, 3])))))
        elif kind == "range" and adv_shape[0] <= size:
            n = adv_shape[0]
            items.append(("range", draw(st.sampled_from([range(n), range(size - 1, size - 1 - n, -1)]))))
        else:
            n = int(np.prod(adv_shape))
            values = np.array(draw(st.lists(st.integers(-size, size - 1), min_size=n, max_size=n)), I64)
            values = values.reshape(adv_shape)
            items.append(("tensor", values) if kind == "tensor" else ("list", values.tolist()))
        dim += 1
    return items


@st.composite
def index_cases(draw):
    shape = tuple(draw(st.lists(st.integers(0, 4), max_size=4)))
    ndim = len(shape)
    adv_shape = draw(st.sampled_from([None, None, (1,), (2,), (3,), (2, 2), (0,)]))
    mask_ok = [adv_shape is None]  # a mask's nonzero count rarely broadcasts with other index arrays
    front = draw(st.integers(0, ndim))
    if draw(st.booleans()):
        back = draw(st.integers(0, ndim - front))
        items = (draw(_dims_items(shape, 0, front, adv_shape, mask_ok)) + [("ellipsis",)]
                 + draw(_dims_items(shape, ndim - back, ndim, adv_shape, mask_ok)))
    else:
        items = draw(_dims_items(shape, 0, front, adv_shape, mask_ok))
    return shape, items


def build_key(lib, items):
    key = []
    for item in items:
        kind = item[0]
        key.append({"none": lambda: None, "ellipsis": lambda: Ellipsis, "int": lambda: item[1],
                    "int_t": lambda: lib.tensor(item[1]), "slice": lambda: item[1],
                    "list": lambda: item[1], "range": lambda: item[1],
                    "tensor": lambda: lib.tensor(item[1]), "mask": lambda: lib.tensor(item[1])}[kind]())
    return tuple(key)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(index_cases())
def test_getitem_hypothesis(case):
    shape, items = case
    check(lambda lib, x: x[build_key(lib, items)], rand(*shape))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(index_cases())
def test_setitem_hypothesis(case):
    shape, items = case

    def fn(lib, x, w):
        y = x * 1
        y[build_key(lib, items)] = w * 2  # one value everywhere: repeated indices write the same thing
        return y
    check(fn, rand(*shape), rand(seed=3))


# ---- setitem / index_put_ ----------------------------------------------------------------------------

SETITEM = [
    ("[0] = v", lambda y, v: y.__setitem__(0, v[0, 0])),
    ("[[0,1]] = v", lambda y, v: y.__setitem__([0, 1], v[0, 0])),
    ("[mask] = 0", lambda y, v: y.__setitem__(y > 0, 0.0)),
    ("[...] = 2", lambda y, v: y.__setitem__(Ellipsis, 2.0)),
    ("[:] = 2", lambda y, v: y.__setitem__(slice(None), 2.0)),
    ("[...] = v", lambda y, v: y.__setitem__(Ellipsis, v[0, 0])),
    ("[0, 1:] = v", lambda y, v: y.__setitem__((0, slice(1, None)), v[0, 0])),
    ("[None] = 1", lambda y, v: y.__setitem__(None, 1.0)),
    ("[1] = y[0]", lambda y, v: y.__setitem__(1, y[0])),
    ("[[0,0]] = v", lambda y, v: y.__setitem__([0, 0], v[0])),
    ("[0] = v keepdims", lambda y, v: y.__setitem__(0, v[:1, :1, :1])),
    ("[:, 1] = v[0]", lambda y, v: y.__setitem__((slice(None), 1), v[0, 0])),
]


@pytest.mark.parametrize("case", range(len(SETITEM)), ids=[c[0] for c in SETITEM])
def test_setitem_differentiable(case):
    def fn(lib, x, v):
        y = x * 1
        SETITEM[case][1](y, v)
        return y
    check(fn, rand(3, 4, 5), rand(3, 4, 5, seed=1))


def test_setitem_into_tensor_not_requiring_grad():
    def fn(lib, x, v):
        y = x.detach().clone()
        y[0] = v[1]
        y[[1]] = v[2:3] * 2
        return y
    check(fn, rand(3, 4, 5), rand(3, 4, 5, seed=1))


def test_setitem_no_grad_and_versions():
    for lib in LIBS:
        x = lib.tensor(rand(3, 4), requires_grad=True)
        with lib.no_grad():
            x[0] = 1.0
            x[[1, 1]] = lib.tensor([2.0, 3.0, 4.0, 5.0])
            x[x < 0] = 0.0
        assert x._version == 3 and x.grad_fn is None
        assert x[0, 0].item() == 1.0 and x[1, 3].item() == 5.0 and (x >= 0).all().item()


def test_setitem_values_and_dtypes():
    for lib in LIBS:
        a = lib.zeros(3, dtype=lib.long)
        a[0] = 2.7
        a[1:] = lib.tensor([5, 6])
        b = lib.zeros(3, 2)
        b[0] = lib.tensor([[[1.0, 2.0]]])
        b[[1, 2]] = lib.tensor([[7.0, 8.0]])
        c = lib.zeros(3)
        c[lib.tensor([0, 0])] = lib.tensor([1.0, 2.0])
        assert a.tolist() == [2, 5, 6] and b.tolist() == [[1, 2], [7, 8], [7, 8]] and c.tolist() == [2, 0, 0]


SETITEM_ERRORS = [
    lambda lib, x: x.__setitem__(0, 1.0), lambda lib, x: x.__setitem__([0], 1.0),
    lambda lib, x: x.__setitem__(x > 0, 1.0), lambda lib, x: x.__setitem__(None, 1.0),
    lambda lib, x: (x * 1).__setitem__(0, lib.ones(3)), lambda lib, x: (x * 1).__setitem__([0, 1], lib.ones(3)),
    lambda lib, x: (x * 1).__setitem__([0, 1], lib.ones(5, dtype=lib.float64)),
    lambda lib, x: (x * 1).__setitem__((0, 0, 0), lib.ones(2)),
    lambda lib, x: (x * 1).__setitem__(5, 1.0),
    lambda lib, x: (x * 1).__setitem__([5], 1.0), lambda lib, x: (x * 1).__setitem__(x > 0, lib.ones(3)),
]


@pytest.mark.parametrize("fn", SETITEM_ERRORS)
def test_setitem_errors(fn):
    check_error(fn, rand(3, 4, 5))


def test_index_put():
    idx = np.array([0, 2, 0])
    check(lambda lib, x, v: (x * 1).index_put_((lib.tensor(idx),), v, accumulate=True), rand(3, 4), rand(3, 4, seed=1))
    check(lambda lib, x, v: (x * 1).index_put_((lib.tensor(idx[:2]), lib.tensor([1, 3])), v[0, :2]),
          rand(3, 4), rand(3, 4, seed=1))
    check(lambda lib, x, v: x.index_put((lib.tensor(idx),), v[0], accumulate=True), rand(3, 4), rand(3, 4, seed=1))
    check(lambda lib, x, v: lib.index_put(x, [x > 0], v[0, 0]), rand(3, 4), rand(3, 4, seed=1))
    check_error(lambda lib, x: (x * 1).index_put_((lib.tensor([0]),), lib.tensor(1.0, dtype=lib.float64)), rand(3))


# ---- masked_fill, index_select, narrow, select, gather, scatter, take_along_dim ----------------------

MASK = np.array([[True, False, True, False, False]] * 4)


@pytest.mark.parametrize("fn", [
    lambda lib, x: x.masked_fill(lib.tensor(MASK), 1.5),
    lambda lib, x: lib.masked_fill(x, lib.tensor(MASK[0]), -2),
    lambda lib, x: x.masked_fill(lib.tensor(MASK), lib.tensor(3.0, dtype=lib.float64)),
    lambda lib, x: x.masked_fill(lib.tensor(np.ones((2, 3, 4, 5), bool)), 1.0),
    lambda lib, x: (x * 1).masked_fill_(x > 0, 0.0),
    lambda lib, x: x.masked_fill(lib.tensor(MASK), x[0, 0, 0] * 2),
])
def test_masked_fill(fn):
    check(fn, rand(3, 4, 5))


def _causal(lib, t):
    return lib.tensor(np.triu(np.ones((t, t), bool), 1))


@pytest.mark.parametrize("fn", [
    # a causal mask before softmax, as attention writes it: the fill is pending, computed in softmax's rows
    lambda lib, x: (x * 0.5).masked_fill(_causal(lib, 5), float("-inf")).softmax(-1),
    lambda lib, x: x.masked_fill(_causal(lib, 5), float("-inf")).log_softmax(-1) * 2,
    lambda lib, x: x.transpose(-2, -1).masked_fill(_causal(lib, 5), float("nan")),  # a transposed input
    lambda lib, x: x[0].masked_fill(lib.tensor(MASK[0]) | _causal(lib, 5), 7) + x,  # broadcast both ways
])
def test_masked_fill_of_a_number_fuses_as_torch_computes_it(fn):
    check(fn, rand(3, 5, 5))


def test_masked_fill_node_and_layout_as_torch():
    """A floating tensor filled with a number: torch's node (one edge, the mask saved) and a C-contiguous
    result whatever the input's layout; integer tensors keep their dtype (the value cast to it)."""
    for lib in LIBS:
        x = lib.tensor(rand(4, 3)).requires_grad_()
        mask = lib.tensor(MASK[0, :3])
        out = x.t().masked_fill(mask[:, None], -1.0)
        assert out.grad_fn.name() == "MaskedFillBackward0" and len(out.grad_fn.next_functions) == 1
        assert out.grad_fn._saved_mask.tolist() == mask[:, None].tolist()
        assert out.stride() == (4, 1) and out.is_contiguous()
        # where's condition is no edge either (next_functions: the two values only)
        assert len(lib.where(mask, x[0], x[1] * 2).grad_fn.next_functions) == 2
        ints = lib.tensor([[1, 2], [3, 4]]).masked_fill(lib.tensor([True, False]), 2.5)
        assert str(ints.dtype).endswith("int64") and ints.tolist() == [[2, 2], [2, 4]]


def test_masked_fill_value_grad():
    check(lambda lib, x, v: x.masked_fill(x > 0, v), rand(3, 4), rand())
    check(lambda lib, x, v: x.detach().masked_fill(x.detach() > 0, v), rand(3, 4), rand(dtype=F64))


@pytest.mark.parametrize("fn", [
    lambda lib, x: x.masked_fill(x, 1.0), lambda lib, x: x.masked_fill((x > 0).long(), 1.0),
    lambda lib, x: x.masked_fill(x > 0, lib.tensor([1.0])),
    lambda lib, x: x.masked_fill(lib.ones(4, dtype=lib.bool), 1.0),
    lambda lib, x: (x * 1).masked_fill_(lib.ones(2, 3, 4, 5, dtype=lib.bool), 1.0),
    lambda lib, x: x.masked_fill_(x > 0, 1.0),
])
def test_masked_fill_errors(fn):
    check_error(fn, rand(3, 4, 5))


@pytest.mark.parametrize("fn", [
    lambda lib, x: x.index_select(1, lib.tensor([0, 2, 2])), lambda lib, x: lib.index_select(x, -1, lib.tensor(2)),
    lambda lib, x: x.index_select(0, lib.tensor([], dtype=lib.long)),
    lambda lib, x: x.narrow(1, 1, 2), lambda lib, x: lib.narrow(x, -1, -2, 2),
    lambda lib, x: x.narrow(1, lib.tensor(1), 2),
    lambda lib, x: x.narrow(1, 4, 0), lambda lib, x: x.select(1, 3), lambda lib, x: lib.select(x, -1, -5),
    lambda lib, x: x.gather(1, lib.tensor(np.array([[[0, 3]], [[1, 1]]]))),
    lambda lib, x: lib.gather(x, 0, lib.tensor(np.zeros((1, 4, 5), I64))),
    lambda lib, x: lib.take_along_dim(x, lib.tensor(np.array([[[0], [3]]])), 1),
    lambda lib, x: lib.take_along_dim(x, lib.tensor([0, 59, 7])),
    lambda lib, x: x.take_along_dim(lib.tensor(np.argsort(np.arange(5)[::-1]).reshape(1, 1, 5)), 2),
])
def test_selection_ops(fn):
    check(fn, rand(3, 4, 5))


INDEX = np.array([[[0, 1, 2, 3, 0]], [[3, 2, 1, 0, 1]]])  # shape (2, 1, 5): no repeats along dim 1 per column


@pytest.mark.parametrize("fn", [
    lambda lib, x, s: x.scatter(1, lib.tensor(INDEX), s),
    lambda lib, x, s: lib.scatter(x, 1, lib.tensor(INDEX), 2.5),
    lambda lib, x, s: x.scatter(1, lib.tensor(INDEX), value=-1.0),
    lambda lib, x, s: x.scatter_add(1, lib.tensor(INDEX), s),
    lambda lib, x, s: lib.scatter_add(x, 0, lib.tensor(np.zeros((2, 1, 5), I64)), s),
    lambda lib, x, s: (x * 1).scatter_(1, lib.tensor(INDEX), s),
    lambda lib, x, s: (x * 1).scatter_add_(1, lib.tensor(INDEX), s),
])
def test_scatter(fn):
    check(fn, rand(3, 4, 5), rand(2, 1, 5, seed=1))


def test_scatter_src_larger_than_index():
    # torch computes the values, but its backward refuses the index-shaped gradient of the larger src
    # ("ScatterBackward0 returned an invalid gradient at index 1"); numgrad raises the same
    idx = INDEX[:, :, :3]
    check(lambda lib, x, s: x.detach().scatter(1, lib.tensor(idx), s.detach()), rand(3, 4, 5), rand(3, 4, 5, seed=1))
    check(lambda lib, x, s: x.detach().scatter_add(1, lib.tensor(idx), s.detach()), rand(3, 4, 5),
          rand(3, 4, 5, seed=1))
    for op in ("scatter", "scatter_add"):
        check_error(lambda lib, x, s: getattr(x, op)(1, lib.tensor(idx), s * s).sum().backward(),
                    rand(3, 4, 5, dtype=F64), rand(3, 2, 4, dtype=F64))


@pytest.mark.parametrize("fn", [
    lambda lib, x: x.index_select(1, lib.tensor([[2]])), lambda lib, x: x.index_select(1, lib.tensor([2.0])),
    lambda lib, x: x.index_select(1, lib.tensor([7])), lambda lib, x: x.index_select(1, lib.tensor([-1])),
    lambda lib, x: x.index_select(3, lib.tensor([0])), lambda lib, x: x.index_select(1, [0]),
    lambda lib, x: x.narrow(1, 4, 1), lambda lib, x: x.narrow(1, 5, 0), lambda lib, x: x.narrow(1, -5, 1),
    lambda lib, x: x.narrow(1, 1, -1), lambda lib, x: x.narrow(3, 0, 1), lambda lib, x: x.select(1, 4),
    lambda lib, x: x.select(1, -5), lambda lib, x: x.select(3, 0), lambda lib, x: x.sum().select(0, 0),
    lambda lib, x: x.scatter(1, lib.tensor([[0]]), x), lambda lib, x: x.scatter(1, lib.tensor([[[7]]]), x),
    lambda lib, x: x.scatter(1, lib.tensor([[[0.0]]]), x),
    lambda lib, x: x.scatter(1, lib.zeros(4, 4, 5, dtype=lib.long), x),
    lambda lib, x: x.scatter(1, lib.zeros(1, 1, 1, dtype=lib.long), x.double()),
    lambda lib, x: x.scatter(1, lib.zeros(1, 1, 1, dtype=lib.long), x[:0]),
    lambda lib, x: x.scatter_add(1, lib.zeros(1, 1, 1, dtype=lib.long), 2.0),
    lambda lib, x: x.gather(1, lib.zeros(4, 2, 2, dtype=lib.long)),
    lambda lib, x: x.gather(1, lib.zeros(2, 2, dtype=lib.long)),
    lambda lib, x: x.gather(1, lib.full((2, 2, 2), 4)), lambda lib, x: x.gather(1, lib.zeros(2, 2, 2)),
    lambda lib, x: lib.take_along_dim(x, lib.zeros(2, 1, dtype=lib.long), 1),
    lambda lib, x: lib.take_along_dim(x, lib.zeros(2, 2, 1, dtype=lib.long), 1),
    lambda lib, x: lib.take_along_dim(x, lib.zeros(1, 1, 1), 1),
])
def test_selection_errors(fn):
    check_error(fn, rand(3, 4, 5))


# ---- higher order and finite differences -------------------------------------------------------------

@pytest.mark.parametrize("key", [(slice(1, None), 0), ([0, 0, 2], slice(None), [1, 2, 1]), (Ellipsis, None, 1)])
def test_getitem_double_backward(key):
    grads = []
    for lib in LIBS:
        x = lib.tensor(rand(3, 4, 5, dtype=F64), requires_grad=True)
        w = lib.tensor(rand(3, 4, 5, dtype=F64, seed=1), requires_grad=True)
        y = (x[key] ** 3 * w[key]).sum()
        (gx,) = lib.autograd.grad(y, [x], create_graph=True)
        z = (gx * gx).sum()
        grads.append([g.detach().numpy() for g in lib.autograd.grad(z, [x, w])])
    for a, b in zip(*grads):
        np.testing.assert_allclose(b, a, rtol=1e-10)


@pytest.mark.parametrize("key", [(slice(1, None), 0), ([0, 0, 2], slice(None), [1, 2, 1]), (Ellipsis, None, 1)])
def test_getitem_finite_differences(key):
    w = numgrad.tensor(rand(3, 4, 5, dtype=F64, seed=1))
    grad_fd(lambda x: (x[key] ** 2 * w[key]).sum(), rand(3, 4, 5, dtype=F64))


def test_setitem_finite_differences():
    def fn(x, v):
        y = x * 2
        y[[0, 1], 1:] = v * v
        y[2] = v[0, :3].sum()
        return (y * y).sum()
    grad_fd(fn, rand(3, 4, dtype=F64), rand(2, 3, dtype=F64, seed=1))


def test_setitem_through_a_view():
    def fn(lib, x, w):
        y = x * 1
        y[1:][0, [1, 3]] = w[0, :2]
        y[:, 1:][0] = w[1, :3]
        return y
    check(fn, rand(3, 4), rand(3, 4, seed=1))
    check(lambda lib, x, w: fn(lib, x.detach(), w), rand(3, 4), rand(3, 4, seed=1))


def test_augmented_assignment_to_an_index():
    def fn(lib, x):
        y = x * 1
        y[0] += 1  # y[0].__iadd__ writes through a view, then y.__setitem__ copies it back
        y[:, 1] *= 2
        return y
    check(fn, rand(3, 4))


def test_setitem_twice_through_one_view():
    def fn(lib, x, w):
        y = x * 1
        v = y[1:]
        v[0, [1, 3]] = w[0, :2]
        v[1] = w[2] * 3
        return y, v
    check(fn, rand(3, 4), rand(3, 4, seed=1), names=False)

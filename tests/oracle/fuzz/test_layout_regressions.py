"""Regression tests for the memory layout of elementwise and advanced-indexing results: torch's TensorIterator
gives a result its inputs' memory order (a transposed input gives a transposed result) where numgrad made every
result C-contiguous, so view() succeeded where torch raises, contiguous() aliased where torch copies, and
stride()/is_contiguous() differed. Each test runs against torch and numgrad with fusion on and off."""
import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from oracle.fuzz.test_regressions import same

import numgrad


def _layout(lib, fn):
    try:
        out = fn(lib)
    except Exception as exc:  # noqa: BLE001  (the error is the result to compare)
        return ("error", type(exc), str(exc).splitlines()[0] if str(exc) else "")
    outs = out if isinstance(out, (tuple, list)) else (out,)
    # NumPy gives an empty array zero strides whatever its shape: only non-empty results compare strides
    return ("ok", [(tuple(t.shape), t.stride() if t.numel() else None, t.is_contiguous()) for t in outs])


def same_layout(fn):
    """fn(lib) gives torch's values (see same) and the strides and contiguity of torch's results, fused
    and unfused."""
    same(fn)
    ref = _layout(torch, fn)
    for fused in (True, False):
        with numgrad.fusion(fused):
            got = _layout(numgrad, fn)
        assert got == ref, (fused, ref, got)


def _arr(shape, seed=0, dtype=np.float64):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


# non-contiguous views of a fresh tensor: (shape of the base, how to view it)
VIEWS = {
    "t": ((3, 4), lambda x: x.t()),
    "transpose3": ((2, 3, 4), lambda x: x.transpose(0, 2)),
    "permute3": ((2, 3, 4), lambda x: x.permute(1, 2, 0)),
    "permute4": ((2, 3, 4, 5), lambda x: x.permute(3, 1, 0, 2)),
    "step": ((4, 6), lambda x: x[:, ::2]),
    "step_t": ((4, 6), lambda x: x[::2].t()),
    "expand": ((3, 1), lambda x: x.expand(3, 4)),
    "size1_t": ((1, 4), lambda x: x.t()),
    "size1_permute": ((2, 1, 3), lambda x: x.permute(2, 1, 0)),
    "channels_last": ((2, 3, 4, 5), lambda x: x.permute(0, 2, 3, 1).contiguous().permute(0, 3, 1, 2)),
}

UNARY = {
    "neg": lambda x: -x,
    "exp": lambda x: x.exp(),
    "abs": lambda x: x.abs(),
    "mul_scalar": lambda x: x * 2,
    "rsub_scalar": lambda x: 2 - x,
    "pow_scalar": lambda x: x ** 2,
    "clamp": lambda x: x.clamp(-0.5, 0.5),
    "gt": lambda x: x > 0,
    "chain": lambda x: ((x * 2 + 1).exp() - x) / 3,
    "bool_mul": lambda x: (x > 0) * x,
    "to_int_times_float": lambda x: (x * 10).long() * 1.5,
}


@pytest.mark.parametrize("view", VIEWS)
@pytest.mark.parametrize("op", UNARY)
def test_one_input_keeps_its_layout(view, op):
    """An op on one non-contiguous input (and Python scalars) laid its result out in C order."""
    base, make = VIEWS[view]
    same_layout(lambda lib: UNARY[op](make(lib.tensor(_arr(base)))))


@pytest.mark.parametrize("view", VIEWS)
def test_where_and_zero_dim_operands(view):
    """where, and a 0-d tensor as an operand, follow the tensor input's layout."""
    base, make = VIEWS[view]
    def where(lib):
        x = make(lib.tensor(_arr(base)))
        return lib.where(x > 0, x, 0.0)
    same_layout(where)
    same_layout(lambda lib: lib.tensor(True).mul(make(lib.tensor(_arr(base)))))
    same_layout(lambda lib: make(lib.tensor(_arr(base))) + lib.tensor(2.5))


@pytest.mark.parametrize("first,second", [("t", "c"), ("c", "t"), ("t", "t"), ("p", "c"), ("c", "p"), ("p", "t2")])
def test_two_inputs_first_decides(first, second):
    """Two inputs of different layouts: the first that tells two dims apart decides (a contiguous one
    decides for C order); an input laid out as the result gives a result of that layout."""
    views = {"t": ((4, 3), lambda x: x.t()), "c": ((3, 4), lambda x: x),
             "p": ((4, 3), lambda x: x.t()), "t2": ((4, 3), lambda x: x.t() * 1)}

    def run(lib):
        (sa, fa), (sb, fb) = views[first], views[second]
        a, b = fa(lib.tensor(_arr(sa, 1))), fb(lib.tensor(_arr(sb, 2)))
        return a + b, a * b - a, lib.maximum(a, b), a < b, lib.rsub(a, b)
    same_layout(run)


def test_rsub_of_two_layouts_follows_its_second_input():
    """torch.rsub(a, b) is sub(b, a) in torch's kernel: b comes first in the layout decision."""
    def run(lib):
        a = lib.tensor(_arr((3, 4, 2))).permute(1, 0, 2)
        b = lib.tensor(_arr((4, 2, 3), 1)).permute(0, 2, 1)
        return lib.rsub(a, b), lib.rsub(b, a), lib.rsub(a, 2)
    same_layout(run)


def test_broadcast_partner_and_pending_input():
    """A broadcast row, a column, or a pending input (its future strides count) beside a transposed input."""
    def run(lib):
        x = lib.tensor(_arr((5, 4))).t()
        row, col = lib.tensor(_arr((5,), 1)), lib.tensor(_arr((4, 1), 2))
        pending = x * 2
        return x + row, col + x, row + x, pending + lib.tensor(_arr((4, 5), 3)), (pending + 1) * col
    same_layout(run)


def test_type_promotion_keeps_layout():
    """An int input promoted against a float one, and a comparison (bool result), keep the layout."""
    def run(lib):
        i = lib.tensor(np.arange(12).reshape(3, 4)).t()
        f = lib.tensor(_arr((3, 4), dtype=np.float32)).t()
        return i + f, i * 0.5, i > f, (i + 1).float()
    same_layout(run)


def test_inplace_keeps_self_layout():
    """In-place ops write into self's own memory, whatever the other operand's layout."""
    def run(lib):
        x = lib.tensor(_arr((3, 4))).t()
        y = lib.tensor(_arr((4, 3), 1))
        x.mul_(2).add_(y)
        y.add_(x * 2)
        return x, y, x + y
    same_layout(run)


def test_view_of_transposed_product_raises():
    """tensor(True).mul(x.t()) is transposed in torch: view((9, 1)) raises (numgrad's C-order result allowed it)."""
    def run(lib):
        leaf0 = lib.tensor(_arr((3, 3)), requires_grad=True)
        v2 = lib.tensor(True).mul(leaf0.transpose(0, 1))
        return v2.view((9, 1))
    same(run)


def test_view_after_inplace_square_of_permuted_difference_raises():
    """A permuted float input beside an int one: every later result keeps the permuted order, so the final
    view((-1,)) raises in torch."""
    def run(lib):
        leaf1 = lib.tensor(_arr((1, 3, 4)), requires_grad=True)
        v0 = lib.tensor(np.arange(12).reshape(4, 3, 1))
        v1 = leaf1.permute(2, 1, 0)
        v2 = v0 + v1
        v4 = v2 * 2
        v5 = v1 - v4
        v6 = v5.mul_(v5)
        return v6.view((-1,))
    same(run)


def test_contiguous_of_transposed_result_is_a_copy():
    """(-2) - x.transpose(0, 1) is not contiguous in torch, so contiguous() copies and keeps the old values
    after a fill_ of the original; numgrad's C-order result was its own contiguous() and saw the fill."""
    def run(lib):
        leaf0 = lib.tensor(_arr((4, 4, 2), dtype=np.float32))
        v1 = (-2) - leaf0.transpose(0, 1)
        v2 = v1.contiguous()
        v1.fill_(-1)
        return v1, v2
    same_layout(run)


def test_gradients_flow_through_laid_out_results():
    """Backward through results in a permuted order gives torch's gradients (of torch's layout)."""
    def run(lib):
        x = lib.tensor(_arr((2, 3, 4)), requires_grad=True)
        y = (x.permute(2, 0, 1) * 3 + 1).exp()
        (y * lib.tensor(_arr((4, 2, 3), 1))).sum().backward()
        return y, x.grad
    same_layout(run)


def test_empty_result_of_transposed_input():
    """An empty transposed input: shape and contiguity as torch's."""
    same_layout(lambda lib: lib.zeros(0, 3).t() * 2)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(1, 4), min_size=2, max_size=4), st.randoms(use_true_random=False),
       st.sampled_from(["add", "mul_scalar", "exp", "where", "chain"]))
def test_random_permutations(shape, rnd, op):
    """A random permutation (some dims stepped) of a random shape, and a second input in C order or another
    permutation, through a few ops."""
    nd = len(shape)
    perms = [rnd.sample(range(nd), nd) for _ in range(2)]
    steps = [rnd.choice([1, 1, 2]) for _ in range(nd)]
    second_contiguous = rnd.random() < 0.5

    def view(lib, seed, perm, step):
        base = [shape[p] * (step[k] if step else 1) for k, p in enumerate(perm)]
        t = lib.tensor(_arr(base, seed))
        if step:
            t = t[tuple(slice(None, None, s) for s in step)]
        return t.permute(*[perm.index(d) for d in range(nd)])

    def run(lib):
        a = view(lib, 1, perms[0], steps)
        b = lib.tensor(_arr(shape, 2)) if second_contiguous else view(lib, 2, perms[1], None)
        if op == "add":
            return a + b
        if op == "mul_scalar":
            return a * 2
        if op == "exp":
            return a.exp()
        if op == "where":
            return lib.where(a > 0, a, b)
        return (a * 2 + b).exp() - a
    same_layout(run)


# ---- advanced indexing: torch's index kernel lays its result out as its TensorIterator's operands ----------

def _index_key(lib, spec):
    """A getitem key from a spec of parts: ("i", values) an int64 index tensor, ("it", values) one made
    transposed (a (1, n) tensor's .t()), ("m", values) a bool mask, ("l", values) a list, ("b", v) a 0-d bool,
    or a slice, None or Ellipsis as they are."""
    key = []
    for part in spec:
        if isinstance(part, tuple):
            kind, v = part
            if kind == "i":
                part = lib.tensor(np.array(v, dtype=np.int64))
            elif kind == "it":
                part = lib.tensor(np.array(v, dtype=np.int64).T.copy()).t()
            elif kind == "m":
                part = lib.tensor(np.array(v, dtype=bool))
            elif kind == "b":
                part = lib.tensor(v)
            else:
                part = list(v)
        key.append(part)
    return tuple(key)


# self views of a (2, 3, 4)-shaped tensor (a base shape and how to view it)
INDEX_SELF = {
    "c": ((2, 3, 4), lambda x: x),
    "permute": ((3, 4, 2), lambda x: x.permute(2, 0, 1)),
    "transpose": ((4, 3, 2), lambda x: x.transpose(0, 2)),
    "step": ((2, 6, 4), lambda x: x[:, ::2]),
    "expand": ((1, 3, 1), lambda x: x.expand(2, 3, 4)),
    "permute_step": ((6, 4, 2), lambda x: x.permute(2, 0, 1)[:, ::2]),
}

INDEX_KEYS = {
    "dim0": [("i", [1, 0, 1])],
    "dim1": [slice(None), ("i", [2, -1])],
    "dim2": [Ellipsis, ("i", [[3], [0]])],
    "one_element": [slice(None), ("i", [-2])],
    "adjacent_two": [slice(None), ("i", [0, 2]), ("i", [1, 3])],
    "broadcast_two": [("i", [[0], [1]]), ("i", [2, 0, 1])],
    "apart_two": [("i", [1, 0]), slice(None), ("i", [3, 1])],
    "apart_broadcast": [("i", [[1], [0]]), slice(1, None), ("i", [3, 1, 0])],
    "transposed_index": [slice(None), ("it", [[0, 1], [2, 2], [1, 0]])],
    "mask": [("m", [True, False])],
    "mask2": [slice(None), ("m", [[True, False, True, False], [False, True, True, False], [True] * 4])],
    "mask_after": [("i", [1]), ("m", [True, False, True])],
    "slices_around": [slice(None, None, 2), ("i", [2, 0]), slice(1, 3)],
    "none_first": [None, slice(None), ("i", [1, 0])],
    "none_between": [("i", [1]), None, ("i", [[0, 2]])],
    "bool_true": [slice(None), ("b", True), ("i", [0, 3])],
    "bool_false": [("b", False), slice(None), ("i", [1])],
    "empty": [slice(None), ("i", np.zeros((0,), np.int64))],
    "empty_broadcast": [("i", np.zeros((0,), np.int64)), ("i", [[1], [2]])],
    "list": [slice(None), slice(None), ("l", [3, 0, 0])],
}


@pytest.mark.parametrize("view", INDEX_SELF)
@pytest.mark.parametrize("key", INDEX_KEYS)
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64, np.bool_])
def test_advanced_index_result_layout(view, key, dtype):
    """x[tensor indices] was always C-contiguous; torch's TensorIterator gives the result the memory order
    of self (restrided: the indexed dims of stride 0) and of the index tensors (reshaped to self's dims)."""
    base, make = INDEX_SELF[view]
    data = _arr(base) > 0 if dtype is np.bool_ else (_arr(base) * 10).astype(dtype)
    same_layout(lambda lib: make(lib.tensor(data))[_index_key(lib, INDEX_KEYS[key])])


def test_view_of_transposed_index_result_raises():
    """The fuzz's reproducer: a permuted bool tensor indexed on its middle dim is not C-contiguous in torch, so
    view(-1) raises."""
    a = np.random.default_rng(0).random((3, 2, 2)) > 0.5
    same(lambda lib: lib.tensor(a).permute(1, 2, 0)[::, lib.tensor([-2])].view(-1))
    same_layout(lambda lib: lib.tensor(a).permute(1, 2, 0)[::, lib.tensor([-2])])


def test_out_of_range_index_into_an_empty_result_is_not_checked():
    """Indices that broadcast with an empty one select nothing: torch's kernel never runs, so an index out of
    range raises nothing (numgrad checked it)."""
    same(lambda lib: lib.zeros(2, 4)[lib.tensor([], dtype=lib.long), lib.tensor([[9]])])
    same(lambda lib: lib.zeros(2, 4)[lib.tensor(False), lib.tensor([[9]])])
    same(lambda lib: lib.zeros(2, 4)[lib.tensor([[9]]), lib.tensor([1])])


def test_index_select_stays_contiguous():
    """index_select has its own kernel, which allocates its result in C order whatever self's layout."""
    same_layout(lambda lib: lib.tensor(_arr((3, 4, 2))).permute(2, 0, 1).index_select(1, lib.tensor([2, 0])))


def test_gradients_through_laid_out_index():
    """Backward (and double backward) through an index of a permuted tensor: torch's gradients, and the
    layout of the index result inside the graph."""
    def run(lib):
        x = lib.tensor(_arr((3, 4, 2)), requires_grad=True)
        w = lib.tensor(_arr((2, 2, 4), 1))
        y = x.permute(2, 0, 1)[:, lib.tensor([2, 0])]
        (y * w).sum().backward()
        return y, x.grad
    same_layout(run)

    def double(lib):
        x = lib.tensor(_arr((3, 4, 2)), requires_grad=True)
        y = x.permute(2, 0, 1)[lib.tensor([1, 0]), :, lib.tensor([3, 1])]
        (gx,) = lib.autograd.grad((y ** 2).sum(), x, create_graph=True)
        gx.sum().backward()
        return y, gx, x.grad
    same_layout(double)


def test_index_put_value_gradient():
    """index_put_'s gradient for the values indexes the incoming gradient (torch's index kernel)."""
    def run(lib):
        x = lib.tensor(_arr((4, 3))).t()
        v = lib.tensor(_arr((2, 4), 1), requires_grad=True)
        y = x.index_put((lib.tensor([0, 2]),), v * 1)
        (y * lib.tensor(_arr((4, 3), 2)).t()).sum().backward()
        return y, v.grad
    same_layout(run)


@settings(max_examples=80, deadline=None)
@given(st.lists(st.integers(1, 4), min_size=1, max_size=4), st.randoms(use_true_random=False))
def test_random_advanced_index_layouts(shape, rnd):
    """A random permutation (some dims stepped) of a random shape, indexed by a random mix of index tensors
    (of 1 or 2 dims), masks, slices and None."""
    nd = len(shape)
    perm = rnd.sample(range(nd), nd)
    steps = [rnd.choice([1, 1, 2]) for _ in range(nd)]
    spec, d = [], 0
    while d < nd:
        r = rnd.random()
        if r < 0.35:
            spec.append(slice(None) if rnd.random() < 0.7 else slice(1, None))
            d += 1
        elif r < 0.45:
            spec.append(None)
        elif r < 0.85:
            ishape = [rnd.randint(1, 3) for _ in range(rnd.randint(1, 2))]
            values = np.random.default_rng(rnd.randint(0, 999)).integers(-shape[d], shape[d], ishape)
            spec.append(("it" if len(ishape) == 2 and rnd.random() < 0.3 else "i", values))
            d += 1
        else:
            k = rnd.randint(1, nd - d)
            spec.append(("m", np.random.default_rng(rnd.randint(0, 999)).random(shape[d:d + k]) > 0.5))
            d += k
    spec = spec[:rnd.randint(1, len(spec))]
    if not any(isinstance(p, tuple) for p in spec):
        spec.append(("i", [0]))

    def run(lib):
        base = [shape[p] * steps[k] for k, p in enumerate(perm)]
        x = lib.tensor(_arr(base))[tuple(slice(None, None, s) for s in steps)]
        return x.permute(*[perm.index(k) for k in range(nd)])[_index_key(lib, spec)]
    same_layout(run)

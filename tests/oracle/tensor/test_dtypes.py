"""dtypes against torch: reprs, the promotion table (tensors, 0-d, scalars), conversions and their gradients."""
import itertools

import numpy as np
import pytest
import torch

import numgrad
from numgrad import testing as ngt


@pytest.fixture(autouse=True)
def _default_dtype():
    yield
    torch.set_default_dtype(torch.float32)
    numgrad.set_default_dtype(numgrad.float32)


# ---- dtype objects ---------------------------------------------------------------------------------

NAMES = ["float32", "float64", "int64", "bool", "float", "double", "long"]


@pytest.mark.parametrize("name", NAMES)
def test_dtype_repr_and_attributes(name):
    ours, theirs = getattr(numgrad, name), getattr(torch, name)
    assert repr(ours) == repr(theirs)
    assert str(ours) == str(theirs)
    assert ours.is_floating_point == theirs.is_floating_point
    assert ours.itemsize == theirs.itemsize


def test_aliases_are_the_same_objects():
    assert numgrad.float is numgrad.float32 and numgrad.double is numgrad.float64 and numgrad.long is numgrad.int64
    assert numgrad.get_default_dtype() is numgrad.float32


@pytest.mark.parametrize("data", [[1.5, 2.0], [1, 2], [True, False], [1, 2.5], [True, 2], 3, 2.5, True, [],
                                  [[1, 2], [3, 4]]])
def test_inferred_dtype_and_tensor_repr(data):
    ours, theirs = numgrad.tensor(data), torch.tensor(data)
    assert repr(ours.dtype) == repr(theirs.dtype)
    assert repr(ours) == repr(theirs)


@pytest.mark.parametrize("np_dtype", ["float32", "float64", "int64", "bool"])
def test_from_numpy_keeps_the_dtype(np_dtype):
    arr = np.array([1, 0, 3]).astype(np_dtype)
    assert repr(numgrad.tensor(arr).dtype) == repr(torch.tensor(arr).dtype)
    assert repr(numgrad.from_numpy(arr).dtype) == repr(torch.from_numpy(arr).dtype)


def test_default_dtype_float64():
    torch.set_default_dtype(torch.float64)
    numgrad.set_default_dtype(numgrad.float64)
    for make in (lambda L: L.tensor([1.5]), lambda L: L.ones(2), lambda L: L.tensor([1]) / 2,
                 lambda L: L.tensor([1]) * 2.5, lambda L: L.tensor([1]).exp(), lambda L: L.arange(3.0)):
        assert repr(make(numgrad).dtype) == repr(make(torch).dtype)


# ---- the promotion table ---------------------------------------------------------------------------

DTYPES = ["float32", "float64", "int64", "bool"]
SCALARS = {"bool": True, "int64": 3, "float32": 2.5, "float64": 2.5}


def _operand(L, kind, dtype):
    """A dimensioned tensor, a 0-d tensor or a Python scalar of the given dtype's kind."""
    values = {"bool": [True, False, True], "int64": [2, -1, 4], "float32": [0.5, -1.5, 2.0],
              "float64": [0.5, -1.5, 2.0]}[dtype]
    if kind == "scalar":
        return SCALARS[dtype]
    data = values if kind == "tensor" else values[0]
    return L.tensor(data, dtype=getattr(L, dtype if dtype != "bool" else "bool"))


OPERANDS = [(kind, d) for kind in ("tensor", "0-d", "scalar") for d in DTYPES if not (kind == "scalar" and
                                                                                         d == "float64")]
PAIRS = [(a, b) for a, b in itertools.product(OPERANDS, OPERANDS) if "scalar" not in (a[0], b[0]) or
         a[0] != b[0]]

OPS = {
    "add": lambda a, b: a + b,
    "sub": lambda a, b: a - b,
    "mul": lambda a, b: a * b,
    "div": lambda a, b: a / b,
    "lt": lambda a, b: a < b,
    "eq": lambda a, b: a == b,
}


def _pair_id(p):
    (ka, da), (kb, db) = p
    return f"{ka}:{da}-{kb}:{db}"


@pytest.mark.parametrize("pair,op", [
    pytest.param(p, op, id=f"{_pair_id(p)}-{op}") for p in PAIRS for op in OPS])
def test_promotion(pair, op):
    """Result dtype (and values) as torch's for every pair of operand kinds and dtypes; the same exception
    type where torch refuses (bool - bool)."""
    (ka, da), (kb, db) = pair
    fn = OPS[op]
    ngt.compare_with_torch(lambda L: fn(_operand(L, ka, da), _operand(L, kb, db)), rtol=1e-6, atol=1e-6,
                           check_message=True)


@pytest.mark.parametrize("pair", [p for p in PAIRS if "scalar" not in (p[0][0], p[1][0])],
                         ids=[_pair_id(p) for p in PAIRS if "scalar" not in (p[0][0], p[1][0])])
def test_promotion_agrees_with_torch_result_type(pair):
    (ka, da), (kb, db) = pair
    expected = torch.result_type(_operand(torch, ka, da), _operand(torch, kb, db))
    ours = (_operand(numgrad, ka, da) * _operand(numgrad, kb, db)).dtype
    assert repr(ours) == repr(expected)


@pytest.mark.parametrize("call", [
    pytest.param(lambda L: L.tensor([1, 2]) * 2.5, id="int tensor * float scalar -> float32"),
    pytest.param(lambda L: L.tensor([1, 2]) / L.tensor([2, 4]), id="int / int -> float32"),
    pytest.param(lambda L: L.tensor([True, False]) + L.tensor([1, 2]), id="bool + int -> int64"),
    pytest.param(lambda L: L.tensor([True, False]) + True, id="bool + True -> bool"),
    pytest.param(lambda L: L.tensor([1.0, 2.0]) + L.tensor(3.0, dtype=L.float64), id="f32 + f64 0-d -> f32"),
    pytest.param(lambda L: L.tensor([1, 2]) + L.tensor(3.0, dtype=L.float64), id="int + f64 0-d -> f64"),
    pytest.param(lambda L: L.tensor(1.0) + L.tensor([1, 2]), id="f32 0-d + int tensor -> f32"),
    pytest.param(lambda L: L.tensor([1.0], dtype=L.float64) * 2.5, id="f64 * float -> f64"),
    pytest.param(lambda L: L.tensor(2, dtype=L.int64) * 2.5, id="int 0-d * float -> f32"),
    pytest.param(lambda L: L.tensor([1, 2]) ** 2.0, id="int ** float -> f32"),
    pytest.param(lambda L: L.tensor([1, 2]) ** 2, id="int ** int -> int64"),
    pytest.param(lambda L: 2 ** L.tensor([1, 2]), id="int ** int tensor -> int64"),
    pytest.param(lambda L: L.tensor([1, 2]).sqrt(), id="sqrt(int) -> f32"),
    pytest.param(lambda L: L.tensor([True]).exp(), id="exp(bool) -> f32"),
    pytest.param(lambda L: L.where(L.tensor([True, False]), L.tensor([1, 2]), L.tensor([1.5, 2.5])),
                 id="where(int, f32) -> f32"),
    pytest.param(lambda L: L.maximum(L.tensor([1, 2]), L.tensor([1.5, 0.5], dtype=L.float64)),
                 id="maximum(int, f64) -> f64"),
    pytest.param(lambda L: L.clamp(L.tensor([1, 5]), 0.5, 2.5), id="clamp(int, float bounds) -> f32"),
    pytest.param(lambda L: L.clamp(L.tensor([1, 5]), 0, 2), id="clamp(int, int bounds) -> int64"),
    pytest.param(lambda L: L.tensor([1, 2]) - True, id="int - True raises"),
    pytest.param(lambda L: L.tensor([True]) - L.tensor([True]), id="bool - bool raises"),
    pytest.param(lambda L: -L.tensor([True]), id="-bool raises"),
    pytest.param(lambda L: L.tensor([1, 2]) // 2, id="int // int -> int64"),
    pytest.param(lambda L: L.tensor([1.5, -2.5]) // 1, id="float // int -> float32"),
])
def test_promotion_examples(call):
    ngt.compare_with_torch(lambda L: call(L), rtol=1e-6, atol=1e-6, check_message=True)


@pytest.mark.parametrize("call", [
    pytest.param(lambda L: L.tensor([1, 2]) * 2.5, id="int * float"),
    pytest.param(lambda L: L.tensor([1, 2]) / 2, id="int / int"),
    pytest.param(lambda L: L.tensor([1.0], dtype=L.float32) * 2.5, id="f32 * float stays f32"),
    pytest.param(lambda L: L.tensor([1, 2]) + L.tensor(1.5), id="int + 0-d default float"),
])
def test_promotion_follows_default_dtype(call):
    torch.set_default_dtype(torch.float64)
    numgrad.set_default_dtype(numgrad.float64)
    ngt.compare_with_torch(lambda L: call(L), check_message=True)


@pytest.mark.parametrize("call", [
    pytest.param(lambda L: L.tensor([1.0, 2.0]).add_(L.tensor([1.0], dtype=L.float64)), id="f32.add_(f64)"),
    pytest.param(lambda L: L.tensor([1, 2]).add_(2.5), id="int.add_(float) raises"),
    pytest.param(lambda L: L.tensor([1, 2]).mul_(L.tensor([True, False])), id="int.mul_(bool)"),
    pytest.param(lambda L: L.tensor([1, 2]).div_(2), id="int.div_ raises"),
    pytest.param(lambda L: L.tensor([True]).add_(1), id="bool.add_(int) raises"),
])
def test_in_place_keeps_dtype_or_raises(call):
    ngt.compare_with_torch(lambda L: call(L), check_message=True)


# ---- conversions -----------------------------------------------------------------------------------

CONVERSIONS = {
    ".float()": lambda L, x: x.float(),
    ".double()": lambda L, x: x.double(),
    ".long()": lambda L, x: x.long(),
    ".bool()": lambda L, x: x.bool(),
    ".to(float64)": lambda L, x: x.to(L.float64),
    ".to(dtype=float32)": lambda L, x: x.to(dtype=L.float32),
    ".to(int64)": lambda L, x: x.to(L.int64),
    ".to(other)": lambda L, x: x.to(L.zeros(1, dtype=L.float64)),
    ".to(float32, copy=True)": lambda L, x: x.to(L.float32, copy=True),
    ".type_as(f64)": lambda L, x: x.type_as(L.zeros(1, dtype=L.float64)),
    ".double().float()": lambda L, x: x.double().float(),
    ".double() * x": lambda L, x: x.double() * x,
    ".double().exp().sum()": lambda L, x: x.double().exp().sum(),
}


@pytest.mark.parametrize("src", ["float32", "float64", "int64", "bool"])
@pytest.mark.parametrize("conv", list(CONVERSIONS))
def test_conversions(conv, src):
    """Values (truncation toward zero, nonzero -> True), dtype, grad_fn (ToCopyBackward0), gradients back
    in the source dtype, second order."""
    x = np.array([-1.7, 0.0, 2.5, 3.0])
    x = x != 0 if src == "bool" else x.astype(src)
    ngt.compare_with_torch(CONVERSIONS[conv], x, check_grad_fn=True, second_order=True)


@pytest.mark.parametrize("name", ["float", "double", "long", "bool"])
def test_conversion_to_the_same_dtype_returns_self(name):
    dtype = {"float": "float32", "double": "float64", "long": "int64", "bool": "bool"}[name]
    t_ours = numgrad.zeros(2, dtype=getattr(numgrad, dtype))
    t_theirs = torch.zeros(2, dtype=getattr(torch, dtype))
    assert (getattr(t_ours, name)() is t_ours) == (getattr(t_theirs, name)() is t_theirs)
    assert (t_ours.to(getattr(numgrad, dtype)) is t_ours) == (t_theirs.to(getattr(torch, dtype)) is t_theirs)
    assert (t_ours.to(getattr(numgrad, dtype), copy=True) is t_ours) == \
        (t_theirs.to(getattr(torch, dtype), copy=True) is t_theirs)


def test_to_copy_backward_returns_the_source_dtype():
    for L in (numgrad, torch):
        x = L.tensor([1.0, 2.0], requires_grad=True)
        y = x.double()
        assert type(y.grad_fn).__name__ == "ToCopyBackward0"
        (y * y).sum().backward()
        assert repr(x.grad.dtype) == "torch.float32"
        assert x.grad.tolist() == [2.0, 4.0]
    assert not numgrad.tensor([1.5], requires_grad=True).long().requires_grad


@pytest.mark.parametrize("data,dtype", [([-1.7, 2.5, -0.5], "int64"), ([float("nan"), 0.0, -0.0, 2.0], "bool"),
                                        ([3, -2, 0], "float32"), ([True, False], "float64"),
                                        ([1e10, -1e10], "float32"), ([2 ** 40, -3], "float64")])
def test_tensor_constructor_casts_as_torch(data, dtype):
    ours = numgrad.tensor(data, dtype=getattr(numgrad, dtype))
    theirs = torch.tensor(data, dtype=getattr(torch, dtype))
    ngt.assert_close(ours, theirs, rtol=0, atol=0, equal_nan=True)

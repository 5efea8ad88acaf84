"""Checks numgrad._core.printing.format_tensor against torch's own tensor repr."""

import math

import numpy as np
import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from numgrad._core.printing import format_tensor, get_printoptions, set_printoptions


@pytest.fixture(autouse=True)
def _restore_defaults():
    # Both libraries keep global print state; every test starts and ends on defaults.
    def reset():
        torch.set_printoptions(profile="default")
        set_printoptions(profile="default")
        torch.set_default_dtype(torch.float32)

    reset()
    yield
    reset()


def ours(arr, **kwargs):
    return format_tensor(arr, dtype=arr.dtype.name, **kwargs)


def theirs(arr):
    # copy() keeps 0-d arrays 0-d (np.ascontiguousarray would promote them to 1-d).
    return repr(torch.from_numpy(arr.copy()))


def assert_same(arr, **kwargs):
    expected = theirs(arr)
    assert ours(arr, **kwargs) == expected


f32 = np.float32
f64 = np.float64

CASES = [
    np.ones((2, 2), f32),
    np.array(27.0, f32),
    np.array(335.7415, f32),
    np.array(-0.0, f32),
    np.array(7, np.int64),
    np.array(True),
    np.array([1, 2, 3], np.int64),
    np.array([-5, 12, -300, 7], np.int64),
    np.array([10**15, -3], np.int64),
    np.array([True, False]),
    np.array([1.0, 2.0], f64),
    np.array([-18.1909, 1.4176], f32),
    np.array([1e-8, 1e10], f32),
    np.array([1e-5], f32),
    np.array([123456.789], f32),
    np.array([123456.789, 1.5], f64),
    np.array([1e8, 2.0], f32),
    np.array([1.5e8, 1.0], f32),
    np.array([1e-4, 2e-4], f32),
    np.array([0.5, 500.0], f32),
    np.array([0.5, 500.5], f32),
    np.array([0.0, -0.0, 1.0], f32),
    np.array([0.0, 0.0], f32),
    np.array([math.nan, math.inf, -math.inf], f32),
    np.array([math.nan, 1.5, -math.inf, 0.0], f32),
    np.array([math.nan, 1e-9, math.inf, 3.0], f64),
    np.array([math.inf, 1.0, 2.0], f32),
    np.array([1e20, -1e20], f32),
    np.array([1e300, 1e-300], f64),
    np.array([0.1, 0.2, 0.30000001], f64),
    np.array([0.99995, 1.00005], f32),
    np.zeros((0,), f32),
    np.zeros((0, 3), f32),
    np.zeros((0,), f64),
    np.zeros((0,), np.int64),
    np.zeros((2, 0, 4), np.int64),
    np.zeros((0,), bool),
    np.zeros((1, 1, 1), f32),
    np.arange(7, dtype=f32).reshape(1, 7, 1),
    np.arange(24, dtype=f32).reshape(2, 3, 4) - 11.5,
    np.arange(120, dtype=np.int64).reshape(2, 3, 4, 5) - 60,
    np.arange(40, dtype=f32) * 1.37,
    np.arange(100, dtype=np.int64) * 123457,
    np.linspace(-1, 1, 30).astype(f64).reshape(3, 10) * 1e5,
    np.arange(2000, dtype=f32),
    np.arange(2000, dtype=np.int64) - 1000,
    np.arange(1600, dtype=f32).reshape(40, 40) / 7,
    np.arange(1001, dtype=f32).reshape(7, 11, 13)[:1].copy(),
    np.arange(3003, dtype=f64).reshape(7, 11, 39) * 1e-6,
    np.arange(2 * 8 * 9 * 10, dtype=f32).reshape(2, 8, 9, 10),
    np.random.default_rng(0).normal(size=(5, 300)).astype(f32),
    np.random.default_rng(1).random(1500) > 0.5,
]


@pytest.mark.parametrize("arr", CASES, ids=[f"{a.dtype}{a.shape}-{i}" for i, a in enumerate(CASES)])
def test_matches_torch(arr):
    assert_same(arr)


def test_known_strings():
    # A few literal outputs, so a torch change could not silently move both sides.
    assert ours(np.ones((2, 2), f32)) == "tensor([[1., 1.],\n        [1., 1.]])"
    assert ours(np.array([1e-8, 1e10], f32)) == "tensor([1.0000e-08, 1.0000e+10])"
    assert ours(np.zeros((0, 3), f32)) == "tensor([], size=(0, 3))"
    assert ours(np.zeros((0,), np.int64)) == "tensor([], dtype=torch.int64)"
    assert ours(np.array([1.0, 2.0], f64)) == "tensor([1., 2.], dtype=torch.float64)"
    assert ours(np.array([-18.1909, 1.4176], f32)) == "tensor([-18.1909,   1.4176])"


@pytest.mark.parametrize("arr", [
    np.ones((2, 2), f32),
    np.array(3.5, f32),
    np.array([1.0, 2.0], f64),
    np.zeros((0, 2), f32),
    np.zeros((0,), f64),
    np.arange(2000, dtype=f32),
    np.arange(29, dtype=f64) * 3.14159,  # long last line: suffixes wrap onto their own line
    np.arange(15, dtype=f64) * 1.1,
])
def test_requires_grad(arr):
    t = torch.from_numpy(arr.copy()).requires_grad_()
    assert ours(arr, requires_grad=True) == repr(t)


@pytest.mark.parametrize("op", [
    lambda t: t + 0,
    lambda t: t * 2,
    lambda t: t.sum(),
    lambda t: t.mean(),
    lambda t: t.exp(),
    lambda t: t.reshape(-1),
])
@pytest.mark.parametrize("arr", [
    np.ones((3, 3), f32) * 3,
    np.array([[10.0, -2.5], [0.125, 7.0]], f64),
    np.array(1.5, f32),
    np.arange(27, dtype=f64).reshape(1, 27) * 1.1,
    np.arange(2000, dtype=f32) / 3,
])
def test_grad_fn(op, arr):
    out = op(torch.from_numpy(arr.copy()).requires_grad_())
    name = type(out.grad_fn).__name__
    got = format_tensor(out.detach().numpy(), dtype=arr.dtype.name, grad_fn=name,
                        requires_grad=True)
    assert f"grad_fn=<{name}>" in got
    assert got == repr(out)


def test_device_suffix():
    arr = np.array([1.0, 2.0], f32)
    # CPU torch cannot make CUDA tensors; these are torch's outputs on a CUDA machine.
    assert ours(arr, device="cuda:0") == "tensor([1., 2.], device='cuda:0')"
    assert ours(arr, device="cpu") == theirs(arr)
    assert (ours(np.array([1.0, 2.0], f64), device="cuda:0", grad_fn="AddBackward0")
            == "tensor([1., 2.], device='cuda:0', dtype=torch.float64, grad_fn=<AddBackward0>)")
    assert (ours(np.zeros((0, 2), np.int64), device="cuda:1")
            == "tensor([], device='cuda:1', size=(0, 2), dtype=torch.int64)")


@pytest.mark.parametrize("arr", [
    np.array([1.0, 2.0], f32),
    np.array([1.0, 2.0], f64),
    np.array(2.5, f32),
    np.zeros((0,), f32),
    np.zeros((0,), f64),
    np.zeros((0,), np.int64),
    np.array([1, 2], np.int64),
])
def test_default_dtype_float64(arr):
    torch.set_default_dtype(torch.float64)
    assert ours(arr, default_dtype="float64") == theirs(arr)


OPTION_SETS = [
    {"precision": 2},
    {"precision": 0},
    {"precision": 8},
    {"threshold": 5},
    {"threshold": 0},
    {"edgeitems": 1, "threshold": 10},
    {"edgeitems": 0, "threshold": 10},
    {"linewidth": 30},
    {"linewidth": 200},
    {"profile": "short"},
    {"profile": "full"},
    {"profile": "short", "precision": 6},
    {"sci_mode": True},
    {"sci_mode": False},
    {"sci_mode": True, "precision": 2},
]

OPTION_ARRAYS = [
    np.array([1.12345, -2.5, 300.0], f32),
    np.array(0.000123, f32),
    np.array([1e-8, 1e10, math.nan], f64),
    np.array([3.0, -4.0, 0.0], f32),
    np.array([math.inf, 0.0], f32),
    np.arange(10, dtype=np.int64),
    np.array([True, False] * 6),
    np.arange(24, dtype=f32).reshape(2, 3, 4) / 3,
    np.arange(2000, dtype=f32) * 1.5,
    np.arange(1600, dtype=np.int64).reshape(40, 40),
    np.zeros((0, 4), f32),
]


@pytest.mark.parametrize("options", OPTION_SETS, ids=lambda o: ",".join(f"{k}={v}" for k, v in o.items()))
def test_printoptions(options):
    torch.set_printoptions(**options)
    set_printoptions(**options)
    assert get_printoptions() == torch._tensor_str.get_printoptions()
    for arr in OPTION_ARRAYS:
        assert ours(arr) == theirs(arr), arr
        # Suffix placement depends on linewidth and edgeitems too.
        if arr.dtype.kind == "f":
            t = torch.from_numpy(arr.copy()).requires_grad_()
            assert ours(arr, requires_grad=True) == repr(t)


def test_printoptions_state():
    defaults = {"precision": 4, "threshold": 1000, "edgeitems": 3, "linewidth": 80, "sci_mode": None}
    assert get_printoptions() == defaults
    set_printoptions(precision=2, sci_mode=True)
    assert get_printoptions()["precision"] == 2 and get_printoptions()["sci_mode"] is True
    # Like torch, any call that omits sci_mode resets it to automatic.
    set_printoptions(linewidth=100)
    assert get_printoptions() == {**defaults, "precision": 2, "linewidth": 100}
    set_printoptions(profile="full")
    assert get_printoptions()["threshold"] == math.inf
    # The returned dict is a snapshot that can be fed back.
    snapshot = get_printoptions()
    snapshot["precision"] = 9
    assert get_printoptions()["precision"] == 4
    set_printoptions(**snapshot)
    assert get_printoptions()["precision"] == 9
    set_printoptions(profile="default")
    assert get_printoptions() == defaults


# ---------------------------------------------------------------- property tests

SMALL_SHAPES = st.lists(st.integers(0, 7), min_size=0, max_size=4).map(tuple)
BIG_SHAPES = st.sampled_from([(2000,), (40, 40), (3, 400), (11, 10, 10), (1001,), (2, 3, 13, 13)])
FLOAT_KINDS = ["ints", "normal", "tiny", "huge", "mixed", "special", "binary", "rounded"]


def _float_values(rng, kind, shape, dtype):
    size = int(np.prod(shape))
    if kind == "ints":
        v = rng.integers(-1000, 1000, size).astype(f64)
    elif kind == "normal":
        v = rng.normal(size=size) * 10.0 ** rng.integers(-3, 4)
    elif kind == "tiny":
        v = rng.normal(size=size) * 1e-6
    elif kind == "huge":
        v = rng.normal(size=size) * 1e12
    elif kind == "mixed":
        v = rng.normal(size=size) * 10.0 ** rng.uniform(-12, 12, size)
    elif kind == "binary":
        v = rng.integers(0, 2, size).astype(f64)
    elif kind == "rounded":
        # Values that sit on rounding boundaries of the 4-digit format.
        v = np.round(rng.normal(size=size) * 100, rng.integers(0, 6)) + 0.00005
    else:  # special
        v = rng.normal(size=size) * 10.0 ** rng.integers(-5, 6)
        specials = np.array([math.nan, math.inf, -math.inf, 0.0, -0.0, 1.0])
        mask = rng.random(size) < 0.3
        v[mask] = rng.choice(specials, mask.sum())
    return v.astype(dtype).reshape(shape)


@st.composite
def tensors(draw):
    shape = draw(st.one_of(SMALL_SHAPES, SMALL_SHAPES, SMALL_SHAPES, BIG_SHAPES))
    dtype = draw(st.sampled_from(["float32", "float32", "float64", "int64", "bool"]))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    if dtype == "int64":
        bound = draw(st.sampled_from([2, 10, 1000, 10**6, 2**62]))
        return np.asarray(rng.integers(-bound, bound, shape, dtype=np.int64))
    if dtype == "bool":
        return np.asarray(rng.random(shape) < 0.5)
    return _float_values(rng, draw(st.sampled_from(FLOAT_KINDS)), shape, dtype)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tensors())
def test_random_tensors_match_torch(arr):
    assert_same(arr)


@settings(max_examples=150, deadline=None)
@given(hnp.arrays(st.sampled_from([f32, f64]), hnp.array_shapes(min_dims=0, max_dims=3, max_side=6),
                  elements={"allow_nan": True, "allow_infinity": True, "allow_subnormal": False}))
def test_arbitrary_floats_match_torch(arr):
    assert_same(arr)


@settings(max_examples=100, deadline=None)
@given(tensors().filter(lambda a: a.dtype.kind == "f"), st.sampled_from(["add", "sum", "leaf"]))
def test_random_autograd_reprs(arr, how):
    leaf = torch.from_numpy(arr.copy()).requires_grad_()
    out = {"add": lambda: leaf + 0, "sum": leaf.sum, "leaf": lambda: leaf}[how]()
    grad_fn = None if out.grad_fn is None else type(out.grad_fn).__name__
    got = format_tensor(out.detach().numpy(), dtype=arr.dtype.name, grad_fn=grad_fn,
                        requires_grad=True)
    assert got == repr(out)


@settings(max_examples=100, deadline=None)
@given(tensors(), st.integers(0, 6), st.integers(0, 3), st.sampled_from([1, 20, 45, 80, 120]),
       st.sampled_from([None, True, False]), st.sampled_from([0, 50, 1000]))
def test_random_printoptions(arr, precision, edgeitems, linewidth, sci_mode, threshold):
    options = dict(precision=precision, edgeitems=edgeitems, linewidth=linewidth,
                   sci_mode=sci_mode, threshold=threshold)
    torch.set_printoptions(**options)
    set_printoptions(**options)
    try:
        assert_same(arr)
    finally:
        torch.set_printoptions(profile="default")
        set_printoptions(profile="default")

"""The integer and half dtypes (uint8, int8, int16, int32, float16, bfloat16) against torch: promotion, the ops'
values and result dtypes, wrapping, refusals, conversions, factories, printing and half-precision gradients."""
import itertools

import numpy as np
import pytest
import torch

import numgrad

INTS = ["uint8", "int8", "int16", "int32"]
HALVES = ["float16", "bfloat16"]
ALL = ["bool", *INTS, "int64", *HALVES, "float32", "float64"]
NARROW = INTS + HALVES


def _message(exc):
    return str(exc).split("\n(Triggered internally")[0]


def _plain(t):
    """A tensor's values as a float64 (or int64, bool) NumPy array, and its dtype's name."""
    if t.dtype.is_floating_point:
        return t.detach().double().numpy(), str(t.dtype)
    return (t.detach().numpy() if str(t.dtype) == "torch.bool" else t.detach().long().numpy()), str(t.dtype)


def check(fn, rtol=0.0, atol=0.0, printed=True):
    """fn(lib) in both libraries: the same exception (type and message), or outputs of the same dtype, shape,
    values (exact unless told) and, with `printed`, repr."""
    results = []
    for lib in (torch, numgrad):
        try:
            out = fn(lib)
        except Exception as exc:  # noqa: BLE001  an error is a result to compare
            results.append(exc)
        else:
            results.append(list(out) if isinstance(out, (tuple, list)) else [out])
    theirs, ours = results
    if isinstance(theirs, Exception) or isinstance(ours, Exception):
        assert type(ours) is type(theirs), f"torch: {theirs!r}\nnumgrad: {ours!r}"
        assert _message(ours) == _message(theirs)
        return
    for a, b in zip(theirs, ours, strict=True):
        (va, da), (vb, db) = _plain(a), _plain(b)
        assert db == da and vb.shape == va.shape
        np.testing.assert_allclose(vb, va, rtol=rtol, atol=atol, equal_nan=True)
        if printed:
            assert repr(b) == repr(a)


def _values(dtype, n=6, seed=0):
    rng = np.random.default_rng(seed)
    if dtype == "bool":
        return (rng.random(n) < 0.5).tolist()
    if dtype == "uint8":
        return rng.integers(0, 256, n).tolist()
    if dtype.startswith("int"):
        lo = {"int8": -128, "int16": -300, "int32": -10**6, "int64": -10**6}[dtype]
        return [v for v in rng.integers(lo, -lo, n).tolist()]
    return (rng.standard_normal(n) * 3).round(3).tolist()


def _t(L, dtype, n=6, seed=0, shape=None):
    t = L.tensor(_values(dtype, n, seed), dtype=getattr(L, dtype))
    return t.reshape(shape) if shape else t


# ---- dtype objects and promotion -------------------------------------------------------------------

@pytest.mark.parametrize("name", [*NARROW, "int", "short", "half"])
def test_dtype_attributes(name):
    ours, theirs = getattr(numgrad, name), getattr(torch, name)
    assert repr(ours) == repr(theirs) and str(ours) == str(theirs)
    assert ours.is_floating_point == theirs.is_floating_point and ours.itemsize == theirs.itemsize
    assert ours.is_signed == theirs.is_signed and ours.is_complex == theirs.is_complex


def test_aliases():
    assert numgrad.int is numgrad.int32 and numgrad.short is numgrad.int16 and numgrad.half is numgrad.float16


@pytest.mark.parametrize("a,b", list(itertools.product(ALL, ALL)))
def test_promote_types(a, b):
    assert repr(numgrad.promote_types(getattr(numgrad, a), getattr(numgrad, b))) == \
        repr(torch.promote_types(getattr(torch, a), getattr(torch, b)))


KINDS = ("tensor", "0-d")


@pytest.mark.parametrize("a,ka,b,kb", [(a, ka, b, kb) for a, b in itertools.product(ALL, ALL) for ka in KINDS
                                       for kb in KINDS if a in NARROW or b in NARROW])
def test_result_type_of_tensors(a, ka, b, kb):
    def make(L, d, kind):
        t = _t(L, d, 3)
        return t if kind == "tensor" else t[0]
    assert repr(numgrad.result_type(make(numgrad, a, ka), make(numgrad, b, kb))) == \
        repr(torch.result_type(make(torch, a, ka), make(torch, b, kb)))


@pytest.mark.parametrize("d", NARROW)
@pytest.mark.parametrize("scalar", [True, 3, -2, 2.5])
@pytest.mark.parametrize("op", ["add", "mul", "sub", "div", "eq"])
def test_scalars_keep_the_tensor_dtype(d, scalar, op):
    check(lambda L: getattr(L, op)(_t(L, d), scalar), rtol=1e-6)


# ---- binary ops across dtype pairs -----------------------------------------------------------------

BINARY = {
    "add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b, "div": lambda a, b: a / b,
    "floordiv": lambda a, b: a // b, "remainder": lambda a, b: a % b, "fmod": lambda a, b: a.fmod(b),
    "lt": lambda a, b: a < b, "eq": lambda a, b: a == b, "maximum": lambda a, b: a.maximum(b),
    "and": lambda a, b: a & b, "or": lambda a, b: a | b, "xor": lambda a, b: a ^ b,
    "lshift": lambda a, b: a << b, "rshift": lambda a, b: a >> b,
}
PAIRS = [(a, b) for a in ALL for b in ALL if (a in NARROW or b in NARROW) and (a == b or a in NARROW)]


@pytest.mark.parametrize("op", list(BINARY))
@pytest.mark.parametrize("a,b", PAIRS)
def test_binary(op, a, b):
    fn = BINARY[op]

    def run(L):
        x, y = _t(L, a, seed=1), _t(L, b, seed=2)
        if op in ("floordiv", "remainder", "fmod") and not y.dtype.is_floating_point:
            y = L.where(y == 0, L.ones_like(y), y)  # (an integer division by zero raises in torch)
        return fn(x, y)
    # a half result is exact: each op rounds once from float, as torch's kernels
    check(run, rtol=1e-6 if "float32" in (a, b) or "float64" in (a, b) else 0.0)


@pytest.mark.parametrize("d", INTS)
def test_integer_ops_wrap(d):
    check(lambda L: L.tensor([100, 127, 3], dtype=getattr(L, d)) * 3 + 250)
    check(lambda L: -L.tensor([0, 1, 2], dtype=getattr(L, d)))
    check(lambda L: L.tensor([5, 7], dtype=getattr(L, d)) // 1000)
    check(lambda L: L.tensor([5, 7], dtype=getattr(L, d)) + 1000)
    check(lambda L: L.tensor([5, 7], dtype=getattr(L, d)) - 10)
    check(lambda L: ~L.tensor([5, 0], dtype=getattr(L, d)))


@pytest.mark.parametrize("d", [*INTS, "int64"])
def test_shifts(d):
    counts = [-1, 0, 1, 3, 7, 8, 15, 16, 31, 32, 63, 64]
    for k in counts:
        check(lambda L: L.tensor([1, 5, 100, -3 if d != "uint8" else 253], dtype=getattr(L, d)) << k)
        check(lambda L: L.tensor([1, 5, 100, -3 if d != "uint8" else 253], dtype=getattr(L, d)) >> k)
    check(lambda L: 2 << L.tensor([1, 3, 40], dtype=getattr(L, d)))
    check(lambda L: 256 >> L.tensor([1, 3, 40], dtype=getattr(L, d)))
    check(lambda L: L.tensor([True]) << True)


@pytest.mark.parametrize("d", NARROW)
def test_zero_dim_tensor_of_a_wider_type_keeps_the_dtype(d):
    check(lambda L: _t(L, d) + L.tensor(3), rtol=1e-6)
    check(lambda L: _t(L, d) * L.tensor(2.5, dtype=L.float64), rtol=1e-6)


# ---- unary ops -------------------------------------------------------------------------------------

UNARY = ["neg", "abs", "sign", "relu", "exp", "log", "sqrt", "sin", "tanh", "sigmoid", "reciprocal", "square",
         "floor", "round", "logical_not", "isnan"]


@pytest.mark.parametrize("op", UNARY)
@pytest.mark.parametrize("d", NARROW)
def test_unary(op, d):
    def run(L):
        x = _t(L, d)
        if op in ("log", "sqrt"):
            x = x.abs() if d != "uint8" else x
        return getattr(x, op)()
    check(run, rtol=1e-6)


@pytest.mark.parametrize("d", INTS)
def test_float_only_kernels_refuse_integers(d):
    check(lambda L: L.nn.functional.gelu(_t(L, d)))


@pytest.mark.parametrize("d", NARROW)
def test_clamp_pow(d):
    check(lambda L: _t(L, d).clamp(-5, 50))
    check(lambda L: _t(L, d).clamp(min=_t(L, d, seed=3)))
    check(lambda L: _t(L, d) ** 2, rtol=1e-6)
    check(lambda L: _t(L, d).abs() ** _t(L, d, seed=1).remainder(3), rtol=1e-6)


@pytest.mark.parametrize("d", ["uint8", "int8"])
def test_sub_of_bool_refused(d):
    check(lambda L: _t(L, d) - True)


# ---- reductions ------------------------------------------------------------------------------------

REDUCE = {
    "sum": lambda x: x.sum(), "sum_dim": lambda x: x.sum(1), "prod": lambda x: x.prod(1),
    "mean": lambda x: x.mean(), "max": lambda x: x.max(), "max_dim": lambda x: x.max(1), "min_dim": lambda x: x.min(0),
    "argmax": lambda x: x.argmax(), "argmin_dim": lambda x: x.argmin(1), "amax": lambda x: x.amax(0),
    "sum_dtype": lambda x: x.sum(dtype=torch.float32 if isinstance(x, torch.Tensor) else numgrad.float32),
    "any": lambda x: x.any(), "all": lambda x: x.all(1),
}


@pytest.mark.parametrize("op", list(REDUCE))
@pytest.mark.parametrize("d", NARROW)
def test_reductions(op, d):
    # (half sums: torch accumulates in float, numgrad in double, both round once at the end; torch's half prod
    # rounds at each step, numgrad's once)
    half_prod = op == "prod" and d in HALVES
    check(lambda L: REDUCE[op](_t(L, d, 12, shape=(3, 4))), rtol=(1e-2 if half_prod else 1e-3) if d in HALVES else 0.0,
          printed=not half_prod)


@pytest.mark.parametrize("d", HALVES)
def test_half_softmax_and_matmul(d):
    check(lambda L: _t(L, d, 12, shape=(3, 4)).softmax(-1), rtol=1e-2, printed=False)
    check(lambda L: _t(L, d, 12, shape=(3, 4)) @ _t(L, d, 8, seed=4, shape=(4, 2)), rtol=1e-2, atol=1e-2,
          printed=False)


# ---- conversions, factories, printing --------------------------------------------------------------

CONVERSIONS = ["int", "short", "char", "byte", "long", "half", "bfloat16", "float", "double", "bool"]


@pytest.mark.parametrize("method", CONVERSIONS)
@pytest.mark.parametrize("d", ALL)
def test_conversion_methods(method, d):
    check(lambda L: getattr(_t(L, d), method)())
    check(lambda L: _t(L, d).to(getattr(L, d)).to(dtype=L.int32))


def test_double_to_half_rounds_through_float():
    x = [1.0009765625 + 2 ** -24 + 2 ** -40, 3.14159265358979, 1e-8, 70000.0]
    for d in HALVES:
        check(lambda L: L.tensor(x, dtype=L.float64).to(getattr(L, d)))
        check(lambda L: L.tensor(x, dtype=getattr(L, d)))


@pytest.mark.parametrize("d", NARROW)
def test_factories(d):
    check(lambda L: L.zeros(2, 3, dtype=getattr(L, d)))
    check(lambda L: L.ones(4, dtype=getattr(L, d)))
    check(lambda L: L.arange(5, dtype=getattr(L, d)))
    check(lambda L: L.full((2,), 7, dtype=getattr(L, d)))
    check(lambda L: L.full_like(_t(L, d), 4))
    check(lambda L: L.zeros_like(_t(L, d)))
    assert repr(numgrad.randint(0, 5, (3,), dtype=getattr(numgrad, d)).dtype) == repr(getattr(torch, d))


@pytest.mark.parametrize("np_dtype", ["uint8", "int8", "int16", "int32", "float16"])
def test_numpy_arrays_keep_their_dtype(np_dtype):
    arr = np.array([1, 0, 3]).astype(np_dtype)
    check(lambda L: L.tensor(arr))
    check(lambda L: L.from_numpy(arr))
    check(lambda L: L.as_tensor(arr))


def test_from_numpy_refusal():
    check(lambda L: L.from_numpy(np.array(["a"])))


@pytest.mark.parametrize("d", NARROW)
def test_overflow_errors(d):
    check(lambda L: L.full((2,), 10 ** 6, dtype=getattr(L, d)))
    check(lambda L: L.tensor([10 ** 6], dtype=getattr(L, d)))
    check(lambda L: L.tensor(-1, dtype=getattr(L, d)))
    check(lambda L: L.zeros(2, dtype=getattr(L, d)).fill_(2 ** 40))


@pytest.mark.parametrize("d", NARROW)
def test_printing(d):
    check(lambda L: _t(L, d, 6))
    check(lambda L: _t(L, d, 0))
    check(lambda L: _t(L, d, 12, shape=(3, 4))[0, 0])
    check(lambda L: _t(L, d, 12, shape=(3, 4)) * 1000 if d in HALVES else _t(L, d, 12, shape=(3, 4)))
    assert _t(numgrad, d).type() == _t(torch, d).type()


def test_printing_half_rounding():
    check(lambda L: L.tensor([1.1, 2.3333, 65504.0, 1e-5], dtype=L.half))
    check(lambda L: L.tensor([1.1, 2.3333, 3e38, 1e-5], dtype=L.bfloat16))


def test_item_and_tolist():
    for d in NARROW:
        ours, theirs = _t(numgrad, d), _t(torch, d)
        assert ours.tolist() == theirs.tolist() and ours[1].item() == theirs[1].item()


# ---- gradients of half types -----------------------------------------------------------------------

def _half_leaf(L, d, seed, shape=(3, 4)):
    return _t(L, d, int(np.prod(shape)), seed, shape).requires_grad_()


GRAPHS = {
    "mul_sin": lambda x, y: (x * y).sin().sum(),
    "div_exp": lambda x, y: (x.exp() / (y.abs() + 1)).mean(),
    "tanh_sigmoid": lambda x, y: (x.tanh() + y.sigmoid()).sum(1),
    "matmul": lambda x, y: (x @ y.t()).relu().sum(),
    "pow_max": lambda x, y: (x ** 2 - y).amax(1),
    "broadcast": lambda x, y: (x[:1] * y).sum(0),
}


@pytest.mark.parametrize("graph", list(GRAPHS))
@pytest.mark.parametrize("d", HALVES)
def test_half_gradients(graph, d):
    grads = []
    for L in (torch, numgrad):
        x, y = _half_leaf(L, d, 1), _half_leaf(L, d, 2)
        out = GRAPHS[graph](x, y)
        out.sum().backward()
        grads.append((out, x.grad, y.grad))
    for a, b in zip(*grads):
        (va, da), (vb, db) = _plain(a), _plain(b)
        assert db == da and vb.shape == va.shape
        np.testing.assert_allclose(vb, va, rtol=2e-2, atol=2e-2)
    assert grads[1][0].grad_fn.name() == grads[0][0].grad_fn.name()


@pytest.mark.parametrize("d", HALVES)
def test_half_gradient_accumulates_in_half(d):
    def run(L):
        x = _half_leaf(L, d, 1)
        (x * 3).sum().backward()
        (x * x).sum().backward()
        return x.grad
    check(run)


# ---- narrow integers as indices --------------------------------------------------------------------

@pytest.mark.filterwarnings("ignore:indexing with dtype torch.uint8 is now deprecated")  # (both warn)
@pytest.mark.parametrize("d", INTS)
def test_integer_index_tensors(d):
    x = lambda L: L.arange(6.0).reshape(2, 3)  # noqa: E731
    check(lambda L: x(L)[L.tensor([1, 0], dtype=getattr(L, d))])
    check(lambda L: x(L).index_select(1, L.tensor([2, 0], dtype=getattr(L, d))))
    check(lambda L: x(L).gather(1, L.tensor([[2], [0]], dtype=getattr(L, d))))
    check(lambda L: L.nn.functional.embedding(L.tensor([1, 0], dtype=getattr(L, d)), x(L)))
    check(lambda L: x(L).scatter_add(1, L.tensor([[2], [0]], dtype=getattr(L, d)), L.ones(2, 1)))


@pytest.mark.parametrize("d", NARROW)
def test_save_and_load_keep_the_dtype(d, tmp_path):
    x = _t(numgrad, d, 12, shape=(3, 4))
    numgrad.save({"x": x, "row": x[1]}, tmp_path / "t.pt")
    back = numgrad.load(tmp_path / "t.pt")
    assert repr(back["x"]) == repr(x) == repr(_t(torch, d, 12, shape=(3, 4)))
    assert repr(back["row"]) == repr(x[1])


@pytest.mark.parametrize("d", [None, *HALVES, "float32", "float64"])
def test_finfo(d):
    ours, theirs = (L.finfo() if d is None else L.finfo(getattr(L, d)) for L in (numgrad, torch))
    assert repr(ours) == repr(theirs)
    for attr in ("bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution", "dtype"):
        assert getattr(ours, attr) == getattr(theirs, attr) and type(getattr(ours, attr)) is type(getattr(theirs, attr))


@pytest.mark.parametrize("d", [*INTS, "int64"])
def test_iinfo(d):
    ours, theirs = numgrad.iinfo(getattr(numgrad, d)), torch.iinfo(getattr(torch, d))
    assert repr(ours) == repr(theirs) and (ours.bits, ours.max, ours.min, ours.dtype) == \
        (theirs.bits, theirs.max, theirs.min, theirs.dtype)


def test_info_refusals():
    check(lambda L: L.finfo(L.int32))
    check(lambda L: L.iinfo(L.float16))


@pytest.mark.parametrize("d", HALVES)
def test_half_module_step(d):
    """A Linear layer cast with .half()/.bfloat16(), its cross-entropy and gradients, against torch's with the
    same weights (each op rounds once; log_softmax's backward is composed here, within an ulp or two)."""
    rng = np.random.default_rng(3)
    weight, bias, x = rng.standard_normal((3, 4)), rng.standard_normal(3), rng.standard_normal((5, 4))
    results = []
    for L in (torch, numgrad):
        layer = getattr(L.nn.Linear(4, 3), "half" if d == "float16" else "bfloat16")()
        with L.no_grad():
            layer.weight.copy_(L.tensor(weight)), layer.bias.copy_(L.tensor(bias))
        loss = L.nn.functional.cross_entropy(layer(L.tensor(x).to(getattr(L, d))), L.tensor([0, 1, 2, 1, 0]))
        loss.backward()
        results.append([loss, layer.weight.grad, layer.bias.grad])
    for a, b in zip(*results):
        (va, da), (vb, db) = _plain(a), _plain(b)
        assert db == da
        np.testing.assert_allclose(vb, va, rtol=2e-2, atol=1e-2)


def test_dtype_conversions_carry_gradients_back():
    def run(L):
        w = L.tensor([1.5, -2.25, 3.0], requires_grad=True)
        y = (w.half() * 3).float().sum() + (w.bfloat16() ** 2).sum().float()
        y.backward()
        return y, w.grad
    check(run)

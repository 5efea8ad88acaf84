"""Regression tests for what the differential fuzz's long profile found in issue 30's ops and dtypes (seeds
13 and on): one test per root cause, each against torch; the docstring says what went wrong."""
import itertools
import warnings

import numpy as np
import pytest
import torch
from helpers.op_compare import check, check_error
from oracle.fuzz.known import AMPLIFIED_ROUNDING, NAN_CLAMP_GRADIENT, NAN_SIGN, TORCH_ASSERT, known_issue
from oracle.fuzz.program import Backward, Input, Lit, Program, Ref, Step
from oracle.fuzz.runner import Failure, check_program

import numgrad

BITWISE = ("bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_left_shift", "bitwise_right_shift")


@pytest.mark.parametrize("dtype", ("int64", "uint8", "int16", "bool"))
def test_bitwise_ops_of_0d_tensors_stay_0d(dtype):
    """The bitwise ops made their result with np.ascontiguousarray, which turns a 0-d array 1-d: bitwise_not of
    a 0-d tensor had shape (1,) and an in-place mul_ by it then failed to broadcast."""
    def x(lib):
        return lib.tensor(3 if dtype != "bool" else True, dtype=getattr(lib, dtype))
    check(lambda lib: lib.bitwise_not(x(lib)))
    check(lambda lib: x(lib).bitwise_not())
    for name in BITWISE if dtype != "bool" else BITWISE[:3]:
        check(lambda lib: getattr(lib, name)(x(lib), x(lib)))
        check(lambda lib: getattr(lib, name)(x(lib), 1))
    check(lambda lib: x(lib).cumprod(0).mul_(lib.bitwise_xor(x(lib), x(lib))))


def test_two_tensor_pointwise_methods_name_other_as_argument_1():
    """logaddexp, logaddexp2 and hypot take Tensors only; as methods torch's parser counts `other` as argument 1
    (numgrad's methods were the functions, which say position 2), and hypot_ names itself."""
    for name in ("logaddexp", "logaddexp2", "hypot", "hypot_"):
        check_error(lambda lib: getattr(lib.zeros(2), name)(float("nan")))
    for name in ("logaddexp", "logaddexp2", "hypot"):
        check_error(lambda lib: getattr(lib, name)(lib.zeros(2), 1.0))
        check_error(lambda lib: getattr(lib, name)(1.0, lib.zeros(2)))


def _first_line_of_error(fn):
    """The type and first line of fn(lib)'s exception in torch and numgrad (torch appends a C++ backtrace to
    some messages, as the fuzz knows)."""
    found = []
    for lib in (torch, numgrad):
        with pytest.raises(Exception) as info:
            fn(lib)
        found.append((type(info.value), str(info.value).split("\n")[0]))
    assert found[1] == found[0]


@pytest.mark.parametrize("shape", ((), (2,)))
def test_unflatten_checks_its_sizes_before_its_dim(shape):
    """torch refuses empty sizes before it wraps the dim (a 0-d input's own error comes after); numgrad wrapped
    the dim of a 0-d input first."""
    for dim in (-1, 0, 5):
        check_error(lambda lib: lib.zeros(shape).unflatten(dim, ()))
        _first_line_of_error(lambda lib: lib.zeros(shape).unflatten(dim, (3, -1) if shape and dim != 5 else (1, -1)))


@pytest.mark.parametrize("dtype", ("uint8", "int8", "int16", "int32"))
def test_integer_division_by_a_divisor_that_wraps_to_zero_raises(dtype):
    """torch judges a zero divisor in the dtype it divides in: 256 (a number or a 0-d int64 tensor) divides a
    uint8 or int8 tensor as 0 and raises ZeroDivisionError; numgrad checked the number before the cast and divided
    by the wrapped 0."""
    wrap = {"uint8": 256, "int8": -256, "int16": 65536, "int32": -2 ** 32}[dtype]

    def x(lib):
        return lib.tensor([3, -2 if dtype != "uint8" else 7], dtype=getattr(lib, dtype))
    for divisor in (wrap, 3 * wrap):
        check_error(lambda lib: x(lib) // divisor)
        check_error(lambda lib: x(lib) % divisor)
        check_error(lambda lib: lib.fmod(x(lib), divisor))
        check_error(lambda lib: lib.div(x(lib), divisor, rounding_mode="trunc"))
        check_error(lambda lib: lib.div(x(lib), divisor, rounding_mode="floor"))
        check_error(lambda lib: x(lib).clone().remainder_(divisor))
        check_error(lambda lib: x(lib) // lib.tensor(divisor))
        check(lambda lib: x(lib) // (divisor + 1))
        check(lambda lib: x(lib) % lib.tensor(divisor + 1))
    check(lambda lib: x(lib) // lib.tensor([wrap + 5]))  # a 1-d int64 divisor promotes: no wrap


def test_bool_clamp_with_number_bounds_is_refused():
    """clamp of a bool tensor with bool Number bounds computes in bool, where torch's clamp_scalar kernels have no
    type; numgrad returned a bool result. An int bound computes in int64 and a Tensor bound takes maximum's
    kernel, as before."""
    def b(lib):
        return lib.tensor([True, False])
    for fn in (lambda lib: b(lib).clamp(min=True), lambda lib: b(lib).clamp(max=False),
               lambda lib: lib.clamp(b(lib), False, True), lambda lib: lib.clip(b(lib), False, True),
               lambda lib: lib.clamp_min(b(lib), True), lambda lib: b(lib).clamp_max(False),
               lambda lib: b(lib).clone().clamp_(min=True), lambda lib: lib.clamp(lib.tensor(True), max=True)):
        check_error(fn)
    check(lambda lib: lib.clamp(b(lib), False, 2))
    check(lambda lib: b(lib).clamp_min(1))
    check(lambda lib: b(lib).clamp(min=lib.tensor(True)))


@pytest.mark.parametrize("dtype", ("float16", "bfloat16"))
def test_one_element_half_fills_convert_numbers_unchecked(dtype):
    """torch fills a one-element tensor through scalar_fill, whose conversion to a half type has no overflow
    check (70000.0 becomes inf); setitem makes its number a 0-d tensor that way first, so any setitem of a half
    tensor takes it. Wider fills (full, fill_, masked_fill, index_fill) keep c10's check; numgrad checked all."""
    big = 70000.0 if dtype == "float16" else 1e300

    def t(lib, n=3):
        return lib.zeros(n, dtype=getattr(lib, dtype))

    def put(key, n=3):
        def fn(lib):
            x = t(lib, n)
            x[key] = big
            return x
        return fn

    def same(fn):  # (NumPy has no bfloat16: compared as float32 after the dtype)
        check(lambda lib: fn(lib).float() if fn(lib).dtype is getattr(lib, dtype) else fn(lib))
    same(lambda lib: lib.zeros((), dtype=getattr(lib, dtype)).fill_(-big))
    same(lambda lib: lib.full((1, 1), big, dtype=getattr(lib, dtype)))
    same(lambda lib: lib.full_like(t(lib, 1), big))
    same(lambda lib: t(lib).new_full((1,), big))
    for key in (0, slice(0, 2), Ellipsis):
        same(put(key))
    same(put(0, 1))
    same(lambda lib: lib.zeros((), dtype=getattr(lib, dtype)).fill_(65520))
    check_error(lambda lib: t(lib, 2).fill_(big))
    check_error(lambda lib: lib.full((2,), big, dtype=getattr(lib, dtype)))
    check_error(lambda lib: t(lib, 1).masked_fill(lib.tensor([True]), big))
    check_error(lambda lib: t(lib, 1).index_fill(0, lib.tensor([0]), big))
    check_error(lambda lib: lib.zeros((), dtype=lib.int8).fill_(1000))


def _tan_of_an_amplified_sum(wrong_tan=False):
    """Seed 13's program 2568: an l1_loss sum (torch's float32 order and numgrad's double accumulation differ in
    the last place), exp'd by poisson_nll_loss to 186, then tan of that (its condition number is about 400)."""
    x = np.array([[[0.36633870005607605, 0.9727795720100403], [-3.101121425628662, 0.7158480286598206],
                   [0.41979679465293884, 0.5630048513412476]],
                  [[1.408326506614685, 2.3032400608062744], [-0.015092669054865837, -1.6474907398223877],
                   [-0.4096677303314209, -2.7907936573028564]],
                  [[-0.708071231842041, -0.3295266330242157], [-0.5078002214431763, 0.5897249579429626],
                   [1.244657278060913, 1.8037000894546509]]], dtype=np.float32)
    steps = [Step("fn", "nn.functional.celu", (Ref(0),), {"alpha": 1.0}),
             Step("fn", "nn.functional.l1_loss", (Ref(0), Ref(1)), {"reduction": "sum"}),
             Step("fn", "nn.functional.poisson_nll_loss", (Ref(2), Lit(np.array(1.6339024305343628, np.float32))),
                  {"reduction": "mean", "log_input": True, "full": False}),
             Step("method", "tan" if not wrong_tan else "sin", (Ref(3),))]
    return Program([Input(x, requires_grad=True)], steps, Backward(4, "sum"))


def test_rounding_amplified_by_an_ill_conditioned_step_is_told_from_a_wrong_result(monkeypatch):
    """The long profile's runner accepts a forward value that differs beyond tolerance when torch's own op on
    numgrad's (within tolerance) inputs gives numgrad's result, for any single-output step, and known.py names
    the gradient through it (AMPLIFIED_ROUNDING) only while it moved no more than ten times the carried value.
    A wrong op is still a failure: here numgrad's tan is replaced by sin."""
    program = _tan_of_an_amplified_sum()
    ref, fails = check_program(program)
    assert ref.error is None
    assert {(f.kind, known_issue(program, ref, f)) for f in fails} == {("grad", AMPLIFIED_ROUNDING)}
    monkeypatch.setattr(numgrad.Tensor, "tan", numgrad.Tensor.sin)
    ref, fails = check_program(program)
    assert any(f.kind == "value" and known_issue(program, ref, f) is None for f in fails)
    assert any(f.kind == "grad" and known_issue(program, ref, f) is None for f in fails)


def _grad_or_error(fn):
    """check(fn) where torch's forward and backward pass, check_error(the same with its backward) where torch
    raises in either."""
    def with_backward(lib):
        out = fn(lib)
        out.sum().backward()
        return out
    try:
        with_backward(torch)
    except Exception:  # noqa: BLE001 - any error torch raises is the outcome to match
        return check_error(with_backward)
    check(fn)


@pytest.mark.parametrize("name", ("logaddexp", "logaddexp2"))
def test_logaddexp_backward_with_a_bool_input_refuses_the_subtraction(name):
    """Seed 20: torch's derivatives of logaddexp(2) subtract the inputs (other - self), which raises for a bool
    input that the float partner promoted forward; numgrad's kernel computed the gradient."""
    def x(lib):
        return lib.tensor([0.5, -1.0], requires_grad=True)
    for fn in (lambda lib: getattr(lib, name)(x(lib), lib.tensor([True, False])),
               lambda lib: getattr(lib, name)(lib.tensor(True), x(lib)),
               lambda lib: getattr(lib, name)(x(lib), lib.tensor([1.0, 0.0]))):
        _grad_or_error(fn)


@pytest.mark.parametrize("shape, k, size", [((2, 0, 4), 1, 3), ((2, 0, 4, 4), 2, 3), ((3, 0, 4), 2, 2),
                                            ((0, 4), 2, 2), ((2, 0, 4, 4), 2, 1), ((0, 2, 4), 1, 2),
                                            ((2, 0, 4, 4, 4), 3, 3), ((2, 3, 0, 4, 4, 4), 3, 2), ((2, 4, 0), 3, 2),
                                            ((2, 0, 4, 4, 4), 3, 1), ((0, 2, 4, 4, 4), 3, 2)])
def test_adaptive_avg_pooling_of_empty_dims_as_torch(shape, k, size):
    """Seed 20: adaptive_avg_pool1d/2d pass an empty channel dim forward (their kernel checks the spatial dims,
    after the rank) and refuse it in the backward (adaptive_avg_pool2d_backward checks every non-batch dim);
    the 3-d kernel checks every non-batch dim before the rank. numgrad checked the spatial dims of all three
    before the rank and never in the backward."""
    def fn(lib):
        x = lib.zeros(shape, dtype=lib.float64, requires_grad=True)
        return getattr(lib.nn.functional, f"adaptive_avg_pool{k}d")(x, size)
    _grad_or_error(fn)


@pytest.mark.parametrize("shape", ((2, 0, 4), (2, 4, 0), (4, 0), (0, 4), (0, 2, 4)))
def test_adaptive_max_pool1d_names_itself_for_an_empty_dim(shape):
    """torch's adaptive_max_pool1d checks its own input's non-batch dims (numgrad's message named the 2-d kernel
    it calls, with the unsqueezed sizes)."""
    _grad_or_error(lambda lib: lib.nn.functional.adaptive_max_pool1d(lib.zeros(shape, requires_grad=True), 2))


@pytest.mark.parametrize("name", ("mse_loss", "smooth_l1_loss", "huber_loss", "l1_loss"))
def test_losses_with_a_bool_operand_subtract_inside_their_kernel(name):
    """mse_loss and smooth_l1_loss subtract inside torch's kernels, where a bool target is a number (numgrad's
    `-` refused it: mse in its backward, smooth_l1 forward); huber's backward refuses the mixed dtypes and a bool
    or integer input is refused as the output type; l1_loss is torch's `-` and refuses a bool."""
    def x(lib, dtype="float32"):
        t = lib.tensor([0.5, -1.0, 3.0]).to(getattr(lib, dtype))
        return t.requires_grad_() if t.dtype.is_floating_point else t
    for fn in (lambda lib: getattr(lib.nn.functional, name)(x(lib), lib.tensor([True, False, True])),
               lambda lib: getattr(lib.nn.functional, name)(x(lib, "bool"), x(lib)),
               lambda lib: getattr(lib.nn.functional, name)(x(lib, "int64"), x(lib)),
               lambda lib: getattr(lib.nn.functional, name)(x(lib), lib.tensor(True), reduction="none")):
        _grad_or_error(fn)


_POOLS = {"avg_pool1d": lambda F, v: F.avg_pool1d(v, 1), "avg_pool2d": lambda F, v: F.avg_pool2d(v.unsqueeze(0), 1),
          "avg_pool3d": lambda F, v: F.avg_pool3d(v[None, None], 1),
          "adaptive_avg_pool1d": lambda F, v: F.adaptive_avg_pool1d(v, 2),
          "adaptive_avg_pool2d": lambda F, v: F.adaptive_avg_pool2d(v.unsqueeze(0), 2),
          "adaptive_avg_pool3d": lambda F, v: F.adaptive_avg_pool3d(v[None, None], 2),
          "max_pool1d": lambda F, v: F.max_pool1d(v, 1), "max_pool2d": lambda F, v: F.max_pool2d(v.unsqueeze(0), 1),
          "max_pool3d": lambda F, v: F.max_pool3d(v[None, None], 1),
          "adaptive_max_pool1d": lambda F, v: F.adaptive_max_pool1d(v, 2),
          "adaptive_max_pool2d": lambda F, v: F.adaptive_max_pool2d(v.unsqueeze(0), 2),
          "interpolate": lambda F, v: F.interpolate(v.unsqueeze(0), size=3)}


@pytest.mark.parametrize("name", sorted(_POOLS))
def test_pools_save_their_input_for_the_version_check(name):
    """Seed 20: torch's pooling nodes save their input, so an in-place write to it after the pool makes the
    backward raise naming that input (an unsqueezed view: 'output 0 of AsStrided'); numgrad's nodes saved only
    their index plans and the error came later, naming another tensor. Upsampling saves nothing, as torch's."""
    def fn(lib):
        v = lib.sqrt(lib.tensor([[0.75, 0.16], [0.89, 3.5]], requires_grad=True))
        out = _POOLS[name](lib.nn.functional, v)
        v.clamp_(None, 0.5)
        return out
    _grad_or_error(fn)


@pytest.mark.parametrize("dtype", ("float16", "bfloat16"))
@pytest.mark.parametrize("fused", (False, True))
def test_compiled_replay_of_a_half_type_sum(dtype, fused):
    """The compile fuzz (seed 0, program 190): `x.tile((1, 1)).sum().backward()` called three times on one
    float16 leaf raised NotImplementedError('float16') from Numba in the third call's replay (its gradient
    accumulating): the replay's prepared float sum bound the kernel to the half-type array itself, where the
    eager call widens it first (and rounds its sum through float)."""
    def f(x):
        y = x.tile((1, 1))
        y.sum().backward()
        return y.detach()
    with numgrad.fusion(fused):
        compiled = numgrad.compile(f)
        leaves = [numgrad.tensor([-0.45263671875]).to(getattr(numgrad, dtype)).requires_grad_() for _ in range(2)]
        for k in range(3):
            got, want = compiled(leaves[0]), f(leaves[1])
            assert got.float().tolist() == want.float().tolist()
            assert leaves[0].grad.float().tolist() == leaves[1].grad.float().tolist() == [k + 1.0]


@pytest.mark.parametrize("other", ("number", "tensor"))
def test_xlogy_gradient_of_self_is_torch_xlogy_of_the_gradient(other):
    """Seed 21: torch's derivative of xlogy for self is xlogy(grad, other) made 0 where self == 0 and other <= 0
    (a number other: where it is not positive, NaN too); numgrad's xlogy(self != 0, other) * grad gave NaN where
    the gradient was 0 and log(other) NaN (a masked_fill_ after xlogy(x, -1.5)), and 0 at self == 0 with a
    positive other."""
    for x, y, g in itertools.product((0.0, -0.0, 2.0), (1.5, -1.5, 0.0, float("nan"), float("inf")),
                                     (0.0, 2.0, float("nan"))):
        def fn(lib):
            xt = lib.tensor([x, 1.0], dtype=lib.float64, requires_grad=True)
            out = lib.xlogy(xt, y if other == "number" else lib.tensor([y, 2.0], dtype=lib.float64))
            return out * lib.tensor([g, 1.0], dtype=lib.float64)
        check(fn)


@pytest.mark.parametrize("dtype", ("float16", "bfloat16"))
def test_half_mul_div_read_a_cpu_scalar_at_its_own_value(dtype):
    """torch's mul, div (every rounding mode) and lerp's Number weight read a half type's CPU-scalar second
    operand (a number or a 0-d CPU tensor) in float at its own value: half * 70000.0 is not half * inf, and
    half * 0.1 rounds once. add/sub/pow/fmod/remainder and a scalar first operand round it to the half type."""
    x = lambda lib: lib.tensor([-1.5, 0.0, 6.0, 0.3], dtype=getattr(lib, dtype), requires_grad=True)  # noqa: E731
    for s in (0.1, 3.3, 70000.0, 1e-8, 2 ** 31):
        for fn in (lambda lib: x(lib) * s, lambda lib: x(lib) / s, lambda lib: x(lib).detach() // s,
                   lambda lib: x(lib) * lib.tensor(s), lambda lib: x(lib).lerp(x(lib) * 2, s),
                   lambda lib: lib.mul(s, x(lib)), lambda lib: x(lib) + s):
            check(lambda lib: fn(lib).float())


@pytest.mark.parametrize("wants", [("start",), ("end",), ("start", "end")])
def test_lerp_with_a_bool_weight_refuses_starts_gradient_only(wants):
    """torch's `1 - weight` for start's gradient subtracts two bool tensors: refused when that gradient is wanted."""
    def fn(lib):
        a, b = (lib.tensor([1.0, -2.0, 3.0], requires_grad=name in wants) for name in ("start", "end"))
        lib.lerp(a, b, lib.tensor(True)).sum().backward()
        return b.grad
    if "start" in wants:
        check_error(fn)
    else:
        check(fn)


def _signbit_of_an_invalid_log(x):
    """Seed 13's program 2465: poisson_nll_loss of a negative input without log_input takes log of it (NaN)."""
    steps = [Step("fn", "nn.functional.poisson_nll_loss", (Ref(0), Lit(np.array(2.1707825660705566, np.float32))),
                  {"reduction": "sum", "log_input": False, "full": False}),
             Step("method", "reshape", (Ref(1), (1, -1))),
             Step("fn", "signbit", (Ref(2),))]
    return Program([Input(np.array(x, np.float32), requires_grad=True)], steps)


def test_signbit_of_a_nan_from_an_invalid_operation_is_a_known_item():
    """The sign of a NaN that log of a negative number makes is unspecified (torch's vectorized loops give +NaN,
    libm -NaN); signbit reads it. known.py names that difference (NAN_SIGN) only when torch's input is NaN there:
    a signbit of an ordinary value still has to match."""
    program = _signbit_of_an_invalid_log(-1.2308744192123413)
    ref, fails = check_program(program)
    assert fails and all(f.kind == "value" and known_issue(program, ref, f) == NAN_SIGN for f in fails)
    fake = Failure("value", 2, "v3 (bool[1, 1]): 1 of 1 differ; first at (0, 0): torch np.False_, numgrad np.True_")
    assert known_issue(program, ref, fake) == NAN_SIGN
    ordinary = _signbit_of_an_invalid_log(1.5)
    ref, fails = check_program(ordinary)
    assert not fails
    assert known_issue(ordinary, ref, fake) is None


def test_fill_diagonal_of_a_split_output_names_as_strided():
    """torch's fill_diagonal_ writes through self.as_strided(...), so writing a diagonal of a split output that
    requires grad is refused naming AsStrided, not the Diagonal view numgrad writes through."""
    def fill(lib):
        leaf = lib.tensor(np.array([[0.0698]]), requires_grad=True)
        _, v = leaf.expand(4, 1).split(2, 0)
        return v.fill_diagonal_(1, wrap=False)
    check_error(fill)
    check_error(lambda lib: (lib.ones(4, 2, requires_grad=True) * 1).split(2)[0].fill_(1))
    check(lambda lib: (lib.ones(7, 3, requires_grad=True) * 2).fill_diagonal_(5, wrap=True))


def test_a_torch_internal_assert_is_a_known_item_when_numgrad_computes():
    """Seed 20's program 4386: torch's float16 index_reduce('prod', include_self=False) of a tensor requiring
    grad fails an internal assert (its bug); numgrad computes the product, which torch gives in float32."""
    x = np.array([[-1.0]], np.float16)
    src = np.array([[-0.3994140625], [-1.4482421875], [0.11346435546875]], np.float16)
    steps = [Step("method", "index_reduce", (Ref(0), -2, Lit(np.array([0, 0, 0])), Lit(src), "prod"),
                  {"include_self": False})]
    program = Program([Input(x, requires_grad=True)], steps)
    ref, fails = check_program(program)
    assert fails and all(known_issue(program, ref, f) == TORCH_ASSERT for f in fails)
    ours = numgrad.tensor(x, requires_grad=True).index_reduce(-2, numgrad.tensor([0, 0, 0]), numgrad.tensor(src),
                                                              "prod", include_self=False)
    theirs = torch.tensor(x.astype(np.float32)).index_reduce(-2, torch.tensor([0, 0, 0]),
                                                             torch.tensor(src.astype(np.float32)), "prod",
                                                             include_self=False)
    np.testing.assert_allclose(ours.detach().numpy().astype(np.float32), theirs.numpy(), rtol=1e-3)
    wrong = Failure("error-type", 0, "torch RuntimeError('some message') at step 0; numgrad no error")
    assert known_issue(program, ref, wrong) is None


@pytest.mark.parametrize("fn", [lambda lib, x, y: lib.nn.functional.pdist(x, float("inf")),
                                lambda lib, x, y: lib.cdist(x, y, p=float("inf"))], ids=["pdist", "cdist"])
def test_max_norm_distance_gradient_of_an_infinite_difference_is_nan(fn):
    """Seed 31, program 570: pdist's (and cdist's) p=inf backward picked the coordinates at the maximum by
    |diff| == dist, which gives -1 and 1 where an infinite difference is the distance; torch writes the selector
    as 1 - min(1, ceil(| |diff| - dist |)), and inf - inf makes its gradient NaN. Finite ties keep their gradient."""
    x = np.array([[-np.inf, 1.0], [0.7177292614620627, 2.0], [3.0, 2.0]])
    y = np.array([[0.5, 2.0], [1.0, -1.0]])
    check(fn, x, y, names=False)
    check(fn, np.array([[1.0, 4.0], [5.0, 0.0], [2.0, 2.5]]), np.array([[0.0, 0.0], [1.0, 5.0]]), names=False)


def test_hardtanh_gradient_at_nan_is_a_known_item():
    """Seed 32, program 2527: torch's hardtanh backward gives 0 at a NaN input inside a full vector and the
    incoming gradient in its scalar tail (8 NaNs of float64 under AVX512: zeros); numgrad passes it on everywhere.
    The difference is counted as the known item, and a program without NaN at hardtanh is not."""
    x = np.array([[-3.58, -1.43], [0.46, 0.55], [-2.54, 1.50], [-1.35, 1.05]])
    g = np.ones((4, 2))

    def program(divisor):
        return Program([Input(x, True), Input(np.array(divisor), True)],
                       [Step("method", "fmod", (Ref(0), Ref(1))),
                        Step("fn", "nn.functional.hardtanh", (Ref(2),), {"min_val": 0.0, "max_val": 0.5})],
                       Backward(3, "grad", Lit(g)))

    with_nan = program([0.0, 0.0])
    ref, fails = check_program(with_nan)
    for f in fails:  # (which differences show depends on torch's vector width: none, or grads)
        assert f.kind == "grad" and known_issue(with_nan, ref, f) == NAN_CLAMP_GRADIENT
    ref, fails = check_program(program([0.7, -1.5]))
    assert not fails
    numeric = Failure("grad", None, "leaf0.grad: 1 of 8 differ", "unfused")
    assert known_issue(program([0.7, -1.5]), ref, numeric) is None


@pytest.mark.parametrize("shrink", ["hardshrink", "softshrink"])
def test_shrink_gradient_at_nan_is_a_known_item(shrink):
    """Seed 36, program 810: torch's hardshrink and softshrink backward (one shrink_backward kernel) give 0 at a
    NaN input inside a full vector and the incoming gradient in the scalar tail (24 float64 NaNs under AVX512:
    zeros), as hardtanh's; numgrad passes it on everywhere. Counted as that known item; without a NaN, not."""
    x = np.array([[2.83, 1.58, 1.11, -0.23], [-1.11, -3.16, -0.13, 0.56], [1.21, 1.81, -0.37, -2.55]] * 2)

    def program(values):
        return Program([Input(values, True)],
                       [Step("fn", "log", (Ref(0),)),
                        Step("fn", f"nn.functional.{shrink}", (Ref(1),), {"lambd": 0.25})],
                       Backward(2, "grad", Lit(np.ones(values.shape))))

    with_nan = program(x)
    ref, fails = check_program(with_nan)
    for f in fails:  # (which differences show depends on torch's vector width: none, or grads)
        assert f.kind == "grad" and known_issue(with_nan, ref, f) == NAN_CLAMP_GRADIENT
    ref, fails = check_program(program(np.abs(x)))
    assert not fails
    numeric = Failure("grad", None, "leaf0.grad: 1 of 24 differ", "unfused")
    assert known_issue(program(np.abs(x)), ref, numeric) is None


@pytest.mark.parametrize("p", [1, 0.5, 1.5, float("inf")])
@pytest.mark.parametrize("which", ["pdist", "cdist"])
def test_distance_gradient_of_a_nan_difference_is_nan(which, p):
    """Seed 33, program 1464: pdist's (and cdist's) p=1 backward took Tensor.sign of each difference, which is 0 for
    the NaN of inf - inf; torch's distance backwards build their sign from ceil and floor, which keeps the NaN."""
    x = np.array([[np.inf, 1.0], [np.inf, 2.0], [0.5, -1.0]])
    y = np.array([[np.inf, 0.0], [1.0, 1.0]])
    if which == "pdist":
        check(lambda lib, a: lib.nn.functional.pdist(a, p), x, names=False)
    else:
        check(lambda lib, a, b: lib.cdist(a, b, p=p), x, y, names=False)


@pytest.mark.parametrize("write", [
    lambda lib, t: t.__setitem__(0, lib.tensor([1.5, float("nan")])),
    lambda lib, t: t.__setitem__(slice(None), lib.tensor([[float("inf"), 2.0]])),
    lambda lib, t: t.copy_(lib.tensor([[float("nan"), -3.0]])),
    lambda lib, t: t.fill_(lib.tensor(float("nan"))),
], ids=["setitem", "setitem-inf", "copy_", "fill_"])
def test_nan_written_into_an_integer_tensor_is_cast_silently(write):
    """Seed 34, program 192: `v1[0] = v0` with a NaN in v0 and v1 int32 printed NumPy's 'invalid value encountered in
    cast' RuntimeWarning (copy_ and fill_ from a tensor too); torch casts silently (x86 gives INT_MIN)."""
    results = []
    for lib in (torch, numgrad):
        t = lib.tensor([[-4, -1]], dtype=lib.int32)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            write(lib, t)
        results.append(t.numpy())
    np.testing.assert_array_equal(*results)


@pytest.mark.parametrize("n", [3, 70_000])  # the small path, and a fused backward region's size
@pytest.mark.parametrize("dtype", ["int8", "uint8", "int16", "int32", "int64"])
@pytest.mark.parametrize("op", ["addcmul", "addcdiv"])
def test_an_integer_operand_times_value_wraps_in_its_dtype_as_torchs_derivative(op, dtype, n):
    """Seed 34, program 192: addcmul's gradient of tensor1 is `grad * (tensor2 * value)`, and torch computes
    `tensor2 * value` in tensor2's integer dtype (an int32 INT_MIN times -1, an int8 100 times 2, wrap); the backward
    kernel computed it in float. addcdiv's gradient of tensor2 wraps `value * tensor1` the same way."""
    info = np.iinfo(dtype)
    ints = np.resize(np.array([info.min, info.max, 100, 3, 0], dtype=dtype), n)
    floats = np.resize(np.array([0.5, -1.5, 2.0, 1.0, 3.0], dtype=np.float32), n)
    value = -1 if dtype == "int32" else 3
    results = []
    for lib in (torch, numgrad):
        a = lib.tensor(floats, requires_grad=True)
        other = lib.tensor(floats + 1, requires_grad=True)
        i = lib.tensor(ints)
        out = lib.addcmul(a, other, i, value=value) if op == "addcmul" else lib.addcdiv(a, i, other, value=value)
        (out * out).sum().backward()
        results.append((out.detach().numpy(), a.grad.numpy(), other.grad.numpy()))
    for ours, theirs in zip(results[1], results[0]):
        np.testing.assert_allclose(ours, theirs, rtol=1e-6)


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_renorm_returns_c_order_whatever_its_inputs_layout(dtype):
    """Seed 36, program 2130: renorm of a transposed input kept the input's layout (its `input * factor`), where
    torch's renorm is contiguous; `contiguous()` of the result then copied, so a later in-place div_ through it
    left the renorm's saved result unmodified and numgrad's backward did not raise torch's version error."""
    for make, p, dim in ((lambda lib: lib.ones(2, 3, dtype=getattr(lib, dtype)).transpose(0, 1), float("inf"), -1),
                         (lambda lib: lib.arange(24.0).reshape(2, 3, 4).to(getattr(lib, dtype)).permute(2, 0, 1), 2, 1),
                         (lambda lib: lib.arange(24.0).reshape(4, 6).to(getattr(lib, dtype))[:, ::2], 1, 0)):
        strides = [lib.renorm(make(lib), p, dim, 1.0).stride() for lib in (torch, numgrad)]
        assert strides[0] == strides[1]
    errors = []
    for lib in (torch, numgrad):
        leaf = lib.tensor([[1.6640625, -0.0, 0.6962890625], [0.1611328125, 2.0, -3.0]], dtype=getattr(lib, dtype),
                          requires_grad=True)
        v1 = lib.renorm(leaf.transpose(0, 1), float("inf"), -1, 1.0)
        v2 = v1.sub_(v1, alpha=0.5)
        v2.contiguous().div_(v2)
        with pytest.raises(RuntimeError) as error:
            v1.sum().backward()
        errors.append(str(error.value).split(", which is")[0])
    assert errors[0] == errors[1]

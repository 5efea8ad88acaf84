"""Regressions from the issue-13 edge sweep (test_edge_sweep.py), one test per root cause, each against torch,
fused and unfused; the docstring of each says what numgrad did wrong."""
import numpy as np
import pytest
import torch

import numgrad
from helpers.edge_compare import compare

inf, nan = float("inf"), float("nan")
F32 = np.float32


@pytest.fixture(params=[True, False], ids=["fused", "unfused"])
def fusion(request):
    return request.param


def same(fn, *arrays, fusion=None, **kw):
    d = compare(fn, *arrays, fusion=fusion, **kw)
    assert d is None, d


def test_reduction_of_an_empty_tensor_over_a_nonempty_dim(fusion):
    """sum/mean/amax/var/norm of a (0, 4) tensor over dim -1 crashed fused (IndexError reading the first
    element of an empty array taken for a broadcast scalar in the fused-fold IR)."""
    x = np.zeros((0, 4), F32)
    for name in ("sum", "mean", "amax", "var", "norm", "logsumexp"):
        same(lambda lib, x: getattr(lib, name)(x, -1), x, fusion=fusion)
    same(lambda lib, x: (x * 2 + 1).sum(-1), x, fusion=fusion)


def test_relu_and_clamp_keep_negative_zero(fusion):
    """relu(-0.0) and clamp(-0.0, min=0) gave +0.0: the kernels' maximum/minimum returned the bound on a tie,
    torch (std::max/std::min, clamp_min) returns the input."""
    x = np.array([-0.0, 0.0, -1.0, nan, 2.0], F32)
    same(lambda lib, x: lib.relu(x), x, fusion=fusion)
    same(lambda lib, x: lib.clamp(x, min=0.0), x, fusion=fusion)
    same(lambda lib, x: lib.clamp(x, -0.0, 0.0), x, fusion=fusion)
    same(lambda lib, x: lib.clamp(x, min=nan), x, fusion=fusion)


def test_rounding_refuses_bool_and_has_in_place_forms(fusion):
    """floor/ceil/round/trunc of a bool tensor returned it (torch: NotImplementedError "floor_vml_cpu" ...);
    Tensor.ceil_, trunc_, negative_ and absolute_ did not exist."""
    for name in ("floor", "ceil", "round", "trunc"):
        same(lambda lib, x: getattr(lib, name)(x), np.array([True, False]), fusion=fusion)
    x = np.array([-2.5, -0.0, 0.5, inf], F32)
    for name in ("ceil_", "trunc_", "negative_", "absolute_"):
        same(lambda lib, x: (lambda y: (getattr(y, name)(), y))(x.clone()), x, fusion=fusion)


def test_division_gradients_in_torch_order(fusion):
    """d(a/b)/db was -g*a/(b*b): NaN where b*b underflows (b subnormal, a = 0) and torch, computing
    -g*((a/b)/b), gives -0; reciprocal's -g*out*out gave 0 where torch's -g*(out*out) gives NaN (0*inf)."""
    a = np.array([0.0, -0.0, 1.0, 3.0], F32)
    b = np.array([1e-45, 1e-45, 1e-30, 2.0], F32)
    same(lambda lib, a, b: a / b, a, b, fusion=fusion)
    same(lambda lib, b: -0.0 / b, b, fusion=fusion)
    same(lambda lib, b: b.reciprocal() * 0.0, b, fusion=fusion)


def test_functional_div_and_sub_with_a_number_first():
    """torch.div(2, t) and torch.sub(2, t) record DivBackward0 / SubBackward0 (2 / t and 2 - t are
    MulBackward0 / RsubBackward1): numgrad recorded the operators' nodes for the functions, and SubBackward0
    for torch.rsub(t, tensor) (torch: RsubBackward0)."""
    x = np.array([1.0, -0.0, 2.0], F32)
    for fn in (lambda lib, x: lib.div(2, x), lambda lib, x: lib.sub(2, x), lambda lib, x: 2 / x,
               lambda lib, x: 2 - x, lambda lib, x: lib.rsub(x, 2, alpha=3), lambda lib, x: lib.rsub(x, x * 2)):
        same(fn, x)


def test_functions_taking_only_tensors_refuse_numbers():
    """maximum/minimum/logical_and/or/xor accepted a Python number and eq/lt/... a number first; torch's
    binding raises TypeError."""
    x = np.array([1.0, 2.0], F32)
    for fn in (lambda lib, x: lib.maximum(x, 2), lambda lib, x: lib.minimum(x, 0.5),
               lambda lib, x: lib.logical_xor(x, 0.0), lambda lib, x: lib.logical_and(True, x),
               lambda lib, x: lib.eq(2, x), lambda lib, x: lib.lt(2.5, x)):
        same(fn, x)


def test_prod_backward_with_several_zeros_and_a_dtype():
    """prod's gradient with two or more zeros was NaN where an inf or NaN sat among the other elements
    (torch: zeros); with dtype= the gradient came back in the product's dtype, not the input's."""
    x = np.array([[0.0, -0.0, 1.0], [inf, nan, 2.0]], F32)
    same(lambda lib, x: lib.prod(x), x)
    same(lambda lib, x: lib.prod(x, 1, dtype=lib.float64), x)
    same(lambda lib, x: lib.prod(x, (0, 1)), x)


def test_reduction_argument_checks_in_torch_order():
    """A tuple dim for prod/max/min/argmax/softmax, an out-of-range dim for all/any (NumPy's AxisError), amax's
    empty-dim message (torch names the dim as given), argmax of bool with a bad dim, softmax's dtype, a 0-d
    softmax dim, a tuple order or a bool dim for norm: each raised another type or message than torch, at
    another step, or (norm(x, 1, True)) none at all."""
    x = np.zeros((3, 0), F32)
    y = np.ones((3, 4), F32)
    for fn, arr in ((lambda lib, x: lib.prod(x, (0, 1)), y), (lambda lib, x: lib.max(x, (0, 1)), y),
                    (lambda lib, x: lib.argmax(x, (0, 1)), y), (lambda lib, x: lib.softmax(x, (0, 1)), y),
                    (lambda lib, x: lib.all(x, 2), y), (lambda lib, x: lib.any(x, -3), y),
                    (lambda lib, x: lib.amax(x, -1), x), (lambda lib, x: lib.amin(x, (0, -1)), x),
                    (lambda lib, x: lib.argmax(x > 0, 2), y), (lambda lib, x: lib.softmax(x, 1, True), y),
                    (lambda lib, x: lib.softmax(x.long(), 2), np.array(1.0, F32)),
                    (lambda lib, x: lib.norm(x, (0, 1)), y), (lambda lib, x: lib.norm(x, 1, True), y)):
        same(fn, arr)


def test_std_of_float32_near_1e30(fusion):
    """std of float32 values near 1e30 was inf: the squares overflowed float32 (torch accumulates in double)."""
    x = np.array([[1e30, -1e30, 3e30], [1.0, 2.0, 4.0]], F32)
    same(lambda lib, x: lib.std(x), x, fusion=fusion)
    same(lambda lib, x: lib.std(x, 1), x, fusion=fusion)
    same(lambda lib, x: lib.var(x, 1), x, fusion=fusion)


def test_softmax_logsumexp_and_norm_of_empty_tensors(fusion):
    """softmax/log_softmax/logsumexp over an empty dim raised amax's error (torch: an empty result, -inf);
    an empty int softmax is no error in torch; a negative or inf norm of an empty tensor is one."""
    for arr in (np.zeros((0, 4), F32), np.zeros((3, 0), F32)):
        for d in (0, -1):
            for fn in (lambda lib, x: lib.softmax(x, d), lambda lib, x: lib.log_softmax(x, d),
                       lambda lib, x: lib.logsumexp(x, d), lambda lib, x: lib.softmax(x.long(), d),
                       lambda lib, x: lib.norm(x, -1), lambda lib, x: lib.norm(x, inf),
                       lambda lib, x: lib.norm(x, inf, d)):
                same(fn, arr, fusion=fusion)


def test_norm_backward_at_nan_inf_and_zero():
    """norm's gradient for p = inf/-inf was NaN in a row holding a NaN (torch counts the NaN as the maximum
    and gives 0s); for p < 1 it was NaN at inf entries and lost signs at zeros; norm(dtype=) was ignored."""
    x = np.array([[0.0, -0.0, 1.0, -2.5], [inf, -inf, 3.0, 1e30], [nan, 1e-30, -1.0, 0.5]], F32)
    for args in ((inf, 1), (-inf,), (-1, 1), (0.5, 1), (3,), (1.5, 0)):
        same(lambda lib, x: lib.norm(x, *args), x)
    same(lambda lib, x: lib.norm(x, dtype=lib.float64), x)


def test_bitwise_operators_and_invert_on_floats_and_promotion():
    """& | ^ of float tensors raised NumPy's TypeError (torch: NotImplementedError "bitwise_and_cpu" ...), of
    bool with int64 kept bool (torch: int64), before checking shapes; ~float had NumPy's message."""
    f = np.array([1.5, 0.0], F32)
    b = np.array([True, False])
    i = np.array([3, -2])
    same(lambda lib, f: f & f, f)
    same(lambda lib, b, i: b ^ i, b, i)
    same(lambda lib, b: b | 1.5, b)
    same(lambda lib, f: ~f, f)
    same(lambda lib, f, b: f[:, None] & b[:1].repeat(3) if lib is torch else f[:, None] & b[:1].expand(3), f, b)


def test_clamp_with_one_tensor_bound_on_integers():
    """clamp(int64, min=tensor) filled the missing bound with inf cast to int64 (int64 min), so every result
    was int64 min; clamp(bool, min=bool tensor) raised (torch: maximum's kernel)."""
    i = np.array([0, 5, -7, 2**62])
    same(lambda lib, i: lib.clamp(i, min=i[:1] + 1), i)
    same(lambda lib, i: lib.clamp(i, max=i[:1] + 1), i)
    same(lambda lib, b: lib.clamp(b, min=b[:1]), np.array([True, False]))


def test_div_rounding_modes():
    """div(rounding_mode='trunc'/'floor') recorded TruncBackward0 / floor_divide's node (torch: DivBackward2
    with zero gradients), made float results for integer inputs under 'trunc', and accepted any mode."""
    x = np.array([-7.0, -0.0, 2.5, inf], F32)
    i = np.array([-7, 7, 0, 5])
    for mode in ("trunc", "floor"):
        same(lambda lib, x: lib.div(x, 3, rounding_mode=mode), x)
        same(lambda lib, x: lib.div(x, x[:1], rounding_mode=mode), x)
        same(lambda lib, i: lib.div(i, -2, rounding_mode=mode), i)
        same(lambda lib, b: lib.div(b, 3, rounding_mode=mode), np.array([True, False]))
    same(lambda lib, x: lib.div(x, 3, rounding_mode="round"), x)


def test_add_and_sub_alpha():
    """sub(t, 1, alpha=3) crashed (IndexError: the number times alpha went through mul with no tensor); a
    float alpha for an integral result and a bool alpha for a non-bool one were accepted (torch: RuntimeError)."""
    i = np.array([1, -2])
    x = np.array([1.0, -0.0], F32)
    same(lambda lib, x: lib.sub(x, 1, alpha=3), x)
    same(lambda lib, i: lib.sub(i, 1, alpha=3), i)
    same(lambda lib, i: lib.add(i, i, alpha=0.5), i)
    same(lambda lib, x: lib.add(x, 2, alpha=0.5), x)
    same(lambda lib, i: lib.add(i, 2.5, alpha=0.5), i)  # the result is float: a float alpha is fine
    same(lambda lib, i: lib.sub(i, 2, alpha=True), i)  # a bool alpha needs a bool result


def test_isclose_allclose_refuse_mixed_dtypes():
    """isclose/allclose compared tensors of different dtypes (torch: RuntimeError "Float did not match Double")."""
    x = np.array([1.0, nan], F32)
    same(lambda lib, x: lib.allclose(x, x.double()), x)
    same(lambda lib, x: lib.isclose(x, x.long()), x)
    same(lambda lib, x: lib.isclose(x, x, equal_nan=True), x)


def test_copy_and_scatter_messages_and_names():
    """copy_ from a tensor of a non-broadcastable shape raised NumPy's ValueError (torch: RuntimeError "The size
    of tensor a ..."); copy_ and floor_divide recorded CopyBackwards / NotImplemented (torch's
    torch::autograd::CopyBackwards / torch::autograd::NotImplemented); scatter_add's dtype message said
    scatter_add() where torch says scatter()."""
    x = np.ones((3, 4), F32)
    same(lambda lib, x: lib.zeros(4, 3).copy_(x), x)
    same(lambda lib, x: lib.zeros(2, 3, 4).copy_(x), x)
    same(lambda lib, x: lib.floor_divide(x, 2), x)
    same(lambda lib, x: lib.scatter_add(x > 0, 1, lib.tensor([[0]]), x), x)


def test_contains():
    """`3.0 in t` raised "Boolean value of Tensor with more than one value is ambiguous"; torch checks
    (t == 3.0).any()."""
    x = np.array([[1.0, 3.0], [nan, -0.0]], F32)
    for v in (3.0, 0.0, nan, 7):
        same(lambda lib, x: v in x, x)


def test_mse_loss_shape_mismatch():
    """mse_loss of unbroadcastable shapes raised NumPy's ValueError (torch: RuntimeError "The size of tensor a
    ..."), and a bad reduction was reported before it (torch broadcasts first)."""
    x = np.ones((3, 2), F32)
    same(lambda lib, x: (torch.nn.functional if lib is torch else numgrad.nn.functional).mse_loss(x, lib.ones(3, 4)), x)
    same(lambda lib, x: (torch.nn.functional if lib is torch else numgrad.nn.functional).mse_loss(
        x, lib.ones(4), reduction="x"), x)


def test_creation_and_random_argument_errors():
    """Creation and random functions left bad arguments to NumPy or Python (OverflowError, ValueError, NumPy's
    words) or accepted them: arange to inf/NaN, linspace's message, eye(-1), tensor(2**63), tensor('a'),
    tensor(None), tensor([inf], dtype=int64), randint(5, 5), randperm(-1), normal with std < 0; a negative
    manual_seed was refused (torch takes it modulo 2**64)."""
    for fn in (lambda lib: lib.arange(0, float("inf")), lambda lib: lib.arange(0.5, float("nan")),
               lambda lib: lib.linspace(0, 1, -1), lambda lib: lib.eye(-1), lambda lib: lib.eye(2, -3),
               lambda lib: lib.tensor(2**63), lambda lib: lib.tensor([1, -2**63 - 1]), lambda lib: lib.tensor("a"),
               lambda lib: lib.tensor(None), lambda lib: lib.tensor([float("inf")], dtype=lib.int64),
               lambda lib: lib.tensor([1.7, float("nan")], dtype=lib.int64), lambda lib: lib.randint(5, 5, (3,)),
               lambda lib: lib.randperm(-1), lambda lib: lib.normal(0.0, -1.5, (2,)),
               lambda lib: lib.manual_seed(-1) is not None):
        same(fn)


def test_var_and_std_backward_without_degrees_of_freedom(fusion):
    """var/std's gradient with correction >= n over the whole tensor was (2 / (n - c)) * g * (a - mean): signed
    or finite values where torch gives inf (NaN where an element equals the mean) and std NaN; with dims
    torch keeps that formula (negative for c > n). The p = 2 norm's gradient also lost torch's masking
    order at a zero norm (-0.0 for a tiny negative element)."""
    x = np.array([[1.0, 2.0, 4.0], [3.0, 3.0, 3.0]], F32)
    for fn in (lambda lib, x: lib.var(x, correction=6), lambda lib, x: lib.var(x, correction=9),
               lambda lib, x: lib.std(x, correction=6), lambda lib, x: lib.var(x, 1, correction=3),
               lambda lib, x: lib.var(x, (0, 1), correction=7), lambda lib, x: lib.std(x, 1, correction=5),
               lambda lib, x: lib.var(x[0, 0], correction=1)):
        same(fn, x, fusion=fusion)
    same(lambda lib, x: lib.norm(x, 2, 1), np.array([[1e-30, 0.0, -1e-38]], F32), fusion=fusion)


def test_in_place_checks_in_torch_order():
    """An in-place op whose operand broadcasts past self reported the dtype cast (or the kernel's refusal)
    before the shape, torch the shape first (sub's bool refusal still first); clamp_ and its family name the
    output type as C++ does ("long int", "bool"); the comparison aliases (greater, less_equal, ...) named
    the op under its short name in the TypeError for a number first; randint_like of a bool tensor with
    high > 2 gave values (torch: "to - 1 is out of bounds for bool")."""
    for fn, arrays in ((lambda lib, a, b: a.clone().add_(b), (np.array(1), np.array([1.5, 2.5], F32))),
                       (lambda lib, a, b: a.clone().floor_divide_(b), (np.array(True), np.array([True, False]))),
                       (lambda lib, a, b: a.clone().sub_(b), (np.array(True), np.array([True, False]))),
                       (lambda lib, a, b: a.clone().mul_(b), (np.ones((3, 4), F32), np.ones(5, F32))),
                       (lambda lib, a: a.clone().clamp_(0.5, 1.5), (np.array([1, 2]),)),
                       (lambda lib, a: a.clone().clamp_min_(0), (np.array([True, False]),)),
                       (lambda lib, a: lib.greater(2, a), (np.array([1.0], F32),)),
                       (lambda lib, a: lib.not_equal(True, a), (np.array([1.0], F32),)),
                       (lambda lib, a: lib.randint_like(a, 3), (np.array([True, False]),))):
        same(fn, *arrays)


def test_functions_given_numbers_numpy_scalars_or_lists():
    """Public functions took whatever came as `input`: exp(2), floor(np.float32(2.5)), sum([1, 2]),
    softmax([1.0], 0), sigmoid(None) crashed (IndexError, AttributeError) or said "unsupported scalar";
    torch's binding raises TypeError naming the type (numpy.float32, list, NoneType). add/sub/mul/div/
    floor_divide of two numbers crashed; torch wraps the first as a 0-d tensor."""
    for fn in (lambda lib: lib.exp(2), lambda lib: lib.floor(np.float32(2.5)), lambda lib: lib.sum([1, 2]),
               lambda lib: lib.softmax([1.0], 0), lambda lib: lib.sigmoid(None), lambda lib: lib.square(np.float64(2)),
               lambda lib: lib.isnan(1.0), lambda lib: lib.mean(np.ones(2)), lambda lib: lib.max(np.float32(1)),
               lambda lib: lib.add(2, 3), lambda lib: lib.add(2.5, True),
               lambda lib: lib.div(2, 3), lambda lib: lib.sub(2, 3.5), lambda lib: lib.floor_divide(7, 2)):
        same(fn)


def test_sum_of_negative_zeros_is_positive_zero(fusion):
    """A sum of -0.0s was -0.0 unfused (and fused over a leading dim): the fold kernel starts from the first
    element, torch's sum from +0.0."""
    for shape in ((5,), (1, 5), (5, 1), (300000,)):
        x = np.full(shape, -0.0, F32)
        same(lambda lib, x: x.sum(), x, fusion=fusion)
        same(lambda lib, x: x.sum(0), x, fusion=fusion)
        same(lambda lib, x: x.sum(-1, keepdim=True), x, fusion=fusion)
        same(lambda lib, x: x.mean(0), x, fusion=fusion)


def test_prod_backward_with_zeros_accumulates_in_double():
    """prod's gradient with a zero in the tensor was NaN where the other elements' product passed 3.4e38 before
    reaching the zero (1.25 * 3e38 * 0): torch's cumprod accumulates float32 in double."""
    x = np.array([[1.25, 3e38, 0.0, -1.0], [0.5, 2.0, 3e38, 3e38]], F32)
    same(lambda lib, x: x.prod(1), x)
    same(lambda lib, x: x.prod(0), x)


def test_keyword_forms_round_decimals_and_named_dim_none():
    """round(decimals=) was refused (torch: nearbyint(x * 10**d) / 10**d, RoundBackward1); sum/mean with dim
    given as None recorded SumBackward0 / MeanBackward0 where torch picks the dim overload (SumBackward1 /
    MeanBackward1); Tensor.split(split_size=) was refused (the method's parameter name); a bool matmul with
    an empty inner dim raised instead of giving zeros."""
    x = np.array([[1.26, -2.55, 1234.5678, -0.0], [np.inf, np.nan, 0.05, 15.0]], F32)
    for fn in (lambda lib, x: lib.round(x, decimals=1), lambda lib, x: x.round(decimals=-1),
               lambda lib, x: lib.round(x.double(), decimals=2), lambda lib, x: lib.round(x.long(), decimals=1),
               lambda lib, x: x.sum(dim=None), lambda lib, x: x.sum(None, keepdim=True), lambda lib, x: x.mean(dim=None),
               lambda lib, x: x.sum(), lambda lib, x: x.split(split_size=2, dim=1),
               lambda lib, x: lib.matmul(x[:, :0] > 0, x[:0] > 0)):
        same(fn, x)


def test_clamp_min_and_clamp_max_nodes(fusion):
    """torch.clamp_min / clamp_max and their methods record ClampMinBackward0 / ClampMaxBackward0 (clamp(min=)
    is ClampBackward1); numgrad recorded ClampBackward1 for all of them."""
    x = np.array([-1.0, -0.0, 0.0, 0.5, np.nan, np.inf], F32)
    for fn in (lambda lib, x: lib.clamp_min(x, 0), lambda lib, x: x.clamp_max(0.5), lambda lib, x: lib.clamp(x, min=0),
               lambda lib, x: x.clone().clamp_min_(0.0), lambda lib, x: lib.clamp_max(x, float("nan"))):
        same(fn, x, fusion=fusion)


def test_no_numpy_floating_point_warnings(fusion):
    """NumPy's RuntimeWarnings ("overflow encountered in cast", "invalid value encountered in matmul", ...)
    leaked out of numgrad's NumPy-backed paths (casts, matmul/dot, scatter_add, losses, norms, folds,
    linspace, backward) where torch is silent about inf and NaN; compare() records them as a difference."""
    x = np.array([[np.inf, -np.inf], [np.nan, 1e30]], F32)
    big = np.zeros(1 << 18, F32)
    big[5], big[-7] = np.inf, -np.inf

    def nnf(lib):
        return torch.nn.functional if lib is torch else numgrad.nn.functional

    for fn, arrays in ((lambda lib, x: x @ x, (x,)), (lambda lib, x: lib.mv(x, x[0]), (x,)),
                       (lambda lib, x: x.double().mul(1e300).float(), (x,)), (lambda lib, x: lib.var(x), (x,)),
                       (lambda lib, x: lib.scatter_add(x, 1, lib.tensor([[0, 0], [1, 1]]), x), (x,)),
                       (lambda lib, x: nnf(lib).mse_loss(x, x * 2), (x,)),
                       (lambda lib, x: nnf(lib).layer_norm(x, (2,)), (x,)),
                       (lambda lib, x: nnf(lib).binary_cross_entropy_with_logits(x, x.sigmoid()), (x,)),
                       (lambda lib: lib.linspace(0, float("inf"), 3), ()), (lambda lib, b: b.sum(), (big,)),
                       (lambda lib, x: x.prod(1), (np.array([[1.25, 3e38, 0.0]], F32),))):
        same(fn, *arrays, fusion=fusion)

"""Regression tests for what the long fuzz found in the nn ops and tensor ops: each the shrunk program (or its root
cause's family) against torch, numgrad fused and unfused; the docstring says what went wrong. Signs of zero are
compared through 1/x or rsqrt, as the fuzz saw them (an allclose takes -0.0 for +0.0)."""
import numpy as np
import pytest

from .test_regressions import _grad_of, same


def _negative_zeros(lib, *shape):
    return lib.tensor(np.full(shape, -0.0, np.float32))


@pytest.mark.parametrize("op", ["pixel_shuffle", "pixel_unshuffle"])
@pytest.mark.parametrize("dtype", ["float32", "bool"])
def test_pixel_shuffle_by_one_is_a_new_tensor(op, dtype):
    """pixel_shuffle/pixel_unshuffle by a factor of 1 returned a view of their input (NumPy's reshape and
    ascontiguousarray of a contiguous array copy nothing), so a later in-place write showed through; torch's result
    is a new tensor (the bool program: 6 of 8 values differed)."""
    def program(lib):
        v3 = lib.tensor(np.arange(8).reshape(2, 1, 2, 2) % 3 == 0) if dtype == "bool" else \
            lib.arange(8.).reshape(2, 1, 2, 2)
        v4 = getattr(lib, op)(v3, 1)
        v3.index_put_((lib.tensor([0, 1]),), lib.tensor(True if dtype == "bool" else 5.0))
        return v4, v3
    same(program)


@pytest.mark.parametrize("call", [
    lambda lib, x: lib.adaptive_avg_pool1d(x, 3), lambda lib, x: lib.adaptive_avg_pool1d(x, 5),
    lambda lib, x: lib.adaptive_avg_pool1d(x, 7), lambda lib, x: lib.avg_pool1d(x, 2),
    lambda lib, x: lib.avg_pool1d(x, 3, 2, 1), lambda lib, x: lib.avg_pool1d(x, 3, 2, 1, count_include_pad=False),
    lambda lib, x: lib.nn.functional.avg_pool2d(x.unsqueeze(-1).expand(1, 2, 6, 4), 3, 1, 1),
    lambda lib, x: lib.nn.functional.avg_pool2d(x.unsqueeze(-1).expand(1, 2, 6, 4), 2, divisor_override=3),
    lambda lib, x: lib.nn.functional.adaptive_avg_pool2d(x.unsqueeze(-1).expand(1, 2, 6, 4), (4, 3)),
    lambda lib, x: lib.nn.functional.adaptive_avg_pool3d(x.reshape(1, 1, 2, 2, 3), 2),
    lambda lib, x: lib.nn.functional.avg_pool3d(x.reshape(1, 1, 2, 2, 3), 2, 1, 1),
    lambda lib, x: lib.nn.functional.interpolate(x, size=4, mode="area"),
])
def test_average_pools_of_negative_zeros_are_positive_zero(call):
    """`v2 = torch.adaptive_avg_pool1d(v1, 3); v3 = v2.rsqrt()` gave -inf where torch gives inf: torch's average
    pools sum each window from +0.0 before they divide, so a window of -0.0 (and one wholly in the padding)
    averages to +0.0; numgrad summed weighted taps from the first one, and its masked taps added +0.0."""
    same(lambda lib: call(lib, _negative_zeros(lib, 1, 2, 6)).rsqrt())


def test_antialiased_interpolation_keeps_a_negative_zero():
    """Antialiased interpolation's taps past a window's end were masked to +0.0, turning a -0.0 sum into +0.0;
    torch's sum starts from the first tap, so -0.0 stays."""
    same(lambda lib: lib.nn.functional.interpolate(_negative_zeros(lib, 1, 2, 5, 4), size=(3, 2), mode="bilinear",
                                                   antialias=True).rsqrt())


@pytest.mark.parametrize("call", [
    lambda lib, x: lib.max_pool1d(x, 2), lambda lib, x: lib.adaptive_avg_pool1d(x, 3),
    lambda lib, x: lib.avg_pool1d(x, 2), lambda lib, x: lib.nn.functional.interpolate(x, size=7, mode="linear"),
    lambda lib, x: lib.nn.functional.pad(x, (2, 2), mode="reflect"),
])
def test_gradients_of_negative_zeros_are_added_onto_zeros(call):
    """The backward of max pooling put each gradient value in place and that of the resampling ops (pools,
    interpolation, reflection padding) stored its sums, so a -0.0 output gradient gave -0.0; torch's backward
    kernels add onto a zeroed gradient, which gives +0.0."""
    def program(lib):
        x = lib.zeros(1, 2, 6, requires_grad=True)
        out = call(lib, x)
        out.backward(_negative_zeros(lib, *out.shape))
        return x.grad.rsqrt()
    same(program)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_multi_margin_loss_refuses_half_types(dtype):
    """multi_margin_loss computed half and bfloat16 inputs; torch's CPU kernel is for float and double only."""
    same(lambda lib: lib.nn.functional.multi_margin_loss(
        lib.tensor(np.array([[0.625], [-0.084], [-1.25], [0.948]]), dtype=getattr(lib, dtype)),
        lib.tensor([0, 0, 0, 0]), p=2, margin=1.0, reduction="mean"))


@pytest.mark.parametrize("dtype", ["int32", "int64", "bool"])
@pytest.mark.parametrize("reduction", ["mean", "none"])
def test_margin_ranking_loss_of_integers_and_bools(dtype, reduction):
    """margin_ranking_loss kept the default margin an int, so integer inputs gave an integer loss (and 'mean' of it
    an error) where torch's margin is a double and its loss a float; with bools it negated the target before it
    subtracted the inputs, so it named the negation where torch names the subtraction."""
    def program(lib):
        a, b, t = (lib.tensor(np.array(v)).to(getattr(lib, dtype)) for v in ([1, 0, 3], [2, 0, 1], [1, -1, 1]))
        return lib.nn.functional.margin_ranking_loss(a, b, t, reduction=reduction)
    same(program)


@pytest.mark.parametrize("shifts", [0, 6, -3])
def test_roll_without_dims_is_a_new_tensor(shifts):
    """roll with no dims and a shift that moves nothing returned a view of its flattened input, so an in-place write
    to the input showed through; torch's result is a new tensor."""
    def program(lib):
        x = lib.arange(6.).reshape(2, 3)
        out = lib.roll(x, shifts)
        x.add_(10)
        return out
    same(program)
    same(_grad_of(lambda lib, x: lib.roll(x, shifts), np.arange(6.).reshape(2, 3)))


@pytest.mark.parametrize("op", ["cummax", "cummin"])
@pytest.mark.parametrize("modified", ["indices", "input"])
def test_cummax_of_an_empty_input_saves_its_indices(op, modified):
    """cummax/cummin of an empty input saved nothing for its backward, so an in-place write to the indices (or the
    input) before backward went unnoticed; torch saves both and names the modified one."""
    def program(lib):
        leaf0 = lib.zeros(1, 0, requires_grad=True)
        v2 = leaf0.log1p()
        v3, v4 = getattr(lib, op)(v2, 1)
        if modified == "indices":
            v4.copy_(v2 > v2)
        else:
            v2.mul_(2)
        v3.reshape((0, 3)).sum().backward()
        return leaf0.grad
    same(program)


def test_margin_ranking_loss_clamps_in_place():
    """margin_ranking_loss clamped out of place, so its 'none' loss was at version 0 where torch's (clamp_min_) is at
    version 1: an in-place op on it and backward named the wrong versions."""
    def program(lib):
        leaf0 = lib.zeros(1, 3, requires_grad=True)
        v2 = lib.nn.functional.margin_ranking_loss(leaf0 * 1, lib.ones(1, 3), lib.ones(1, 3), reduction="none")
        v2.mul_(v2).backward(lib.ones(1, 3))
        return leaf0.grad
    same(program)


def test_max_unpool_keeps_a_negative_zero_and_max_pool_backward_does_not():
    """max_unpool puts each value in place (a -0.0 stays -0.0) while max pooling's backward adds onto zeros (-0.0
    gives +0.0): they share one scatter, which must do each as torch does."""
    same(lambda lib: lib.nn.functional.max_unpool1d(_negative_zeros(lib, 1, 2, 2), lib.tensor([[[0, 3], [1, 2]]]),
                                                    2).rsqrt())


@pytest.mark.parametrize("op", ["cumsum", "logcumsumexp"])
@pytest.mark.parametrize("shape", [(2, 4), ()])
def test_running_sums_of_negative_zeros(op, shape):
    """cumsum and logcumsumexp began each running sum from the first value, so a leading -0.0 stayed -0.0; torch's
    start from 0 (and -inf), which gives +0.0 (a 0-d input is copied as it is)."""
    same(lambda lib: getattr(lib, op)(_negative_zeros(lib, *shape), 0).rsqrt())


def test_max_pool_of_bfloat16():
    """Max pooling of bfloat16 crashed with NumPy's ValueError (its padding asked iinfo of a kind-'V' dtype);
    torch pools bfloat16 as any floating type."""
    data = np.random.default_rng(1).standard_normal((2, 3, 7))

    def program(lib):  # (torch's numpy() takes no bfloat16: the results are compared as float32)
        x = lib.tensor(data, dtype=lib.bfloat16, requires_grad=True)
        out = lib.nn.functional.max_pool1d(x, 3, 2, 1, ceil_mode=True)
        out.sum().backward()
        assert out.dtype == x.grad.dtype == lib.bfloat16
        return out.float(), x.grad.float()
    same(program)


@pytest.mark.parametrize("dtype", ["bool", "uint8", "int64"])
@pytest.mark.parametrize("k", [1, 2, 3])
@pytest.mark.parametrize("batch", [2, 0])
def test_adaptive_max_pool_refuses_integers(dtype, k, batch):
    """Adaptive max pooling computed integer and bool inputs, where torch's kernels (named adaptive_max_pool2d for 1d
    and 2d, adaptive_max_pool3d_cpu for 3d) take floating types only, an empty batch's too."""
    same(lambda lib: getattr(lib.nn.functional, f"adaptive_max_pool{k}d")(
        lib.ones(batch, 2, *(6,) * k).to(getattr(lib, dtype)), 2))


@pytest.mark.parametrize("k", [1, 2, 3])
def test_adaptive_max_pool_of_an_empty_batch(k):
    """Adaptive max pooling of an empty batch crashed: NumPy cannot infer a -1 dim of an empty array."""
    def program(lib):
        x = lib.ones(0, 2, *(6,) * k, requires_grad=True)
        out, indices = getattr(lib.nn.functional, f"adaptive_max_pool{k}d")(x, 2, return_indices=True)
        out.sum().backward()
        return out, indices, x.grad
    same(program)


@pytest.mark.parametrize("dtype", ["bool", "uint8", "int32", "int64", "float16", "bfloat16"])
@pytest.mark.parametrize("batch", [1, 0])
def test_unfold_and_fold_dtypes_and_empty_batches(dtype, batch):
    """unfold and fold computed integer inputs where torch's im2col/col2im take floating types and bool only; fold
    refused an empty 3-d batch, which torch takes."""
    def comparable(t):  # (torch's numpy() takes no bfloat16)
        return t.float() if dtype == "bfloat16" else t
    same(lambda lib: comparable(lib.nn.functional.unfold(lib.ones(batch, 2, 3, 4).to(getattr(lib, dtype)), 2)))
    same(lambda lib: comparable(lib.nn.functional.fold(lib.ones(batch, 4, 6).to(getattr(lib, dtype)), (3, 4), 2)))


@pytest.mark.parametrize("a,b", [("bool", "bool"), ("bool", "float32"), ("uint8", "bool"), ("float32", "int64"),
                                 ("float32", "float32")])
def test_cross_wants_one_non_bool_dtype(a, b):
    """cross subtracted bool products (naming the subtraction) and promoted mixed dtypes; torch refuses bool
    ('"cross" not implemented') and then any second dtype ('expected scalar type')."""
    same(lambda lib: lib.cross(lib.ones(2, 3).to(getattr(lib, a)), lib.ones(2, 3).to(getattr(lib, b)), dim=1))


@pytest.mark.parametrize("dtype", ["bool", "int64"])
def test_histc_of_bool_names_linspace(dtype):
    """histc of a bool tensor named histogram_cpu; torch's bin edges (linspace_cpu) fail first for bool."""
    same(lambda lib: lib.histc(lib.ones(3).to(getattr(lib, dtype)), 3))


@pytest.mark.parametrize("mode", ["nearest", "nearest-exact"])
@pytest.mark.parametrize("shape,size", [((1, 2, 6), 4), ((1, 2, 5, 6), (4, 9)), ((1, 1, 2, 5, 6), (3, 3, 3))])
def test_nearest_interpolation_of_uint8(mode, shape, size):
    """Nearest interpolation refused uint8 ('compute_indices_weights_nearest'); torch's nearest kernels take uint8
    (int8 and the other integers stay refused)."""
    same(lambda lib: lib.nn.functional.interpolate(lib.arange(int(np.prod(shape))).reshape(shape).to(lib.uint8),
                                                   size=size, mode=mode))
    same(lambda lib: lib.nn.functional.interpolate(lib.ones(1, 2, 6, dtype=lib.int8), size=4, mode=mode))


@pytest.mark.parametrize("reduce,include_self", [("mean", True), ("mean", False), ("amin", False), ("amax", False)])
def test_scatter_reduce_of_bfloat16(reduce, include_self):
    """scatter_reduce took bfloat16 (NumPy kind 'V') for an integer type: 'mean' floor-divided and 'amin'/'amax'
    without self crashed asking its iinfo."""
    def program(lib):
        x = lib.tensor([[3, -1, 2], [0, 5, -2]]).to(lib.bfloat16)
        out = x.scatter_reduce(1, lib.tensor([[0, 2, 1], [1, 1, 0]]), x, reduce, include_self=include_self)
        assert out.dtype == lib.bfloat16
        return out.float()  # (torch's numpy() takes no bfloat16)
    same(program)


def test_index_copy_names_a_dtype_mismatch_as_torch():
    """index_copy's dtype mismatch used index_add's wording; torch's index_copy_ has its own."""
    same(lambda lib: lib.zeros(2, 3).index_copy(1, lib.tensor([0]), lib.zeros(2, 1, dtype=lib.int64)))
    same(lambda lib: lib.zeros(2, 3).index_add(1, lib.tensor([0]), lib.zeros(2, 1, dtype=lib.int64)))


def test_nonzero_result_is_a_transposed_layout():
    """nonzero's result was C-contiguous, so a view across its rows worked; torch's is the transpose of an (ndim, n)
    array (strides (1, n)), and `v5.view((3, 6))` of a (9, 2) result fails there."""
    same(lambda lib: lib.ones(3, 3).nonzero().view((3, 6)))
    same(lambda lib: lib.nonzero(lib.tensor([[0, 1, 2], [3, 0, 5]])).t().contiguous().view(-1))
    same(lambda lib: lib.ones(3).nonzero().view(-1))

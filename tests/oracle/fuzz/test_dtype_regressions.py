"""Regression tests for what the fuzz found where the narrow dtypes (uint8, int8, int16, int32, float16, bfloat16)
meet other ops: one test per root cause, each against torch; the docstring says what went wrong."""
import numpy as np
import pytest
import torch

from helpers.op_compare import check, check_error, rand

NARROW_INTS = ("uint8", "int8", "int16", "int32")


def _u8(lib):
    return lib.tensor([[6, 4], [6, 8], [5, 6]], dtype=lib.uint8)


def _same_outcome(fn):
    """check(fn) where torch returns, check_error(fn) where it raises."""
    try:
        fn(torch)
    except Exception:
        return check_error(fn)
    check(fn)


def test_fill_of_a_negative_number_into_uint8_wraps():
    """c10 lets a negative int into uint8 when its magnitude fits (C++ wraps it: -2 is 254); NumPy raised an
    OverflowError on it in every factory, setitem, scatter and constant pad."""
    for v in (-2, -129, 128):
        check(lambda lib: lib.full_like(lib.zeros(3), v, dtype=lib.uint8))
        check(lambda lib: lib.full((2,), v, dtype=lib.uint8))
        check(lambda lib: lib.zeros(3).new_full((2,), v, dtype=lib.uint8))
        check(lambda lib: lib.constant_pad_nd(_u8(lib), (1, 1), v))
        check(lambda lib: _u8(lib).scatter(0, lib.tensor([[0, 1]]), v))

        def put(lib):
            x = _u8(lib)
            x[0] = v
            return x
        check(put)


def test_scalar_out_of_range_for_narrow_ints_raises_runtime_error():
    """A number beyond the type's range is torch's RuntimeError with c10's type name, not NumPy's OverflowError;
    constant_pad_nd converts it only when it pads."""
    for name in NARROW_INTS:
        for v in (2 ** 40, -2 ** 40, 1e20, float("nan")):
            check_error(lambda lib: lib.constant_pad_nd(lib.zeros(3, dtype=getattr(lib, name)), (1, 0), v))
            check_error(lambda lib: lib.full((2,), v, dtype=getattr(lib, name)))
    check(lambda lib: lib.constant_pad_nd(lib.zeros(3, dtype=lib.uint8), (-1, 0), 300))
    check_error(lambda lib: lib.constant_pad_nd(lib.zeros(3, dtype=lib.float16), (1, 0), 1e6))


def test_functional_pad_value_is_a_double():
    """F.pad takes its value as a double: -2.0 does not fit uint8 (a float must lie in the range), though the int
    -2 does in constant_pad_nd."""
    fits = {"uint8": (128,), "int8": (-2, -1.7)}
    for name, good in fits.items():
        for v in (-2, -1.7, 128, 300):
            fn = (lambda lib: lib.nn.functional.pad(lib.zeros(3, dtype=getattr(lib, name)), (1, 1), value=v))
            check(fn) if v in good else check_error(fn)
    check(lambda lib: lib.nn.functional.pad(lib.zeros(3, dtype=lib.int64), (1, 0), value=2 ** 62 + 1))


def test_clamp_where_pow_alpha_check_their_numbers():
    """clamp's bounds, where's values, pow's exponent and add's alpha are converted with c10's overflow check
    (add's and mul's number operand wraps unchecked); a half result of where is not checked."""
    for name in ("uint8", "int8"):
        for v in (300, -300):
            check_error(lambda lib: lib.tensor([1, 2], dtype=getattr(lib, name)).clamp(v))
            check_error(lambda lib: lib.tensor([1, 2], dtype=getattr(lib, name)).clamp(-1 if name == "int8" else 0, v))
            check_error(lambda lib: lib.tensor([1, 2], dtype=getattr(lib, name)).clamp_min(v))
            check_error(lambda lib: lib.tensor([1, 2], dtype=getattr(lib, name)).clamp_max(v))
            check_error(lambda lib: lib.where(lib.tensor([True, False]), lib.tensor([1, 2], dtype=getattr(lib, name)),
                                              v))
            check_error(lambda lib: lib.add(lib.tensor([1, 2], dtype=getattr(lib, name)), 1, alpha=v))
            check(lambda lib: lib.tensor([1, 2], dtype=getattr(lib, name)) + v)
            check(lambda lib: lib.tensor([1, 2], dtype=getattr(lib, name)) * v)
    check(lambda lib: lib.tensor([1, 2], dtype=lib.uint8).clamp(-2))
    check(lambda lib: lib.where(lib.tensor([True, False]), lib.tensor([1, 2], dtype=lib.uint8), -2))
    check(lambda lib: lib.where(lib.tensor([True, False]), 300, -300))
    check(lambda lib: lib.where(lib.tensor([True, False]), lib.tensor([1., 2.], dtype=lib.float16), 1e40))
    check_error(lambda lib: lib.where(lib.tensor([True, False]), lib.tensor([1., 2.]), 1e300))
    check_error(lambda lib: lib.tensor([1, 2], dtype=lib.uint8) ** 256)
    check_error(lambda lib: lib.tensor([1., 2.], dtype=lib.float16) ** 1e6)
    check_error(lambda lib: lib.tensor([1., 2.], dtype=lib.float16).clamp(max=1e6))
    check_error(lambda lib: lib.tensor([1., 2.]).clamp(max=1e300))
    check(lambda lib: lib.tensor([1, 2], dtype=lib.uint8) ** 1.5)
    check_error(lambda lib: lib.full((2,), lib.tensor(300), dtype=lib.uint8))


def test_inplace_casts_follow_torch_can_cast():
    """torch writes a result into a tensor of its own or a higher category (int16 into uint8 wraps); NumPy's
    same_kind refused signed into unsigned ints."""
    for a in NARROW_INTS + ("int64",):
        for b in NARROW_INTS + ("int64", "float16", "bfloat16", "float32", "bool"):
            for op in ("add_", "sub_", "mul_", "floor_divide_", "remainder_"):
                def fn(lib):
                    x = lib.tensor([200, 7, 100], dtype=getattr(lib, a))
                    y = lib.tensor([3, 3, 1], dtype=getattr(lib, b))
                    return getattr(x, op)(y)
                _same_outcome(fn)
    check_error(lambda lib: lib.zeros(2, dtype=lib.uint8).clamp_(1.5))
    check_error(lambda lib: lib.zeros(2, dtype=lib.bool).add_(lib.zeros(2, dtype=lib.uint8)))
    check(lambda lib: lib.zeros(2, dtype=lib.bfloat16).add_(lib.ones(2, dtype=lib.float16)).float())


def test_clamp_with_one_tensor_bound_of_a_wider_type():
    """clamp's missing bound is the limit of the type it computes in: an int8 input with a uint8 bound of 200
    computes in int16, and 200 was capped at int8's 127."""
    check(lambda lib: lib.tensor([-1, 2, -128], dtype=lib.int8).clamp(lib.tensor([200, 7, 255], dtype=lib.uint8)))
    check(lambda lib: lib.tensor([-1, 2, 70], dtype=lib.int8).clamp_(lib.tensor([-1, 2, 70000], dtype=lib.int32)))
    check(lambda lib: lib.tensor([1, 2, 3], dtype=lib.int8).clamp(None, lib.tensor([-200, 7, 0], dtype=lib.int16)))
    check(lambda lib, t: lib.clamp(lib.tensor([1, 5, 9]), min=t), np.array([2., 3., 4.], np.float32))
    check(lambda lib, t: lib.clamp(lib.tensor([1, 5, 9], dtype=lib.int8), max=t * 100),
          np.array([2., 3., 4.], np.float32))


@pytest.mark.parametrize("value", [-1.9488348960876465, 300, -2, np.nan])
def test_index_put_single_mask_checks_the_value_as_masked_fill(value):
    """index_put_/setitem with one bool mask and a one-element value take masked_fill_'s path, which checks the
    value's number against the tensor's dtype (found: a float -1.95 into uint8 raised in torch only)."""
    mask = np.array([[True, False], [False, True], [True, True]])

    def put(lib):
        return _u8(lib).index_put((lib.tensor(mask),), lib.tensor(value))

    def put_1d(lib):
        return _u8(lib).index_put_((lib.tensor([True, False, True]),), lib.tensor([value]))

    def setitem(lib):
        x = _u8(lib)
        x[lib.tensor(mask)] = lib.tensor(value)
        return x
    for fn in (put, put_1d, setitem):
        check_error(fn) if value != -2 else check(fn)
    check_error(lambda lib: lib.zeros(2, 2, dtype=lib.float16).index_put_((lib.tensor([[True, False]] * 2),),
                                                                          lib.tensor(1e6)))


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_multi_margin_loss_refuses_half_types(dtype):
    """torch's multi_margin_loss kernel is float and double only (before it compares the weight's dtype)."""
    x = rand(4, 3)
    check_error(lambda lib: lib.nn.functional.multi_margin_loss(lib.tensor(x).to(getattr(lib, dtype)),
                                                               lib.tensor([0, 1, 2, 0]), p=2))
    check_error(lambda lib: lib.nn.functional.multi_margin_loss(lib.tensor(x).to(getattr(lib, dtype)),
                                                               lib.tensor([0, 1, 2, 0]), weight=lib.ones(3)))


def _bf16_with_nan(lib):
    return lib.tensor([[1., float("nan"), 3., -1.], [2, 5, float("nan"), 0]]).to(lib.bfloat16)


def test_bfloat16_sorts_scans_and_pools_with_nan():
    """NumPy's kind of bfloat16 is 'V': its argsort, unique and accumulating max misread NaN (a sort left it in
    place), np.iinfo was asked for max pooling's padding and np.finfo for logcumsumexp's gradient."""
    for fn in (lambda lib, x: lib.sort(x, -1), lambda lib, x: lib.sort(x, -1, descending=True),
               lambda lib, x: lib.topk(x, 2), lambda lib, x: lib.kthvalue(x, 2), lambda lib, x: x.median(-1),
               lambda lib, x: x.median(), lambda lib, x: x.nanmedian(-1), lambda lib, x: lib.cummax(x, -1),
               lambda lib, x: lib.cummin(x, -1), lambda lib, x: lib.unique(x), lambda lib, x: lib.msort(x),
               lambda lib, x: lib.nn.functional.max_pool2d(x.reshape(1, 1, 2, 4), 2, return_indices=True),
               lambda lib, x: lib.nn.functional.max_pool1d(x.reshape(1, 2, 4), 2, padding=1),
               lambda lib, x: lib.zeros(2, dtype=lib.bfloat16).scatter_reduce(0, lib.tensor([0, 0, 1, 1]), x[0], "amax",
                                                                              include_self=False)):
        check(lambda lib: [o.float() if o.is_floating_point() else o for o in
                           (lambda r: r if isinstance(r, tuple) else (r,))(fn(lib, _bf16_with_nan(lib)))])

    def lcse_grad(lib):
        x = lib.tensor([1., 2., -3.], dtype=lib.bfloat16, requires_grad=True)
        lib.logcumsumexp(x, 0).backward(lib.tensor([1., -1., 2.], dtype=lib.bfloat16))
        return x.grad.float()
    check(lcse_grad)


@pytest.mark.parametrize("dtype", ["uint8", "int8", "int32", "int64", "bool", "float16"])
def test_window_kernels_refuse_dtypes_as_torch(dtype):
    """torch's CPU kernels dispatch on dtype: adaptive max pooling takes floating types only, im2col/col2im
    (unfold, fold) floating types and bool, the dilated and transposed convolutions floating types and long,
    slow_conv2d/3d all but bool; an empty convolution runs no kernel. numgrad computed them all."""
    def x(lib, *shape):
        return lib.ones(*shape).to(getattr(lib, dtype))
    cases = [lambda lib: lib.nn.functional.conv2d(x(lib, 1, 2, 5, 5), x(lib, 2, 2, 2, 2)),
             lambda lib: lib.nn.functional.conv2d(x(lib, 1, 2, 5, 5), x(lib, 2, 2, 2, 2), dilation=2),
             lambda lib: lib.nn.functional.conv3d(x(lib, 1, 2, 5, 5, 5), x(lib, 2, 2, 2, 2, 2)),
             lambda lib: lib.nn.functional.conv3d(x(lib, 1, 2, 5, 5, 5), x(lib, 2, 2, 2, 2, 2), dilation=2),
             lambda lib: lib.nn.functional.conv_transpose2d(x(lib, 1, 2, 5, 5), x(lib, 2, 2, 2, 2)),
             lambda lib: lib.nn.functional.conv_transpose3d(x(lib, 1, 2, 5, 5, 5), x(lib, 2, 2, 2, 2, 2)),
             lambda lib: lib.nn.functional.conv2d(x(lib, 0, 2, 5, 5), x(lib, 2, 2, 2, 2)),
             lambda lib: lib.nn.functional.conv_transpose2d(x(lib, 0, 2, 5, 5), x(lib, 2, 2, 2, 2)),
             lambda lib: lib.nn.functional.unfold(x(lib, 1, 2, 5, 5), 2),
             lambda lib: lib.nn.functional.unfold(x(lib, 0, 2, 5, 5), 2),
             lambda lib: lib.nn.functional.fold(x(lib, 1, 4, 4), 3, 2),
             lambda lib: lib.nn.functional.adaptive_max_pool2d(x(lib, 2, 5, 5), 2),
             lambda lib: lib.nn.functional.adaptive_max_pool2d(x(lib, 0, 2, 5, 5), 2),
             lambda lib: lib.nn.functional.adaptive_max_pool3d(x(lib, 2, 5, 5, 5), 2),
             lambda lib: lib.nn.functional.adaptive_max_pool1d(x(lib, 2, 5), 2)]
    for fn in cases:
        _same_outcome(lambda lib: fn(lib).float())


def test_fused_backward_through_a_node_with_a_half_input():
    """The fused backward took a float32 node whose input is float16 into its kernel, which knows no half type
    (KeyError: dtype('float16')); such a node runs on its own, rounding its input's gradient to half."""
    def program(lib, leaf):
        v1 = lib.nn.functional.poisson_nll_loss(leaf, lib.tensor(0.2481689453125, dtype=lib.float16),
                                                reduction="mean", log_input=True, full=True)
        v2 = v1.div_(3)
        v6 = lib.rsqrt((-2) == v2.int().relu())
        return lib.nn.functional.margin_ranking_loss(v6, v2, lib.tensor(1.0), margin=0.3, reduction="sum").float()

    def grad(lib):
        leaf = lib.tensor(-0.76611328125, dtype=lib.float16, requires_grad=True)
        program(lib, leaf).sum().backward()
        return leaf.grad.float()
    check(grad)

    def mixed(lib):
        h = lib.tensor([0.5, -1.25, 2.0], dtype=lib.float16, requires_grad=True)
        f = lib.tensor([1.5, 0.25, -3.0], requires_grad=True)
        ((h * f).exp() * f).sin().sum().backward()
        return h.grad.float(), f.grad
    check(mixed)


@pytest.mark.parametrize("dtype", ["uint8", "int8", "int64", "bool", "float16", "float32"])
def test_margin_ranking_loss_margin_is_a_double_and_histc_of_bool(dtype):
    """margin_ranking_loss adds its margin as a double (an integer input gives a float loss; numgrad's int 0 kept
    it integer, and mean refused it) after the subtraction (a bool input's refusal names it); histc of a bool
    tensor fails making its bin edges ("linspace_cpu")."""
    def loss(reduction, margin=0, target=None):
        def fn(lib):
            a, b = lib.tensor([1, 0, 3]).to(getattr(lib, dtype)), lib.tensor([0, 1, 1]).to(getattr(lib, dtype))
            t = lib.tensor([1, -1, 1]) if target is None else lib.tensor([1, 0, 1]).to(getattr(lib, dtype))
            return lib.nn.functional.margin_ranking_loss(a, b, t, margin=margin, reduction=reduction).float()
        return fn
    for fn in (loss("mean"), loss("none", 2), loss("sum", 0, True)):
        _same_outcome(fn)
    _same_outcome(lambda lib: lib.histc(lib.ones(3).to(getattr(lib, dtype)), 4).float())


@pytest.mark.parametrize("dtype, atol", [("bfloat16", 1.6e-2), ("float16", 2e-3)])
@pytest.mark.parametrize("mode, size", [("bilinear", (8, 9)), ("bicubic", (8, 9)), ("nearest", (8, 9))])
def test_interpolate_half_types_round_once(dtype, atol, mode, size):
    """torch's upsample kernels compute a half type's weights and sums in float32 and round once; numgrad rounded
    after every tap and axis (bicubic bfloat16 was off by 0.16). Within one rounding now, the gradient exact."""
    x = rand(2, 3, 5, 7)

    def fn(lib):
        t = lib.tensor(x).to(getattr(lib, dtype)).requires_grad_()
        y = lib.nn.functional.interpolate(t, size=size, mode=mode)
        y.backward(lib.tensor(rand(*y.shape, seed=3)).to(getattr(lib, dtype)))
        return y.detach().float(), t.grad.float()
    check(fn, rtol=0, atol=atol)

    def grad_only(lib):
        return fn(lib)[1]
    check(grad_only, rtol=0, atol=0)


@pytest.mark.parametrize("dtype", ["uint8", "int8", "int64", "bool"])
@pytest.mark.parametrize("shape", [(1, 3, 4, 4), (2, 3, 4), (1, 2, 3, 4, 4)])
def test_interpolate_of_integer_tensors(dtype, shape):
    """uint8 takes torch's nearest kernels (a gather); other integer types are refused with the kernel torch
    picks (the channels-last one for a 4-d input); area mode's 3-d adaptive pool names its _cpu kernel."""
    modes = ["nearest", "nearest-exact", "area"] + (["bicubic"] if len(shape) == 4 and dtype != "uint8" else []) + \
        ([{3: "linear", 4: "bilinear", 5: "trilinear"}[len(shape)]] if dtype != "uint8" or len(shape) != 4 else [])
    for mode in modes:
        for kw in ({"scale_factor": 2}, {"size": (3,) * (len(shape) - 2)}):
            _same_outcome(lambda lib: lib.nn.functional.interpolate(
                lib.arange(int(np.prod(shape))).reshape(shape).to(getattr(lib, dtype)), mode=mode, **kw))

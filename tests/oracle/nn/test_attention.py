"""scaled_dot_product_attention, MultiheadAttention, TransformerEncoderLayer and TransformerEncoder against torch:
outputs, input and parameter gradients with torch's weights, float64 gradchecks, state_dict keys, reprs, errors."""
import warnings

import numpy as np
import pytest
import torch

import numgrad
from numgrad.testing import gradcheck, gradgradcheck
from helpers.nn_compare import assert_same, compare_grads, rand, to_numgrad_state, twin

SDPA_CASES = {
    "plain": (((2, 3, 4, 8), (2, 3, 5, 8), (2, 3, 5, 6)), {}),
    "causal_short_query": (((2, 3, 4, 8), (2, 3, 6, 8), (2, 3, 6, 8)), {"is_causal": True}),
    "causal_long_query": (((2, 3, 6, 8), (2, 3, 3, 8), (2, 3, 3, 8)), {"is_causal": True}),
    "scale": (((2, 2, 4, 8), (2, 2, 5, 8), (2, 2, 5, 8)), {"scale": 0.3}),
    "unbatched_2d": (((4, 8), (5, 8), (5, 6)), {"is_causal": True}),
    "three_d": (((3, 4, 8), (3, 5, 8), (3, 5, 8)), {}),
    "broadcast_batch": (((2, 3, 4, 8), (1, 3, 5, 8), (1, 3, 5, 8)), {}),
    "gqa": (((2, 6, 4, 8), (2, 2, 5, 8), (2, 2, 5, 8)), {"enable_gqa": True}),
    "gqa_3d_unequal_groups": (((6, 4, 8), (2, 5, 8), (3, 5, 8)), {"enable_gqa": True}),
}
BOOL_MASK = np.array([[1, 0, 1, 1, 0], [0, 0, 0, 0, 0], [1, 1, 1, 1, 1], [0, 1, 0, 1, 0]], bool)  # a row all out
FLOAT_MASK = np.where(BOOL_MASK, 0.0, -np.inf) + rand(4, 5, seed=9, dtype=np.float64)


def _run_sdpa(lib, arrays, mask=None, **kwargs):
    tensors = [lib.tensor(a, requires_grad=True) for a in arrays]
    if mask is not None:
        kwargs["attn_mask"] = lib.tensor(mask)
    out = lib.nn.functional.scaled_dot_product_attention(*tensors, **kwargs)
    weight = lib.tensor(rand(*out.shape, seed=5, dtype=arrays[0].dtype))
    (out * weight).sum().backward()
    return out, [t.grad for t in tensors]


def _compare_sdpa(arrays, mask=None, tol=None, **kwargs):
    tol = tol or (dict(rtol=1e-4, atol=1e-5) if arrays[0].dtype == np.float32 else dict(rtol=1e-10, atol=1e-12))
    ours, our_grads = _run_sdpa(numgrad, arrays, mask, **kwargs)
    theirs, their_grads = _run_sdpa(torch, arrays, mask, **kwargs)
    assert_same(ours, theirs, **tol)
    for a, b in zip(our_grads, their_grads):
        assert_same(a, b, **tol)


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["float32", "float64"])
@pytest.mark.parametrize("name", list(SDPA_CASES))
def test_sdpa_matches_torch(name, dtype):
    shapes, kwargs = SDPA_CASES[name]
    _compare_sdpa([rand(*s, seed=i, dtype=dtype) for i, s in enumerate(shapes)], **kwargs)


@pytest.mark.parametrize("mask", [BOOL_MASK, FLOAT_MASK, FLOAT_MASK.astype(np.float32)], ids=["bool", "float64",
                                                                                               "float32"])
def test_sdpa_masks_match_torch(mask):
    """A bool mask keeps True; a float mask adds; a row masked out entirely gives zeros and zero gradients."""
    arrays = [rand(2, 3, 4, 8, seed=1, dtype=np.float64), rand(2, 3, 5, 8, seed=2, dtype=np.float64),
              rand(2, 3, 5, 6, seed=3, dtype=np.float64)]
    _compare_sdpa(arrays, mask)
    _compare_sdpa(arrays, mask[None, None])  # (1, 1, L, S): broadcast over the batch and heads


@pytest.mark.parametrize("name", list(SDPA_CASES))
def test_sdpa_grad_fn_names_match_torch(name):
    """4-D inputs that torch's CPU dispatch sends to its fused kernel end in one
    ScaledDotProductFlashAttentionForCpuBackward0 node; the others in the composite path's last node."""
    shapes, kwargs = SDPA_CASES[name]
    nodes = []
    for lib in (numgrad, torch):
        out = _run_sdpa(lib, [rand(*s, seed=1) for s in shapes], **kwargs)[0]
        nodes.append((type(out.grad_fn).__name__, len(out.grad_fn.next_functions)))
    assert nodes[0] == nodes[1]


def test_sdpa_fused_node_second_derivatives():
    """torch's fused node has no double backward; numgrad's backward is tensor ops: checked by finite differences."""
    q, k, v = (numgrad.tensor(rand(1, 4, s, 3, seed=s, dtype=np.float64), requires_grad=True) for s in (2, 3, 4))
    k, v = k[:, :2], v[:, :2, :3]
    sdpa = numgrad.nn.functional.scaled_dot_product_attention
    assert type(sdpa(q, k, v, is_causal=True, enable_gqa=True).grad_fn).__name__ == \
        "ScaledDotProductFlashAttentionForCpuBackward0"
    leaves = (q, k.detach().requires_grad_(), v.detach().requires_grad_())
    assert gradgradcheck(lambda a, b, c: sdpa(a, b, c, is_causal=True, enable_gqa=True), leaves)


def test_sdpa_gqa_of_2d_inputs_fails_as_torch():
    outcomes = []
    for lib in (numgrad, torch):
        with pytest.raises(IndexError) as info:
            lib.nn.functional.scaled_dot_product_attention(lib.randn(4, 8), lib.randn(5, 8), lib.randn(5, 8),
                                                           enable_gqa=True)
        outcomes.append(str(info.value))
    assert outcomes[0] == outcomes[1]


def test_sdpa_gradcheck():
    q, k, v = (numgrad.tensor(rand(2, 3, s, 4, seed=s, dtype=np.float64), requires_grad=True) for s in (3, 5, 5))
    mask = numgrad.tensor(BOOL_MASK[:3])
    sdpa = numgrad.nn.functional.scaled_dot_product_attention
    assert gradcheck(lambda a, b, c: sdpa(a, b, c, attn_mask=mask), (q, k, v))
    assert gradcheck(lambda a, b, c: sdpa(a, b, c, is_causal=True, scale=0.7), (q, k, v))


def test_sdpa_dropout():
    """Dropout of the weights: p=1 drops everything; otherwise the kept weights are scaled by 1/(1-p)."""
    q, k, v = (numgrad.tensor(rand(2, 2, 4, 8, seed=i)) for i in range(3))
    sdpa = numgrad.nn.functional.scaled_dot_product_attention
    out = sdpa(q, k, v, dropout_p=1.0)
    assert np.array_equal(out.numpy(), np.zeros((2, 2, 4, 8), np.float32))
    ones = numgrad.ones(2, 2, 4, 1)
    totals = sdpa(q, k, ones, dropout_p=0.5).numpy()  # each row: the sum of its kept weights, times 2
    assert totals.shape == (2, 2, 4, 1) and np.all(totals <= 2.0 + 1e-5) and np.any(totals < 1.0 - 1e-3)


SDPA_ERRORS = [
    (lambda lib: ((lib.randn(2, 4, 8), lib.randn(2, 5, 8), lib.randn(2, 5, 8, dtype=lib.float64)), {})),
    (lambda lib: ((lib.randn(8), lib.randn(8), lib.randn(8)), {})),
    (lambda lib: ((lib.randn(2, 4, 8), lib.randn(2, 5, 8), lib.randn(2, 5, 8)),
                  {"attn_mask": lib.zeros(4, 5, dtype=lib.int64)})),
    (lambda lib: ((lib.randn(2, 4, 8), lib.randn(2, 5, 8), lib.randn(2, 5, 8)),
                  {"attn_mask": lib.zeros(4, 5, dtype=lib.float64)})),
    (lambda lib: ((lib.randn(2, 4, 8), lib.randn(2, 5, 8), lib.randn(2, 5, 8)),
                  {"attn_mask": lib.zeros(4, 5), "is_causal": True})),
    (lambda lib: ((lib.randn(2, 6, 4, 8), lib.randn(2, 4, 5, 8), lib.randn(2, 4, 5, 8)), {"enable_gqa": True})),
    (lambda lib: ((lib.randn(6, 4, 8), lib.randn(3, 5, 8), lib.randn(3, 5, 8)), {})),
]


@pytest.mark.parametrize("case", range(len(SDPA_ERRORS)))
def test_sdpa_errors_match_torch(case):
    messages = []
    for lib in (numgrad, torch):
        args, kwargs = SDPA_ERRORS[case](lib)
        with pytest.raises(RuntimeError) as info:
            lib.nn.functional.scaled_dot_product_attention(*args, **kwargs)
        messages.append(str(info.value))
    assert messages[0] == messages[1]


KEY_PADDING = np.array([[0, 1, 0, 0, 0], [0, 0, 0, 0, 1], [0, 0, 0, 0, 0]], bool)
ATTN_MASK = np.array([[0, 0, 1, 0, 0], [0, 0, 0, 0, 0], [1, 0, 0, 0, 1], [0, 0, 0, 1, 0]], bool)
MHA_CASES = {
    "default": ({}, {}),
    "batch_first": ({"batch_first": True}, {}),
    "kdim_vdim": ({"kdim": 5, "vdim": 3}, {}),
    "bias_kv_zero_attn": ({"add_bias_kv": True, "add_zero_attn": True}, {"attn_mask": ATTN_MASK}),
    "no_bias_sdpa": ({"bias": False}, {"need_weights": False}),
    "per_head_weights": ({}, {"average_attn_weights": False}),
    "both_masks": ({}, {"key_padding_mask": KEY_PADDING, "attn_mask": ATTN_MASK}),
    "padding_sdpa": ({}, {"key_padding_mask": KEY_PADDING, "need_weights": False}),
    "float_masks": ({}, {"key_padding_mask": np.where(KEY_PADDING, -np.inf, 0.0).astype(np.float32),
                         "attn_mask": np.where(ATTN_MASK, -np.inf, 0.5).astype(np.float32)}),
    "mask_3d": ({}, {"attn_mask": np.tile(ATTN_MASK, (6, 1, 1))}),
    "causal_hint_sdpa": ({"batch_first": True}, {"attn_mask": np.triu(np.ones((4, 5), bool), 1),
                                                 "is_causal": True, "need_weights": False}),
}


def _mha_inputs(kwargs, dtype, batched=True):
    q = rand(4, 3, 8, seed=1, dtype=dtype)
    k = rand(5, 3, kwargs.get("kdim", 8), seed=2, dtype=dtype)
    v = rand(5, 3, kwargs.get("vdim", 8), seed=3, dtype=dtype)
    if not batched:
        return [x[:, 0] for x in (q, k, v)]
    if kwargs.get("batch_first"):
        return [np.ascontiguousarray(x.transpose(1, 0, 2)) for x in (q, k, v)]
    return [q, k, v]


def _run_mha(lib, module, arrays, call_kwargs):
    tensors = [lib.tensor(a, requires_grad=True) for a in arrays]
    kwargs = {k: lib.tensor(v.astype(arrays[0].dtype) if v.dtype.kind == "f" else v) if isinstance(v, np.ndarray)
              else v for k, v in call_kwargs.items()}
    out, weights = module(*tensors, **kwargs)
    loss = (out * lib.tensor(rand(*out.shape, seed=7, dtype=arrays[0].dtype))).sum()
    if weights is not None:
        loss = loss + (weights * lib.tensor(rand(*weights.shape, seed=8, dtype=arrays[0].dtype))).sum()
    loss.backward()
    return out, weights, [t.grad for t in tensors]


def _compare_modules(ours, theirs, arrays, call_kwargs, tol):
    assert list(ours.state_dict()) == list(theirs.state_dict())
    assert repr(ours) == repr(theirs)
    ours_out, ours_w, ours_g = _run_mha(numgrad, ours, arrays, call_kwargs)
    theirs_out, theirs_w, theirs_g = _run_mha(torch, theirs, arrays, call_kwargs)
    assert_same(ours_out, theirs_out, **tol)
    assert (ours_w is None) == (theirs_w is None)
    if ours_w is not None:
        assert_same(ours_w, theirs_w, **tol)
    for a, b in zip(ours_g, theirs_g):
        assert_same(a, b, **tol)
    compare_grads(ours, theirs, **tol)


def _tolerance(dtype):
    return dict(rtol=1e-4, atol=1e-5) if dtype == np.float32 else dict(rtol=1e-9, atol=1e-11)


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["float32", "float64"])
@pytest.mark.parametrize("name", list(MHA_CASES))
def test_multihead_attention_matches_torch(name, dtype):
    kwargs, call_kwargs = MHA_CASES[name]
    factory = {} if dtype == np.float32 else {"dtype": "float64"}
    ours, theirs = twin(lambda lib: lib.nn.MultiheadAttention(8, 2, **kwargs, **{
        k: getattr(lib, v) for k, v in factory.items()}))
    _compare_modules(ours, theirs, _mha_inputs(kwargs, dtype), call_kwargs, _tolerance(dtype))


def test_multihead_attention_unbatched_matches_torch():
    ours, theirs = twin(lambda lib: lib.nn.MultiheadAttention(8, 4))
    _compare_modules(ours, theirs, _mha_inputs({}, np.float32, batched=False),
                     {"key_padding_mask": KEY_PADDING[0]}, _tolerance(np.float32))


def test_multihead_attention_init_matches_torch_distribution():
    """xavier_uniform in_proj_weight (bound sqrt(6 / (E + 3E))), zero biases, xavier_normal bias_k/bias_v."""
    module = numgrad.nn.MultiheadAttention(64, 4, add_bias_kv=True)
    bound = np.sqrt(6.0 / (64 + 3 * 64))
    weight = module.in_proj_weight.detach().numpy()
    assert np.abs(weight).max() <= bound and np.abs(weight).max() > 0.9 * bound
    assert not module.in_proj_bias.detach().numpy().any() and not module.out_proj.bias.detach().numpy().any()
    assert module.bias_k.shape == (1, 1, 64) and module.bias_k.detach().numpy().std() > 0
    assert [n for n, _ in module.named_parameters()] == [n for n, _ in torch.nn.MultiheadAttention(
        64, 4, add_bias_kv=True).named_parameters()]


def test_multihead_attention_gradcheck():
    module = numgrad.nn.MultiheadAttention(4, 2, add_bias_kv=True).double()
    q, k = (numgrad.tensor(rand(3, 2, 4, seed=s, dtype=np.float64), requires_grad=True) for s in (1, 2))
    mask = numgrad.tensor(KEY_PADDING[:2, :3])
    assert gradcheck(lambda a, b: module(a, b, b, key_padding_mask=mask)[0], (q, k))
    assert gradcheck(lambda a, b: module(a, b, b, need_weights=False)[0], (q, k))


def _error(build, call):
    outcomes = []
    for lib in (numgrad, torch):
        with pytest.raises(Exception) as info:
            call(lib, build(lib))
        outcomes.append((type(info.value), str(info.value)))
    assert outcomes[0] == outcomes[1]


def test_multihead_attention_errors_match_torch():
    _error(lambda lib: None, lambda lib, _: lib.nn.MultiheadAttention(6, 4))
    _error(lambda lib: None, lambda lib, _: lib.nn.MultiheadAttention(0, 4))
    mha = lambda lib: lib.nn.MultiheadAttention(8, 2)  # noqa: E731
    x = rand(4, 3, 8)
    _error(mha, lambda lib, m: m(lib.tensor(x), lib.tensor(x), lib.tensor(x),
                                 attn_mask=lib.zeros(4, 4, dtype=lib.int64)))
    _error(mha, lambda lib, m: m(lib.tensor(x), lib.tensor(x), lib.tensor(x), attn_mask=lib.zeros(3, 4)))
    _error(mha, lambda lib, m: m(lib.tensor(x), lib.tensor(x), lib.tensor(x), attn_mask=lib.zeros(5, 4, 4)))
    _error(mha, lambda lib, m: m(lib.tensor(x), lib.tensor(x), lib.tensor(x), is_causal=True))
    _error(mha, lambda lib, m: m(lib.tensor(x), lib.tensor(x[:, :, :4]), lib.tensor(x)))
    _error(mha, lambda lib, m: m(lib.tensor(x[0]), lib.tensor(x), lib.tensor(x)))
    _error(mha, lambda lib, m: m(lib.tensor(x), lib.tensor(x), lib.tensor(x),
                                 key_padding_mask=lib.zeros(3, 5, dtype=lib.bool)))
    _error(mha, lambda lib, m: m(lib.tensor(x[..., :6]), lib.tensor(x), lib.tensor(x)))


def test_mismatched_mask_types_warn_as_torch():
    messages = []
    for lib in (numgrad, torch):
        module = lib.nn.MultiheadAttention(8, 2)
        x = lib.tensor(rand(4, 3, 8))
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            module(x, x, x, key_padding_mask=lib.zeros(3, 4, dtype=lib.bool), attn_mask=lib.zeros(4, 4))
        messages.append([str(w.message) for w in caught])
    assert messages[0] == messages[1] and messages[0]


ENCODER_CASES = {
    "post_norm": {},
    "pre_norm_gelu": {"norm_first": True, "activation": "gelu"},
    "batch_first": {"batch_first": True},
    "no_bias": {"bias": False},
    "callable_activation": {"activation": lambda lib: lib.nn.functional.tanh},
    "module_activation": {"activation": lambda lib: lib.nn.GELU()},
}


def _layer(lib, kwargs):
    kwargs = {k: v(lib) if callable(v) and k == "activation" and not isinstance(v, str) else v
              for k, v in kwargs.items()}
    return lib.nn.TransformerEncoderLayer(8, 2, dim_feedforward=16, dropout=0.0, **kwargs)


def _run_encoder(lib, module, x, kwargs):
    src = lib.tensor(x, requires_grad=True)
    kwargs = {k: lib.tensor(v) if isinstance(v, np.ndarray) else v for k, v in kwargs.items()}
    out = module(src, **kwargs)
    (out * lib.tensor(rand(*out.shape, seed=4, dtype=x.dtype))).sum().backward()
    return out, src.grad


def _compare_encoder(ours, theirs, x, call_kwargs, tol=None):
    tol = tol or _tolerance(x.dtype.type)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    assert repr(ours) == repr(theirs)
    ours_out, ours_grad = _run_encoder(numgrad, ours, x, call_kwargs)
    theirs_out, theirs_grad = _run_encoder(torch, theirs, x, call_kwargs)
    assert_same(ours_out, theirs_out, **tol)
    assert_same(ours_grad, theirs_grad, **tol)
    compare_grads(ours, theirs, **tol)


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["float32", "float64"])
@pytest.mark.parametrize("name", list(ENCODER_CASES))
def test_transformer_encoder_layer_matches_torch(name, dtype):
    kwargs = ENCODER_CASES[name]
    ours, theirs = twin(lambda lib: _layer(lib, kwargs))
    if dtype == np.float64:
        ours.double()
        theirs.double()
    x = rand(4, 3, 8, seed=2, dtype=dtype)
    if kwargs.get("batch_first"):
        x = np.ascontiguousarray(x.transpose(1, 0, 2))
    _compare_encoder(ours, theirs, x, {"src_key_padding_mask": KEY_PADDING[:, :4]})


def test_transformer_encoder_matches_torch():
    """Two deep-copied layers and a final norm; a causal float mask (detected as causal, as torch does)."""
    def build(lib):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return lib.nn.TransformerEncoder(_layer(lib, {}), 2, norm=lib.nn.LayerNorm(8))
    ours, theirs = twin(build)
    causal = np.triu(np.full((4, 4), -np.inf, np.float32), 1)
    x = rand(4, 3, 8, seed=3)
    _compare_encoder(ours, theirs, x, {"mask": causal})
    ours.zero_grad()
    theirs.zero_grad()
    _compare_encoder(ours, theirs, x, {"mask": causal, "is_causal": True})
    ours.zero_grad()
    theirs.zero_grad()
    _compare_encoder(ours, theirs, x, {"src_key_padding_mask": KEY_PADDING[:, :4]})


def test_transformer_encoder_in_eval_with_dropout_matches_torch():
    def build(lib):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            layer = lib.nn.TransformerEncoderLayer(8, 2, dim_feedforward=16, dropout=0.3, batch_first=True)
            return lib.nn.TransformerEncoder(layer, 2)
    ours, theirs = twin(build)
    ours.eval()
    theirs.eval()
    _compare_encoder(ours, theirs, rand(3, 4, 8, seed=1), {})


def test_transformer_encoder_nested_tensor_warning_matches_torch():
    messages = []
    for lib in (numgrad, torch):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            lib.nn.TransformerEncoder(lib.nn.TransformerEncoderLayer(8, 2), 2)
        messages.append([str(w.message) for w in caught])
    assert messages[0] == messages[1] and messages[0]


def test_transformer_activation_error_matches_torch():
    _error(lambda lib: None, lambda lib, _: lib.nn.TransformerEncoderLayer(8, 2, activation="swish"))


def test_transformer_state_dict_round_trip():
    ours, theirs = twin(lambda lib: _layer(lib, {"norm_first": True}))
    back = {k: v.numpy() for k, v in ours.state_dict().items()}
    reference = to_numgrad_state(theirs)
    assert list(back) == list(reference)
    for key in back:
        np.testing.assert_array_equal(back[key], reference[key])


def test_sdpa_float_mask_gradient_matches_torch():
    """A float mask that requires grad takes torch's composite path: the mask gets a gradient, and the result
    ends in the same node."""
    arrays = [rand(2, 3, 4, 8, seed=1, dtype=np.float64), rand(2, 3, 5, 8, seed=2, dtype=np.float64),
              rand(2, 3, 5, 8, seed=3, dtype=np.float64)]
    results = []
    for lib in (numgrad, torch):
        mask = lib.tensor(rand(3, 4, 5, seed=4, dtype=np.float64), requires_grad=True)
        q, k, v = (lib.tensor(a, requires_grad=True) for a in arrays)
        out = lib.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=mask)
        (out * lib.tensor(rand(*out.shape, seed=5, dtype=np.float64))).sum().backward()
        results.append((out, mask.grad, q.grad, type(out.grad_fn).__name__))
    for a, b in zip(results[0][:3], results[1][:3]):
        assert_same(a, b, rtol=1e-10, atol=1e-12)
    assert results[0][3] == results[1][3]

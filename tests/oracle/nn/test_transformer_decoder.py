"""nn.TransformerDecoderLayer, nn.TransformerDecoder and nn.Transformer against torch: parameter names and order (state
dicts load across), outputs and gradients with torch's weights copied (dropout 0), masks, norm_first, batch_first,
errors and the causal mask."""
import warnings

import numpy as np
import pytest
import torch

import numgrad
from numgrad.testing import copy_state_from_torch
from helpers.compare_core import rand


def _pair(make):
    """The same module in both libraries, numgrad's holding torch's weights."""
    torch.manual_seed(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs, ours = make(torch), make(numgrad)
    assert [(k, tuple(v.shape)) for k, v in ours.state_dict().items()] == \
        [(k, tuple(v.shape)) for k, v in theirs.state_dict().items()]
    copy_state_from_torch(ours, theirs)
    return ours, theirs


def _run(module, lib, arrays, **kw):
    leaves = [lib.tensor(a, requires_grad=True) for a in arrays]
    out = module(*leaves, **kw)
    out.backward(lib.tensor(rand(*out.shape, seed=9, dtype=arrays[0].dtype)))
    return out, leaves


def _same(ours, theirs, arrays, masks=None, rtol=1e-5, atol=1e-5):
    masks = masks or {}
    out, leaves = _run(ours, numgrad, arrays, **{k: numgrad.tensor(v) for k, v in masks.items()})
    ref, ref_leaves = _run(theirs, torch, arrays, **{k: torch.tensor(v) for k, v in masks.items()})
    assert type(out.grad_fn).__name__ == type(ref.grad_fn).__name__
    np.testing.assert_allclose(out.detach().numpy(), ref.detach().numpy(), rtol=rtol, atol=atol)
    for a, b in zip(leaves, ref_leaves):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=rtol, atol=atol)
    ours_grads = dict(ours.named_parameters())
    for name, p in theirs.named_parameters():
        np.testing.assert_allclose(ours_grads[name].grad.numpy(), p.grad.numpy(), rtol=rtol, atol=atol, err_msg=name)


@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("activation", ["relu", "gelu"])
def test_decoder_layer(norm_first, batch_first, activation):
    ours, theirs = _pair(lambda L: L.nn.TransformerDecoderLayer(8, 2, 16, dropout=0.0, activation=activation,
                                                                batch_first=batch_first, norm_first=norm_first))
    shape_t, shape_m = ((2, 3, 8), (2, 4, 8)) if batch_first else ((3, 2, 8), (4, 2, 8))
    _same(ours, theirs, [rand(*shape_t), rand(*shape_m, seed=1)])


def test_decoder_layer_masks_and_unbatched():
    ours, theirs = _pair(lambda L: L.nn.TransformerDecoderLayer(8, 2, 16, dropout=0.0))
    causal = np.triu(np.full((3, 3), -np.inf, np.float32), 1)
    padding = np.array([[False, False, True, False], [False, True, False, False]])
    _same(ours, theirs, [rand(3, 2, 8), rand(4, 2, 8, seed=1)],
          {"tgt_mask": causal, "memory_key_padding_mask": padding})
    _same(ours, theirs, [rand(3, 8), rand(4, 8, seed=1)], {"tgt_mask": causal})


def test_decoder_stack_and_eval_mode():
    def make(L):
        return L.nn.TransformerDecoder(L.nn.TransformerDecoderLayer(8, 2, 16, dropout=0.3), 2, L.nn.LayerNorm(8))
    ours, theirs = _pair(make)
    ours.eval(), theirs.eval()
    causal = np.triu(np.full((3, 3), -np.inf, np.float32), 1)
    _same(ours, theirs, [rand(3, 2, 8), rand(4, 2, 8, seed=1)], {"tgt_mask": causal})
    assert repr(ours) == repr(theirs)


@pytest.mark.parametrize("batch_first", [False, True])
def test_transformer(batch_first):
    ours, theirs = _pair(lambda L: L.nn.Transformer(8, 2, 2, 2, 16, dropout=0.0, batch_first=batch_first))
    src, tgt = ((2, 5, 8), (2, 3, 8)) if batch_first else ((5, 2, 8), (3, 2, 8))
    mask = np.asarray(numgrad.nn.Transformer.generate_square_subsequent_mask(3).numpy())
    np.testing.assert_array_equal(mask, torch.nn.Transformer.generate_square_subsequent_mask(3).numpy())
    _same(ours, theirs, [rand(*src), rand(*tgt, seed=1)], {"tgt_mask": mask}, rtol=1e-4, atol=1e-4)
    assert repr(ours) == repr(theirs)


def test_transformer_float64_and_init_and_errors():
    ours, theirs = _pair(lambda L: L.nn.Transformer(8, 2, 1, 1, 16, dropout=0.0, dtype=L.float64))
    _same(ours, theirs, [rand(4, 2, 8, dtype=np.float64), rand(3, 2, 8, seed=1, dtype=np.float64)], rtol=1e-10,
          atol=1e-10)
    # xavier_uniform_ for every matrix: bounds sqrt(6 / (fan_in + fan_out)), biases and norms untouched
    with pytest.warns(UserWarning, match="enable_nested_tensor is True"):
        fresh = numgrad.nn.Transformer(8, 2, 1, 1, 16)
    w = fresh.encoder.layers[0].linear1.weight.detach().numpy()
    assert np.abs(w).max() <= np.sqrt(6 / 24) and np.abs(w).max() > 0.5 * np.sqrt(6 / 24)
    assert (fresh.decoder.norm.weight.detach().numpy() == 1).all()
    for lib in (torch, numgrad):
        m = _pair(lambda L: L.nn.Transformer(8, 2, 1, 1, 16))[0 if lib is numgrad else 1]
        for args, msg in (((lib.zeros(4, 2, 8), lib.zeros(3, 3, 8)), "the batch number of src and tgt must be equal"),
                          ((lib.zeros(4, 2, 8), lib.zeros(3, 2, 6)),
                           "the feature number of src and tgt must be equal to d_model")):
            with pytest.raises(RuntimeError, match=msg):
                m(*args)
    assert numgrad.nn.Transformer.generate_square_subsequent_mask(2, dtype=numgrad.float64).dtype == numgrad.float64

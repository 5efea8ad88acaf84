"""Every layer against torch with torch's initial weights: outputs, grad_fn names, input and parameter
gradients; float64 finite-difference checks of the new differentiable ops; init distributions."""
import math

import numpy as np
import pytest
import torch

import numgrad
from numgrad.testing import gradcheck, gradgradcheck
from helpers.nn_compare import assert_same, grad_fn_name, rand, run_module, twin

LAYERS = {
    "linear": (lambda nn: nn.Linear(5, 4), (3, 5)),
    "linear_3d": (lambda nn: nn.Linear(5, 4), (2, 3, 5)),
    "linear_1d": (lambda nn: nn.Linear(5, 4), (5,)),
    "linear_no_bias": (lambda nn: nn.Linear(5, 4, bias=False), (3, 5)),
    "relu": (lambda nn: nn.ReLU(), (3, 5)),
    "gelu": (lambda nn: nn.GELU(), (3, 5)),
    "gelu_tanh": (lambda nn: nn.GELU("tanh"), (3, 5)),
    "tanh": (lambda nn: nn.Tanh(), (3, 5)),
    "sigmoid": (lambda nn: nn.Sigmoid(), (3, 5)),
    "softmax": (lambda nn: nn.Softmax(dim=1), (3, 5)),
    "log_softmax": (lambda nn: nn.LogSoftmax(dim=-1), (2, 3, 5)),
    "flatten": (lambda nn: nn.Flatten(), (2, 3, 4)),
    "flatten_dims": (lambda nn: nn.Flatten(0, 1), (2, 3, 4)),
    "identity": (lambda nn: nn.Identity(), (3, 5)),
    "layer_norm": (lambda nn: nn.LayerNorm(5), (3, 5)),
    "layer_norm_2d_shape": (lambda nn: nn.LayerNorm([3, 4]), (2, 3, 4)),
    "layer_norm_no_affine": (lambda nn: nn.LayerNorm(4, elementwise_affine=False), (3, 4)),
    "batch_norm_1d": (lambda nn: nn.BatchNorm1d(5), (6, 5)),
    "batch_norm_1d_3d": (lambda nn: nn.BatchNorm1d(3), (4, 3, 5)),
    "batch_norm_2d": (lambda nn: nn.BatchNorm2d(3), (2, 3, 4, 4)),
    "batch_norm_no_affine": (lambda nn: nn.BatchNorm1d(5, affine=False), (6, 5)),
    "conv2d": (lambda nn: nn.Conv2d(2, 3, 3), (2, 2, 7, 6)),
    "conv2d_stride_pad": (lambda nn: nn.Conv2d(2, 4, (3, 2), stride=2, padding=1), (2, 2, 7, 8)),
    "conv2d_dilation": (lambda nn: nn.Conv2d(1, 2, 3, dilation=2, padding=2, bias=False), (2, 1, 8, 8)),
    "conv2d_groups": (lambda nn: nn.Conv2d(4, 6, 3, groups=2, padding=1), (2, 4, 5, 5)),
    "conv2d_same": (lambda nn: nn.Conv2d(2, 3, 3, padding="same"), (1, 2, 5, 6)),
    "conv2d_unbatched": (lambda nn: nn.Conv2d(2, 3, 3), (2, 5, 5)),
    "max_pool": (lambda nn: nn.MaxPool2d(2), (2, 3, 6, 6)),
    "max_pool_odd": (lambda nn: nn.MaxPool2d(2), (1, 2, 7, 5)),
    "max_pool_overlap_pad": (lambda nn: nn.MaxPool2d(3, stride=2, padding=1), (2, 2, 7, 7)),
    "max_pool_ceil": (lambda nn: nn.MaxPool2d(2, ceil_mode=True), (1, 2, 5, 7)),
    "max_pool_dilation": (lambda nn: nn.MaxPool2d(2, stride=1, dilation=2), (1, 1, 6, 6)),
    "max_pool_unbatched": (lambda nn: nn.MaxPool2d(2), (3, 4, 4)),
}


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["float32", "float64"])
@pytest.mark.parametrize("name", list(LAYERS))
def test_layer_matches_torch(name, dtype):
    make, shape = LAYERS[name]
    ours, theirs = twin(lambda lib: make(lib.nn))
    if dtype == np.float64:
        ours.double()
        theirs.double()
    tol = dict(rtol=1e-4, atol=1e-5) if dtype == np.float32 else dict(rtol=1e-10, atol=1e-12)
    run_module(ours, theirs, rand(*shape, dtype=dtype), **tol)


def test_embedding_matches_torch():
    idx = np.array([[0, 2, 4], [2, 2, 1]])
    for kwargs in ({}, {"padding_idx": 2}, {"scale_grad_by_freq": True}):
        ours, theirs = twin(lambda lib: lib.nn.Embedding(5, 3, **kwargs))
        out, _ = run_module(ours, theirs, idx, input_grad=False)
        assert grad_fn_name(out) == "EmbeddingBackward0"


@pytest.mark.parametrize("width, idx", [(0, [[1, 1, 4]]), (3, [[]]), (0, [[]])], ids=["no-width", "no-index", "neither"])
def test_embedding_gradient_of_empty_shapes_matches_torch(width, idx):
    grads = []
    for lib in (numgrad, torch):
        emb = lib.nn.Embedding(5, width)
        emb(lib.tensor(idx, dtype=lib.int64)).sum().backward()
        grads.append(emb.weight.grad.numpy())
    assert grads[0].shape == grads[1].shape and grads[0].dtype == grads[1].dtype
    np.testing.assert_array_equal(*grads)


def test_embedding_errors_and_max_norm():
    ours, theirs = twin(lambda lib: lib.nn.Embedding(5, 3))
    for lib, m in ((numgrad, ours), (torch, theirs)):
        with pytest.raises(IndexError, match="index out of range in self"):
            m(lib.tensor([5]))
        with pytest.raises(RuntimeError, match="Expected tensor for argument #1 'indices'"):
            m(lib.tensor([1.0]))
    ours, theirs = twin(lambda lib: lib.nn.Embedding(5, 3, max_norm=0.5))
    idx = np.array([1, 3])
    with torch.no_grad():
        expected = theirs(torch.tensor(idx))
    np.testing.assert_allclose(ours(numgrad.tensor(idx)).detach().numpy(), expected.numpy(), rtol=1e-5)
    np.testing.assert_allclose(ours.weight.detach().numpy(), theirs.weight.detach().numpy(), rtol=1e-5)


def test_linear_wrong_input_size_message():
    ours, theirs = twin(lambda lib: lib.nn.Linear(4, 3))
    for lib, m in ((numgrad, ours), (torch, theirs)):
        with pytest.raises(RuntimeError, match=r"^mat1 and mat2 shapes cannot be multiplied \(2x5 and 4x3\)$"):
            m(lib.ones(2, 5))
        with pytest.raises(RuntimeError, match=r"mat1 and mat2 shapes cannot be multiplied \(6x5 and 4x3\)"):
            m(lib.ones(2, 3, 5))
    with pytest.raises(RuntimeError) as theirs_err:
        theirs(torch.ones(2, 4, dtype=torch.float64))
    with pytest.raises(RuntimeError) as ours_err:
        ours(numgrad.ones(2, 4, dtype=numgrad.float64))
    assert str(ours_err.value) == str(theirs_err.value)


def test_conv_and_pool_errors_match_torch():
    for lib in (numgrad, torch):
        conv = lib.nn.Conv2d(3, 2, 3)
        with pytest.raises(RuntimeError, match="expected input.*to have 3 channels, but got 2 channels instead"):
            conv(lib.ones(1, 2, 5, 5))
        with pytest.raises(RuntimeError, match="Kernel size can't be greater than actual input size"):
            conv(lib.ones(1, 3, 2, 2))
        with pytest.raises(RuntimeError, match="pad should be at most half of effective kernel size"):
            lib.nn.functional.max_pool2d(lib.ones(1, 1, 4, 4), 2, padding=2)
        with pytest.raises(ValueError, match="in_channels must be divisible by groups"):
            lib.nn.Conv2d(3, 2, 3, groups=2)


def test_max_pool_return_indices_match_torch():
    x = rand(2, 3, 7, 7)
    ours = numgrad.nn.functional.max_pool2d(numgrad.tensor(x), 3, 2, 1, return_indices=True)
    theirs = torch.nn.functional.max_pool2d(torch.tensor(x), 3, 2, 1, return_indices=True)
    assert_same(ours[0], theirs[0])
    assert ours[1].dtype == numgrad.int64 and ours[1].tolist() == theirs[1].tolist()


def test_max_pool_ties_take_the_first_maximum():
    x = np.zeros((1, 1, 4, 4), np.float32)
    for lib in (numgrad, torch):
        t = lib.tensor(x, requires_grad=True)
        lib.nn.functional.max_pool2d(t, 2).sum().backward()
        if lib is numgrad:
            ours = t.grad.numpy().copy()
        else:
            np.testing.assert_array_equal(ours, t.grad.numpy())


def test_batch_norm_running_statistics_train_and_eval():
    ours, theirs = twin(lambda lib: lib.nn.BatchNorm1d(4))
    for step in range(3):
        run_module(ours, theirs, rand(8, 4, seed=step) * 3 + 1, rtol=1e-5, atol=1e-5)
    for key in ("running_mean", "running_var", "num_batches_tracked"):
        assert_same(getattr(ours, key), getattr(theirs, key), rtol=1e-5, atol=1e-6)
    ours.eval()
    theirs.eval()
    run_module(ours, theirs, rand(5, 4, seed=9), rtol=1e-5, atol=1e-5)
    assert ours.num_batches_tracked.item() == 3  # eval does not count or update
    assert_same(ours.running_mean, theirs.running_mean)


def test_batch_norm_cumulative_average_and_untracked():
    for kwargs in ({"momentum": None}, {"track_running_stats": False}):
        ours, theirs = twin(lambda lib: lib.nn.BatchNorm2d(2, **kwargs))
        for step in range(3):
            run_module(ours, theirs, rand(3, 2, 3, 3, seed=step), rtol=1e-5, atol=1e-5)
        ours.eval()
        theirs.eval()
        run_module(ours, theirs, rand(3, 2, 3, 3, seed=7), rtol=1e-5, atol=1e-5)
        if "momentum" in kwargs:
            assert_same(ours.running_var, theirs.running_var)


def test_batch_norm_needs_more_than_one_value_per_channel():
    for lib in (numgrad, torch):
        with pytest.raises(ValueError, match="Expected more than 1 value per channel when training"):
            lib.nn.BatchNorm1d(3)(lib.ones(1, 3))
        with pytest.raises(ValueError, match=r"expected 2D or 3D input \(got 4D input\)"):
            lib.nn.BatchNorm1d(3)(lib.ones(1, 3, 2, 2))


def test_layer_norm_shape_error_matches_torch():
    messages = []
    for lib in (numgrad, torch):
        with pytest.raises(RuntimeError) as info:
            lib.nn.LayerNorm(5)(lib.ones(3, 4))
        messages.append(str(info.value))
    assert messages[0] == messages[1]


def test_dropout_train_and_eval():
    numgrad.manual_seed(0)
    x = numgrad.tensor(rand(200, 50) + 5, requires_grad=True)
    drop = numgrad.nn.Dropout(0.3)
    y = drop(x)
    assert grad_fn_name(y) == "MulBackward0"
    kept = y.detach().numpy() != 0
    assert 0.65 < kept.mean() < 0.75
    np.testing.assert_allclose(y.detach().numpy()[kept], x.detach().numpy()[kept] / 0.7, rtol=1e-6)
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), kept / np.float32(0.7), rtol=1e-6)
    drop.eval()
    assert drop(x) is x  # the identity, as torch returns its input
    assert numgrad.nn.functional.dropout(x, 1.0).abs().sum().item() == 0
    for lib in (numgrad, torch):
        with pytest.raises(ValueError, match="dropout probability has to be between 0 and 1, but got 1.5"):
            lib.nn.Dropout(1.5)


def test_softmax_without_dim_warns_like_torch():
    for lib in (numgrad, torch):
        with pytest.warns(UserWarning, match="Implicit dimension choice for softmax has been deprecated"):
            out = lib.nn.Softmax()(lib.ones(2, 3))
        assert out.shape == (2, 3) and abs(out.sum().item() - 2) < 1e-6


# ---- float64 finite-difference checks of the new differentiable ops ---------------------------------

def _f64(*shape, seed=0):
    return numgrad.tensor(rand(*shape, seed=seed, dtype=np.float64), requires_grad=True)


F = numgrad.nn.functional


@pytest.mark.parametrize("case", [
    lambda: (lambda x, w, b: F.conv2d(x, w, b, stride=2, padding=1), (_f64(2, 2, 5, 5), _f64(3, 2, 3, 3, seed=1),
                                                                       _f64(3, seed=2))),
    lambda: (lambda x, w: F.conv2d(x, w, groups=2, dilation=(1, 2)), (_f64(1, 4, 5, 6), _f64(2, 2, 2, 2, seed=1))),
    lambda: (lambda x: F.max_pool2d(x, 3, 2, 1), (_f64(1, 2, 6, 6),)),
    lambda: (lambda x: F.max_pool2d(x, 2), (_f64(2, 1, 4, 4),)),
    lambda: (lambda x, w, b: F.linear(x, w, b), (_f64(3, 4), _f64(2, 4, seed=1), _f64(2, seed=2))),
    lambda: (lambda x, w, b: F.batch_norm(x, None, None, w, b, training=True), (_f64(5, 3), _f64(3, seed=1),
                                                                              _f64(3, seed=2))),
    lambda: (lambda x, w, b: F.layer_norm(x, (4,), w, b), (_f64(3, 4), _f64(4, seed=1), _f64(4, seed=2))),
    lambda: (lambda w: F.embedding(numgrad.tensor([[1, 0], [1, 3]]), w), (_f64(4, 3),)),
], ids=["conv", "conv_groups", "max_pool_overlap", "max_pool", "linear", "batch_norm", "layer_norm", "embedding"])
def test_gradcheck_and_gradgradcheck(case):
    fn, inputs = case()
    assert gradcheck(fn, inputs)
    assert gradgradcheck(fn, inputs)


def test_double_backward_of_conv_matches_torch():
    x, w = rand(1, 2, 5, 5, dtype=np.float64), rand(3, 2, 3, 3, seed=1, dtype=np.float64)
    results = []
    for lib in (numgrad, torch):
        xt, wt = lib.tensor(x, requires_grad=True), lib.tensor(w, requires_grad=True)
        out = lib.nn.functional.conv2d(xt, wt, padding=1)
        (gx,) = lib.autograd.grad((out ** 2).sum(), xt, create_graph=True)
        gx.pow(2).sum().backward()
        results.append((gx.detach().numpy(), xt.grad.numpy(), wt.grad.numpy()))
    for a, b in zip(*results):
        np.testing.assert_allclose(a, b, rtol=1e-10)


# ---- init ---------------------------------------------------------------------------------------

def test_default_init_bounds_match_torch_formulas():
    numgrad.manual_seed(0)
    lin = numgrad.nn.Linear(400, 300)
    bound = 1 / math.sqrt(400)
    for p in (lin.weight, lin.bias):
        assert np.abs(p.detach().numpy()).max() <= bound
    assert np.abs(lin.weight.detach().numpy()).max() > 0.98 * bound
    assert abs(lin.weight.detach().numpy().std() - bound / math.sqrt(3)) < 0.01 * bound
    conv = numgrad.nn.Conv2d(4, 8, 3)
    assert np.abs(conv.weight.detach().numpy()).max() <= 1 / math.sqrt(36)
    emb = numgrad.nn.Embedding(1000, 50, padding_idx=3)
    assert abs(emb.weight.detach().numpy().std() - 1) < 0.02 and emb.weight[3].abs().sum().item() == 0


def test_init_functions_match_torch_statistics():
    init = numgrad.nn.init
    numgrad.manual_seed(1)
    w = numgrad.empty(256, 512)
    assert init.kaiming_uniform_(w, nonlinearity="relu") is w
    assert abs(w.numpy().std() - math.sqrt(2 / 512)) < 0.02 * math.sqrt(2 / 512)
    init.kaiming_normal_(w, mode="fan_out")
    assert abs(w.numpy().std() - math.sqrt(2 / (1 + 0.01 ** 2)) / math.sqrt(256)) < 0.003
    init.xavier_uniform_(w, gain=init.calculate_gain("tanh"))
    a = 5 / 3 * math.sqrt(6 / (256 + 512))
    assert np.abs(w.numpy()).max() <= a and np.abs(w.numpy()).max() > 0.99 * a
    init.xavier_normal_(w)
    assert abs(w.numpy().std() - math.sqrt(2 / 768)) < 0.002
    init.trunc_normal_(w, std=1.0, a=-0.5, b=0.5)
    assert np.abs(w.numpy()).max() <= 0.5
    assert init.constant_(w, 0.25).numpy().max() == 0.25 and init.zeros_(w).numpy().max() == 0
    assert init.ones_(w).numpy().min() == 1 and init.eye_(numgrad.empty(2, 3)).tolist() == [[1, 0, 0], [0, 1, 0]]
    for nonlinearity, param in (("linear", None), ("relu", None), ("leaky_relu", 0.2), ("tanh", None),
                                ("selu", None), ("conv2d", None)):
        assert init.calculate_gain(nonlinearity, param) == torch.nn.init.calculate_gain(nonlinearity, param)
    t4 = numgrad.empty(8, 3, 5, 5)
    assert init._calculate_fan_in_and_fan_out(t4) == torch.nn.init._calculate_fan_in_and_fan_out(torch.empty(8, 3, 5, 5))
    with pytest.raises(ValueError, match="Fan in and fan out can not be computed for tensor with fewer than 2 dimensions"):
        init.xavier_uniform_(numgrad.empty(3))


def test_init_leaves_autograd_state_alone():
    p = numgrad.nn.Parameter(numgrad.zeros(3, 3))
    v = p._version
    numgrad.nn.init.normal_(p)
    assert p.is_leaf and p.requires_grad and p.grad_fn is None and p._version == v + 1


def test_compare_with_torch_accepts_modules_via_functional_forms():
    """numgrad.testing.compare_with_torch runs a function that uses nn on both libraries."""
    w, b = rand(3, 4, seed=1), rand(3, seed=2)
    numgrad.testing.compare_with_torch(
        lambda lib, x, w, b: lib.nn.functional.gelu(lib.nn.functional.linear(x, w, b)), rand(2, 4), w, b,
        check_grad_fn=True, rtol=1e-5, atol=1e-6)

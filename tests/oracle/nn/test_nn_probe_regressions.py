"""Regressions found by the random nn.functional probe, one test per root cause, each against torch with
numgrad's fusion on and off."""
import pytest
import torch

import numgrad
from helpers.outcomes import outcome


def F(L):
    return L.nn.functional


def _with_grads(fn, *values, dtype=None):
    """fn over float leaves made from `values`; the result, then each leaf's gradient of its sum."""
    def run(L):
        xs = [L.tensor(v, dtype=dtype or L.float32, requires_grad=True) for v in values]
        out = fn(L, *xs)
        out.sum().backward()
        return (out.detach(),) + tuple(x.grad for x in xs)
    return run


def _same_as_torch(cases, name):
    for fusion in (True, False):
        with numgrad.fusion(fusion):
            got = outcome(cases[name], numgrad)
        assert got == outcome(cases[name], torch), (name, fusion)


LINEAR = {
    "(3, 1, 0) input, (0, 0) weight": _with_grads(lambda L, x, w, b: F(L).linear(x, w, b),
                                                  [[[]]] * 3, [], []),
    "(0, 3, 1) input": _with_grads(lambda L, x, w, b: F(L).linear(x, w, b), [[[1.0]] * 3][:0], [[1.0]] * 2,
                                   [1.0, 2.0]),
    "(2, 2, 0) input, (3, 0) weight": _with_grads(lambda L, x, w, b: F(L).linear(x, w, b), [[[], []]] * 2,
                                                  [[], [], []], [1.0, 2.0, 3.0]),
    "int (0, 3, 1) input": lambda L: F(L).linear(L.zeros(0, 3, 1, dtype=L.int64), L.ones(2, 1, dtype=L.int64),
                                                 L.ones(2, dtype=L.int64)),
    "1-d input, (1, 2) bias folds as torch's addmm": _with_grads(lambda L, x, b: F(L).linear(x, L.ones(2, 3), b),
                                                                [1.0, 2.0, 3.0], [[1.0, 2.0]]),
    "1-d input, (2, 1) bias": lambda L: F(L).linear(L.ones(3), L.ones(2, 3), L.ones(2, 1)),
    "bias of another dtype than the weight": lambda L: F(L).linear(L.ones(2, 3), L.ones(2, 3),
                                                                   L.ones(2, dtype=L.float64)),
    "1-d weight with a bias": lambda L: F(L).linear(L.ones(2, 3), L.ones(3), L.ones(2)),
    "3-d weight with a bias": lambda L: F(L).linear(L.ones(2, 3), L.ones(2, 2, 3), L.ones(2)),
    "0-d input": lambda L: F(L).linear(L.ones(()), L.ones(2, 3)),
}


@pytest.mark.parametrize("case", sorted(LINEAR))
def test_linear_folds_leading_dims_by_their_product_and_checks_as_addmm(case):
    """linear folded an input's leading dims with reshape(-1, k), which fails for k = 0 (torch multiplies the
    sizes out and computes an empty result and its gradients); a bias with one non-unit dim takes torch's
    addmm path for every rank (not an in-place add); addmm's dtype and rank checks come in its order."""
    _same_as_torch(LINEAR, case)


LAYER_NORM = {
    "int64 input": lambda L: F(L).layer_norm(L.ones(2, 3, dtype=L.int64), (3,)),
    "int64 input, empty": lambda L: F(L).layer_norm(L.ones(0, 3, dtype=L.int64), (3,)),
    "int64 input, wrong normalized_shape (the shape first)": lambda L: F(L).layer_norm(L.ones(2, 3, dtype=L.int64),
                                                                                       (4,)),
    "bool input": lambda L: F(L).layer_norm(L.ones(2, 3, dtype=L.bool), (3,)),
    "float64 input, float32 weight (mixed, before the shapes)": lambda L: F(L).layer_norm(
        L.ones(2, 3, dtype=L.float64), (4,), L.ones(3)),
    "int64 weight": lambda L: F(L).layer_norm(L.ones(2, 3), (3,), L.ones(3, dtype=L.int64)),
    "bias of another dtype than the weight": lambda L: F(L).layer_norm(L.ones(2, 3), (3,), L.ones(3),
                                                                       L.ones(3, dtype=L.float64)),
    "empty normalized shape": lambda L: F(L).layer_norm(L.ones(2, 0), (0,)),
}


@pytest.mark.parametrize("case", sorted(LAYER_NORM))
def test_layer_norm_checks_dtypes_as_torch(case):
    """layer_norm computed on integer inputs (torch: NotImplementedError from LayerNormKernelImpl) and on
    parameters of other dtypes (torch: its 'mixed dtype (CPU)' checks first, then the shapes, then the kernel's
    dispatch and its reads of the parameters as the input's type)."""
    _same_as_torch(LAYER_NORM, case)


def _batch_norm_and_stats(x, training, weight=None, bias=None, stats_dtype=None):
    """batch_norm's outcome with the running statistics afterwards (an error does not hide whether they moved)."""
    def run(L):
        dtype = {"dtype": getattr(L, stats_dtype)} if stats_dtype else {}
        mean, var = L.zeros(x.shape[1], **dtype), L.ones(x.shape[1], **dtype)
        try:
            out = F(L).batch_norm(L.tensor(x), mean, var, weight and L.tensor(weight), bias and L.tensor(bias),
                                  training)
        except Exception as e:  # noqa: BLE001 - the type and message are what is compared
            out = (type(e).__name__, str(e))
        return out, mean, var
    return run


BATCH_NORM = {
    "int64 input, eval": _batch_norm_and_stats(torch.ones(2, 3, dtype=torch.int64).numpy(), False),
    "int64 input, training (statistics untouched)": _batch_norm_and_stats(
        torch.ones(2, 3, 2, dtype=torch.int64).numpy(), True),
    "int64 input, one value per channel (the batch size first)": _batch_norm_and_stats(
        torch.ones(1, 3, dtype=torch.int64).numpy(), True),
    "training, float64 statistics (untouched)": _batch_norm_and_stats(
        torch.arange(6.0).view(2, 3).numpy(), True, stats_dtype="float64"),
    "eval, float64 statistics": _batch_norm_and_stats(
        torch.arange(6.0).view(2, 3).numpy(), False, stats_dtype="float64"),
    "empty input takes torch's copy path": lambda L: F(L).batch_norm(L.ones(0, 3, dtype=L.int64), None, None,
                                                                       L.full((2,), 2.0), None, True),
    "empty input, empty weight": lambda L: F(L).batch_norm(L.ones(0, 3), None, None, L.ones(0), None, True),
    "1-d input, training": lambda L: F(L).batch_norm(L.ones(3), None, None, None, None, True),
    "1-d input, eval, int64": lambda L: F(L).batch_norm(L.ones(3, dtype=L.int64), L.ones(0), L.ones(0)),
    "1-d input, eval, statistics per channel": lambda L: F(L).batch_norm(L.ones(3), L.ones(3), L.ones(3)),
    "0-d input, training": lambda L: F(L).batch_norm(L.ones(()), None, None, None, None, True),
}


@pytest.mark.parametrize("case", sorted(BATCH_NORM))
def test_batch_norm_checks_in_torchs_order(case):
    """batch_norm computed on integer inputs and on parameters of other dtypes, and refused 1-d and empty inputs
    with its own ValueError; torch checks the batch size (training), takes an empty input through a copy,
    checks each tensor's length against size(1) (0 below rank 2), then its kernel's dtypes, leaving the running
    statistics untouched when it refuses the input's dtype."""
    _same_as_torch(BATCH_NORM, case)


def test_batch_norm_training_updates_statistics_before_reading_a_bias_of_another_dtype():
    """torch's training kernel updates the running statistics, then fails reading a float64 bias of a float32
    input; numgrad's checks were missing (it computed)."""
    def run(L):
        mean, var = L.zeros(3), L.ones(3)
        try:
            F(L).batch_norm(L.arange(6.0).view(2, 3), mean, var, L.ones(3), L.ones(3, dtype=L.float64), True)
        except RuntimeError as e:
            return str(e), mean, var
    _same_as_torch({"case": run}, "case")


def test_batch_norm_applies_torchs_alpha_beta_form():
    """numgrad computed (x - mean) * invstd * weight, torch x * alpha + beta with alpha = invstd * weight and
    beta = bias - mean * alpha: with an infinite weight the two give different infinities and NaNs."""
    _same_as_torch({"case": lambda L: F(L).batch_norm(L.tensor([[-0.25, 1.0], [0.75, -1.0]]), L.zeros(2), L.ones(2),
                                                       L.tensor([-float("inf"), 1.0]), None, True)}, "case")


NLL = {
    "int64 input": lambda L: F(L).nll_loss(L.ones(2, 3, dtype=L.int64), L.tensor([0, 1])),
    "int64 input, target out of bounds (the dtype first)": lambda L: F(L).nll_loss(L.ones(2, 3, dtype=L.int64),
                                                                                   L.tensor([-1, 1])),
    "int64 input, empty batch": lambda L: F(L).nll_loss(L.ones(0, 3, dtype=L.int64), L.zeros(0, dtype=L.int64)),
    "int64 spatial input": lambda L: F(L).nll_loss(L.ones(2, 3, 2, dtype=L.int64), L.zeros(2, 2, dtype=L.int64)),
    "cross_entropy, int64 empty batch": lambda L: F(L).cross_entropy(L.ones(0, 3, dtype=L.int64),
                                                                     L.zeros(0, dtype=L.int64), reduction="sum"),
    "0-d input": lambda L: F(L).nll_loss(L.ones(()), L.tensor(0)),
    "1-d input, two targets": lambda L: F(L).nll_loss(L.ones(3), L.tensor([0, 1])),
    "1-d input, unreduced, is 0-d": lambda L: F(L).nll_loss(L.ones(3), L.tensor([1]), reduction="none"),
    "weight of another dtype": lambda L: F(L).nll_loss(L.ones(2, 3), L.tensor([0, 1]), L.ones(3, dtype=L.int64)),
    "float target, spatial": lambda L: F(L).nll_loss(L.ones(2, 3, 2, 2), L.zeros(2, 2, 2)),
    "3-d input, target of the wrong size": lambda L: F(L).nll_loss(L.ones(2, 3, 2), L.zeros(2, dtype=L.int64)),
    "ignored targets give +0.0": lambda L: F(L).nll_loss(L.zeros(2, 3), L.tensor([0, 1]), ignore_index=0,
                                                         reduction="none"),
    "cross_entropy, 0-d input": lambda L: F(L).cross_entropy(L.ones(()), L.tensor(0)),
    "cross_entropy, int64 probabilities": lambda L: F(L).cross_entropy(L.ones(2, 3), L.ones(2, 3, dtype=L.int64)),
    "cross_entropy, probabilities and ignore_index": lambda L: F(L).cross_entropy(L.ones(2, 3), L.ones(2, 3),
                                                                                  ignore_index=0),
    "cross_entropy, negative label_smoothing is ignored": lambda L: F(L).cross_entropy(
        L.tensor([[1.0, 2.0, 0.5]]), L.tensor([1]), label_smoothing=-0.1),
    "cross_entropy, label_smoothing above 1": lambda L: F(L).cross_entropy(L.ones(2, 3), L.ones(2, 3),
                                                                           label_smoothing=1.5),
}


@pytest.mark.parametrize("case", sorted(NLL))
def test_nll_loss_and_cross_entropy_check_in_torchs_order(case):
    """nll_loss computed on integer inputs (torch: NotImplementedError from nll_loss_out_frame, after the
    shape checks and before the targets' bounds) and differed from nll_loss_nd / nll_loss's meta / nll_loss2d
    checks in order and wording; cross_entropy ran log_softmax before its target checks and refused a negative
    label_smoothing (torch ignores it); an unreduced 1-d input gave shape (1,), and ignored targets -0.0."""
    _same_as_torch(NLL, case)


BCE = {
    "int64 input, float target": lambda L: F(L).binary_cross_entropy(L.tensor([0, 1]), L.tensor([0.5, 0.5])),
    "int64 input and target": lambda L: F(L).binary_cross_entropy(L.tensor([0, 1]), L.tensor([0, 1])),
    "float input, int64 target": lambda L: F(L).binary_cross_entropy(L.tensor([0.5, 0.5]), L.tensor([0, 1])),
    "target out of range": lambda L: F(L).binary_cross_entropy(L.tensor([0.5, 0.5]), L.tensor([0.5, 1.5])),
    "target out of range before a later input": lambda L: F(L).binary_cross_entropy(L.tensor([0.5, 2.0]),
                                                                                    L.tensor([-1.0, 0.5])),
    "input out of range before a later target": lambda L: F(L).binary_cross_entropy(L.tensor([2.0, 0.5]),
                                                                                    L.tensor([0.5, -1.0])),
    "NaN target": lambda L: F(L).binary_cross_entropy(L.tensor([0.5]), L.tensor([float("nan")])),
    "saturated input: an infinite target gradient": _with_grads(
        lambda L, x, t: F(L).binary_cross_entropy(x, t), [1.0, 0.0], [0.5, 0.5]),
    "logits, int64 input": lambda L: F(L).binary_cross_entropy_with_logits(L.tensor([0, 1]), L.tensor([0.5, 0.5])),
    "logits, bool input": lambda L: F(L).binary_cross_entropy_with_logits(L.tensor([True]), L.tensor([0.5])),
    "logits, int64 target": lambda L: F(L).binary_cross_entropy_with_logits(L.tensor([0.5]), L.tensor([1])),
    "logits, bool target": lambda L: F(L).binary_cross_entropy_with_logits(L.tensor([0.5]), L.tensor([True])),
    "logits, float64 target: the loss is float64": _with_grads(
        lambda L, x: F(L).binary_cross_entropy_with_logits(x, L.tensor([0.5, 1.0], dtype=L.float64)), [0.3, -2.0]),
}


@pytest.mark.parametrize("case", sorted(BCE))
def test_binary_cross_entropy_checks_dtypes_and_ranges_as_torch(case):
    """binary_cross_entropy checked only the input's range, before any dtype (torch: one dtype for input and
    target, a floating one, then each element's input and target range in order) and clamped the target
    gradient; the logits form computed integer inputs and targets (torch: log_sigmoid's NotImplementedError,
    then the in-place (1 - target).mul_(input) errors) and gave the input's dtype, not the target's."""
    _same_as_torch(BCE, case)


CONV = {
    "dilation 0, batch of 2 (mkldnn)": lambda L: F(L).conv2d(L.ones(2, 2, 3, 3), L.ones(3, 2, 2, 2), dilation=0),
    "dilation 0, groups 2 (mkldnn)": lambda L: F(L).conv2d(L.ones(1, 2, 3, 3), L.ones(2, 1, 1, 1), dilation=0,
                                                           groups=2),
    "dilation 0, one sample (slow path)": lambda L: F(L).conv2d(L.ones(1, 2, 3, 3), L.ones(3, 2, 2, 2), dilation=0),
    "dilation 0, float64 (slow path)": lambda L: F(L).conv2d(L.ones(2, 2, 3, 3, dtype=L.float64),
                                                             L.ones(3, 2, 2, 2, dtype=L.float64), dilation=0),
    "dilation (0, 1), batch of 2": lambda L: F(L).conv2d(L.ones(2, 1, 3, 3), L.ones(1, 1, 2, 1), dilation=(0, 1)),
    "float64 weight, batch of 2 (mkldnn's wording)": lambda L: F(L).conv2d(L.ones(2, 2, 3, 3),
                                                                           L.ones(3, 2, 1, 1, dtype=L.float64)),
    "empty kernel, batch of 2 (oneDNN refuses it)": lambda L: F(L).conv2d(L.ones(2, 2, 3, 3), L.ones(3, 2, 0, 0)),
    "empty rows, padded": lambda L: F(L).conv2d(L.ones(1, 2, 0, 4), L.ones(3, 2, 1, 1), padding=1),
    "Conv2d(dilation=0) forward, batch of 2": lambda L: L.nn.Conv2d(2, 3, 2, dilation=0)(L.ones(2, 2, 3, 3)),
}


@pytest.mark.parametrize("case", sorted(CONV))
def test_conv2d_checks_as_torchs_chosen_backend(case):
    """conv2d worded every non-positive dilation as torch's slow kernel; torch 2.13 sends float32 inputs with a
    batch above 1, several groups, a kernel above 3x3 or many elements to mkldnn, which checks the weight's
    dtype, then 'non-positive dilation is not supported', then oneDNN refuses an empty kernel; an input with no
    elements but a batch and channels is refused."""
    _same_as_torch(CONV, case)


POOL = {
    "bool input": lambda L: F(L).max_pool2d(L.ones(1, 2, 2, dtype=L.bool), 2),
    "int64 input, padded": lambda L: F(L).max_pool2d(L.tensor([[[-5, 3], [1, 2]]]), 2, padding=1),
}


@pytest.mark.parametrize("case", sorted(POOL))
def test_max_pool2d_dtypes_as_torch(case):
    """max_pool2d failed on bool inputs with NumPy's ValueError (torch: its kernel's NotImplementedError after
    the argument checks) and padded integer inputs with a cast of -inf (a RuntimeWarning)."""
    _same_as_torch(POOL, case)


def _params(L):
    return [L.nn.Parameter(L.ones(2))]


OPTIM = {
    "SGD, 2-element tensor lr": lambda L: L.optim.SGD(_params(L), lr=L.tensor([0.1, 0.2])),
    "RMSprop, 2-element tensor lr": lambda L: L.optim.RMSprop(_params(L), lr=L.tensor([0.1, 0.2])),
    "Adam, tensor lr with foreach": lambda L: L.optim.Adam(_params(L), lr=L.tensor(0.1), foreach=True),
    "Adam, an int beta": lambda L: L.optim.Adam(_params(L), betas=(0, 0.9)),
    "Adam, a tensor and a float beta": lambda L: L.optim.Adam(_params(L), betas=(L.tensor(0.9), 0.9)),
    "Adam, fused with foreach": lambda L: L.optim.Adam(_params(L), fused=True, foreach=True),
    "SGD, fused and differentiable": lambda L: L.optim.SGD(_params(L), lr=0.1, fused=True, differentiable=True),
    "SGD over a set": lambda L: L.optim.SGD(set(_params(L)), lr=0.1),
    "add_param_group of a list": lambda L: L.optim.SGD(_params(L), lr=0.1).add_param_group([1]),
    "SGD, negative lr": lambda L: L.optim.SGD(_params(L), lr=-0.1),
}


@pytest.mark.parametrize("case", sorted(OPTIM))
def test_optimizer_arguments_checked_as_torch(case):
    """Optimizers accepted multi-element tensor learning rates, int or mixed betas, fused with foreach or
    differentiable, parameter sets and non-dict groups, each of which torch refuses with its own message."""
    _same_as_torch(OPTIM, case)


def test_duplicate_parameters_warn_as_torch():
    """A group listing a parameter twice: torch warns (numgrad said nothing)."""
    import warnings
    for L in (torch, numgrad):
        p = L.nn.Parameter(L.ones(2))
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            L.optim.SGD([p, p], lr=0.1)
        assert [str(w.message)[:60] for w in caught] == [
            "optimizer contains a parameter group with duplicate paramete"], L.__name__

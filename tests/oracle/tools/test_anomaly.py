"""Anomaly detection against torch's: the NaN check names the backward node and its output, the warning
shows the forward line that made the node, the flags and their context managers, and fusion off meanwhile
(each node is checked on its own) with the same gradients."""
import warnings

import numpy as np
import pytest
import torch

import numgrad


def _outcome(lib, fn):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            with lib.autograd.detect_anomaly():
                fn(lib)
            error = None
        except RuntimeError as e:
            error = str(e)
    return error, [str(w.message) for w in caught]


def _sqrt_at_zero(lib):
    a = lib.tensor([0.0, 1.0], requires_grad=True)
    (a.sqrt() * 0).sum().backward()  # 0 * inf: NaN in SqrtBackward0's result


def _log_of_negative(lib):
    a = lib.tensor([2.0, 3.0], requires_grad=True)
    b = lib.tensor([-1.0, 1.0], requires_grad=True)
    (a * b.log()).sum().backward()  # MulBackward0's second output: a * NaN... a is fine, log's is NaN


@pytest.mark.parametrize("fn", [_sqrt_at_zero, _log_of_negative])
def test_nan_in_backward_raises_torchs_error_and_names_the_forward_line(fn):
    ours, theirs = _outcome(numgrad, fn), _outcome(torch, fn)
    assert ours[0] == theirs[0] and ours[0].startswith("Function '")
    node = ours[0].split("'")[1]
    assert ours[1][0] == theirs[1][0] == ("Anomaly Detection has been enabled. This mode will increase the runtime "
                                         "and should only be enabled for debugging.")
    detail = [m for m in ours[1] if m.startswith(f"Error detected in {node}.")]
    assert detail and "Traceback of forward call that caused the error:" in detail[0]
    assert "test_anomaly.py" in detail[0] and "in " + fn.__name__ in detail[0]
    assert "numgrad" + "/" not in detail[0].split("error:")[1]  # user frames only, as torch shows


def _stale_saved_result(lib):
    a = lib.ones(3, requires_grad=True)
    c = a.exp()  # ExpBackward0 saves its result
    out = c * 2
    c.mul_(2)  # ... which this changes: backward raises torch's in-place error
    out.sum().backward()


def test_other_backward_errors_name_the_forward_call_too():
    ours, theirs = _outcome(numgrad, _stale_saved_result), _outcome(torch, _stale_saved_result)
    assert "modified by an inplace operation" in ours[0]
    named = [[m.split(".")[0] for m in w[1] if m.startswith("Error detected in")] for w in (ours, theirs)]
    assert named[0] == named[1] == ["Error detected in ExpBackward0"]
    b = numgrad.ones(2, requires_grad=True).sin()
    assert b.grad_fn.metadata == {}  # made outside anomaly mode: no traceback kept


def test_flags_and_set_detect_anomaly_as_torchs():
    for lib in (numgrad, torch):
        assert not lib.is_anomaly_enabled() and lib.is_anomaly_check_nan_enabled()
        lib.autograd.set_detect_anomaly(True, check_nan=False)
        assert lib.is_anomaly_enabled() and not lib.is_anomaly_check_nan_enabled()
        lib.autograd.set_detect_anomaly(False)
        with lib.autograd.set_detect_anomaly(True):
            assert lib.is_anomaly_enabled()
        assert not lib.is_anomaly_enabled() and lib.is_anomaly_check_nan_enabled()


def test_check_nan_off_lets_nan_through_and_gradients_equal_the_fused_run():
    def grads(anomaly):
        a = numgrad.tensor([0.0, 1.0, 4.0], requires_grad=True)
        with numgrad.autograd.set_detect_anomaly(anomaly, check_nan=False):
            ((a.sqrt() + 1) * a.exp() * 0.5).sum().backward()
        return a.grad.numpy()

    np.testing.assert_array_equal(grads(True), grads(False))
    assert np.isinf(grads(True)[0])

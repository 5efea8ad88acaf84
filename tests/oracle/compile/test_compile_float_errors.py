"""A replay is as silent as eager and torch about IEEE results: an overflowing product or a 0/0 gives inf or NaN
without a NumPy RuntimeWarning (the prepared calls a replay makes are NumPy's own, outside the ops' errstate)."""
import warnings

import numpy as np
import pytest
import torch

import numgrad


@pytest.mark.parametrize("case", ["matmul overflow", "linear overflow", "zero over zero"])
def test_a_replay_warns_no_more_than_eager(case):
    got = []
    for lib, compiled in ((torch, False), (numgrad, False), (numgrad, True)):
        w = lib.tensor(np.full((4, 4), 1e30 if case != "zero over zero" else 0.0, np.float32), requires_grad=True)

        def step(x, w=w, lib=lib):
            w.grad = None
            if case == "matmul overflow":
                y = x @ w
            elif case == "linear overflow":
                y = lib.nn.functional.linear(x, w, w[0])
            else:
                y = w / x
            loss = y.sum()
            loss.backward()
            return loss
        fn = numgrad.compile(step) if compiled else step
        values = []
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # any warning fails the call
            for k in range(3):
                x = lib.tensor(np.full((4, 4), 1e30 * (k + 1) if case != "zero over zero" else 0.0, np.float32))
                values.append((fn(x).item(), w.grad.numpy().tolist()))
        if compiled:
            assert fn.variants and fn.variants[0].hits == 2, fn.eager_reason
        got.append(values)
    for (t_loss, t_grad), (e_loss, e_grad), (c_loss, c_grad) in zip(*got):  # (NaN equal to NaN)
        np.testing.assert_equal([e_loss, e_grad], [c_loss, c_grad])
        np.testing.assert_equal([e_loss, e_grad], [t_loss, t_grad])

"""The optimizer kernels' usual-case bodies (dispatch/optim.py USUAL) against the general loops: the same
operations, so the same bits, for the flags that pick them; and which kernel the dispatcher picks."""
import numpy as np
import pytest

from numgrad.kernels.cpu import optim as cpu_optim
from numgrad.kernels.dispatch import optim


def _arrays(rng, n, dtype, k):
    return [rng.standard_normal(n).astype(dtype) for _ in range(k)]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("beta1_weight", [0.1, 0.7])  # both of lerp's formulas
@pytest.mark.parametrize("decay_factor", [1.0, 0.99])  # Adam, AdamW
def test_adam_usual_kernel_matches_the_general_loop_bitwise(dtype, beta1_weight, decay_factor):
    rng = np.random.default_rng(0)
    p, g, m, v = _arrays(rng, 1000, dtype, 4)
    v = np.abs(v)
    scalars = (-1e-3, beta1_weight, 0.999, 0.001, 0.3, 1e-8, 0.0, decay_factor, False, False)
    usual = optim.USUAL["adam"](np.dtype(dtype), *scalars)
    assert usual == ("adam_usual" if beta1_weight < 0.5 else "adam_usual_high_weight")
    results = []
    for name in ("adam", usual):
        state = [a.copy() for a in (p, g, m, v)]
        cpu_optim.run(optim.BODIES[name], name, *state, state[0][:0], *scalars)
        results.append(state)
    for a, b in zip(*results):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("momentum", [0.0, 0.9])
def test_sgd_usual_kernel_matches_the_general_loop_bitwise(dtype, momentum):
    rng = np.random.default_rng(1)
    p, g, buf = _arrays(rng, 1000, dtype, 3)
    scalars = (-0.01, 0.0, momentum, 0.8, False, False, False)
    usual = optim.USUAL["sgd"](np.dtype(dtype), *scalars)
    assert usual == ("sgd_usual" if momentum else "sgd_plain")
    results = []
    for name in ("sgd", usual):
        state = [a.copy() for a in (p, g, buf)]
        cpu_optim.run(optim.BODIES[name], name, *state, *scalars)
        results.append(state)
    for a, b in zip(*results):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("name,scalars,usual", [
    ("adam", (-1e-3, 0.1, 0.999, 0.001, 1.0, 1e-8, 0.0, 1.0, False, False), "adam_usual"),
    ("adam", (-1e-3, 0.9, 0.999, 0.001, 1.0, 1e-8, 0.0, 1.0, False, False), "adam_usual_high_weight"),
    # a weight just below 0.5 that float32 rounds to 0.5: lerp's second formula, as the general loop picks
    ("adam", (-1e-3, 0.49999999, 0.999, 0.001, 1.0, 1e-8, 0.0, 1.0, False, False), "adam_usual_high_weight"),
    ("adam", (-1e-3, 0.1, 0.999, 0.001, 1.0, 1e-8, 0.0, 1.0, True, False), None),  # amsgrad
    ("adam", (-1e-3, 0.1, 0.999, 0.001, 1.0, 1e-8, 0.0, 1.0, False, True), None),  # maximize
    ("adam", (-1e-3, 0.1, 0.999, 0.001, 1.0, 1e-8, 0.01, 1.0, False, False), None),  # L2 weight decay
    ("sgd", (-0.01, 0.0, 0.9, 1.0, False, False, False), "sgd_usual"),
    ("sgd", (-0.01, 0.0, 0.0, 1.0, False, False, False), "sgd_plain"),
    ("sgd", (-0.01, 0.0, 0.9, 1.0, False, False, True), None),  # the first momentum step copies the gradient
    ("sgd", (-0.01, 0.0, 0.9, 1.0, True, False, False), None),  # nesterov
    ("sgd", (-0.01, 0.1, 0.0, 1.0, False, False, False), None),  # weight decay
])
def test_the_usual_kernel_is_picked_only_for_its_flags(name, scalars, usual):
    assert optim.USUAL[name](np.dtype(np.float32), *scalars) == usual

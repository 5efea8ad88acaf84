"""The Numba row loops behind embedding's backward (adding rows at repeated indices) and nll_loss's picks,
bitwise against the NumPy formulas they replace, and falling back where they do not apply."""
import numpy as np
import pytest

from numgrad.kernels.dispatch import indexing as device_index, loss as loss_kernels


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_adding_rows_at_repeated_indices_gives_np_add_at_bits(dtype):
    rng = np.random.default_rng(3)
    index = rng.integers(-12, 12, 300)  # repeats and negative indices
    values = rng.standard_normal((300, 5, 2)).astype(dtype)
    ours, theirs = np.full((12, 5, 2), 0.1, dtype), np.full((12, 5, 2), 0.1, dtype)
    device_index.write_region(ours, (slice(None), Ellipsis), (index,), values, True)
    np.add.at(theirs, (index,), values)
    assert np.array_equal(ours, theirs)


def test_adding_rows_out_of_range_raises_numpys_error_and_writes_nothing():
    target = np.zeros((4, 3), np.float32)
    with pytest.raises(IndexError):
        device_index.write_region(target, (slice(None), Ellipsis), (np.array([1, 4]),), np.ones((2, 3), np.float32),
                                  True)
    assert not target.any()


@pytest.mark.parametrize("case", ["strided target", "broadcast values", "int32 index", "two index arrays",
                                  "int64 target"])
def test_adding_rows_outside_the_loop_case_keeps_np_add_at(case):
    rng = np.random.default_rng(4)
    target, index = np.zeros((6, 4), np.float32), rng.integers(0, 6, 9)
    values, adv = rng.standard_normal((9, 4)).astype(np.float32), (index,)
    if case == "strided target":
        target = np.zeros((6, 8), np.float32)[:, ::2]
    elif case == "broadcast values":
        values = np.broadcast_to(values[:1], (9, 4))
    elif case == "int32 index":
        adv = (index.astype(np.int32),)
    elif case == "two index arrays":
        adv, values = (index, index % 4), values[:, 0]
    else:
        target, values = np.zeros((6, 4), np.int64), (values * 10).astype(np.int64)
    expected = target.copy()
    np.add.at(expected, adv, values)
    device_index.write_region(target, (slice(None), Ellipsis), adv, values, True)
    assert np.array_equal(target, expected)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("ignore_index", [-100, 2, 2 ** 70])
def test_nll_row_picks_give_the_numpy_formulas_bits(dtype, ignore_index):
    rng = np.random.default_rng(5)
    x = rng.standard_normal((40, 7)).astype(dtype)
    target = rng.integers(0, 7, 40)
    weight = rng.uniform(0.5, 2, 7).astype(dtype)
    losses, picked = loss_kernels.nll_rows(x, target, weight, ignore_index)
    ignored = target == ignore_index
    safe = np.where(ignored, 0, target)
    expected_picked = np.where(ignored, 0, weight[safe]).astype(dtype)
    expected_losses = np.where(ignored, 0, -x[np.arange(40), safe] * expected_picked).astype(dtype)
    assert np.array_equal(picked, expected_picked) and np.array_equal(losses, expected_losses)
    assert not np.signbit(losses[ignored]).any()  # +0.0 where ignored, as torch
    scale = dtype(1) / picked.sum()
    coef = np.zeros_like(x)
    assert loss_kernels.nll_coefficients(target, ignore_index, picked, scale, coef)
    expected = np.zeros_like(x)
    expected[np.arange(40), safe] = np.where(ignored, 0, -expected_picked * scale)
    assert np.array_equal(coef, expected)


def test_nll_row_picks_leave_other_layouts_to_numpy():
    x = np.zeros((3, 4, 5), np.float32)
    assert loss_kernels.nll_rows(x, np.zeros(3, np.int64), np.ones(4, np.float32), -100) is None
    assert loss_kernels.nll_rows(x[0], np.zeros(4, np.int32), np.ones(5, np.float32), -100) is None
    assert not loss_kernels.nll_coefficients(np.zeros(5, np.int64), -100, np.ones(5, np.float32), np.float32(1),
                                             np.zeros((5, 4), np.float32)[:, ::2])

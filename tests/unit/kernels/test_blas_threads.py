"""set_num_threads bounds NumPy's bundled OpenBLAS too (as torch's bounds MKL), and does nothing to a BLAS
NumPy does not bundle."""
import numpy as np
import pytest
import torch

import numgrad
from numgrad.kernels.cpu import threads


@pytest.fixture
def restored():
    """The process's thread counts (numgrad's and the BLAS's) as they were before the test."""
    chosen, blas = list(threads._chosen), threads.blas_count()
    yield
    threads._chosen[:] = chosen
    if blas is not None:
        threads.set_blas_count(blas)


def _bundles_openblas():
    return np.show_config(mode="dicts")["Build Dependencies"]["blas"]["name"] == "scipy-openblas"


def test_the_bundled_openblas_is_found_where_numpy_ships_one():
    assert (threads.blas_count() is not None) == _bundles_openblas()


@pytest.mark.parametrize("n", [1, 2, 3])
def test_set_num_threads_sets_the_blas_threads_as_torch_does(n, restored):
    numgrad.set_num_threads(n)
    torch_before = torch.get_num_threads()
    try:
        torch.set_num_threads(n)
        assert numgrad.get_num_threads() == torch.get_num_threads() == n
    finally:
        torch.set_num_threads(torch_before)
    assert threads.blas_count() == (n if _bundles_openblas() else None)
    a = np.random.default_rng(0).standard_normal((300, 200)).astype(np.float32)
    product = (numgrad.tensor(a) @ numgrad.tensor(a.T)).numpy()  # products still run at that count
    np.testing.assert_allclose(product, a.astype(np.float64) @ a.T.astype(np.float64), rtol=1e-4, atol=1e-3)


@pytest.mark.parametrize("bad", [0, -1, 1.5, True, "2"])
def test_a_bad_count_raises_torchs_error_and_changes_nothing(bad, restored):
    numgrad.set_num_threads(2)
    with pytest.raises(RuntimeError) as ours:
        numgrad.set_num_threads(bad)
    with pytest.raises(RuntimeError) as theirs:
        torch.set_num_threads(bad)
    assert str(ours.value) == str(theirs.value)
    assert numgrad.get_num_threads() == 2
    assert threads.blas_count() in (2, None)


def test_without_a_bundled_openblas_only_numgrads_own_count_changes(monkeypatch, restored):
    monkeypatch.setattr(threads, "_blas", [None])  # as where NumPy runs another BLAS (Accelerate, MKL)
    numgrad.set_num_threads(1)
    assert numgrad.get_num_threads() == 1
    assert threads.blas_count() is None

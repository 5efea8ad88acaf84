"""numgrad.Generator and `generator=` against torch: seeding, state round trips, independence of streams, the
dtypes and shapes of draws, multinomial's distribution and errors. Values differ (another algorithm)."""
import copy
import pickle

import numpy as np
import pytest
import torch

import numgrad
from helpers.outcomes import outcome


def same_outcome(fn):
    assert outcome(fn, numgrad) == outcome(fn, torch)


def draws(lib, g):
    return (lib.rand(3, generator=g), lib.randn(2, 2, generator=g), lib.randint(0, 9, (4,), generator=g),
            lib.randperm(6, generator=g), lib.normal(0.0, 1.0, (3,), generator=g),
            lib.multinomial(lib.tensor([0.2, 0.5, 0.3]), 2, generator=g))


def test_fresh_generator_seed_device_and_manual_seed_returning_itself():
    for lib in (numgrad, torch):
        g = lib.Generator()
        assert g.initial_seed() == 67280421310721 and str(g.device) == "cpu"
        assert g.manual_seed(7) is g and g.initial_seed() == 7
        assert g.manual_seed(-1).initial_seed() == 2**64 - 1
        s = g.seed()
        assert g.initial_seed() == s and 0 <= s < 2**64
    assert isinstance(numgrad.manual_seed(3), numgrad.Generator) and numgrad.initial_seed() == 3
    assert numgrad.manual_seed(3) is numgrad.default_generator


@pytest.mark.parametrize("bad", [1.5, "3", None])
def test_manual_seed_refuses_what_torch_refuses(bad):
    same_outcome(lambda lib: lib.Generator().manual_seed(bad))


def test_same_seed_same_draws_and_streams_independent_of_the_default():
    a = draws(numgrad, numgrad.Generator().manual_seed(11))
    numgrad.rand(100)  # the default generator's draws do not move a generator of one's own
    b = draws(numgrad, numgrad.Generator().manual_seed(11))
    c = draws(numgrad, numgrad.Generator().manual_seed(12))
    assert all(numgrad.equal(x, y) for x, y in zip(a, b))
    assert not all(numgrad.equal(x, y) for x, y in zip(a, c))
    for x, y in zip(a, draws(torch, torch.Generator().manual_seed(11))):
        assert str(x.dtype) == str(y.dtype) and tuple(x.shape) == tuple(y.shape)


def test_state_round_trip_replays_the_stream():
    for lib in (numgrad, torch):
        g = lib.Generator().manual_seed(5)
        lib.rand(7, generator=g)
        state = g.get_state()
        first = draws(lib, g)
        assert g.set_state(state) is g
        assert all(lib.equal(x, y) for x, y in zip(first, draws(lib, g)))
        lib.manual_seed(9)
        state = lib.get_rng_state()
        x = lib.randn(4)
        lib.set_rng_state(state)
        assert lib.equal(x, lib.randn(4))
    assert str(numgrad.Generator().get_state().dtype) == str(numgrad.ops.generator.STATE_DTYPE)


def test_set_state_errors():
    g = numgrad.Generator()
    with pytest.raises(TypeError, match="RNG state must be a torch.ByteTensor"):
        g.set_state(numgrad.zeros(3))
    bad = numgrad.zeros(3, dtype=g.get_state().dtype)
    with pytest.raises(RuntimeError, match="Expected a CPUGeneratorImplState of size 45 but found the input RNG "
                                           "state size to be 3"):
        g.set_state(bad)


def test_init_functions_take_a_generator():
    w1, w2 = numgrad.empty(3, 4), numgrad.empty(3, 4)
    for w in (w1, w2):
        numgrad.nn.init.kaiming_uniform_(w, generator=numgrad.Generator().manual_seed(2))
    assert numgrad.equal(w1, w2)


@pytest.mark.parametrize("args", [([1.0, -1.0], 1), ([0.0, 0.0], 1), ([1.0, 1.0], 3), ([[[1.0]]], 1),
                                  ([1.0, float("nan")], 1), ([1.0, float("inf")], 1), ([1.0, 1.0], 0),
                                  ([1.0, 1.0], -1), ([[1.0, 0.0], [0.0, 0.0]], 1)])
def test_multinomial_errors(args):
    same_outcome(lambda lib: lib.multinomial(lib.tensor(args[0]), args[1]))


def test_multinomial_needs_a_float_tensor():
    same_outcome(lambda lib: lib.multinomial(lib.tensor([1, 2]), 1))


def test_multinomial_zero_weights_only_when_they_must():
    g = numgrad.Generator().manual_seed(0)
    for _ in range(20):
        assert numgrad.multinomial(numgrad.tensor([0.0, 1.0, 0.0]), 1, generator=g).tolist() == [1]
        assert numgrad.multinomial(numgrad.tensor([0.0, 1.0, 2.0]), 3, generator=g).tolist()[2] == 0
        assert set(numgrad.multinomial(numgrad.tensor([0.0, 1.0, 0.0]), 5, True, generator=g).tolist()) == {1}
    rows = numgrad.multinomial(numgrad.rand(4, 6, generator=g), 6, generator=g)
    assert rows.shape == (4, 6) and all(sorted(r) == list(range(6)) for r in rows.tolist())


def test_multinomial_frequencies_follow_the_weights():
    g = numgrad.Generator().manual_seed(1)
    w = np.array([1.0, 2.0, 3.0, 4.0])
    picks = numgrad.multinomial(numgrad.tensor(w), 40000, True, generator=g).numpy()
    np.testing.assert_allclose(np.bincount(picks, minlength=4) / 40000, w / w.sum(), atol=0.01)
    first = [numgrad.multinomial(numgrad.tensor(w), 2, generator=g).tolist()[0] for _ in range(4000)]
    np.testing.assert_allclose(np.bincount(first, minlength=4) / 4000, w / w.sum(), atol=0.03)


def test_cuda_seeding_accepts_a_seed_as_torch_does():
    for lib in (numgrad, torch):
        assert lib.cuda.manual_seed(3) is None and lib.cuda.manual_seed_all(3) is None


def test_fork_rng_restores_the_default_generator():
    for lib in (numgrad, torch):
        lib.manual_seed(4)
        with lib.random.fork_rng():
            inside = lib.rand(3)
        assert lib.equal(inside, lib.rand(3))
        with lib.random.fork_rng(enabled=False):
            lib.rand(3)
        lib.manual_seed(4)
        lib.rand(3)
        assert not lib.equal(inside, lib.rand(3))


def test_a_generator_pickles_and_copies_with_its_state():
    for lib in (numgrad, torch):
        g = lib.Generator().manual_seed(3)
        lib.rand(5, generator=g)
        for h in (pickle.loads(pickle.dumps(g)), copy.deepcopy(g)):
            assert h.initial_seed() == 3
            assert lib.equal(lib.rand(4, generator=h), lib.rand(4, generator=copy.deepcopy(g)))

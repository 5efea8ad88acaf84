"""The choices a program generator makes, drawn either by Hypothesis (CI, shrinking) or by a seeded Random (long profile)."""
import random

from hypothesis import strategies as st


class HypothesisDraw:
    """Choices through a Hypothesis `draw` (from st.composite or st.data()), so failures shrink."""

    def __init__(self, draw):
        self._draw = draw

    def integer(self, lo, hi):
        return self._draw(st.integers(lo, hi))

    def choice(self, seq):
        return self._draw(st.sampled_from(list(seq)))

    def chance(self, p):
        # a percentage draw rather than booleans(): the weight matters for how often errors are provoked
        return self._draw(st.integers(0, 99)) < int(p * 100)


class RandomDraw:
    """The same choices from random.Random(seed): a long run that goes on after a failure."""

    def __init__(self, seed):
        self._rng = random.Random(seed)

    def integer(self, lo, hi):
        return self._rng.randint(lo, hi)

    def choice(self, seq):
        seq = list(seq)
        return seq[self._rng.randrange(len(seq))]

    def chance(self, p):
        return self._rng.random() < p

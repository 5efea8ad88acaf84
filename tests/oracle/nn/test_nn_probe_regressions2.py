"""More regressions found by the random nn.functional/ops probe, each compared with torch, fusion on and off."""
import pytest
import torch

import numgrad
from helpers.outcomes import outcome


def _same_as_torch(fn):
    for fusion in (True, False):
        with numgrad.fusion(fusion):
            got = outcome(fn, numgrad)
        assert got == outcome(fn, torch), fusion


def _call(text):
    """text evaluated with `x` a (2, 3) tensor, `z` a 0-d one, `e` a (0, 2) one and `L` the library."""
    return lambda L: eval(text, {"L": L, "x": L.ones(2, 3), "z": L.tensor(1.0), "e": L.ones(0, 2)})


ONE_DIM_CALLS = [form % (op, args) for op in ("max", "min", "prod", "argmax", "argmin")
                 for form in ("x.%s(%s)", "L.%s(x, %s)")
                 for args in ("(0, 1)", "dim=(0, 1)", "(0, 1), True", "(0, 1), keepdim=True", "[0]",
                              "dim=(0, 1), keepdim=True", "[0, 1], keepdim=False")]


@pytest.mark.parametrize("call", ONE_DIM_CALLS)
def test_a_tuple_dim_to_a_one_dim_reduction_is_worded_as_torchs_binding(call):
    """The method form counts positions after self and names the one plausible overload once keepdim is
    given; the function form lists the overloads (with why some failed) unless only one can match."""
    _same_as_torch(_call(call))


REPEATED_DIM_CALLS = [f"{t}.{op}({d})" for op in ("sum", "mean", "amax", "amin", "logsumexp", "var", "std", "all",
                                                   "any")
                      for t in "xze" for d in ("(0, -1)", "(0, 1, -1)", "(1, 0, -2)", "(0, 0, 5)", "(5, 0, 0)")]
REPEATED_DIM_CALLS += ["x.norm(dim=(0, -2))", "z.norm(dim=(0, -1))", "z.sum((0, -1), keepdim=True)",
                       "x.all([])", "e.any(())", "x.logsumexp()", "L.logsumexp(x)", "x.logsumexp(keepdim=True)"]


@pytest.mark.parametrize("call", REPEATED_DIM_CALLS)
def test_a_repeated_dim_is_refused_as_torch(call):
    """A dim named twice (a 0-d tensor's 0 and -1 too) names the first repeat; var/std find it before a later
    dim out of range, amax/amin check for an empty dim first; all/any over no dims reduce nothing."""
    _same_as_torch(_call(call))

"""fused.layout's shortcut for a region of full arrays and a bias along the last dim (cpu/fused._row_args): the
same rows, columns, leaf kinds and arguments as the general search, which it skips (27 -> 3 us a call)."""
import numpy as np
import pytest

from numgrad.backend.cpu import fused
from numgrad.backend.ir import Program


def _program(shape, leaves):
    program = Program(shape)
    for value in leaves:
        program.leaf(value, "float32")
    return program


def _searched(program, split=None, monkeypatch=None):
    monkeypatch.setattr(fused, "_row_args", lambda leaves, shape: None)
    try:
        return fused.layout(program, split)
    finally:
        monkeypatch.undo()


@pytest.mark.parametrize("shape", [(256, 512), (8, 64, 64), (2, 1, 5), (3, 4), (2, 1, 8192)])
@pytest.mark.parametrize("split", [None, "last"])
def test_bias_regions_lay_out_as_the_search_does(monkeypatch, shape, split):
    rng = np.random.default_rng(0)
    leaves = [rng.standard_normal(shape).astype(np.float32), rng.standard_normal(shape[-1]).astype(np.float32),
              np.float32(2.0)]
    split = None if split is None else len(shape) - 1
    shortcut = _program(shape, leaves)
    outer, inner, args = fused.layout(shortcut, split)
    kinds = [leaf.kind for leaf in shortcut.leaves]
    if split is not None or np.prod(shape) >= fused.BROADCAST_MIN:  # (small regions copy a bias: one kernel)
        assert kinds == ["full", "row", "scalar"]
    searched = _program(shape, leaves)
    outer2, inner2, args2 = _searched(searched, split, monkeypatch)
    assert (outer, inner) == (outer2, inner2) and kinds == [leaf.kind for leaf in searched.leaves]
    for a, b in zip(args, args2):
        np.testing.assert_array_equal(a, b)
        if isinstance(a, np.ndarray) and kinds[1] == "row":
            assert np.shares_memory(a, leaves[0]) or np.shares_memory(a, leaves[1])  # no copy


@pytest.mark.parametrize("case", ["one row", "strided", "float64 bias", "column", "1-d region"])
def test_other_regions_take_the_search(monkeypatch, case):
    calls = []
    original = fused._row_args

    def spy(leaves, shape):
        result = original(leaves, shape)
        calls.append(result is not None)
        return result
    monkeypatch.setattr(fused, "_row_args", spy)
    full, bias = np.ones((64, 512), np.float32), np.ones(512, np.float32)
    shape = (64, 512)
    if case == "one row":
        full, bias, shape = np.ones((1, 32768), np.float32), np.ones(32768, np.float32), (1, 32768)
    elif case == "strided":
        full = np.ones((512, 64), np.float32).T
    elif case == "float64 bias":
        bias = np.ones(512, np.float64)
    elif case == "column":
        bias = np.ones((64, 1), np.float32)
    else:
        full, bias, shape = np.ones(32768, np.float32), np.ones(32768, np.float32) * 2, (32768,)
    program = _program(shape, [full, bias, np.zeros(shape, np.float32)])
    fused.layout(program)
    assert not any(calls)

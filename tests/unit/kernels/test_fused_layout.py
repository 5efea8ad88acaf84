"""fused.layout's shortcut for a region of full arrays and a bias along the last dim (cpu/fused._row_args): the
same rows, columns, leaf kinds and arguments as the general search, which it skips (27 -> 3 us a call)."""
import numpy as np
import pytest

from numgrad.kernels.cpu import fused
from numgrad.kernels.ir import Program


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


@pytest.mark.parametrize("shape,tail", [((8, 2, 64, 64), (64, 64)), ((3, 4, 5), (4, 5)), ((2, 3, 4, 6), (3, 4, 6)),
                                        ((64, 2, 64, 64), (2, 64, 64))])  # the last: split over the threads
def test_a_tail_leaf_is_read_in_place_at_the_position_modulo_its_size(shape, tail):
    """A leaf holding the region's trailing dims (a causal mask over batch and heads) is kind "tail": the kernel
    reads the leaf's own memory at the full position modulo its size, and gives what broadcasting gives."""
    rng = np.random.default_rng(1)
    x, t = rng.standard_normal(shape).astype(np.float32), rng.standard_normal(tail).astype(np.float32)
    for split in (None, len(shape) - 1):
        program = _program(shape, [x, t])
        outer, inner, args = fused.layout(program, split)
        if split is None and np.prod(shape) < fused.BROADCAST_MIN:  # small maps copy it (one kernel)
            assert [leaf.kind for leaf in program.leaves] == ["full", "full"]
        else:
            assert [leaf.kind for leaf in program.leaves] == ["full", "tail"] and np.shares_memory(args[1], t)
    program = _program(shape, [x, t])
    var = program.step("a * b", (("a", "l0", "float32"), ("b", "l1", "float32")), "float32", "float32")
    (flat,) = fused.run_map(program, [var], [np.dtype(np.float32)])
    np.testing.assert_array_equal(flat.reshape(shape), x * t)
    rows = fused.run_fold(program, var, np.dtype(np.float64), len(shape) - 1)  # one sum per row
    np.testing.assert_allclose(np.asarray(rows).reshape(shape[:-1]), (x * t).astype(np.float64).sum(-1), rtol=1e-6)

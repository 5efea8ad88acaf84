"""default_collate and default_convert against torch's: the batch structure (namedtuples kept, tuples made
lists, dicts by key), dtypes (Python ints -> int64, floats -> float64, NumPy scalars keep theirs) and errors."""
import collections

import numpy as np
import pytest
import torch
import torch.utils.data as tdata

import numgrad
import numgrad.utils.data as ndata
from helpers.batches import structure
from helpers.outcomes import outcome

Point = collections.namedtuple("Point", "x y")


def samples(lib):
    return {
        "tensors": [lib.arange(3.0) + i for i in range(4)],
        "int tensors": [lib.tensor([i, 2 * i]) for i in range(3)],
        "0-d": [lib.tensor(1.5), lib.tensor(2.5)],
        "ints": [1, 2, 3],
        "bools": [True, False],
        "floats": [0.5, 1.5],
        "numpy arrays": [np.arange(4, dtype=np.float32).reshape(2, 2) + i for i in range(3)],
        "numpy int64": [np.arange(3) * i for i in range(2)],
        "numpy scalars": [np.float32(1.5), np.float32(2.0)],
        "numpy float64 scalars": [np.float64(1.5), np.float64(-2.0)],
        "numpy int scalars": [np.int64(3), np.int64(4)],
        "strings": ["a", "bc"],
        "bytes": [b"a", b"b"],
        "tuples": [(lib.zeros(2), 1, "x"), (lib.ones(2), 2, "y")],
        "lists": [[1.0, 2], [3.0, 4]],
        "dicts": [{"a": lib.zeros(2), "b": 1}, {"a": lib.ones(2), "b": 2}],
        "namedtuples": [Point(lib.zeros(1), 1.0), Point(lib.ones(1), 2.0)],
        "nested": [{"p": [Point(1, 2.0), "s"], "q": (np.zeros(2),)}, {"p": [Point(3, 4.0), "t"], "q": (np.ones(2),)}],
        "ordered dicts": [collections.OrderedDict(b=1, a=2.0), collections.OrderedDict(b=3, a=4.0)],
    }


@pytest.mark.parametrize("kind", list(samples(numgrad)))
def test_default_collate_matches_torch(kind):
    ours = ndata.default_collate(samples(numgrad)[kind])
    theirs = tdata.default_collate(samples(torch)[kind])
    assert structure(ours) == structure(theirs)


@pytest.mark.parametrize("kind", ["tensors", "numpy arrays", "numpy scalars", "tuples", "dicts", "namedtuples",
                                  "strings", "nested"])
def test_default_convert_matches_torch(kind):
    assert structure(ndata.default_convert(samples(numgrad)[kind][0])) == \
        structure(tdata.default_convert(samples(torch)[kind][0]))


def test_default_convert_keeps_string_arrays():
    for lib in (ndata, tdata):
        out = lib.default_convert(np.array(["a", "b"]))
        assert isinstance(out, np.ndarray)


def test_collated_tensors_keep_their_history():
    for lib in (numgrad, torch):
        x = lib.ones(2, requires_grad=True)
        batch = (ndata if lib is numgrad else tdata).default_collate([x * 2, x * 3])
        assert batch.grad_fn.name() == "StackBackward0"
        batch.sum().backward()
        assert x.grad.tolist() == [5.0, 5.0]


@pytest.mark.parametrize("bad", [
    lambda lib: [lib.zeros(2), lib.zeros(3)],  # tensors of different sizes
    lambda lib: [[1, 2], [1, 2, 3]],  # sequences of different lengths
    lambda lib: [np.zeros(2), np.zeros(3)],
    lambda lib: [None, None],
    lambda lib: [object(), object()],
    lambda lib: [np.array(["a"]), np.array(["b"])],  # string arrays
    lambda lib: [{"a": 1}, {"b": 1}],  # a key missing from a later sample
    lambda lib: [],
])
def test_default_collate_errors_match_torch(bad):
    mod = {numgrad: ndata, torch: tdata}
    assert outcome(lambda lib: mod[lib].default_collate(bad(lib)), numgrad) == \
        outcome(lambda lib: mod[lib].default_collate(bad(lib)), torch)


def test_collate_fn_map_extends_default_collate():
    class Box:
        def __init__(self, v):
            self.v = v

    def collate_box(batch, *, collate_fn_map=None):
        return sum(b.v for b in batch)

    for mod in (ndata._utils.collate, tdata._utils.collate):
        table = {**mod.default_collate_fn_map, Box: collate_box}
        assert mod.collate([(Box(1), 2), (Box(3), 4)], collate_fn_map=table)[0] == 4

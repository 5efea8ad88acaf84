"""Warnings that torch raises from C++ name the user's line: numgrad's must too, whatever its own call depth
(the std/var degrees-of-freedom warning named NumPy's errstate wrapper)."""
import warnings

import pytest
import torch

import numgrad

_CASES = {
    "non-leaf grad": lambda L: (L.ones(3, requires_grad=True) * 2).grad,
    "x.T of 3 dims": lambda L: L.ones(2, 3, 4).T,
    "tensor(tensor)": lambda L: L.tensor(L.ones(2)),
    "var without freedom": lambda L: L.ones(1).var(),
    "std correction": lambda L: L.ones(3).std(correction=5),
    "index_put_ on expanded": lambda L: L.ones(3).expand(2, 3).__setitem__(L.tensor([0]), 1.0),
    "masked_fill_ on expanded": lambda L: L.ones(3).expand(2, 3).masked_fill_(L.ones(2, 3, dtype=L.bool), 1.0),
    "backward create_graph": lambda L: (L.ones(2, requires_grad=True) * 2).sum().backward(create_graph=True),
}


def _locations(lib, case):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        _CASES[case](lib)
    return [(w.category, str(w.message), w.filename) for w in caught]


@pytest.mark.parametrize("case", list(_CASES))
def test_warning_names_the_callers_file(case):
    expected = _locations(torch, case)
    got = _locations(numgrad, case)
    assert [w[:2] for w in got] == [w[:2] for w in expected]
    # torch's backward warns from its Python wrapper (torch/autograd/graph.py): numgrad names the caller
    assert all(w[2] == __file__ for w in expected) or case == "backward create_graph"
    assert all(w[2] == __file__ for w in got), got

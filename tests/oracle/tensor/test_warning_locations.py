"""Warnings that torch raises from C++ name the user's line: numgrad's must too, whatever its own call depth
(the std/var degrees-of-freedom warning named NumPy's errstate wrapper)."""
import os
import warnings

import pytest
import torch

import numgrad

_CASES = {
    "non-leaf grad": lambda L: (L.ones(3, requires_grad=True) * 2).grad,
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


_ONCE = """
import sys, warnings
import {lib} as L
warnings.simplefilter("always")
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    for _ in range(2):
        L.ones(2, 3, 4).T
        L.tensor(1.0).T
        L.tensor(1.0).mT
        float((L.ones(2, requires_grad=True) * 2).sum())
        L.nn.functional.conv2d(L.ones(1, 1, 4, 4), L.ones(1, 1, 2, 2), padding="same")
print([(str(w.message), w.lineno) for w in caught])
"""


def test_warnings_torch_gives_once_per_process_come_once():
    """x.T of other than 2 dims and of 0 dims, x.mT of 0 dims, a tensor requiring grad made a Python number,
    conv2d's odd 'same' padding: torch
    warns the first time in a process only (TORCH_WARN_ONCE), from the user's line."""
    import subprocess
    import sys
    out = [subprocess.run([sys.executable, "-c", _ONCE.format(lib=lib)], capture_output=True, text=True, check=True,
                          env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}).stdout
           for lib in ("torch", "numgrad")]
    assert out[0] == out[1]
    assert len(eval(out[0])) == 5


@pytest.mark.parametrize("flag", [True, 1, None, "yes"])
def test_set_warn_always_makes_once_per_process_warnings_come_every_time(flag):
    outcomes = []
    for lib in (torch, numgrad):
        before = lib.is_warn_always_enabled()
        try:
            lib.set_warn_always(flag)
        except RuntimeError as exc:
            outcomes.append(("raises", str(exc)))
            continue
        try:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                for _ in range(2):
                    lib.ones(2, 3, 4).T
            outcomes.append(("ok", lib.is_warn_always_enabled(), [str(w.message)[:40] for w in caught]))
        finally:
            lib.set_warn_always(before)
    assert outcomes[0] == outcomes[1]

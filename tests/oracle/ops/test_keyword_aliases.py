"""The reductions' NumPy-style keyword aliases (axis= for dim, keepdims= for keepdim) against torch: results,
gradients, and torch's errors when an argument is given in both spellings or an op takes no such alias."""
import numpy as np
import pytest
import torch

import numgrad
from numgrad import testing as ngt

REDUCTIONS = ["sum", "mean", "max", "min", "amax", "amin", "any", "all", "var", "std", "prod", "argmax", "argmin",
              "logsumexp", "softmax", "log_softmax", "norm"]
# the keyword sets each op is called with (softmax and log_softmax take no keepdim, norm no alias at all)
ACCEPTED = [dict(axis=1), dict(axis=0, keepdims=True), dict(dim=1, keepdims=True), dict(axis=-1, keepdim=True),
            dict(axis=(0, 1)), dict(axis=[1], keepdims=False)]
CLASHES = [dict(dim=1, axis=1), dict(axis=1, dim=0), dict(axis=1, keepdim=True, keepdims=True),
           dict(keepdims=True, keepdim=True)]
POSITIONAL_CLASHES = [((1,), dict(axis=1)), ((1, True), dict(keepdims=True)), ((1,), dict(keepdim=True, keepdims=True))]


def _call(L, op, method, x, args, kwargs):
    fn = getattr(x, op) if method else (lambda *a, **k: getattr(L, op)(x, *a, **k))
    return fn(*args, **kwargs)


def _outcome(L, op, method, data, args, kwargs):
    """The result (values of every output) or the exception's type and message."""
    x = L.tensor(data)
    try:
        out = _call(L, op, method, x, args, kwargs)
    except Exception as exc:  # noqa: BLE001  (the point is to compare them)
        return f"{type(exc).__name__}: {exc}"
    outs = tuple(out) if isinstance(out, tuple) else (out,)
    return [(str(o.dtype).replace("numgrad", "torch"), tuple(o.shape), np.round(np.asarray(o.tolist(), float), 5).tolist())
            for o in outs]


DATA = np.arange(12.0).reshape(3, 4) * 0.5 - 1.0


# (softmax's refusal of a tuple of dims is left out: it names a position even for a keyword, alias or not)
CASES = [(op, kwargs) for op in REDUCTIONS for kwargs in ACCEPTED + CLASHES
         if not (op.endswith("softmax") and isinstance(kwargs.get("axis"), (tuple, list)))]


@pytest.mark.parametrize("method", [False, True], ids=["function", "method"])
@pytest.mark.parametrize("op,kwargs", CASES, ids=str)
def test_aliases_and_clashes_match_torch(op, kwargs, method):
    assert _outcome(numgrad, op, method, DATA, (), kwargs) == _outcome(torch, op, method, DATA, (), kwargs)


@pytest.mark.parametrize("method", [False, True], ids=["function", "method"])
@pytest.mark.parametrize("args,kwargs", POSITIONAL_CLASHES, ids=str)
@pytest.mark.parametrize("op", ["sum", "prod", "amax", "argmax", "logsumexp"])
def test_positional_and_alias_clash(op, args, kwargs, method):
    assert _outcome(numgrad, op, method, DATA, args, kwargs) == _outcome(torch, op, method, DATA, args, kwargs)


@pytest.mark.parametrize("op,kwargs", [("sum", dict(axis=1, keepdims=True)), ("mean", dict(axis=0)),
                                       ("amax", dict(axis=1, keepdims=True)), ("var", dict(axis=1, keepdims=True)),
                                       ("std", dict(axis=(0, 1))), ("prod", dict(axis=1)),
                                       ("logsumexp", dict(axis=0, keepdims=True)), ("softmax", dict(axis=1))])
def test_gradients_through_aliases(op, kwargs):
    ngt.compare_with_torch(lambda L, a: getattr(L, op)(a, **kwargs), DATA)
    ngt.compare_with_torch(lambda L, a: getattr(a, op)(**kwargs), DATA)


def test_max_with_axis_returns_values_and_indices():
    for L in (numgrad, torch):
        values, indices = L.tensor(DATA).max(axis=1, keepdims=True)
        assert values.shape == (3, 1) and indices.tolist() == [[3], [3], [3]]

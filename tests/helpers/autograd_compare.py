"""Shared helpers for the autograd and tensor-API tests: run one function on torch and on numgrad, compare results."""

import math
import re
import warnings

import numpy as np
import torch

import numgrad

LIBS = (torch, numgrad)

RTOL = 1e-5
ATOL = 1e-6

_ADDRESS = re.compile(r"0x[0-9a-fA-F]+")
# torch appends its own build's C++ source location to warnings raised in C++; not part of the message.
_TRIGGERED = re.compile(r"\s*\(Triggered internally at [^)]*\)\s*$")


def normalize(text):
    """Replaces object addresses and torch's C++ source locations so that two runs print the same text."""
    return _ADDRESS.sub("0x\u2026", _TRIGGERED.sub("", text))


def arr(values, dtype=np.float32):
    """A numpy array used as the common input of both libraries."""
    return np.array(values, dtype=dtype)


def fixed(shape, seed, low=None, high=None, dtype=np.float32):
    """A reproducible array standing in for randn (or uniform(low, high))."""
    rng = np.random.default_rng(seed)
    data = rng.standard_normal(shape) if low is None else rng.uniform(low, high, shape)
    return np.asarray(data, dtype=dtype)


def is_tensor(obj):
    return isinstance(obj, (torch.Tensor, numgrad.Tensor))


def is_node(obj):
    return hasattr(obj, "next_functions") and hasattr(obj, "name") and not is_tensor(obj)


def name_of(node):
    """A grad_fn's class name, or None."""
    return None if node is None else type(node).__name__


def edges(node):
    """next_functions as ((name, output_nr), ...)."""
    return tuple((name_of(n), nr) for n, nr in node.next_functions)


def tree(node, depth=12):
    """The graph below `node` as nested (name, ((child, output_nr), ...)), to compare graph shapes."""
    if node is None:
        return None
    if depth == 0:
        return (name_of(node), "...")
    return (name_of(node), tuple((tree(n, depth - 1), nr) for n, nr in node.next_functions))


def raises(fn, *args, **kwargs):
    """Calls fn; returns ('raises', exception type, message) or ('no exception', result)."""
    try:
        result = fn(*args, **kwargs)
    except Exception as exc:  # noqa: BLE001 - the type is part of what is compared
        return ("raises", type(exc).__name__, normalize(str(exc)))
    return ("no exception", describe(result))


def caught_warnings(fn, *args, **kwargs):
    """Calls fn; returns (result, [(category, message), ...]) of the warnings it emitted."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = fn(*args, **kwargs)
    return result, _warning_list(caught)


def _warning_list(caught):
    out = []
    for w in caught:
        module = getattr(w.category, "__module__", "")
        if module.startswith(("numba", "llvmlite")):
            continue  # JIT compiler chatter
        out.append((w.category.__name__, normalize(str(w.message))))
    return out


class Desc(tuple):
    """A described library object (tensor, node, dtype, ...): a tagged tuple, told apart from plain tuples."""


def describe(obj):
    """Turns a recorded value into a plain structure that `differences` understands: tuples, lists and
    dicts keep their type; tensors become Desc("tensor", dtype, shape, requires_grad, is_leaf, grad_fn, data)."""
    if obj is None or isinstance(obj, (bool, int, float, str, Desc)):
        return normalize(obj) if isinstance(obj, str) else obj
    if is_tensor(obj):
        return Desc(("tensor", str(obj.dtype).rsplit(".", 1)[-1], tuple(int(s) for s in obj.shape),
                     bool(obj.requires_grad), bool(obj.is_leaf), name_of(obj.grad_fn),
                     np.array(obj.detach().numpy(), copy=True)))
    if isinstance(obj, (torch.Size, numgrad.Size)):
        return Desc(("Size", tuple(obj)))
    if isinstance(obj, (torch.dtype, numgrad.dtypes.dtype)):
        return Desc(("dtype", str(obj)))
    if isinstance(obj, (torch.device, numgrad.device)):
        return Desc(("device", str(obj), repr(obj)))
    if is_node(obj):
        return Desc(("node", name_of(obj)))
    if isinstance(obj, np.ndarray):
        return Desc(("ndarray", obj.dtype.name, obj.shape, np.array(obj, copy=True)))
    if isinstance(obj, np.generic):
        return Desc(("npscalar", type(obj).__name__, obj.item()))
    if isinstance(obj, tuple):
        return tuple(describe(o) for o in obj)
    if isinstance(obj, list):
        return [describe(o) for o in obj]
    if isinstance(obj, dict):
        return {k: describe(v) for k, v in obj.items()}
    return Desc(("other", type(obj).__name__, normalize(repr(obj))))


def _close(x, y, rtol, atol):
    if isinstance(x, float) and isinstance(y, float):
        return (math.isnan(x) and math.isnan(y)) or math.isclose(x, y, rel_tol=rtol, abs_tol=atol)
    return x == y


def differences(a, b, rtol=RTOL, atol=ATOL, path="result"):
    """Where two described values differ (empty when they match)."""
    if type(a) is not type(b) and not (isinstance(a, tuple) and isinstance(b, tuple)
                                       and isinstance(a, Desc) == isinstance(b, Desc)):
        return [f"{path}: {a!r} (torch) vs {b!r} (numgrad)"]
    if isinstance(a, float):
        return [] if _close(a, b, rtol, atol) else [f"{path}: {a!r} vs {b!r}"]
    if isinstance(a, Desc) and a[0] == "tensor" and b[0] == "tensor":
        labels = ("dtype", "shape", "requires_grad", "is_leaf", "grad_fn")
        out = [f"{path}.{lab}: {x!r} (torch) vs {y!r} (numgrad)" for lab, x, y in zip(labels, a[1:6], b[1:6])
               if x != y]
        if not out:
            x, y = a[6], b[6]
            try:
                if x.dtype.kind in "fc":
                    np.testing.assert_allclose(y, x, rtol=rtol, atol=atol)
                else:
                    np.testing.assert_array_equal(y, x)
            except AssertionError:
                out.append(f"{path}.values: torch {x.tolist()} vs numgrad {y.tolist()}")
        return out
    if isinstance(a, Desc) and a[0] == "ndarray" and b[0] == "ndarray":
        if a[1:3] != b[1:3]:
            return [f"{path}: ndarray {a[1:3]} vs {b[1:3]}"]
        ok = np.allclose(a[3], b[3], rtol=rtol, atol=atol, equal_nan=True) if a[3].dtype.kind in "fc" \
            else np.array_equal(a[3], b[3])
        return [] if ok else [f"{path}: ndarray {a[3].tolist()} vs {b[3].tolist()}"]
    if isinstance(a, dict):
        if list(a) != list(b):
            return [f"{path}: keys {list(a)} (torch) vs {list(b)} (numgrad)"]
        return [d for k in a for d in differences(a[k], b[k], rtol, atol, f"{path}[{k!r}]")]
    if isinstance(a, (tuple, list)):
        if len(a) != len(b):
            return [f"{path}: {a!r} (torch) vs {b!r} (numgrad)"]
        out = []
        for i, (x, y) in enumerate(zip(a, b)):
            out += differences(x, y, rtol, atol, f"{path}[{i}]")
        return out
    return [] if a == b else [f"{path}: {a!r} (torch) vs {b!r} (numgrad)"]


def run(fn, lib):
    """Runs fn(lib) with all warnings recorded; returns (described result, warnings, exception)."""
    warn_always = torch.is_warn_always_enabled()
    torch.set_warn_always(True)  # TORCH_WARN_ONCE warnings show on every run, as Python's do here
    error, result = None, None
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                result = describe(fn(lib))
            except Exception as exc:  # noqa: BLE001 - reported by the caller
                error = exc
    finally:
        torch.set_warn_always(warn_always)
        lib.set_grad_enabled(True)
    return result, _warning_list(caught), error


def same(fn, rtol=RTOL, atol=ATOL, check_warnings=True):
    """Runs fn(torch) and fn(numgrad) and asserts that results (and warnings) are equal; returns torch's."""
    ref, ref_warn, ref_err = run(fn, torch)
    if ref_err is not None:
        raise AssertionError(f"test bug: torch raised {type(ref_err).__name__}: {ref_err}") from ref_err
    got, got_warn, got_err = run(fn, numgrad)
    if got_err is not None:
        raise AssertionError(f"numgrad raised {type(got_err).__name__}: {got_err}") from got_err
    diffs = differences(ref, got, rtol, atol)
    if check_warnings and ref_warn != got_warn:
        diffs.append(f"warnings: torch {ref_warn!r} vs numgrad {got_warn!r}")
    assert not diffs, "torch and numgrad differ:\n  " + "\n  ".join(diffs)
    return ref


def both(fn):
    """Runs fn(lib) for each library (for checks that are not comparisons with torch)."""
    return [fn(lib) for lib in LIBS]


def leaf(lib, values, dtype=np.float32, requires_grad=True):
    """The same leaf tensor in either library."""
    return lib.tensor(np.array(values, dtype=dtype), requires_grad=requires_grad)


def bug(reason):
    """A temporary note: numgrad disagrees with torch here (the lead removes it once fixed)."""
    import pytest
    return pytest.mark.xfail(strict=True, reason="numgrad bug: " + reason)


def params(cases, bugs=None):
    """pytest params from (id, value...) rows; `bugs` maps an id to the numgrad bug that fails it."""
    import pytest
    bugs = bugs or {}
    return [pytest.param(*c, id=c[0], marks=[bug(bugs[c[0]])] if c[0] in bugs else []) for c in cases]

"""The edge sweep's comparison: one call run on torch and numgrad from the same NumPy inputs, its outcome
(values with NaN positions and signed zeros, dtype, shape, grad_fn name, gradients, or the exception's type
and message) reduced to plain data, and the two outcomes compared exactly."""
import warnings

import numpy as np
import torch

import numgrad

LIBS = (torch, numgrad)


def make(lib, value, grad=False):
    """A NumPy array (or a tuple of them) becomes a tensor of lib; anything else (Python scalars, dims, None)
    passes through. Floating arrays require grad when `grad`."""
    if isinstance(value, np.ndarray):
        return lib.tensor(value.copy(), requires_grad=grad and value.dtype.kind == "f")
    return value


def _leaf(value):
    """One result reduced to comparable data; tensors keep their array for the value comparison."""
    if isinstance(value, (torch.Tensor, numgrad.Tensor)):
        fn = value.grad_fn.name() if value.grad_fn is not None else None
        return ("tensor", tuple(value.shape), str(value.dtype), value.requires_grad, fn,
                value.detach().numpy().copy())
    if isinstance(value, (tuple, list)):
        return (type(value).__name__ if type(value) in (tuple, list) else "tuple", [_leaf(v) for v in value])
    if isinstance(value, (bool, int, float)) or value is None:
        return ("py", type(value).__name__, value)
    return ("other", type(value).__name__, str(value))


def outcome(lib, fn, args, grad=True):
    """fn(lib, *tensors) reduced with _leaf, plus the inputs' gradients after backward of the sum of every
    floating result that requires grad; an exception (in the call or in backward) becomes (type, message).
    The last item lists the RuntimeWarnings raised on the way (NumPy's overflow or invalid-value
    warnings leaking out of numgrad: torch is silent)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = _run(lib, fn, args, grad)
    leaked = sorted({str(w.message) for w in caught if issubclass(w.category, RuntimeWarning)})
    return result + (("RuntimeWarning", leaked),) if leaked else result


def _run(lib, fn, args, grad):
    ins = [make(lib, a, grad) for a in args]
    try:
        out = fn(lib, *ins)
    except Exception as e:  # noqa: BLE001  the exception is the outcome compared
        return ("raises", type(e).__name__, str(e).split("\n")[0])
    result = _leaf(out)
    outs = list(out) if isinstance(out, (tuple, list)) else [out]
    roots = [o for o in outs if isinstance(o, (torch.Tensor, numgrad.Tensor)) and o.requires_grad]
    if not roots:
        return ("value", result)
    try:
        loss = roots[0].sum()
        for o in roots[1:]:
            loss = loss + o.sum()
        loss.backward()
    except Exception as e:  # noqa: BLE001
        return ("value", result, ("backward raises", type(e).__name__, str(e).split("\n")[0]))
    grads = [_leaf(t.grad) if isinstance(t, (torch.Tensor, numgrad.Tensor)) else None for t in ins]
    return ("value", result, grads)


def _same_array(a, b, rtol, atol, signs=True):
    if a.dtype != b.dtype:
        return f"array dtype {a.dtype} != {b.dtype}"
    if a.dtype.kind != "f":
        return None if np.array_equal(a, b) else f"{a} != {b}"
    if not np.array_equal(np.isnan(a), np.isnan(b)):
        return f"NaN positions: {a} != {b}"
    ok = ~np.isnan(a)
    x, y = a[ok].astype(np.float64), b[ok].astype(np.float64)
    if not np.array_equal(np.isinf(x), np.isinf(y)) or not np.array_equal(x[np.isinf(x)], y[np.isinf(y)]):
        return f"infinities: {a} != {b}"
    zero = (x == 0) & (y == 0)
    if signs and not np.array_equal(np.signbit(x[zero]), np.signbit(y[zero])):
        return f"signed zeros: {a} != {b}"
    fin = np.isfinite(x)
    if not np.allclose(x[fin], y[fin], rtol=rtol, atol=atol):
        return f"values: {a} != {b}"
    return None


# float32 kernels may differ from torch's vectorised ones by an ulp or so (tanh(3)), which a gradient such
# as 1 - tanh**2 turns into about 1e-5 relative; float64 is held much closer
TOLERANCE = {np.dtype(np.float32): (1e-5, 1e-6), np.dtype(np.float64): (1e-9, 1e-12)}


def diff(t, n, signs=True):
    """The first difference between a torch outcome and a numgrad one (None when they agree). `signs`
    compares the sign of zeros too (for results whose sign torch defines)."""
    if isinstance(t, np.ndarray) or isinstance(n, np.ndarray):
        if not (isinstance(t, np.ndarray) and isinstance(n, np.ndarray)):
            return f"{t!r} != {n!r}"
        if t.shape != n.shape:
            return f"array shape {t.shape} != {n.shape}"
        rtol, atol = TOLERANCE.get(t.dtype, (0, 0))
        return _same_array(t, n, rtol, atol, signs)
    if isinstance(t, (tuple, list)) and isinstance(n, (tuple, list)):
        if len(t) != len(n):
            return f"{t!r} != {n!r}"
        for a, b in zip(t, n):
            d = diff(a, b, signs)
            if d:
                return d
        return None
    if isinstance(t, float) and isinstance(n, float):
        if np.isnan(t) and np.isnan(n):
            return None
        return None if t == n and np.signbit(t) == np.signbit(n) or abs(t - n) <= 1e-6 * abs(t) else f"{t} != {n}"
    return None if t == n else f"{t!r} != {n!r}"


def compare(fn, *args, grad=True, fusion=None, signs=True, grad_signs=True):
    """Runs fn in both libraries (numgrad with fusion on/off when given) and returns the first difference,
    or None. `signs` / `grad_signs`: whether the sign of a zero counts, in the results / the gradients."""
    t = outcome(torch, fn, args, grad)
    if fusion is None:
        n = outcome(numgrad, fn, args, grad)
    else:
        with numgrad.fusion(fusion):
            n = outcome(numgrad, fn, args, grad)
    d = diff(t[:2], n[:2], signs) or diff(t[2:], n[2:], grad_signs)
    return None if d is None else f"{d}\n  torch:   {_short(t)}\n  numgrad: {_short(n)}"


def _short(o):
    text = repr(o)
    return text if len(text) < 600 else text[:600] + "..."

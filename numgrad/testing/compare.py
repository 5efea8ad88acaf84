"""assert_close, gradcheck, gradgradcheck and compare_with_torch: comparing values, gradients and whole
functions with torch."""
import collections.abc
import dataclasses
import numbers

import re
import traceback

import numpy as np

import numgrad  # compare_with_torch hands the library itself to the function under test
from .. import autograd
from .._core import dtypes
from ..autograd import grad
from ..ops.creation import tensor
from ..tensor import Tensor

__all__ = [
    "Difference",
    "GradcheckError",
    "TorchComparison",
    "assert_close",
    "compare_with_torch",
    "default_tolerances",
    "gradcheck",
    "gradgradcheck",
]

# torch.testing.assert_close's defaults (rtol, atol); exact comparison for everything else.
_PRECISIONS = {"float16": (1e-3, 1e-5), "bfloat16": (1.6e-2, 1e-5), "float32": (1.3e-6, 1e-5),
               "float64": (1e-7, 1e-7)}


class GradcheckError(RuntimeError):
    """Raised by gradcheck and gradgradcheck, as torch.autograd.gradcheck.GradcheckError."""


# ---- converting whatever the user hands us into numpy ------------------------------------------------

def _is_numgrad(x):
    return isinstance(x, Tensor)


def _is_torch(x):
    # duck-typed so that numgrad never imports torch
    return type(x).__module__.startswith("torch") and hasattr(x, "detach") and hasattr(x, "dtype")


def _is_array_like(x):
    return _is_numgrad(x) or _is_torch(x) or isinstance(x, (np.ndarray, np.generic))


def _to_numpy(x):
    """(array, dtype name) of a numgrad tensor, torch tensor or numpy array/scalar."""
    if _is_numgrad(x):
        return x._data, x.dtype.name
    if _is_torch(x):
        name = str(x.dtype).replace("torch.", "")
        t = x.detach()
        if name == "bfloat16":
            t = t.float()
        return t.numpy(force=True), name  # force: also ZeroTensors (torch's lazily-zero gradients)
    arr = np.asarray(x)
    return arr, ("bool" if arr.dtype == np.bool_ else arr.dtype.name)


def _shape_repr(shape):
    return f"torch.Size([{', '.join(str(int(s)) for s in shape)}])"


def _tolerances(names, rtol, atol):
    if (rtol is None) != (atol is None):
        raise ValueError(f"Both 'rtol' and 'atol' must be either specified or omitted, but got no "
                         f"{'rtol' if rtol is None else 'atol'}.")
    if rtol is not None:
        return rtol, atol
    pairs = [_PRECISIONS.get(n, (0.0, 0.0)) for n in names]
    return max(p[0] for p in pairs), max(p[1] for p in pairs)


def default_tolerances(*dtypes):
    """(rtol, atol) that assert_close uses for these dtypes (numgrad/torch dtypes or their names)."""
    names = [d if isinstance(d, str) else str(getattr(d, "name", d)).replace("torch.", "") for d in dtypes]
    return _tolerances(names, None, None)


# ---- assert_close ----------------------------------------------------------------------------------

def _diff_line(kind, diff, idx, tol, equality):
    line = f"{kind.title()} difference: {diff}" if idx is None else f"Greatest {kind} difference: {diff} at index {idx}"
    return line + ("" if equality else f" (up to {tol} allowed)")


def _mismatch_message(identifier, extra, abs_diff, abs_idx, rel_diff, rel_idx, rtol, atol):
    equality = rtol == 0 and atol == 0
    msg = f"{identifier} are not {'equal' if equality else 'close'}!\n\n{extra}\n"
    msg += _diff_line("absolute", abs_diff, abs_idx, atol, equality) + "\n"
    msg += _diff_line("relative", rel_diff, rel_idx, rtol, equality)
    return msg


def _close_mask(a, e, rtol, atol, equal_nan):
    """torch.isclose: |a - e| <= atol + rtol * |e|, equal infinities match, NaN only with equal_nan."""
    if a.dtype.kind not in "fc" and rtol == 0 and atol == 0:
        return a == e
    a64, e64 = a.astype(np.float64), e.astype(np.float64)
    with np.errstate(invalid="ignore", over="ignore"):
        finite = np.isfinite(a64) & np.isfinite(e64)
        close = (a64 == e64) | (finite & (np.abs(a64 - e64) <= atol + rtol * np.abs(e64)))
    if equal_nan:
        close |= np.isnan(a64) & np.isnan(e64)
    return close


def _compare_arrays(a, e, rtol, atol, equal_nan, identifier):
    """None when close, else torch's mismatch message (0-d tensors read as scalars, as in torch)."""
    if a.dtype != e.dtype:
        common = np.result_type(a.dtype, e.dtype)
        a, e = a.astype(common), e.astype(common)
    matches = _close_mask(a, e, rtol, atol, equal_nan)
    if matches.all():
        return None
    if a.ndim == 0:
        return _scalar_message(a.item(), e.item(), rtol, atol, identifier or "Scalars")
    if a.dtype.kind not in "fc":
        a, e = a.astype(np.int64), e.astype(np.int64)
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        abs_diff = np.abs(a - e).reshape(-1)
        abs_diff[matches.reshape(-1)] = 0
        rel_diff = abs_diff / np.abs(e.reshape(-1))
        rel_diff[matches.reshape(-1)] = 0
    n, bad = matches.size, int(matches.size - matches.sum())
    extra = f"Mismatched elements: {bad} / {n} ({bad / n:.1%})"
    ia, ir = _nan_argmax(abs_diff), _nan_argmax(rel_diff)
    return _mismatch_message(identifier or "Tensor-likes", extra, abs_diff[ia].item(),
                             tuple(int(i) for i in np.unravel_index(ia, a.shape)), rel_diff[ir].item(),
                             tuple(int(i) for i in np.unravel_index(ir, a.shape)), rtol, atol)


def _nan_argmax(x):
    # torch.max propagates NaN: a NaN difference is the greatest one
    nans = np.flatnonzero(np.isnan(x))
    return int(nans[0]) if nans.size else int(np.argmax(x))


def _scalar_message(actual, expected, rtol, atol, identifier):
    abs_diff = abs(actual - expected)
    rel_diff = float("inf") if expected == 0 else abs_diff / abs(expected)
    return _mismatch_message(identifier, f"Expected {expected} but got {actual}.", abs_diff, None, rel_diff, None,
                             rtol, atol)


def _compare_pair(actual, expected, rtol, atol, equal_nan, check_dtype):
    """None when `actual` and `expected` match, else the reason (torch's wording)."""
    scalar_a, scalar_e = isinstance(actual, numbers.Number), isinstance(expected, numbers.Number)
    if scalar_a and scalar_e and not (_is_array_like(actual) or _is_array_like(expected)):
        if check_dtype and type(actual) is not type(expected):
            return f"The (d)types do not match: {type(actual)} != {type(expected)}."
        kinds = {bool: "bool", int: "int64", float: "float64"}
        names = [kinds.get(type(x), "float64") for x in (actual, expected)]
        rt, at = _tolerances(names, rtol, atol)
        if isinstance(actual, complex) or isinstance(expected, complex):
            if abs(actual - expected) <= at + rt * abs(expected) or (
                    equal_nan and _isnan(actual) and _isnan(expected)):
                return None
            return _scalar_message(actual, expected, rt, at, "Scalars")
        return _compare_arrays(np.asarray(actual, np.float64 if names[0] == "float64" else None),
                               np.asarray(expected, np.float64 if names[1] == "float64" else None),
                               rt, at, equal_nan, "Scalars")
    if (scalar_a and not _is_array_like(actual)) or (scalar_e and not _is_array_like(expected)):
        # a Python number against a tensor: read it as a 0-d value of the tensor's dtype
        arr, name = _to_numpy(expected if scalar_a else actual)
        num = np.asarray(actual if scalar_a else expected).astype(arr.dtype)
        a, e = (num, arr) if scalar_a else (arr, num)
        if a.shape != e.shape:
            return f"The values for attribute 'shape' do not match: {_shape_repr(a.shape)} != {_shape_repr(e.shape)}."
        rt, at = _tolerances([name], rtol, atol)
        return _compare_arrays(a, e, rt, at, equal_nan, None)
    if not (_is_array_like(actual) and _is_array_like(expected)):
        raise TypeError(f"No comparison pair was able to handle inputs of type {type(actual)} and {type(expected)}.")
    a, an = _to_numpy(actual)
    e, en = _to_numpy(expected)
    if a.shape != e.shape:
        return f"The values for attribute 'shape' do not match: {_shape_repr(a.shape)} != {_shape_repr(e.shape)}."
    if check_dtype and an != en:
        return f"The values for attribute 'dtype' do not match: torch.{an} != torch.{en}."
    rt, at = _tolerances([an, en], rtol, atol)
    return _compare_arrays(a, e, rt, at, equal_nan, None)


def _isnan(x):
    return x != x  # noqa: PLR0124  NaN is the only value unequal to itself (also for complex)


def _walk(actual, expected, path, fn):
    """Pairs nested sequences and mappings as torch.testing does; `fn` compares the leaves."""
    seq = (collections.abc.Sequence,)
    if isinstance(actual, seq) and isinstance(expected, seq) and not isinstance(actual, str) \
            and not isinstance(expected, str):
        if len(actual) != len(expected):
            return path, f"The length of the sequences mismatch: {len(actual)} != {len(expected)}"
        for i, (a, e) in enumerate(zip(actual, expected)):
            r = _walk(a, e, path + [i], fn)
            if r is not None:
                return r
        return None
    if isinstance(actual, collections.abc.Mapping) and isinstance(expected, collections.abc.Mapping):
        if set(actual) != set(expected):
            return path, (f"The keys of the mappings do not match:\nMissing keys in the actual mapping: "
                          f"{sorted(map(repr, set(expected) - set(actual)))}\nAdditional keys in the actual "
                          f"mapping: {sorted(map(repr, set(actual) - set(expected)))}")
        for k in expected:
            r = _walk(actual[k], expected[k], path + [k], fn)
            if r is not None:
                return r
        return None
    msg = fn(actual, expected)
    return None if msg is None else (path, msg)


def assert_close(actual, expected, *, rtol=None, atol=None, equal_nan=False, check_dtype=True, msg=None):
    """torch.testing.assert_close for numgrad tensors, torch tensors, numpy arrays, Python numbers and
    (nested) sequences or mappings of them. Tolerances default to torch's per dtype (float32: rtol 1.3e-6,
    atol 1e-5; float64: 1e-7 both; integers and bool: exact). Unlike torch, the two sides may be of different
    kinds (a numgrad tensor against a torch tensor or a numpy array); a Python number against a tensor is read
    as a 0-d value of the tensor's dtype. `msg` replaces the message, or, if callable, rewrites it."""
    failure = _walk(actual, expected, [],
                    lambda a, e: _compare_pair(a, e, rtol, atol, equal_nan, check_dtype))
    if failure is None:
        return
    path, message = failure
    if path:
        message += "\n\nThe failure occurred for item " + "".join(f"[{p!r}]" for p in path)
    if callable(msg):
        message = msg(message)
    elif msg is not None:
        message = msg
    raise AssertionError(message)


# ---- gradcheck ------------------------------------------------------------------------------------

def _as_tuple(x):
    return tuple(x) if isinstance(x, (tuple, list)) else (x,)


def _float64_inputs(inputs):
    """Leaf float64 copies of the floating tensors (requires_grad kept); other inputs pass unchanged."""
    out = []
    for x in inputs:
        if _is_numgrad(x) and x.dtype.is_floating_point:
            out.append(tensor(np.array(x._data, dtype=np.float64), dtype=dtypes.float64,
                              requires_grad=x.requires_grad))
        else:
            out.append(x)
    return out


def _diff_outputs(outputs):
    return [o for o in _as_tuple(outputs) if _is_numgrad(o) and o.dtype.is_floating_point]


def _numerical_jacobians(fn, inputs, diff_idx, eps):
    """J[i][o]: (numel of input i, numel of output o) central differences, evaluated in float64."""

    def run(values):
        args = [tensor(values[k], dtype=inputs[k].dtype, requires_grad=inputs[k].requires_grad) if k in values
                else inputs[k] for k in range(len(inputs))]
        return [np.array(o.detach()._data, dtype=np.float64) for o in _diff_outputs(fn(*args))]

    jac = {}
    for i in diff_idx:
        base = np.array(inputs[i]._data, dtype=np.float64)
        rows = []
        for j in range(base.size):
            plus, minus = base.copy(), base.copy()
            plus.reshape(-1)[j] += eps
            minus.reshape(-1)[j] -= eps
            fp, fm = run({i: plus}), run({i: minus})
            rows.append([((p - m) / (2 * eps)).reshape(-1) for p, m in zip(fp, fm)])
        n_out = len(run({}))
        jac[i] = [np.stack([r[o] for r in rows]) if rows else np.zeros((0, 0)) for o in range(n_out)]
    return jac


def _vjp(outputs, o, k, inputs, diff_idx):
    """Row k of output o's Jacobian: the input gradients for a one-hot grad_output."""
    out = outputs[o]
    if not out.requires_grad:
        return [None] * len(diff_idx)
    onehot = np.zeros(out._data.size, out._data.dtype)
    onehot[k] = 1
    g = tensor(onehot.reshape(out._data.shape), dtype=out.dtype)
    return list(grad([out], [inputs[i] for i in diff_idx], [g], retain_graph=True, allow_unused=True))


def _analytical_jacobians(outputs, inputs, diff_idx, nondet_tol):
    jac = {i: [np.zeros((inputs[i]._data.size, o._data.size)) for o in outputs] for i in diff_idx}
    for o, out in enumerate(outputs):
        for k in range(out._data.size):
            grads = _vjp(outputs, o, k, inputs, diff_idx)
            if k == 0:  # reentrancy: the same backward twice gives the same answer
                again = _vjp(outputs, o, k, inputs, diff_idx)
                for g1, g2 in zip(grads, again):
                    if g1 is not None and g2 is not None and not np.allclose(
                            g1._data, g2._data, rtol=0, atol=nondet_tol, equal_nan=True):
                        raise GradcheckError(
                            "Backward is not reentrant, i.e., running backward with same input and grad_output "
                            "multiple times gives different values, although analytical gradient matches "
                            f"numerical gradient.The tolerance for nondeterminism was {nondet_tol}.")
            for i, g in zip(diff_idx, grads):
                if g is None:
                    continue
                if tuple(g.shape) != tuple(inputs[i].shape):
                    raise GradcheckError(f"Gradient has shape mismatch for input {i}: got {_shape_repr(g.shape)}, "
                                         f"expected {_shape_repr(inputs[i].shape)}")
                if g.dtype is not inputs[i].dtype:
                    raise GradcheckError(f"Gradient has dtype mismatch for input {i}: got {g.dtype}, "
                                         f"expected {inputs[i].dtype}")
                jac[i][o][:, k] = np.asarray(g._data, np.float64).reshape(-1)
    return jac


def _jacobian_repr(j):
    j = j + 0.0  # no "-0.0000" from a zero times a negative
    return repr(tensor(j, requires_grad=False).double()) if j.size else f"tensor([], size={tuple(j.shape)})"


def gradcheck(fn, inputs, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True, *, nondet_tol=0.0):
    """Checks numgrad's gradients of `fn` against central finite differences, as torch.autograd.gradcheck.
    Floating inputs are copied to float64 first (torch only warns about single precision), so the
    comparison is |analytical - numerical| <= atol + rtol * |numerical| in double. Returns True, or
    raises GradcheckError ("Jacobian mismatch for output 0 with respect to input 0, ...") / returns False."""
    try:
        inputs = _float64_inputs(_as_tuple(inputs))
        diff_idx = [i for i, x in enumerate(inputs) if _is_numgrad(x) and x.requires_grad]
        if not diff_idx:
            raise ValueError("gradcheck expects at least one input tensor to require gradient, but none of the "
                             "them have requires_grad=True.")
        for i in diff_idx:
            if not inputs[i].dtype.is_floating_point:
                raise ValueError(f"gradcheck expects input {i} that requires grad to be floating point")
        outputs = _diff_outputs(fn(*inputs))
        numerical = _numerical_jacobians(fn, inputs, diff_idx, eps)
        analytical = _analytical_jacobians(outputs, inputs, diff_idx, nondet_tol)
        for o in range(len(outputs)):
            for i in diff_idx:
                a, n = analytical[i][o], numerical[i][o]
                with np.errstate(invalid="ignore"):
                    ok = a.shape == n.shape and bool(np.all(np.abs(a - n) <= atol + rtol * np.abs(n)))
                if not ok:
                    raise GradcheckError(f"Jacobian mismatch for output {o:d} with respect to input {i:d},\n"
                                         f"numerical:{_jacobian_repr(n)}\nanalytical:{_jacobian_repr(a)}\n")
    except GradcheckError:
        if raise_exception:
            raise
        return False
    return True


def gradgradcheck(fn, inputs, grad_outputs=None, *, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True,
                  nondet_tol=0.0, seed=0):
    """Second-order gradcheck, as torch.autograd.gradgradcheck: checks the gradients of
    autograd.grad(fn(inputs), inputs, grad_outputs, create_graph=True) with respect to the inputs and to
    grad_outputs (random float64 tensors when not given) by finite differences."""
    inputs = _float64_inputs(_as_tuple(inputs))
    n_in = len(inputs)
    outputs = _diff_outputs(fn(*inputs))
    if grad_outputs is None:
        rng = np.random.default_rng(seed)
        grad_outputs = [tensor(rng.standard_normal(o._data.shape), dtype=dtypes.float64, requires_grad=True)
                        for o in outputs]
    else:
        grad_outputs = _float64_inputs(_as_tuple(grad_outputs))
        grad_outputs = [g if g.requires_grad else g.detach().requires_grad_(True) for g in grad_outputs]

    def first_order(*args):
        ins, gos = args[:n_in], args[n_in:]
        diff = [x for x in ins if _is_numgrad(x) and x.requires_grad]
        outs = _diff_outputs(fn(*ins))
        pairs = [(o, g) for o, g in zip(outs, gos) if o.requires_grad]
        if not pairs:
            return ()
        grads = grad([o for o, _ in pairs], diff, [g for _, g in pairs], create_graph=True, allow_unused=True)
        return tuple(g for g in grads if g is not None)

    return gradcheck(first_order, tuple(inputs) + tuple(grad_outputs), eps=eps, atol=atol, rtol=rtol,
                     raise_exception=raise_exception, nondet_tol=nondet_tol)


# ---- compare_with_torch ---------------------------------------------------------------------------

@dataclasses.dataclass
class Difference:
    where: str  # "output 0", "grad of input 1"
    what: str  # "values", "dtype", "shape", "grad_fn", "requires_grad", "type", "exception"
    detail: str
    max_abs_error: float = None


@dataclasses.dataclass
class TorchComparison:
    """What compare_with_torch found: `ok`, every difference, and the max abs error of each compared value."""
    differences: list = dataclasses.field(default_factory=list)
    max_abs_errors: dict = dataclasses.field(default_factory=dict)

    @property
    def ok(self):
        return not self.differences

    def __bool__(self):
        return self.ok

    def __str__(self):
        errs = ", ".join(f"{k}: {v:.3g}" for k, v in self.max_abs_errors.items())
        if self.ok:
            return f"numgrad matches torch (max abs error {errs or 'n/a'})"
        lines = [f"numgrad differs from torch in {len(self.differences)} place(s):"]
        for d in self.differences:
            err = "" if d.max_abs_error is None else f" (max abs error {d.max_abs_error:.6g})"
            lines.append(f"- {d.where}: {d.what}{err}\n    " + d.detail.replace("\n", "\n    "))
        if errs:
            lines.append(f"max abs errors: {errs}")
        return "\n".join(lines)


def _leaves(x):
    if isinstance(x, (tuple, list)):
        return [leaf for item in x for leaf in _leaves(item)]
    return [x]


def _max_abs_error(a, e):
    a64, e64 = np.asarray(a, np.float64), np.asarray(e, np.float64)
    if a64.shape != e64.shape or a64.size == 0:
        return None
    with np.errstate(invalid="ignore"):
        d = np.where((a64 == e64) | (np.isnan(a64) & np.isnan(e64)), 0.0, np.abs(a64 - e64))
    return float(np.max(d))


def _compare_tensor(report, where, ours, theirs, rtol, atol, check_dtype, equal_nan):
    import torch
    if not isinstance(theirs, torch.Tensor):
        if _is_numgrad(ours):
            report.differences.append(Difference(where, "type", f"torch gave {type(theirs).__name__}, "
                                                                f"numgrad a Tensor"))
            return
        msg = _walk(ours, theirs, [], lambda a, e: _compare_pair(a, e, rtol, atol, equal_nan, check_dtype))
        if msg is not None:
            report.differences.append(Difference(where, "values", msg[1]))
        return
    if not _is_numgrad(ours):
        report.differences.append(Difference(where, "type", f"torch gave a Tensor, numgrad {type(ours).__name__}"))
        return
    a, _ = _to_numpy(ours)
    e, _ = _to_numpy(theirs)
    err = _max_abs_error(a, e)
    if err is not None:
        report.max_abs_errors[where] = err
    msg = _compare_pair(ours, theirs, rtol, atol, equal_nan, check_dtype)
    if msg is not None:
        what = "shape" if "'shape'" in msg else "dtype" if "'dtype'" in msg else "values"
        report.differences.append(Difference(where, what, msg, err if what == "values" else None))


def _lib_inputs(np_inputs, flags):
    """The same numpy inputs as numgrad and torch tensors (each its own copy); others pass unchanged."""
    import torch
    ours, theirs = [], []
    for x, rg in zip(np_inputs, flags):
        if isinstance(x, np.ndarray):
            want = bool(rg) and x.dtype.kind == "f"
            ours.append(tensor(np.array(x), requires_grad=want))
            theirs.append(torch.tensor(np.array(x), requires_grad=want))
        else:
            ours.append(x)
            theirs.append(x)
    return ours, theirs


def _exception_detail(exc):
    frames = traceback.extract_tb(exc.__traceback__)[-3:]
    where = "; ".join(f"{f.filename.rsplit('/', 1)[-1]}:{f.lineno} {f.name}" for f in frames)
    return f"{type(exc).__name__}: {exc}\n(at {where})"


def compare_with_torch(fn, *np_inputs, requires_grad=True, rtol=None, atol=None, grad_rtol=None, grad_atol=None,
                       second_order=False, second_order_rtol=None, second_order_atol=None, equal_nan=True,
                       check_grad_fn=False, check_message=False, seed=0, raise_exception=True):
    """Runs `fn(lib, *tensors)` once with numgrad and once with torch on the same numpy inputs (Python
    scalars and other values pass unchanged) and compares outputs (type, shape, dtype, values, requires_grad,
    and with check_grad_fn the grad_fn class name), then the input gradients of a backward from a
    random-weighted sum of the floating outputs. With second_order, it also takes the first-order gradients
    with autograd.grad(create_graph=True) and compares them and the gradients of a random-weighted sum of them
    with respect to the inputs and to the grad_outputs. `requires_grad` is a bool or one per input (only
    floating inputs get it). Tolerances default to assert_close's per dtype; grad_* to rtol/atol and
    second_order_* to grad_*. If torch raises, numgrad must raise the same exception type (and, with
    check_message, the same message, less torch's "(Triggered internally at ...)" suffix). Raises
    AssertionError with the report when anything differs (or returns the TorchComparison, falsy, with
    raise_exception=False); the report lists where outputs/gradients differ and the max abs error of each."""
    import torch

    flags = list(requires_grad) if isinstance(requires_grad, (tuple, list)) else [requires_grad] * len(np_inputs)
    grad_rtol, grad_atol = (rtol, atol) if grad_rtol is None and grad_atol is None else (grad_rtol, grad_atol)
    if second_order_rtol is None and second_order_atol is None:
        second_order_rtol, second_order_atol = grad_rtol, grad_atol
    rng = np.random.default_rng(seed)
    report = TorchComparison()
    ours_in, theirs_in = _lib_inputs(np_inputs, flags)
    results = []
    for lib, args in ((numgrad, ours_in), (torch, theirs_in)):
        try:
            results.append((fn(lib, *args), None))
        except Exception as exc:  # noqa: BLE001  an error is a result to compare
            results.append((None, exc))
    (ours, our_exc), (theirs, their_exc) = results
    if our_exc is not None or their_exc is not None:
        if our_exc is None or their_exc is None or not isinstance(our_exc, type(their_exc)) or (
                check_message and _message(our_exc) != _message(their_exc)):
            ours_text = repr(None) if our_exc is None else _exception_detail(our_exc)
            detail = f"torch: {their_exc!r}\nnumgrad: {ours_text}"
            report.differences.append(Difference("call", "exception", detail))
    else:
        _compare_outputs(report, ours, theirs, rtol, atol, equal_nan, check_grad_fn)
        if report.ok:
            try:
                _compare_backward(report, ours, theirs, ours_in, theirs_in, grad_rtol, grad_atol, equal_nan, rng)
            except Exception as exc:  # noqa: BLE001
                report.differences.append(Difference("backward()", "exception", _exception_detail(exc)))
        if report.ok and second_order:
            ours_in, theirs_in = _lib_inputs(np_inputs, flags)
            try:
                _compare_second_order(report, fn(numgrad, *ours_in), fn(torch, *theirs_in), ours_in, theirs_in,
                                      (grad_rtol, grad_atol), (second_order_rtol, second_order_atol), equal_nan, rng)
            except Exception as exc:  # noqa: BLE001
                report.differences.append(Difference("create_graph", "exception", _exception_detail(exc)))
    if not report.ok and raise_exception:
        raise AssertionError(str(report))
    return report


def _message(exc):
    return re.sub(r"\s*\(Triggered internally at [^)]*\)\s*$", "", str(exc))


def _compare_outputs(report, ours, theirs, rtol, atol, equal_nan, check_grad_fn):
    import torch
    ol, tl = _leaves(ours), _leaves(theirs)
    if len(ol) != len(tl):
        report.differences.append(Difference("outputs", "count", f"torch returned {len(tl)}, numgrad {len(ol)}"))
        return
    for k, (o, t) in enumerate(zip(ol, tl)):
        where = f"output {k}"
        _compare_tensor(report, where, o, t, rtol, atol, True, equal_nan)
        if isinstance(t, torch.Tensor) and _is_numgrad(o):
            if o.requires_grad != t.requires_grad:
                report.differences.append(Difference(where, "requires_grad", f"torch {t.requires_grad}, "
                                                                             f"numgrad {o.requires_grad}"))
            elif check_grad_fn:
                tn = type(t.grad_fn).__name__ if t.grad_fn is not None else None
                on = type(o.grad_fn).__name__ if o.grad_fn is not None else None
                if tn != on:
                    report.differences.append(Difference(where, "grad_fn", f"torch {tn}, numgrad {on}"))


def _differentiable(ours, theirs):
    import torch
    return [(o, t) for o, t in zip(_leaves(ours), _leaves(theirs)) if isinstance(t, torch.Tensor) and t.requires_grad]


def _np_dtype(t):
    return _to_numpy(t)[0].dtype


def _run_both(report, where, theirs, ours):
    """(torch's result, numgrad's result) of one step; None when torch raises (no derivative defined,
    say), after checking that numgrad raises the same error."""
    try:
        theirs_result = theirs()
    except Exception as theirs_error:
        try:
            ours()
        except Exception as ours_error:
            if type(ours_error) is not type(theirs_error) or str(ours_error) != str(theirs_error):
                report.differences.append(Difference(where, "exception", f"torch {theirs_error!r}, "
                                                                         f"numgrad {ours_error!r}"))
            return None
        report.differences.append(Difference(where, "exception", f"torch {theirs_error!r}, numgrad none"))
        return None
    return theirs_result, ours()


def _compare_backward(report, ours, theirs, ours_in, theirs_in, rtol, atol, equal_nan, rng):
    """backward() from a random-weighted sum of the outputs; the inputs' .grad compared."""
    import torch
    pairs = _differentiable(ours, theirs)
    if not pairs:
        return
    weights = [np.asarray(rng.standard_normal(tuple(t.shape)), _np_dtype(t)) for _, t in pairs]
    if _run_both(report, "backward()",
                 lambda: torch.autograd.backward([t for _, t in pairs], [torch.tensor(w) for w in weights]),
                 lambda: autograd.backward([o for o, _ in pairs], [tensor(w) for w in weights])) is None:
        return
    for k, (o, t) in enumerate(zip(ours_in, theirs_in)):
        if not isinstance(t, torch.Tensor) or not t.requires_grad:
            continue
        where = f"grad of input {k}"
        if (o.grad is None) != (t.grad is None):
            report.differences.append(Difference(where, "grad", f"torch {'None' if t.grad is None else 'a tensor'}, "
                                                                f"numgrad {'None' if o.grad is None else 'a tensor'}"))
        elif t.grad is not None:
            _compare_tensor(report, where, o.grad, t.grad, rtol, atol, True, equal_nan)


def _zeros_for_none(grads, like):
    return [g if g is not None else x.detach() * 0 for g, x in zip(grads, like)]


def _compare_second_order(report, ours, theirs, ours_in, theirs_in, tol1, tol2, equal_nan, rng):
    """First-order gradients by autograd.grad(create_graph=True), then the gradients of a random-weighted
    sum of them with respect to the inputs and the (requires_grad) grad_outputs."""
    import torch
    pairs = _differentiable(ours, theirs)
    diff = [i for i, t in enumerate(theirs_in) if isinstance(t, torch.Tensor) and t.requires_grad]
    if not pairs or not diff:
        return
    weights = [np.asarray(rng.standard_normal(tuple(t.shape)), _np_dtype(t)) for _, t in pairs]
    tw = [torch.tensor(w, requires_grad=True) for w in weights]
    ow = [tensor(w, requires_grad=True) for w in weights]
    t_x, o_x = [theirs_in[i] for i in diff], [ours_in[i] for i in diff]
    both = _run_both(report, "create_graph",
                     lambda: torch.autograd.grad([t for _, t in pairs], t_x, tw, create_graph=True, allow_unused=True),
                     lambda: autograd.grad([o for o, _ in pairs], o_x, ow, create_graph=True,
                                                   allow_unused=True))
    if both is None:
        return
    tg, og = both
    tg, og = _zeros_for_none(tg, t_x), _zeros_for_none(og, o_x)
    for k, (o, t) in enumerate(zip(og, tg)):
        where = f"create_graph grad of input {diff[k]}"
        _compare_tensor(report, where, o, t, *tol1, True, equal_nan)
        if o.requires_grad != t.requires_grad:
            report.differences.append(Difference(where, "requires_grad", f"torch {t.requires_grad}, "
                                                                         f"numgrad {o.requires_grad}"))
    keep = [k for k, t in enumerate(tg) if t.requires_grad]
    if not report.ok or not keep:
        return
    vs = [np.asarray(rng.standard_normal(tuple(tg[k].shape)), _np_dtype(tg[k])) for k in keep]
    tgg = torch.autograd.grad([tg[k] for k in keep], t_x + tw, [torch.tensor(v) for v in vs], allow_unused=True)
    ogg = autograd.grad([og[k] for k in keep], o_x + ow, [tensor(v) for v in vs], allow_unused=True)
    tgg, ogg = _zeros_for_none(tgg, t_x + tw), _zeros_for_none(ogg, o_x + ow)
    for k, (o, t) in enumerate(zip(ogg, tgg)):
        where = f"second-order grad of input {diff[k]}" if k < len(diff) else \
            f"second-order grad of grad_output {k - len(diff)}"
        _compare_tensor(report, where, o, t, *tol2, True, equal_nan)

"""Harness that runs each seed-document example on torch and on numgrad and asserts both recordings are equal."""

import importlib
import os

from helpers.compare_core import (fixed, floats_close, recorded_warnings, strip_addresses,  # noqa: F401
                                  tensor_data, tensor_fields, values_mismatch, warning_entry)

# NUMGRAD_SEEDS_SELFCHECK=1 runs torch on both sides: it checks the harness and the
# examples themselves, independently of how far numgrad has got.
SELFCHECK = os.environ.get("NUMGRAD_SEEDS_SELFCHECK", "") not in ("", "0")

# Printed text, reprs and exception messages: object addresses replaced. Warnings (warning_entry) also
# lose torch's C++ source location.
normalize = strip_addresses


def get_libs():
    """Return (reference, candidate) modules: (torch, numgrad) or (torch, torch)."""
    import torch

    if SELFCHECK:
        return torch, torch
    return torch, importlib.import_module("numgrad")


def _is_tensor(obj):
    return (
        hasattr(obj, "detach")
        and hasattr(obj, "dtype")
        and hasattr(obj, "shape")
        and hasattr(obj, "requires_grad")
    )


def _convert(obj):
    """Turn a recorded value into a plain structure that can be compared."""
    if obj is None:
        return ("None",)
    if isinstance(obj, (bool, int, float, str)):
        return ("py", type(obj).__name__, obj)
    if _is_tensor(obj):
        return ("tensor", *tensor_fields(obj), tensor_data(obj))
    if isinstance(obj, (tuple, list)):
        return ("seq", type(obj).__name__, [_convert(o) for o in obj])
    return ("other", type(obj).__name__, normalize(repr(obj)))


def _values_differ(a, b):
    """Return None when the two converted values match, else a reason."""
    if a[0] != b[0]:
        return "kind %r != %r" % (a[0], b[0])
    kind = a[0]
    if kind == "None":
        return None
    if kind == "py":
        if a[1] != b[1]:
            return "python type %s != %s" % (a[1], b[1])
        if a[1] == "float":
            return None if floats_close(a[2], b[2]) else "%r != %r" % (a[2], b[2])
        return None if a[2] == b[2] else "%r != %r" % (a[2], b[2])
    if kind == "tensor":
        labels = ("type", "dtype", "shape", "requires_grad", "is_leaf", "grad_fn")
        for label, x, y in zip(labels, a[1:7], b[1:7]):
            if x != y:
                return "%s %r != %r" % (label, x, y)
        x, y = a[7], b[7]
        why = values_mismatch(x, y)
        if why is not None:
            return "values differ: torch %s vs numgrad %s (%s)" % (
                x.tolist(),
                y.tolist(),
                why.strip().splitlines()[0],
            )
        return None
    if kind == "seq":
        if a[1] != b[1]:
            return "sequence type %s != %s" % (a[1], b[1])
        if len(a[2]) != len(b[2]):
            return "length %d != %d" % (len(a[2]), len(b[2]))
        for i, (x, y) in enumerate(zip(a[2], b[2])):
            why = _values_differ(x, y)
            if why:
                return "item %d: %s" % (i, why)
        return None
    return None if a == b else "%r != %r" % (a[1:], b[1:])


def _describe(event):
    kind = event[0]
    if kind == "value":
        conv = event[2]
        if conv[0] == "tensor":
            shown = conv[:7] + (conv[7].tolist(),)
        else:
            shown = conv
        return "value %s = %r" % (event[1], shown)
    return "%s %r" % (kind, event[1:])


class Recorder:
    """Collects what an example shows: prints, values, exceptions and warnings, in order."""

    def __init__(self):
        self.events = []
        self._caught = None
        self._seen = 0

    # --- warnings -----------------------------------------------------------
    def _flush_warnings(self):
        if self._caught is None:
            return
        while self._seen < len(self._caught):
            entry = warning_entry(self._caught[self._seen])
            self._seen += 1
            if entry is not None:  # None: JIT compiler chatter, not something the example shows
                self.events.append(("warning", *entry))

    # --- what examples call -------------------------------------------------
    def print(self, *objs, sep=" "):
        """Record what print(*objs) would show."""
        self._flush_warnings()
        text = sep.join(str(o) for o in objs)
        self._flush_warnings()
        self.events.append(("print", normalize(text)))

    def display(self, obj):
        """Record what a notebook cell ending in `obj` would show (its repr)."""
        self._flush_warnings()
        text = repr(obj)
        self._flush_warnings()
        self.events.append(("display", normalize(text)))

    def value(self, name, obj):
        """Record a value to be compared numerically (tensors: dtype, shape, flags, data)."""
        self._flush_warnings()
        conv = _convert(obj)
        self._flush_warnings()
        self.events.append(("value", name, conv))
        return obj

    def meta(self, name, t):
        """Record shape, dtype, requires_grad, is_leaf and grad_fn of a tensor, not its data."""
        self._flush_warnings()
        self.events.append(("meta", name, tensor_fields(t)))
        return t

    def check(self, name, cond):
        """Record a boolean fact computed by the example."""
        self._flush_warnings()
        self.events.append(("check", name, bool(cond)))

    def raises(self, fn, *args, **kwargs):
        """Call fn; record the exception type name and message (torch is expected to raise)."""
        self._flush_warnings()
        try:
            result = fn(*args, **kwargs)
        except Exception as exc:  # noqa: BLE001 - any exception is recorded
            self._flush_warnings()
            self.events.append(("raises", type(exc).__name__, normalize(str(exc))))
            return None
        self._flush_warnings()
        self.events.append(("raises", "<no exception>", normalize(repr(result))))
        return result


class _Run:
    def __init__(self, recorder, error):
        self.events = recorder.events
        self.error = error


def _run(example, lib, grad_mode_reset):
    rec = Recorder()
    error = None
    # torch emits some warnings only once per process (TORCH_WARN_ONCE, e.g. for
    # backward(create_graph=True)); recorded_warnings turns on torch's warn-always.
    with recorded_warnings(lib) as caught:
        rec._caught = caught
        try:
            example(lib, rec)
        except Exception as exc:  # noqa: BLE001 - reported by the caller
            error = exc
        finally:
            rec._flush_warnings()
            rec._caught = None
            grad_mode_reset(lib)
    return _Run(rec, error)


def _reset_grad_mode(lib):
    # Examples restore grad mode themselves; this keeps one failing example from
    # leaking a disabled grad mode into the next test.
    try:
        lib.set_grad_enabled(True)
    except Exception:  # noqa: BLE001 - the candidate library may lack it
        pass


def run_example(example, doc=None):
    """Run `example(lib, out)` on torch and on numgrad; assert the recordings are equal.

    `doc`, when given, lists the outputs printed in the source document, in order, for
    the example's print/display events (None skips one): it checks that the example
    reproduces the document on torch.
    """
    ref_lib, cand_lib = get_libs()
    ref = _run(example, ref_lib, _reset_grad_mode)
    if ref.error is not None:
        raise AssertionError(
            "harness bug: torch itself raised %s: %s"
            % (type(ref.error).__name__, ref.error)
        ) from ref.error
    for ev in ref.events:
        if ev[0] == "raises":
            assert ev[1] != "<no exception>", (
                "harness bug: torch did not raise where the example expects it: %r" % (ev,)
            )

    if doc is not None:
        shown = [ev[1] for ev in ref.events if ev[0] in ("print", "display")]
        assert len(shown) == len(doc), "doc lists %d outputs, torch showed %d" % (
            len(doc),
            len(shown),
        )
        for i, (got, want) in enumerate(zip(shown, doc)):
            if want is not None:
                assert got == normalize(want), (
                    "torch output %d differs from the document:\n%s\n---\n%s"
                    % (i, got, want)
                )

    cand = _run(example, cand_lib, _reset_grad_mode)
    name = "torch(selfcheck)" if SELFCHECK else "numgrad"

    for i, (r, c) in enumerate(zip(ref.events, cand.events)):
        why = _event_differs(r, c)
        if why:
            raise AssertionError(
                "event %d differs: %s\n  torch:   %s\n  %s: %s"
                % (i, why, _describe(r), name, _describe(c))
            )
    if cand.error is not None:
        nxt = ref.events[len(cand.events)] if len(cand.events) < len(ref.events) else None
        raise AssertionError(
            "%s raised %s: %s (after %d matching events; torch recorded next: %s)"
            % (
                name,
                type(cand.error).__name__,
                str(cand.error).splitlines()[0] if str(cand.error) else "",
                len(cand.events),
                "nothing" if nxt is None else _describe(nxt),
            )
        ) from cand.error
    if len(ref.events) != len(cand.events):
        if len(cand.events) > len(ref.events):
            raise AssertionError(
                "%s recorded extra event %d: %s"
                % (name, len(ref.events), _describe(cand.events[len(ref.events)]))
            )
        raise AssertionError(
            "%s recorded nothing for event %d: torch recorded %s"
            % (name, len(cand.events), _describe(ref.events[len(cand.events)]))
        )
    assert ref.events, "example recorded nothing"


def _event_differs(r, c):
    if r[0] != c[0]:
        return "kind %s vs %s" % (r[0], c[0])
    kind = r[0]
    if kind == "value":
        if r[1] != c[1]:
            return "name %r vs %r" % (r[1], c[1])
        return _values_differ(r[2], c[2])
    if kind == "print" or kind == "display":
        return None if r[1] == c[1] else "%s text" % kind
    if kind == "raises":
        if r[1] != c[1]:
            return "exception type %s vs %s" % (r[1], c[1])
        return None if r[2] == c[2] else "exception message"
    if kind == "warning":
        if r[1] != c[1]:
            return "warning category %s vs %s" % (r[1], c[1])
        return None if r[2] == c[2] else "warning message"
    return None if r == c else "%s differs" % kind

"""A differential fuzz of numgrad.compile against eager numgrad, on the op-program fuzzer's programs.

Each program (generator.generate) becomes a function fn(*input values) that runs its steps (in their grad-mode
contexts, as Interpreter.step does) and its backward, and returns every variable detached (so no autograd graph
leaves the call) with the .grad of the variables retain_grad was called on. numgrad.compile(fn) and plain fn are
each called CALLS times, under one of these call patterns (MODES):

- "same": the same input objects each call; before each call every leaf gets its values back
  (no_grad copy_) and .grad = None.
- "fresh": the inputs that do not require grad are new tensor objects (same values) on each call; the
  others as in "same" (exercises the copy into the tape's input buffers).
- "vary": as "fresh", with other values on each call (every leaf): a replay must read the new values.
- "accumulate": as "same" but .grad is not reset: the backward accumulates across calls.
- "inside": as "same", but fn is handed the leaves and makes the inputs' views itself (a view of a leaf
  that does not require grad is then made from the tape's copy of the leaf).
- "outside": as "same", but fn returns its variables with their graphs and the backward runs after the call,
  outside it (a replay's results hang on a CompiledFunctionBackward that replays the recorded backward).

A program that raises is also checked without its failing step (its prefix, with a .sum().backward() of its
last variable that requires grad), so that more programs run to the end and can replay.

A replay runs the same kernels as eager, so compiled and eager must agree call by call bit for bit: the same
error (type, first line), or every returned value, every retained .grad, every leaf's .grad and every leaf's
own values and autograd state after the call (dtype, shape, bits; NaN equals NaN, signed zeros compared).
"""
import collections
import dataclasses
import re
import time
import traceback
import warnings

import numpy as np

import numgrad

from .draw import RandomDraw
from .generator import generate
from .program import Backward, Interpreter, Ref, make_input, render

CALLS = 3
MODES = ("same", "fresh", "vary", "accumulate", "inside", "outside")


def program_at(seed, i):
    """The i-th program of a seeded run (as profile.py draws them)."""
    return generate(RandomDraw(seed * 1_000_003 + i))


def view_of(lib, leaf, spec):
    """The input variable made from its leaf, as make_input makes it."""
    kind = spec.view[0] if spec.view else None
    if kind == "t":
        return leaf.transpose(0, 1)
    if kind == "step":
        return leaf[(slice(None),) * spec.view[1] + (slice(None, None, 2),)]
    if kind == "expand":
        return leaf.expand(*spec.view[1])
    if kind == "permute":
        return leaf.permute(*spec.view[1])
    return leaf


def _interpreter(values):
    """The interpreter's step and backward, on the given values as its variables."""
    run = Interpreter.__new__(Interpreter)
    run.lib, run.leaves, run.env = numgrad, [], list(values)
    return run


def body(program, views_inside=False, backward_outside=False):
    """The program as a function of its input variables (of its leaves with views_inside: the views of the
    inputs are made in the call; with backward_outside it returns its variables and the tensors retain_grad
    was called on, and runs no backward); see the module's doc."""
    def fn(*values):
        if views_inside:
            values = [view_of(numgrad, leaf, spec) for leaf, spec in zip(values, program.inputs)]
        run = _interpreter(values)
        retained = []
        for s in program.steps:
            run.step(s)
            if s.name == "retain_grad" and isinstance(s.args[0], Ref):
                retained.append(run.env[s.args[0].i])
        if backward_outside:
            return list(run.env), retained
        if program.backward is not None:
            run.backward(program.backward)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            grads = [None if r.grad is None else r.grad.detach() for r in retained]
        return [t.detach() for t in run.env], grads
    return fn


def _perturbed(array, k):
    """Other values of the same dtype and shape for call k (NaN stays NaN, infinities stay)."""
    if k == 0 or array.size == 0:
        return array
    rng = np.random.default_rng(1000 + k)
    if array.dtype == np.bool_:
        return array ^ (rng.random(array.shape) < 0.5)
    if array.dtype.kind in "iu":
        return (array + rng.integers(-1, 2, array.shape)).astype(array.dtype)
    return (array + rng.standard_normal(array.shape) * 0.75).astype(array.dtype)


def _describe(t):
    if t is None:
        return None
    return (str(t.dtype).rsplit(".", 1)[-1], tuple(int(n) for n in t.shape), np.array(t.detach().numpy(), copy=True))


def _first_line(exc):
    text = str(exc)
    return text.splitlines()[0] if text else ""


@dataclasses.dataclass
class CallOutcome:
    error: tuple = None  # (where: "restore" | "call", exception type name, first line)
    values: list = None  # per variable: (dtype, shape, array)
    retained: list = None  # per retained variable: its .grad described or None
    grads: list = dataclasses.field(default_factory=list)  # per leaf: .grad described or None
    leaves: list = dataclasses.field(default_factory=list)  # per leaf: (requires_grad, is_leaf, described values,
    #                                                          version count)
    strides: list = None  # per variable: its strides (reported apart: a layout, not a value)
    how: str = "eager"  # compiled calls: "trace" | "replay" | "eager" (how numgrad.compile ran it)


class Harness:
    """One program's inputs and function (compiled or not), called under one mode."""

    def __init__(self, program, mode, compiled):
        self.program, self.mode, self.compiled = program, mode, compiled
        fn = body(program, views_inside=mode == "inside", backward_outside=mode == "outside")
        self.fn = numgrad.compile(fn) if compiled else fn
        self.leaves, self.values = [], []
        for spec in program.inputs:
            leaf, v = make_input(numgrad, spec)
            self.leaves.append(leaf)
            self.values.append(leaf if mode == "inside" else v)

    def _prepare(self, k):
        for i, spec in enumerate(self.program.inputs):
            array = _perturbed(spec.array, k) if self.mode == "vary" else spec.array
            if self.mode in ("fresh", "vary") and not spec.requires_grad and k > 0:
                self.leaves[i], self.values[i] = make_input(numgrad, dataclasses.replace(spec, array=array))
                continue
            leaf = self.leaves[i]
            with numgrad.no_grad():
                leaf.copy_(numgrad.tensor(array))
            if self.mode != "accumulate":
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    leaf.grad = None

    def _backward_outside(self, values, retained):
        """The program's backward on the call's results, then the results and retained .grads detached."""
        if self.program.backward is not None:
            run = _interpreter(values)
            run.backward(self.program.backward)
        grads = [None if r.grad is None else r.grad.detach() for r in retained]
        return [t.detach() for t in values], grads

    def _state(self):
        fn = self.fn
        return fn.traces, sum(v.hits for v in fn.variants)

    def call(self, k):
        out = CallOutcome()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                self._prepare(k)
            except Exception as exc:  # noqa: BLE001 - any error is a result (compared, or counted as the harness's)
                out.error = ("restore", type(exc).__name__, _first_line(exc))
                return out
            before = self._state() if self.compiled else None
            try:
                values, retained = self.fn(*self.values)
                if self.mode == "outside":
                    values, retained = self._backward_outside(values, retained)
            except Exception as exc:  # noqa: BLE001 - any error is a result (compared, or counted as the harness's)
                out.error = ("call", type(exc).__name__, _first_line(exc))
            else:
                out.values = [_describe(t) for t in values]
                out.strides = [tuple(t.stride()) for t in values]
                out.retained = [_describe(g) for g in retained]
                del values, retained
            if self.compiled:
                after = self._state()
                out.how = "trace" if after[0] > before[0] else "replay" if after[1] > before[1] else "eager"
            for leaf in self.leaves:
                out.grads.append(_describe(leaf.grad))
                out.leaves.append((bool(leaf.requires_grad), bool(leaf.is_leaf), _describe(leaf), leaf._version))
        return out

    def coverage(self):
        """'replayed' | 'traced, no replay' | 'eager: <reason>' | 'no variant (the call raised)'."""
        fn = self.fn
        if fn.eager_reason is not None:
            return "eager: " + strip_lines(fn.eager_reason)
        if any(v.hits for v in fn.variants):
            return "replayed"
        if fn.variants:
            return "traced, no replay"
        return "no variant (the call raised)"

    def break_ops(self):
        """'reason | numgrad function' of each graph break."""
        return [f"{reason} | {op}" for reason, _, op in self.fn.breaks]


def strip_lines(reason):
    """An eager reason without its 'file:line' parts, so that reasons count together."""
    reason = re.sub(r" \((?:in [^()]*, at )?[^()]*:\d+\)", "", reason)
    return re.sub(r"\s+", " ", reason).strip()


def _same_array(a, b):
    if a.dtype != b.dtype or a.shape != b.shape:
        return False
    if a.dtype.kind in "fc":
        if not np.array_equal(a, b, equal_nan=True):
            return False
        if a.dtype.kind == "f":
            return bool(((np.signbit(a) == np.signbit(b)) | np.isnan(a)).all())  # -0.0 vs 0.0
        return True
    return bool(np.array_equal(a, b))


def _diff(x, y):
    """None when two described tensors are the same, else why not."""
    if (x is None) != (y is None):
        return f"{'None' if x is None else 'a tensor'} vs {'None' if y is None else 'a tensor'}"
    if x is None:
        return None
    if x[0] != y[0]:
        return f"dtype {x[0]} vs {y[0]}"
    if x[1] != y[1]:
        return f"shape {x[1]} vs {y[1]}"
    if not _same_array(x[2], y[2]):
        a, b = x[2], y[2]
        bad = ~((a == b) | (np.isnan(a) & np.isnan(b))) if a.dtype.kind in "fc" else a != b
        if a.dtype.kind == "f":
            bad |= (np.signbit(a) != np.signbit(b)) & ~np.isnan(a)
        bad = np.atleast_1d(bad)
        i = tuple(int(n) for n in np.argwhere(bad)[0]) if bad.any() else ()
        fa, fb = np.atleast_1d(a), np.atleast_1d(b)
        return f"{int(bad.sum())} of {a.size} differ; first at {i}: compiled {fa[i]!r}, eager {fb[i]!r}"
    return None


def owners(program):
    """The step that made each variable (None for the inputs), by the outs the generator recorded."""
    out = [None] * len(program.inputs)
    for k, s in enumerate(program.steps):
        out += [k] * s.outs
    return out


@dataclasses.dataclass
class Mismatch:
    mode: str
    call: int
    how: str  # how the compiled call ran: "trace" | "replay" | "eager"
    cls: str  # "error" | "structure" | "value:<step name>" | "retained grad" | "grad" | "leaf state" | "leaf value"
    detail: str
    leaf: int = None  # the leaf of a grad / leaf state / leaf value mismatch
    known: str = None  # the KNOWN item it is, if any

    def __str__(self):
        return (f"[{self.mode}] call {self.call} ({self.how}) {self.cls}: {self.detail}"
                + (f"  (known: {self.known})" if self.known else ""))


def compare(program, got, ref):
    """Mismatches of compiled call outcome `got` against eager's `ref`: [(class, detail, leaf or None)]."""
    if got.error != ref.error:
        return [("error", f"compiled {got.error}; eager {ref.error}", None)]
    fails = []
    made_by = owners(program)
    if (got.values is None) != (ref.values is None) or (got.values is not None and len(got.values) != len(ref.values)):
        fails.append(("structure", "different numbers of variables", None))
    elif got.values is not None:
        for i, (x, y) in enumerate(zip(got.values, ref.values)):
            why = _diff(x, y)
            if why:
                k = made_by[i] if i < len(made_by) else None
                name = "input" if k is None else program.steps[k].name
                fails.append((f"value:{name}", f"v{i}: {why}", None))
        for i, (x, y) in enumerate(zip(got.retained, ref.retained)):
            why = _diff(x, y)
            if why:
                fails.append(("retained grad", f"retained {i}: {why}", None))
    for j, (x, y) in enumerate(zip(got.grads, ref.grads)):
        why = _diff(x, y)
        if why:
            fails.append(("grad", f"leaf{j}.grad: {why}", j))
    for j, (x, y) in enumerate(zip(got.leaves, ref.leaves)):
        if x[:2] != y[:2]:
            fails.append(("leaf state", f"leaf{j} (requires_grad, is_leaf): compiled {x[:2]}, eager {y[:2]}", j))
        why = _diff(x[2], y[2])
        if why:
            fails.append(("leaf value", f"leaf{j}: {why}", j))
        if x[3] != y[3]:
            fails.append(("leaf version", f"leaf{j} version: compiled {x[3]}, eager {y[3]}", j))
    return fails


# The mismatch classes found and not fixed yet, each with its regression test in test_compiled_fuzz.py (an
# xfail(strict=True): when the fix lands it passes, fails as XPASS, and its entry here is deleted).
_VERSION = re.compile(r"is at version \d+; expected version \d+ instead")


def _proxied(program, mode, j):
    """Whether leaf j reaches the call as a tensor argument numgrad.compile copies into a buffer of its own."""
    spec = program.inputs[j]
    return not spec.requires_grad and (mode == "inside" or not spec.view)


_SCATTERING = {"select", "narrow", "min", "max"}  # besides getitem steps and inputs that are strided slices of a leaf


def known_item(program, m, broke, after_state):
    """The KNOWN item mismatch `m` is, or None (an item deleted from KNOWN is no longer recognized)."""
    item = _match_known(program, m, broke, after_state)
    return item if item in KNOWN else None


def _match_known(program, m, broke, after_state):
    """`broke`: the compiled call raised or its trace broke the graph; `after_state`: the item an earlier call
    of this mode lost an argument's autograd state by (its later calls differ as a consequence)."""
    if after_state:
        return after_state
    if m.cls in ("leaf state", "grad") and m.how == "trace" and _proxied(program, m.mode, m.leaf) and \
            any(s.name == "requires_grad_" for s in program.steps):
        return "argument-requires-grad-lost"
    if m.cls == "leaf value" and m.how == "trace" and broke and _proxied(program, m.mode, m.leaf):
        return "argument-inplace-lost"
    if m.cls == "leaf state" and m.how == "trace" and _proxied(program, m.mode, m.leaf):
        return "argument-autograd-lost"
    if m.cls == "grad" and m.how == "replay":
        spec = program.inputs[m.leaf]
        if m.mode != "inside" and spec.requires_grad and spec.view:
            return "outside-view-backward"
        if any(s.kind == "getitem" or s.name in _SCATTERING for s in program.steps) or \
                any(i.view and i.view[0] == "step" for i in program.inputs):
            return "scatter-backward"
    if m.how == "replay" and (m.cls.startswith("value") or m.cls in ("grad", "leaf value")) and \
            any(s.kind == "setitem" and isinstance(s.args[2], Ref) for s in program.steps):
        return "setitem-tensor-lost"
    if m.cls == "error" and _VERSION.search(m.detail):
        compiled, eager = m.detail.split("; eager ", 1)
        if _VERSION.sub("", compiled.replace("compiled ", "", 1)) == _VERSION.sub("", eager):
            return "argument-version"
    return None


# mismatch classes found and not fixed yet, by name (see _known_item): empty since all seven found were fixed
KNOWN = {}


@dataclasses.dataclass
class ProgramResult:
    coverage: dict = dataclasses.field(default_factory=dict)  # mode -> coverage text
    breaks: dict = dataclasses.field(default_factory=dict)  # mode -> ['reason | op']
    mismatches: list = dataclasses.field(default_factory=list)  # Mismatch
    strides: list = dataclasses.field(default_factory=list)  # (mode, call, detail): layout differences
    eager_error: tuple = None  # the eager first call's error ("same" mode)

    @property
    def new(self):
        return [m for m in self.mismatches if m.known is None]


def check(program, modes=MODES, fused=None):
    """Runs the program compiled and eager under each mode; returns a ProgramResult."""
    result = ProgramResult()
    with numgrad.fusion(fused) if fused is not None else _nothing():
        for mode in modes:
            compiled, eager = Harness(program, mode, True), Harness(program, mode, False)
            after_state = None
            for k in range(CALLS):
                got, ref = compiled.call(k), eager.call(k)
                if mode == "same" and k == 0:
                    result.eager_error = ref.error
                broke = got.error is not None or compiled.fn.eager_reason is not None
                found = [Mismatch(mode, k, got.how, cls, detail, leaf) for cls, detail, leaf in compare(program, got, ref)]
                for m in found:
                    m.known = known_item(program, m, broke, after_state)
                    result.mismatches.append(m)
                after_state = after_state or next((m.known for m in found if m.known in (
                    "argument-autograd-lost", "argument-requires-grad-lost")), None)
                if got.strides is not None and ref.strides is not None and got.strides != ref.strides:
                    result.strides.append((mode, k, f"compiled {got.strides}, eager {ref.strides}"))
            result.coverage[mode] = compiled.coverage()
            result.breaks[mode] = compiled.break_ops()
    return result


class _nothing:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def prefix(program):
    """A program that raised at a step, without that step and with a .sum().backward() of its last variable
    that requires grad (None when nothing is left)."""
    if len(program.steps) < 2:
        return None
    small = dataclasses.replace(program, steps=program.steps[:-1], backward=None)
    try:
        run = Interpreter(numgrad, small)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for s in small.steps:
                run.step(s)
    except Exception:  # noqa: BLE001 - any error is a result (compared, or counted as the harness's)
        return None
    grads = [i for i, t in enumerate(run.env) if t.requires_grad and t.dtype.is_floating_point]
    if grads:
        small.backward = Backward(grads[-1], "sum")
    return small


def programs(n, seed, prefixes=True):
    """(label, program, fused) for n seeded programs and (prefixes) the prefixes of those that raise."""
    for i in range(n):
        program = program_at(seed, i)
        yield f"program {i}", program, bool(i % 2)
        if prefixes and _raises(program):
            small = prefix(program)
            if small is not None:
                yield f"program {i} prefix", small, bool(i % 2)


def _raises(program):
    try:
        body(program)(*[make_input(numgrad, spec)[1] for spec in program.inputs])
    except Exception:  # noqa: BLE001 - any error is a result (compared, or counted as the harness's)
        return True
    return False


def run_profile(n, seed, out=None, log_every=500, prefixes=True):
    """n programs from seeded draws (and the prefixes of those that raise), fusion alternating; returns
    (Counter of counts, {(mode, class): (label, Mismatch, program)} first of each class)."""
    counts, examples = collections.Counter(), {}
    start = time.time()
    done = 0
    for label, program, fused in _safe(programs(n, seed, prefixes), counts, out):
        try:
            result = check(program, fused=fused)
        except Exception:  # noqa: BLE001 - any error is a result (compared, or counted as the harness's)
            counts["harness error"] += 1
            if out is not None:
                print(f"harness error at {label}:\n{traceback.format_exc()}", file=out, flush=True)
            continue
        counts["programs checked"] += 1
        counts["of them prefixes" if label.endswith("prefix") else "of them generated"] += 1
        for mode, cov in result.coverage.items():
            counts[f"[{mode}] {cov}"] += 1
        for op in set(result.breaks.get("same", [])):
            counts[f"break [same]: {strip_lines(op)}"] += 1
        if result.coverage.get("same") == "replayed":
            counts["replayed ('same' mode)"] += 1
        if result.strides:
            counts["programs with a stride difference (not a failure)"] += 1
            examples.setdefault("stride", (label, result.strides[0], program))
        seen = set()
        for m in result.mismatches:
            key = (m.mode, m.cls.split(":")[0], m.how, m.known)
            if key in seen:
                continue
            seen.add(key)
            counts[f"known [{m.mode}] {m.known}" if m.known else f"MISMATCH [{m.mode}] {m.cls} ({m.how})"] += 1
            if key not in examples:
                examples[key] = (label, m, program)
                if out is not None and not m.known:
                    print(f"=== MISMATCH {m} ({label}, seed {seed}, fused {fused})\n{render(program, 'numgrad')}\n",
                          file=out, flush=True)
        if result.new:
            counts["programs with a new mismatch"] += 1
        if result.mismatches:
            counts["programs with a mismatch (known included)"] += 1
        done += 1
        if out is not None and done % log_every == 0:
            print(f"... {done} programs checked, {time.time() - start:.0f} s", file=out, flush=True)
    counts["seconds"] = int(time.time() - start)
    return counts, examples


def _safe(it, counts, out):
    while True:
        try:
            yield next(it)
        except StopIteration:
            return
        except Exception:  # drawing a program broke: count it and show it  # noqa: BLE001 - any error is a result (compared, or counted as the harness's)
            counts["harness error"] += 1
            if out is not None:
                print(f"harness error drawing a program:\n{traceback.format_exc()}", file=out, flush=True)
            return


def summary(counts):
    head = ("programs checked", "of them generated", "of them prefixes", "replayed ('same' mode)",
            "programs with a new mismatch", "programs with a mismatch (known included)", "seconds", "harness error")
    lines = [f"{k}: {counts[k]}" for k in head if k in counts]
    lines += [f"{v:6d}  {k}" for k, v in sorted(counts.items(), key=lambda kv: (kv[0].split("]")[0], -kv[1], kv[0]))
              if k not in head]
    return "\n".join(lines)

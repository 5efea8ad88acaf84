"""The long profile: N programs from seeded Random draws, each checked; failures counted by class (known items
apart), the first of each class shrunk and printed with its source, and a summary of the counts."""
import collections
import sys
import time
import traceback

from .draw import RandomDraw
from .generator import generate
from .known import known_issue
from .program import render
from .runner import check_program
from .shrink import shrink


def failure_class(program, ref, f):
    """(the class's name, the known item it is or None)."""
    k = f.step
    name = program.steps[k].name if isinstance(k, int) and k < len(program.steps) else str(k)
    return f"{f.kind}:{name}", known_issue(program, ref, f)


def classes(program):
    ref, fails = check_program(program)
    return ref, {failure_class(program, ref, f): f for f in fails}


def run_profile(n, seed, out=sys.stdout, shrink_new=True):
    """Runs n programs; returns the Counter of counts (programs, torch-errors, compared, failures by class)."""
    counts, shown = collections.Counter(), set()
    start = time.time()
    for i in range(n):
        try:
            program = generate(RandomDraw(seed * 1_000_003 + i))
            ref, found = classes(program)
        except Exception:  # the harness itself broke: count it and show it
            counts["harness error"] += 1
            print(f"harness error at program {i}:\n{traceback.format_exc()}", file=out, flush=True)
            continue
        counts["programs run"] += 1
        if ref.error and not any(k.startswith("error-type") for (k, _) in found):
            counts["exceptions matched"] += 1
        counts["values compared"] += sum(1 for v in ref.values) + sum(1 for g in ref.grads if g is not None)
        for (cls, known), f in found.items():
            counts[f"known: {known}" if known else f"FAIL {cls}"] += 1
            if known or cls in shown:
                if not known:  # later members of a class: where to find them again
                    print(f"--- FAIL {cls} (program {i}, seed {seed}) [{f.mode}] {f.detail[:200]}", file=out, flush=True)
                continue
            shown.add(cls)
            small = program
            if shrink_new:
                small = shrink(program, lambda p: (cls, None) in _safe_classes(p))
                f = _safe_classes(small).get((cls, None), f)
            print(f"=== FAIL {cls} (program {i}, seed {seed}) [{f.mode}] {f.detail}\n{render(small)}\n",
                  file=out, flush=True)
        if (i + 1) % 500 == 0:
            print(f"... {i + 1} programs, {time.time() - start:.0f} s, "
                  f"{sum(v for k, v in counts.items() if k.startswith('FAIL'))} failures", file=out, flush=True)
    counts["seconds"] = int(time.time() - start)
    return counts


def _safe_classes(program):
    try:
        return classes(program)[1]
    except Exception:
        return {}


def summary(counts):
    head = ("programs run", "exceptions matched", "values compared", "seconds", "harness error")
    lines = [f"{k}: {counts[k]}" for k in head if k in counts]
    lines += [f"{v:6d}  {k}" for k, v in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])) if k not in head]
    return "\n".join(lines)

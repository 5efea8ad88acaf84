"""Shrinking a failing program of the long profile (which does not use Hypothesis's shrinker): drop the backward,
the steps after the failure, and any step or input nothing later reads, while the same failure class remains."""
import copy
import dataclasses

from .program import Backward, Ref


def _remap(a, f):
    if isinstance(a, Ref):
        return Ref(f(a.i))
    if isinstance(a, tuple):
        return tuple(_remap(x, f) for x in a)
    if isinstance(a, list):
        return [_remap(x, f) for x in a]
    if isinstance(a, slice):
        return slice(*(_remap(x, f) for x in (a.start, a.stop, a.step)))
    return a


def _refs(a):
    if isinstance(a, Ref):
        yield a.i
    elif isinstance(a, (tuple, list)):
        for x in a:
            yield from _refs(x)
    elif isinstance(a, slice):
        for x in (a.start, a.stop, a.step):
            yield from _refs(x)


def _used(program, start):
    used = set()
    for s in program.steps[start:]:
        used |= set(_refs(s.args)) | set(_refs(tuple(s.kwargs.values())))
    if program.backward is not None:
        used.add(program.backward.var)
    return used


def _drop(program, first, count, step_k=None):
    """The program without variables [first, first + count) (an input, or step step_k's results), or None."""
    later = step_k + 1 if step_k is not None else 0
    if any(first <= i < first + count for i in _used(program, later)):
        return None
    shift = lambda i: i - count if i >= first + count else i
    p = copy.deepcopy(program)
    if step_k is None:
        del p.inputs[first]
    else:
        del p.steps[step_k]
    p.steps = [dataclasses.replace(s, args=_remap(s.args, shift), kwargs={k: _remap(v, shift) for k, v in
                                                                         s.kwargs.items()}) for s in p.steps]
    if p.backward is not None:
        p.backward = Backward(shift(p.backward.var), p.backward.mode, p.backward.gradient)
    return p


def candidates(program):
    if program.backward is not None:
        p = copy.deepcopy(program)
        p.backward = None
        yield p
    for k in range(len(program.steps) - 1, -1, -1):
        first = len(program.inputs) + sum(s.outs for s in program.steps[:k])
        p = _drop(program, first, program.steps[k].outs, k)
        if p is not None:
            yield p
    for j in range(len(program.inputs) - 1, -1, -1):
        p = _drop(program, j, 1)
        if p is not None:
            yield p


def shrink(program, still_fails, budget=60):
    """Greedy: take the first smaller candidate that still fails, until none does (or the budget is spent)."""
    for _ in range(budget):
        for p in candidates(program):
            if still_fails(p):
                program = p
                break
        else:
            return program
    return program

"""Failures already being fixed elsewhere (issue 13's other items), recognized so that reports count them apart;
they are still counted, never skipped. Each recognizer looks at the failing step and the messages."""
import math


def _step(program, failure):
    k = failure.step
    return program.steps[k] if isinstance(k, int) and k < len(program.steps) else None


def _dtypes(program, ref, step):
    """The dtypes of the step's tensor operands in torch's run (variables only)."""
    from .program import Ref
    return [ref.values[a.i][0] for a in step.args if isinstance(a, Ref) and a.i < len(ref.values)]


def _nonfinite(v):
    return isinstance(v, float) and not math.isfinite(v)


def known_issue(program, ref, failure):
    """A short name of the known item this failure is, or None."""
    text = failure.detail
    s = _step(program, failure)
    if "ZeroDivisionError" in text:
        return "integer // or % by zero"
    if "unsupported operation" in text or "assignment destination is read-only" in text:
        return "in-place write into an expanded view / overlapping setitem source"
    if "cannot be converted to type int64_t without overflow" in text:  # the same check, from setitem
        return "fill_/masked_fill_ with inf/NaN on an integer tensor"
    if s is not None:
        if s.name in ("mod", "remainder", "remainder_", "fmod"):
            return "missing % / remainder"
        if s.name in ("add", "add_", "sub", "sub_") and "alpha" in s.kwargs and "bool" in _dtypes(program, ref, s):
            return "add(bool, bool, alpha=2)"
        if s.name in ("fill_", "masked_fill_", "masked_fill") and any(_nonfinite(a) for a in s.args) and \
                any(dt in ("int64", "bool") for dt in _dtypes(program, ref, s)[:1]):
            return "fill_/masked_fill_ with inf/NaN on an integer tensor"
    if failure.step == "backward" and "modified by an inplace operation" in text and _inplace_with_itself(program):
        # tests/oracle/autograd/test_inplace.py::test_in_place_mul_by_itself_backpropagates: numgrad keeps a
        # copy of the overwritten self for y.mul_(y) and backpropagates where torch raises (decided so)
        return "deliberate: in-place op with itself as the other operand"
    if failure.kind in ("value", "grad") and any(
            st.name == "pow" and any(a == -0.5 and not isinstance(a, bool) for a in st.args[1:])
            for st in program.steps):
        return "x ** -0.5 with signed zeros"
    return None


def _inplace_with_itself(program):
    """Whether some in-place method's other operand is the tensor it writes (the same object in torch's run:
    y.mul_(y), or x.flatten().mul_(x), flatten of 1-d being x itself)."""
    import torch
    from .program import Interpreter, Ref
    run = Interpreter(torch, program)
    for st in program.steps:
        a = st.args
        if st.kind == "method" and st.name.endswith("_") and len(a) > 1 and isinstance(a[0], Ref) and \
                isinstance(a[1], Ref) and run.env[a[0].i] is run.env[a[1].i]:
            return True
        try:
            run.step(st)
        except Exception:
            return False
    return False

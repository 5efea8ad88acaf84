"""numgrad.compile: capture a call (a training step: forward, backward, optimizer step) once and replay it
as recorded kernels on preallocated buffers; explain lists what keeps a function from being captured."""
from .compiled import RECOMPILE_LIMIT, CompiledFunction, CompiledFunctionBackward
from .module import OptimizedModule
from .recorder import GraphBreak

__all__ = ["RECOMPILE_LIMIT", "CompiledFunction", "CompiledFunctionBackward", "GraphBreak", "OptimizedModule", "compile",
           "explain"]


def compile(model=None, *, fullgraph=False, dynamic=False, backend=None, mode=None, options=None,
            disable=False):
    """torch.compile's signature: compile(fn) or @compile(...) returns a compiled callable; compile(module)
    returns the module's compiled call. `backend`, `mode` and `options` are accepted for torch's code and
    ignored (there is one backend); `dynamic` too: every new shape is traced as its own variant."""
    if model is None:
        return lambda fn: compile(fn, fullgraph=fullgraph, dynamic=dynamic, backend=backend, mode=mode,
                                  options=options, disable=disable)
    if disable:
        return model
    if not callable(model):  # torch's own check is an assert
        raise AssertionError(f"A callable function is expected, but {type(model)} is provided.")
    if hasattr(model, "_call_impl") and hasattr(model, "forward") and hasattr(model, "parameters"):  # nn.Module
        return OptimizedModule(model, CompiledFunction(model._call_impl, fullgraph, dynamic))
    return CompiledFunction(model, fullgraph, dynamic)


# `numgrad.compile` is this function (the package's name is shadowed in numgrad's namespace, as torch.compile
# is a function): what users catch or read hangs on it
compile.GraphBreak = GraphBreak
compile.RECOMPILE_LIMIT = RECOMPILE_LIMIT


class ExplainOutput:
    """What explain reports, as torch._dynamo.explain's ExplainOutput: graphs, breaks and their reasons."""

    def __init__(self, compiled):
        self.graph_count = len(compiled.variants)
        self.graph_break_count = len(compiled.breaks)
        self.break_reasons = [f"{reason} (in {op}, at {where})" for reason, where, op in compiled.breaks]
        self.recompiles = max(0, compiled.traces - 1)
        self.eager_reason = compiled.eager_reason
        self.entries = [len(v.entries) for v in compiled.variants]

    def __str__(self):
        lines = [f"Graph Count: {self.graph_count}", f"Graph Break Count: {self.graph_break_count}",
                 f"Recompiles: {self.recompiles}", "Break Reasons:"]
        lines += [f"  Break Reason {i + 1}: {r}" for i, r in enumerate(self.break_reasons)]
        if self.eager_reason:
            lines.append(f"Runs eager: {self.eager_reason}")
        lines.append(f"Tape entries per graph: {self.entries}")
        return "\n".join(lines)

    __repr__ = __str__


def explain(fn, *extra_args, **extra_kwargs):
    """torch._dynamo.explain(fn)(*args): traces a compiled copy of fn on these arguments (running it once)
    and reports its graphs and graph breaks. Also explain(fn, *args) in one call."""
    def run(*args, **kwargs):
        compiled = fn if isinstance(fn, CompiledFunction) else CompiledFunction(fn)
        compiled(*args, **kwargs)
        return ExplainOutput(compiled)
    if extra_args or extra_kwargs:
        return run(*extra_args, **extra_kwargs)
    return run

"""A fuzz program as data (inputs, steps, an optional backward), its interpreter for one library, and its text."""
import contextlib
import functools
import operator
import warnings
from dataclasses import dataclass, field

import numpy as np


@dataclass(frozen=True)
class Ref:
    """The value of variable `i` (an input or a step's result)."""
    i: int


@dataclass(frozen=True)
class Lit:
    """A fresh tensor made from a NumPy array (an index, a mask, a gradient)."""
    array: np.ndarray

    def __hash__(self):
        return id(self)


@dataclass(frozen=True)
class Dt:
    """A dtype of the library running the program, by name."""
    name: str


@dataclass
class Input:
    array: np.ndarray
    requires_grad: bool = False
    view: tuple = ()  # ("t",) | ("step", dim) | ("expand", shape) | ("permute", dims): a non-contiguous view


@dataclass
class Step:
    kind: str  # fn: lib.<name>(*args) | method: args[0].<name>(*args[1:]) | op: operator.<name>(*args)
    #            getitem: args[0][args[1]] | setitem: args[0][args[1]] = args[2] | attr: args[0].<name>
    name: str
    args: tuple = ()
    kwargs: dict = field(default_factory=dict)
    outs: int = 1  # how many variables it made in torch (a tuple's items; 0 for retain_grad's None); for render()
    grad_mode: str = ""  # a key of GRAD_MODES: the step runs inside that context


# the grad-mode contexts a step may run in, as (the context for a library, its source text)
GRAD_MODES = {
    "": (lambda lib: contextlib.nullcontext(), None),
    "no_grad": (lambda lib: lib.no_grad(), "{lib}.no_grad()"),
    "no_grad+enable_grad": (lambda lib: _both(lib.no_grad(), lib.enable_grad()),
                            "{lib}.no_grad(), {lib}.enable_grad()"),
    "set_grad_enabled(False)": (lambda lib: lib.set_grad_enabled(False), "{lib}.set_grad_enabled(False)"),
}


@contextlib.contextmanager
def _both(a, b):
    with a, b:
        yield


@dataclass
class Backward:
    var: int
    mode: str  # "sum": .sum().backward() | "grad": .backward(gradient) | "plain": .backward()
    gradient: object = None  # a Lit for mode "grad"


@dataclass
class Program:
    inputs: list
    steps: list = field(default_factory=list)
    backward: object = None


def _resolve(lib, env, a):
    if isinstance(a, Ref):
        return env[a.i]
    if isinstance(a, Lit):
        return lib.tensor(a.array)
    if isinstance(a, Dt):
        return getattr(lib, a.name)
    if isinstance(a, tuple):
        return tuple(_resolve(lib, env, x) for x in a)
    if isinstance(a, list):
        return [_resolve(lib, env, x) for x in a]
    if isinstance(a, slice):
        return slice(*(_resolve(lib, env, x) for x in (a.start, a.stop, a.step)))
    return a


def make_input(lib, spec):
    """(leaf, the variable's value): the leaf is what receives .grad; the value may be a view of it."""
    leaf = lib.tensor(spec.array, requires_grad=spec.requires_grad)
    v = leaf
    kind = spec.view[0] if spec.view else None
    if kind == "t":
        v = leaf.transpose(0, 1)
    elif kind == "step":
        v = leaf[(slice(None),) * spec.view[1] + (slice(None, None, 2),)]
    elif kind == "expand":
        v = leaf.expand(*spec.view[1])
    elif kind == "permute":
        v = leaf.permute(*spec.view[1])
    return leaf, v


class Interpreter:
    """Runs a program's inputs and steps one at a time against `lib` (torch or numgrad)."""

    def __init__(self, lib, program):
        self.lib = lib
        self.leaves, self.env = [], []
        for spec in program.inputs:
            leaf, v = make_input(lib, spec)
            self.leaves.append(leaf)
            self.env.append(v)

    def step(self, s):
        """Runs one step; appends its tensor results to env (a tuple's items in order) and returns how many."""
        lib, env = self.lib, self.env
        args = _resolve(lib, env, s.args)
        kwargs = {k: _resolve(lib, env, v) for k, v in s.kwargs.items()}
        with warnings.catch_warnings(), GRAD_MODES[s.grad_mode][0](lib):
            warnings.simplefilter("ignore")
            if s.kind == "fn":
                out = functools.reduce(getattr, s.name.split("."), lib)(*args, **kwargs)  # (nn.functional.x too)
            elif s.kind == "method":
                out = getattr(args[0], s.name)(*args[1:], **kwargs)
            elif s.kind == "op":
                out = getattr(operator, s.name)(*args)
            elif s.kind == "getitem":
                out = args[0][args[1]]
            elif s.kind == "setitem":
                args[0][args[1]] = args[2]
                out = args[0]
            elif s.kind == "attr":
                out = getattr(args[0], s.name)
            else:
                raise AssertionError(s.kind)
        if out is None and s.name == "retain_grad":  # torch returns None: the step makes no variable
            return 0
        outs = list(out) if isinstance(out, (tuple, list)) else [out]
        for o in outs:
            if not isinstance(o, lib.Tensor):
                raise TypeError(f"fuzz: {s.name} returned {type(o).__name__}")
        env.extend(outs)
        return len(outs)

    def backward(self, b):
        out = self.env[b.var]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            if b.mode == "sum":
                out.sum().backward()
            elif b.mode == "grad":
                out.backward(_resolve(self.lib, self.env, b.gradient))
            else:
                out.backward()


def _text(a, lib):
    if isinstance(a, Ref):
        return f"v{a.i}"
    if isinstance(a, Lit):
        return f"{lib}.tensor({a.array.tolist()!r}, dtype={lib}.{a.array.dtype.name})".replace("float64", "float64")
    if isinstance(a, Dt):
        return f"{lib}.{a.name}"
    if isinstance(a, tuple):
        return "(" + ", ".join(_text(x, lib) for x in a) + ("," if len(a) == 1 else "") + ")"
    if isinstance(a, list):
        return "[" + ", ".join(_text(x, lib) for x in a) + "]"
    if isinstance(a, slice):
        return ":".join("" if x is None else _text(x, lib) for x in (a.start, a.stop, a.step))
    if a is Ellipsis:
        return "..."
    if isinstance(a, float) and not np.isfinite(a):
        return f"float('{a}')"
    return repr(a)


_OPS = {"add": "+", "sub": "-", "mul": "*", "truediv": "/", "floordiv": "//", "mod": "%", "pow": "**",
        "eq": "==", "ne": "!=", "lt": "<", "le": "<=", "gt": ">", "ge": ">=", "and_": "&", "or_": "|",
        "xor": "^", "matmul": "@"}


def _index_text(a, lib):
    parts = a if isinstance(a, tuple) else (a,)
    return ", ".join(_text(p, lib) if p is not None else "None" for p in parts) or "()"


def render(program, lib="torch"):
    """The program as Python source (after `import numpy as np, torch`), for a report or a regression test."""
    lines = []
    for i, spec in enumerate(program.inputs):
        arr = spec.array
        data = f"np.array({arr.tolist()!r}, dtype=np.{arr.dtype.name})" if arr.size else \
            f"np.zeros({arr.shape}, dtype=np.{arr.dtype.name})"  # an empty list would lose the shape
        lines.append(f"leaf{i} = {lib}.tensor({data}"
                     f"{', requires_grad=True' if spec.requires_grad else ''})".replace("nan", "float('nan')")
                     .replace("inf", "float('inf')"))
        view = {"t": ".transpose(0, 1)", None: ""}.get(spec.view[0] if spec.view else None)
        if view is None:
            kind, arg = spec.view
            view = f"[{':, ' * arg}::2]" if kind == "step" else f".{kind}{tuple(arg)}"
        lines.append(f"v{i} = leaf{i}{view}")
    n = len(program.inputs)
    for s in program.steps:
        args = [_text(a, lib) for a in s.args] + [f"{k}={_text(v, lib)}" for k, v in s.kwargs.items()]
        if s.kind == "fn":
            expr = f"{lib}.{s.name}({', '.join(args)})"
        elif s.kind == "method":
            expr = f"{args[0]}.{s.name}({', '.join(args[1:])})"
        elif s.kind == "op":
            unary = {"neg": "-", "invert": "~"}
            args = [f"({a})" if a.startswith("-") else a for a in args]  # (-0.5) ** v1, not -(0.5 ** v1)
            expr = f"{unary[s.name]}{args[0]}" if len(args) == 1 else f"{args[0]} {_OPS[s.name]} {args[1]}"
        elif s.kind == "getitem":
            expr = f"{args[0]}[{_index_text(s.args[1], lib)}]"
        elif s.kind == "attr":
            expr = f"{args[0]}.{s.name}"
        else:
            setitem = f"{args[0]}[{_index_text(s.args[1], lib)}] = {args[2]}"
            expr = args[0]
        if s.outs == 0:
            line = expr
        elif s.outs == 1:
            line = f"v{n} = {expr}"
        else:
            line = f"{', '.join(f'v{n + k}' for k in range(s.outs))} = {expr}"
        if s.kind == "setitem":
            line = f"{setitem}; {line}"
        context = GRAD_MODES[s.grad_mode][1]
        lines.append(f"with {context.format(lib=lib)}: {line}" if context else line)
        n += s.outs
    b = program.backward
    if b is not None:
        call = {"sum": ".sum().backward()", "plain": ".backward()",
                "grad": f".backward({_text(b.gradient, lib) if b.gradient is not None else ''})"}[b.mode]
        lines.append(f"v{b.var}{call}")
    return "\n".join(lines)

"""torch's NumPy-style keyword aliases of the reductions (axis= for dim, keepdims= for keepdim), and the errors
its argument parser gives when both spellings of one argument are passed."""

ALIASES = {"axis": "dim", "keepdims": "keepdim"}

# the aliases each op's binding takes (softmax and log_softmax have no keepdim)
_BOTH = ("axis", "keepdims")
TAKES = {name: _BOTH for name in ("sum", "mean", "max", "min", "amax", "amin", "any", "all", "var", "std", "prod",
                                  "argmax", "argmin", "logsumexp")}
TAKES.update(softmax=("axis",), log_softmax=("axis",))

# torch's overloads as its parser lists them when no single one is plausible: (function form, method form)
_MAX = (["Tensor input, *, Tensor out = None", "Tensor input, Tensor other, *, Tensor out = None",
         "Tensor input, int dim, bool keepdim = False, *, tuple of Tensors out = None"],
        ["", "Tensor other", "int dim, bool keepdim = False"])
_ANY = (["Tensor input, *, Tensor out = None",
         "Tensor input, tuple of ints dim = None, bool keepdim = False, *, Tensor out = None",
         "Tensor input, int dim, bool keepdim = False, *, Tensor out = None"],
        ["", "tuple of ints dim = None, bool keepdim = False", "int dim, bool keepdim = False"])
_VAR = (["Tensor input, tuple of ints dim, bool unbiased = True, bool keepdim = False, *, Tensor out = None",
         "Tensor input, tuple of ints dim = None, *, Number correction = None, bool keepdim = False, Tensor out = None",
         "Tensor input, bool unbiased = True"],
        ["tuple of ints dim, bool unbiased = True, bool keepdim = False",
         "tuple of ints dim = None, *, Number correction = None, bool keepdim = False", "bool unbiased = True"])
_MEAN = (["Tensor input, *, torch.dtype dtype = None, Tensor out = None",
          "Tensor input, tuple of ints dim, bool keepdim = False, *, torch.dtype dtype = None, Tensor out = None"], [])
SIGNATURES = {"max": _MAX, "min": _MAX, "any": _ANY, "all": _ANY, "var": _VAR, "std": _VAR, "mean": _MEAN}

# Which clashes the parser reports as an invalid combination, per (op, method form) and clash: "dim" (dim and axis),
# "keepdim" (keepdim and keepdims), "both" (axis with keepdim and keepdims). The value maps the overloads the
# parser explains to the keywords it names: "all" of them, or the "aliases" only. A clash not listed is reported as
# an unexpected keyword, or, where the dim is required (REQUIRED_DIM; MISSING_DIM for methods), as a missing dim.
_COMBINATIONS = {
    ("mean", False): {"dim": {}, "keepdim": {}},
    ("max", False): {"dim": {0: "all"}, "keepdim": {0: "all"}},
    ("max", True): {"both": {}},
    ("any", False): {"dim": {0: "all"}, "keepdim": {0: "all"}, "both": {}},
    ("any", True): {"dim": {1: "all", 2: "aliases"}, "keepdim": {1: "all", 2: "all"}, "both": {}},
    ("var", False): {"dim": {}, "keepdim": {}, "both": {}},
    ("var", True): {"dim": {}, "keepdim": {}, "both": {0: "all"}},
}
for _a, _b in (("min", "max"), ("all", "any"), ("std", "var")):
    for _method in (False, True):
        if (_b, _method) in _COMBINATIONS:
            _COMBINATIONS[(_a, _method)] = _COMBINATIONS[(_b, _method)]
REQUIRED_DIM = {"sum", "prod", "logsumexp", "softmax", "log_softmax"}  # (the one overload taking keepdim)
MISSING_DIM = {"mean", "max", "min"}  # as methods
PYTHON_METHODS = {"norm"}  # written in Python in torch (Tensor.norm): Python's own message names the class


def resolve(op, args, kwargs, method=False, names=()):
    """kwargs with torch's aliases renamed (axis -> dim, keepdims -> keepdim); raises torch's TypeError for an alias
    the op does not take or an argument given twice. `args` are the positional arguments after the input, `names`
    the op's own parameter names."""
    if "axis" not in kwargs and "keepdims" not in kwargs:
        return kwargs
    taken = TAKES.get(op, ())
    clash_dim = "axis" in kwargs and ("dim" in kwargs or len(args) >= 1)
    clash_keepdim = "keepdims" in kwargs and ("keepdim" in kwargs or len(args) >= 2)
    unknown = [k for k in kwargs if k not in names and k not in taken]
    if clash_dim or clash_keepdim or unknown:
        raise TypeError(_clash_message(op, args, kwargs, method, clash_dim, clash_keepdim, names))
    return {ALIASES.get(k, k): v for k, v in kwargs.items()}


def _clash_message(op, args, kwargs, method, clash_dim, clash_keepdim, names):
    clash = "both" if clash_keepdim and "axis" in kwargs else ("dim" if clash_dim else "keepdim")
    explained = _COMBINATIONS.get((op, method), {}).get(clash) if not args and (clash_dim or clash_keepdim) else None
    if explained is None:
        if clash == "keepdim" and clash_keepdim and not args and (op in REQUIRED_DIM or (method and op in MISSING_DIM)):
            return f'{op}() missing 1 required positional arguments: "dim"'
        # the parser names the first keyword that is none of the overload's parameter names (it knows no aliases)
        first = next(k for k in kwargs if k not in names)
        qualified = f"Tensor.{op}" if method and op in PYTHON_METHODS else op
        return f"{qualified}() got an unexpected keyword argument '{first}'"
    keys = list(reversed(list(kwargs)))  # the parser lists keywords last given first
    given = [f"{k}={type(kwargs[k]).__name__}" for k in keys]
    got = ", ".join(given) + ", " if method else ", ".join(["Tensor", *given])
    lines = [f"{op}() received an invalid combination of arguments - got ({got}), but expected one of:"]
    for i, signature in enumerate(SIGNATURES[op][1 if method else 0]):
        lines.append(f" * ({signature})")
        if i in explained:
            named = keys if explained[i] == "all" else [k for k in keys if k in ALIASES]
            lines.append(f"      didn't match because some of the keywords were incorrect: {', '.join(named)}")
    return "\n".join(lines) + "\n"

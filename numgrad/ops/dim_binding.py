"""torch's Python binding refusing a list of dims to the one-dim reductions (max, min, prod, argmax, argmin), given
as dim= or as its alias axis=."""

# torch's overloads as its binding prints them, function form (torch.<op>) then method form (Tensor.<op>)
_SIGNATURES = {
    "prod": (["Tensor input, *, torch.dtype dtype = None",
              "Tensor input, int dim, bool keepdim = False, *, torch.dtype dtype = None, Tensor out = None"],
             ["*, torch.dtype dtype = None", "int dim, bool keepdim = False, *, torch.dtype dtype = None"]),
    "max": (["Tensor input, *, Tensor out = None", "Tensor input, Tensor other, *, Tensor out = None",
             "Tensor input, int dim, bool keepdim = False, *, tuple of Tensors out = None"],
            ["", "Tensor other", "int dim, bool keepdim = False"]),
}
_SIGNATURES["min"] = _SIGNATURES["max"]


def check(op, args, kwargs, method):
    """Raises torch's TypeError when the dim (the first argument after the input, or `dim=`) is a tuple or a
    list. args and kwargs are as the caller passed them, the input left out: the wording depends on whether
    the dim and keepdim were positional or keywords, and on the method or function form."""
    positional = bool(args) and isinstance(args[0], (tuple, list))
    keyword = not args and isinstance(kwargs.get("dim", kwargs.get("axis")), (tuple, list))
    if not (positional or keyword):
        return
    dim = args[0] if positional else kwargs.get("dim", kwargs.get("axis"))
    keepdim_given = len(args) > 1 or "keepdim" in kwargs or "keepdims" in kwargs
    # one overload left plausible (argmax's only one; prod's and max's method forms once keepdim is
    # given, which only the dim overload takes): the parser names the argument; otherwise it lists them all
    if op.startswith("arg") or (keepdim_given and (method or op == "prod")):
        where = f" (position {1 if method else 2})" if positional else ""
        raise TypeError(f"{op}(): argument 'dim'{where} must be int, not {type(dim).__name__}")
    raise TypeError(_invalid_combination(op, dim, args, kwargs, method))


def _keepdim_first(key):
    """The parser's order of keywords: keepdim (or its alias keepdims) before the dim."""
    return key not in ("keepdim", "keepdims")


def _described(value):
    """An argument as the parser describes a mismatched one: `tuple of (int, int)`, `list of [int]`."""
    if isinstance(value, (tuple, list)):
        inner = ", ".join(type(v).__name__ for v in value)
        return f"tuple of ({inner})" if isinstance(value, tuple) else f"list of [{inner}]"
    return type(value).__name__


def _got(args, kwargs, method):
    """The `got (...)` part: the input (function form), positional types, then keywords (keepdim first, as
    torch's parser lists them); a method's keywords alone end in ', ' as torch prints them."""
    names = [] if method else ["Tensor"]
    names += [type(a).__name__ for a in args]
    given = sorted(kwargs, key=_keepdim_first)
    keywords = [f"{k}={type(kwargs[k]).__name__}" for k in given]
    if method and not names and keywords:
        return ", ".join(keywords) + ", "
    return ", ".join(names + keywords)


def _invalid_combination(op, dim, args, kwargs, method):
    signatures = _SIGNATURES[op][1 if method else 0]
    lines = [f"{op}() received an invalid combination of arguments - got ({_got(args, kwargs, method)}), but "
             "expected one of:"]
    for i, sig in enumerate(signatures):
        lines.append(f" * ({sig})")
        reason = _mismatch(op, i, dim, args, kwargs, method)
        if reason:
            lines.append(f"      didn't match because {reason}")
    return "\n".join(lines) + "\n"


def _mismatch(op, index, dim, args, kwargs, method):
    """Why torch's parser says an overload failed, for the overloads whose arguments it could compare:
    max/min's no-dim overloads (both as a method, the bare one as a function when keepdim was given)."""
    if op == "prod" or (method and index == 2) or (not method and index != 0):
        return None
    keywords = sorted((k for k in kwargs), key=_keepdim_first)
    if method:
        if keywords:
            return f"some of the keywords were incorrect: {', '.join(keywords)}"
        return f"some of the arguments have invalid types: (!{_described(dim)}!)"
    if "keepdim" in kwargs or "keepdims" in kwargs:  # a function's bare overload takes no keepdim: named only when given
        return f"some of the keywords were incorrect: {', '.join(keywords)}"
    if len(args) > 1:
        rest = ", ".join(f"!{_described(a)}!" for a in args)
        return f"some of the arguments have invalid types: (Tensor, {rest})"
    return None

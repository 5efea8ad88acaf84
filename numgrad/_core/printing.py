"""Tensor repr formatting that reproduces torch/_tensor_str.py output for numpy-backed tensors."""

import math

import numpy as np

_PROFILES = {
    "default": {"precision": 4, "threshold": 1000, "edgeitems": 3, "linewidth": 80},
    "short": {"precision": 2, "threshold": 1000, "edgeitems": 2, "linewidth": 80},
    "full": {"precision": 4, "threshold": math.inf, "edgeitems": 3, "linewidth": 80},
}

# Same keys, order and defaults as torch's PRINT_OPTS dataclass.
_opts = {**_PROFILES["default"], "sci_mode": None}

# what each dtype is formatted as: torch formats every integer as a Python int and half types by their float
# values
_NP_DTYPES = {"float32": np.float32, "float64": np.float64, "int64": np.int64, "bool": np.bool_, "int32": np.int32,
              "int16": np.int16, "int8": np.int8, "uint8": np.uint8, "float16": np.float32, "bfloat16": np.float32}
_FLOATING = ("float32", "float64", "float16", "bfloat16")


def set_printoptions(precision=None, threshold=None, edgeitems=None, linewidth=None,
                     profile=None, sci_mode=None):
    """Set printing options; same arguments and semantics as torch.set_printoptions."""
    if profile is not None:
        # torch silently ignores unknown profile names.
        _opts.update(_PROFILES.get(profile, {}))
    for name, value in (("precision", precision), ("threshold", threshold),
                        ("edgeitems", edgeitems), ("linewidth", linewidth)):
        if value is not None:
            _opts[name] = value
    # torch assigns sci_mode unconditionally, so any call without it resets it to auto.
    _opts["sci_mode"] = sci_mode


def get_printoptions():
    """Current options as a dict that can be passed back to set_printoptions."""
    return dict(_opts)


class _Formatter:
    """Chooses one element width/style for a whole tensor, like torch's _Formatter."""

    def __init__(self, values, floating):
        self.floating = floating
        self.int_mode = True
        self.sci_mode = False
        self.max_width = 1
        flat = values.reshape(-1)
        if not floating:
            # Widths only depend on distinct values; np.unique keeps big tensors cheap.
            self.max_width = max([1] + [len(str(v)) for v in np.unique(flat).tolist()])
            return
        # Zeros and non-finite values never influence the style or the width.
        nonzero = flat[np.isfinite(flat) & (flat != 0)]
        if nonzero.size == 0:
            return
        magnitudes = np.abs(nonzero).astype(np.float64)  # torch computes the ratios in double
        lo, hi = float(magnitudes.min()), float(magnitudes.max())
        self.int_mode = bool(np.all(nonzero == np.ceil(nonzero)))
        if _opts["sci_mode"] is None:
            self.sci_mode = bool(hi / lo > 1000.0 or hi > 1.0e8 or lo < 1.0e-4)
        else:
            self.sci_mode = bool(_opts["sci_mode"])
        p = _opts["precision"]
        distinct = np.unique(nonzero).tolist()
        if self.sci_mode:
            widths = [len(f"{v:.{p}e}") for v in distinct]
        elif self.int_mode:
            # +1 for the trailing "." that marks integral floats.
            widths = [len(f"{v:.0f}") + 1 for v in distinct]
        else:
            widths = [len(f"{v:.{p}f}") for v in distinct]
        self.max_width = max(self.max_width, *widths)

    def format(self, value):
        p = _opts["precision"]
        if not self.floating:
            text = str(value)
        elif self.sci_mode:
            text = f"{value:{self.max_width}.{p}e}"
        elif self.int_mode:
            text = f"{value:.0f}"
            if math.isfinite(value):
                text += "."
        else:
            text = f"{value:.{p}f}"
        return text.rjust(self.max_width)


def _summarized_data(a):
    """The elements that stay visible after summarisation (what torch feeds its formatter)."""
    edge = _opts["edgeitems"]
    if a.ndim == 0:
        return a
    if a.ndim == 1 and not edge:
        # torch keeps everything here (self[-0:] is the whole tensor); only "..." is printed anyway.
        return a
    if not edge:
        return a[(slice(0, 0),) * a.ndim]
    for axis, n in enumerate(a.shape):
        if n > 2 * edge:
            a = np.take(a, np.r_[0:edge, n - edge:n], axis=axis)
    return a


def _body(a, indent, summarize, fmt):
    """Bracketed, wrapped and indented text of a (non-empty) array."""
    edge = _opts["edgeitems"]
    if a.ndim == 0:
        return fmt.format(a.item())
    if a.ndim == 1:
        per_line = max(1, math.floor((_opts["linewidth"] - indent) / (fmt.max_width + 2)))
        if summarize and not edge:
            data = ["..."]
        elif summarize and a.shape[0] > 2 * edge:
            data = ([fmt.format(v) for v in a[:edge].tolist()] + [" ..."]
                    + [fmt.format(v) for v in a[-edge:].tolist()])
        else:
            data = [fmt.format(v) for v in a.tolist()]
        lines = [", ".join(data[i:i + per_line]) for i in range(0, len(data), per_line)]
        return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"
    n = a.shape[0]
    if summarize and n > 2 * edge:
        rows = list(range(edge)) + [None] + list(range(n - edge, n))
    else:
        rows = list(range(n))
    parts = ["..." if i is None else _body(a[i], indent + 1, summarize, fmt) for i in rows]
    # Higher-rank tensors get one blank line per extra dimension between slices.
    return "[" + ("," + "\n" * (a.ndim - 1) + " " * (indent + 1)).join(parts) + "]"


def _add_suffixes(text, suffixes, indent):
    parts = [text]
    # torch's own (slightly generous) estimate of the last line's length, kept verbatim
    # because it decides where suffixes wrap.
    last_len = len(text) - text.rfind("\n") + 1
    for suffix in suffixes:
        if last_len + len(suffix) + 2 > _opts["linewidth"]:
            parts.append(",\n" + " " * indent + suffix)
            last_len = indent + len(suffix)
        else:
            parts.append(", " + suffix)
            last_len += len(suffix) + 2
    return "".join(parts) + ")"


def format_tensor(values, *, dtype, device=None, grad_fn=None, requires_grad=False,
                  default_dtype="float32", tangent=None):
    """Return exactly what repr() of the equivalent torch tensor prints."""
    a = np.asarray(values).astype(_NP_DTYPES[dtype], copy=False)
    prefix = "tensor("
    indent = len(prefix)
    suffixes = []
    if device is not None and device.split(":")[0] != "cpu":
        suffixes.append(f"device='{device}'")
    if a.size == 0:
        # Shape and dtype cannot be inferred from "[]", so torch spells them out
        # (the dtype even for int64/bool; the shape unless it is 1-D).
        if a.ndim != 1:
            suffixes.append(f"size={tuple(a.shape)}")
        if dtype != default_dtype:
            suffixes.append(f"dtype=torch.{dtype}")
        body = "[]"
    else:
        if not _opts["edgeitems"]:
            # With no edge items nothing but "..." is shown, so torch adds the shape.
            suffixes.append(f"size={tuple(a.shape)}")
        if dtype not in (default_dtype, "int64", "bool"):
            suffixes.append(f"dtype=torch.{dtype}")
        summarize = a.size > _opts["threshold"]
        fmt = _Formatter(_summarized_data(a) if summarize else a,
                         floating=dtype in _FLOATING)
        body = _body(a, indent, summarize, fmt)
    if grad_fn is not None:
        suffixes.append(f"grad_fn=<{grad_fn}>")
    elif requires_grad:
        suffixes.append("requires_grad=True")
    if tangent is not None:  # a dual tensor's tangent (forward AD), printed whole as torch does
        suffixes.append(f"tangent={tangent}")
    return _add_suffixes(prefix + body, suffixes, indent)

"""What calling fn(lib) gives, as data that compares equal between numgrad and torch: the exception's type
and message, or the value (nested tuples followed) with its values to 6 significant digits (float32 sums
may differ in the last bit), the signs of its zeros, dtype, shape and grad_fn name. Warnings are ignored."""
import math
import warnings


def outcome(fn, lib):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            result = fn(lib)
    except Exception as e:  # noqa: BLE001 - the type and message are what is compared
        return type(e).__name__, str(e).replace("torch.", "")
    return describe(result)


def describe(value):
    if isinstance(value, tuple):
        return tuple(describe(v) for v in value)
    if hasattr(value, "dtype") and hasattr(value, "tolist"):
        flat = value.detach().reshape(-1).tolist()
        return (repr([float(f"{v:.6g}") for v in flat]), str(value.dtype).split(".")[-1], tuple(value.shape),
                [math.copysign(1, v) for v in flat if v == 0],
                value.grad_fn.name() if value.grad_fn is not None else None)
    return repr(value).replace("torch.", "").replace("numgrad.", "")

"""The backend settings torch's scripts set (TF32, cuDNN, determinism, matmul precision), kept as process-wide
values with torch's defaults and checks. numgrad's kernels compute in full float32 whatever they say (Numba's
CUDA target uses no TF32 and no cuDNN), so they change no result; scripts read back what they set."""
import warnings

_MATMUL_PRECISIONS = ("highest", "high", "medium")
_DEBUG_MODES = ("default", "warn", "error")

FLAGS = {"float32_matmul_precision": "highest", "fp16_reduction": True, "bf16_reduction": True,
         "cudnn_enabled": True, "cudnn_benchmark": False, "cudnn_deterministic": False, "cudnn_allow_tf32": True,
         "cudnn_benchmark_limit": None, "deterministic": False, "deterministic_warn_only": False}


def set_bool(key, value, setter):
    if not isinstance(value, bool):
        raise RuntimeError(f"{setter} expects a bool, but got {type(value).__name__}")
    FLAGS[key] = value


def set_reduction(key, value, name):
    if not isinstance(value, bool):  # torch also takes (allow, allow_splitk) for a GPU's split-K reductions
        if not (isinstance(value, (tuple, list)) and all(isinstance(v, bool) for v in value)):
            raise TypeError(f"{name} expects a bool or a tuple/list of bools, but got {type(value)}")
        value = value[0]
    FLAGS[key] = value


def set_float32_matmul_precision(precision):
    """'highest' (full float32), 'high' or 'medium' (TF32 or bfloat16 passes allowed on a GPU that has them)."""
    if not isinstance(precision, str):
        raise RuntimeError(f"set_float32_matmul_precision expects a str, but got {type(precision).__name__}")
    if precision not in _MATMUL_PRECISIONS:
        warnings.warn(f"{precision} is not one of 'highest', 'high', or 'medium'; the current"
                      "setFloat32MatmulPrecision call has no effect.", stacklevel=2)
        return
    FLAGS["float32_matmul_precision"] = precision


def get_float32_matmul_precision():
    return FLAGS["float32_matmul_precision"]


def use_deterministic_algorithms(mode, *, warn_only=False):
    """Recorded for torch's scripts: numgrad's ops are deterministic (its parallel reductions split the work
    the same way every run)."""
    if not isinstance(mode, bool):
        raise TypeError(f"_set_deterministic_algorithms(): argument 'mode' (position 1) must be bool, not "
                        f"{type(mode).__name__}")
    FLAGS["deterministic"], FLAGS["deterministic_warn_only"] = mode, bool(warn_only) and mode


def are_deterministic_algorithms_enabled():
    return FLAGS["deterministic"]


def is_deterministic_algorithms_warn_only_enabled():
    return FLAGS["deterministic_warn_only"]


def set_deterministic_debug_mode(debug_mode):
    if isinstance(debug_mode, str):
        if debug_mode not in _DEBUG_MODES:
            raise RuntimeError(f"invalid value of debug_mode, expected one of `default`, `warn`, `error`, but got "
                               f"{debug_mode}")
        debug_mode = _DEBUG_MODES.index(debug_mode)
    elif not isinstance(debug_mode, int):
        raise TypeError(f"debug_mode must be str or int, but got {type(debug_mode)}")
    if debug_mode not in (0, 1, 2):
        raise RuntimeError(f"invalid value of debug_mode, expected 0, 1, or 2, but got {debug_mode}")
    use_deterministic_algorithms(debug_mode != 0, warn_only=debug_mode == 1)


def get_deterministic_debug_mode():
    if not FLAGS["deterministic"]:
        return 0
    return 1 if FLAGS["deterministic_warn_only"] else 2

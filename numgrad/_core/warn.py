"""Warnings attributed to the user's line, as torch's warnings from C++ are (whatever numgrad's call depth)."""
import os
import sys
import traceback
import warnings

_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
_NUMPY = os.sep + "numpy" + os.sep  # np.errstate's wrapper sits between some ops and their callers


def warn(message, category=UserWarning):
    frame, level = sys._getframe(1), 2  # stacklevel 2 names warn's caller
    while frame is not None and (frame.f_code.co_filename.startswith(_PACKAGE) or _NUMPY in frame.f_code.co_filename):
        frame, level = frame.f_back, level + 1
    warnings.warn(message, category, stacklevel=level)


def user_stack():
    """The calling stack as traceback lines, without numgrad's own frames (torch's anomaly mode shows the
    Python frames that led to an op, its C++ ones are not Python's)."""
    frames = [f for f in traceback.extract_stack()[:-1] if not f.filename.startswith(_PACKAGE)]
    return traceback.format_list(frames)


_WARNED = set()
_ALWAYS = [False]  # process-wide, as torch's flag


def warn_once(message, category=UserWarning):
    """torch's TORCH_WARN_ONCE: the first time in the process only, whatever the warnings filters say, unless
    set_warn_always(True)."""
    if _ALWAYS[0] or message not in _WARNED:
        _WARNED.add(message)
        warn(message, category)


def set_warn_always(b):
    """torch.set_warn_always: warnings given once per process come every time while it is on."""
    if not isinstance(b, bool):
        raise RuntimeError(f"setWarnOnlyOnce expects a bool, but got {type(b).__name__}")
    _ALWAYS[0] = b


def is_warn_always_enabled():
    return _ALWAYS[0]

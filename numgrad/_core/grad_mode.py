"""Grad modes: no_grad, enable_grad, set_grad_enabled, inference_mode (context managers and decorators)."""
import functools

from .state import STATE


def is_grad_enabled():
    return STATE.grad_enabled


def is_inference_mode_enabled():
    return STATE.inference


class _ModeContext:
    """Base for the mode switches: usable with `with`, as a decorator, and as a decorator factory."""

    def _apply(self):
        raise NotImplementedError

    def __enter__(self):
        self._prev = (STATE.grad_enabled, STATE.inference)
        self._apply()
        return None

    # before __enter__, torch's context managers remember grad mode as off: __exit__ of a fresh one disables it
    _prev = None

    def __exit__(self, *exc):
        if self._prev is None:
            STATE.grad_enabled = False
        else:
            STATE.grad_enabled, STATE.inference = self._prev

    def clone(self):
        return self.__class__()

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapped(*args, **kwargs):
            with self.clone():
                return fn(*args, **kwargs)
        return wrapped


class no_grad(_ModeContext):
    def __new__(cls, fn=None):
        self = super().__new__(cls)
        return self(fn) if callable(fn) else self

    def _apply(self):
        STATE.grad_enabled = False


class enable_grad(no_grad):
    def _apply(self):
        STATE.grad_enabled = True


class set_grad_enabled(_ModeContext):
    """Takes effect when constructed, as torch's does, so the plain call `set_grad_enabled(False)` works."""

    def __init__(self, mode):
        self._prev = (STATE.grad_enabled, STATE.inference)
        self.mode = bool(mode)
        STATE.grad_enabled = self.mode

    def __enter__(self):
        return None

    def _apply(self):
        STATE.grad_enabled = self.mode

    def clone(self):
        return _Switch(self.mode)

    def __call__(self, fn):
        STATE.grad_enabled, STATE.inference = self._prev  # used as a decorator: undo the eager switch
        return super().__call__(fn)


class _Switch(_ModeContext):
    """set_grad_enabled's fresh context for each call of a decorated function."""

    def __init__(self, mode):
        self.mode = mode

    def _apply(self):
        STATE.grad_enabled = self.mode


class inference_mode(_ModeContext):
    def __new__(cls, mode=True):
        self = super().__new__(cls)
        if callable(mode):
            self.mode = True
            return self(mode)
        self.mode = bool(mode)
        return self

    def __init__(self, mode=True):
        pass

    def clone(self):
        return inference_mode(self.mode)

    def _apply(self):
        if self.mode:
            STATE.grad_enabled, STATE.inference = False, True
        else:
            STATE.inference = False

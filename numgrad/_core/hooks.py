"""Hook tables and the handles that remove a registered hook (tensor, node and module hooks)."""
import itertools
import weakref


class RemovableHandle:
    """What register_*_hook returns: `remove()` unregisters the hook (the table is held weakly)."""

    _ids = itertools.count()

    def __init__(self, hooks_dict):
        self._dict_ref = weakref.ref(hooks_dict) if hooks_dict is not None else None
        self.id = next(RemovableHandle._ids)

    def remove(self):
        d = self._dict_ref() if self._dict_ref else None
        if d is not None:
            d.pop(self.id, None)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


class HookDict(dict):
    """A dict weakref can point to (RemovableHandle keeps only a weak reference)."""


def add_hook(hooks, fn):
    handle = RemovableHandle(hooks)
    hooks[handle.id] = fn
    return handle

"""autograd.graph: saved-tensor hooks and the Node type."""
from .._core.state import STATE
from ..node import Node


class saved_tensors_hooks:
    """Within this context, tensors saved for backward go through pack_hook and come back via unpack_hook."""

    def __init__(self, pack_hook, unpack_hook):
        self.pair = (pack_hook, unpack_hook)

    def __enter__(self):
        STATE.saved_tensor_hooks.append(self.pair)
        return self

    def __exit__(self, *exc):
        STATE.saved_tensor_hooks.remove(self.pair)
        return False


class save_on_cpu(saved_tensors_hooks):
    def __init__(self, pin_memory=False, device_type="cuda"):
        super().__init__(lambda t: t, lambda t: t)


__all__ = ["saved_tensors_hooks", "save_on_cpu", "Node"]

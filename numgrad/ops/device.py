"""Moving tensors between the CPU and the GPU (Tensor.to, .cuda(), .cpu()), differentiably."""
from ..node import record
from ..kernels import dispatch
from ..kernels.dispatch import as_device
from ..tensor_base import TensorBase


def _to_copy_backward(node, g):
    return (move(g, node.saved("device")),)


def move(t, device):
    """`t`'s values on `device` (one copy between host and GPU), as a new tensor without a graph."""
    return TensorBase._make(dispatch.place(t._data, device), t._dtype)


def to_device(t, device):
    """Tensor.to(device): `t` itself when it already lives there, else a copy recorded as ToCopyBackward0,
    whose backward moves the gradient back."""
    device = as_device(device)
    if t.device == device:
        return t
    out = move(t, device)
    record("ToCopyBackward0", _to_copy_backward, [t], [out], {"device": t.device})
    return out

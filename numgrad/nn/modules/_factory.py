"""Empty parameter storage for layers: default dtype unless a factory dtype is given, on the given device."""
from ...ops import creation
from ..._core import dtypes
from ...kernels.dispatch import as_device
from ..parameter import Parameter


def empty_parameter(*shape, dtype=None, device=None):
    return Parameter(creation.empty(*shape, dtype=dtypes.to_dtype(dtype) if dtype is not None else None,
                                    device=as_device(device)))

"""Empty parameter storage for layers: default dtype unless a factory dtype is given; CPU only."""
from ... import creation, dtypes
from ...tensor import check_device
from ..parameter import Parameter


def empty_parameter(*shape, dtype=None, device=None):
    check_device(device)
    return Parameter(creation.empty(*shape, dtype=dtypes.to_dtype(dtype) if dtype is not None else None))

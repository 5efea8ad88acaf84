"""torch.finfo and torch.iinfo: the numeric limits of a floating or integer dtype."""
import ml_dtypes
import numpy as np

from . import dtypes


class finfo:
    """Limits of a floating dtype (the default one when none is given), as Python floats."""

    def __init__(self, type=None):
        d = dtypes.get_default_dtype() if type is None else type
        if not d.is_floating_point:
            raise TypeError("torch.finfo() requires a floating point input type. Use torch.iinfo to handle "
                            "'torch.finfo'")
        info = ml_dtypes.finfo(d.np)
        self.bits, self.dtype = d.itemsize * 8, d.name
        self.eps, self.max, self.min = float(info.eps), float(info.max), float(info.min)
        self.tiny = self.smallest_normal = float(info.smallest_normal)
        self.resolution = float(10.0 ** -info.precision)

    def __repr__(self):
        return (f"finfo(resolution={self.resolution:g}, min={self.min:g}, max={self.max:g}, eps={self.eps:g}, "
                f"smallest_normal={self.smallest_normal:g}, tiny={self.tiny:g}, dtype={self.dtype})")


class iinfo:
    """Limits of an integer dtype, as Python ints."""

    def __init__(self, type):
        if type.is_floating_point or type is dtypes.bool_:
            raise TypeError("torch.iinfo() requires an integer input type. Use torch.finfo to handle 'torch.iinfo'")
        info = np.iinfo(type.np)
        self.bits, self.dtype, self.max, self.min = type.itemsize * 8, type.name, int(info.max), int(info.min)

    def __repr__(self):
        return f"iinfo(min={self.min:g}, max={self.max:g}, dtype={self.dtype})"

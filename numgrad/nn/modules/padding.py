"""The padding layers: ZeroPad, ConstantPad, ReflectionPad, ReplicationPad and CircularPad in 1, 2 and 3 dims."""

from .. import functional as F
from ..module import Module
from .conv import _ntuple


class _PadNd(Module):
    mode = "constant"
    dims = 1

    def __init__(self, padding):
        super().__init__()
        self.padding = _ntuple(padding, 2 * self.dims)  # torch's _pair, _quadruple, _ntuple(6)

    def forward(self, input):
        return F.pad(input, self.padding, self.mode)

    def extra_repr(self):
        return f"{self.padding}"


class _ConstantPadNd(_PadNd):
    def __init__(self, padding, value):
        super().__init__(padding)
        self.value = value

    def forward(self, input):
        return F.pad(input, self.padding, "constant", self.value)

    def extra_repr(self):
        return f"padding={self.padding}, value={self.value}"


class _ZeroPadNd(_ConstantPadNd):
    def __init__(self, padding):
        super().__init__(padding, 0.0)

    def extra_repr(self):
        return f"{self.padding}"


class _CircularPadNd(_PadNd):
    mode = "circular"

    def forward(self, input):
        if input.dim() not in (self.dims + 1, self.dims + 2):
            raise ValueError(f"expected {self.dims + 1}D or {self.dims + 2}D input (got {input.dim()}D input)")
        return super().forward(input)


def _family(base, stem, **attrs):
    return [type(f"{stem}{k}d", (base,), {"dims": k, **attrs}) for k in (1, 2, 3)]


ConstantPad1d, ConstantPad2d, ConstantPad3d = _family(_ConstantPadNd, "ConstantPad")
ZeroPad1d, ZeroPad2d, ZeroPad3d = _family(_ZeroPadNd, "ZeroPad")
ReflectionPad1d, ReflectionPad2d, ReflectionPad3d = _family(_PadNd, "ReflectionPad", mode="reflect")
ReplicationPad1d, ReplicationPad2d, ReplicationPad3d = _family(_PadNd, "ReplicationPad", mode="replicate")
CircularPad1d, CircularPad2d, CircularPad3d = _family(_CircularPadNd, "CircularPad")

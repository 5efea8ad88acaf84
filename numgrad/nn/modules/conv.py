"""The convolution layers (Conv1d/2d/3d, with every padding_mode, and ConvTranspose1d/2d/3d) and MaxPool2d."""

from .. import functional as F
from .. import init
from ..module import Module
from ._factory import empty_parameter
from .linear import add_weight_and_bias


def _ntuple(value, k):
    """torch's _single/_pair/_triple: an int for every spatial dim, or the values as given."""
    return tuple(value) if hasattr(value, "__iter__") else (value,) * k


class _ConvNd(Module):
    dims = 2
    transposed = False

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1, bias=True,
                 padding_mode="zeros", device=None, dtype=None, output_padding=0):
        super().__init__()
        k = self.dims
        if groups <= 0:
            raise ValueError("groups must be a positive integer")
        if in_channels % groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups != 0:
            raise ValueError("out_channels must be divisible by groups")
        self.kernel_size, self.stride, self.dilation = (_ntuple(v, k) for v in (kernel_size, stride, dilation))
        if isinstance(padding, str):  # torch's wording, sets and all
            valid_padding_strings = {"same", "valid"}
            if padding not in valid_padding_strings:
                raise ValueError(f"Invalid padding string {padding!r}, should be one of {valid_padding_strings}")
            if padding == "same" and any(s != 1 for s in self.stride):
                raise ValueError("padding='same' is not supported for strided convolutions")
        valid_padding_modes = {"zeros", "reflect", "replicate", "circular"}
        if padding_mode not in valid_padding_modes:
            raise ValueError(f"padding_mode must be one of {valid_padding_modes}, but got padding_mode='{padding_mode}'")
        self.in_channels, self.out_channels, self.groups = in_channels, out_channels, groups
        self.padding = padding if isinstance(padding, str) else _ntuple(padding, k)
        self.output_padding = _ntuple(output_padding, k)
        self.padding_mode = padding_mode
        # what F.pad takes for a padding_mode other than zeros: the last dim first, each side once
        if isinstance(self.padding, str):
            self._reversed_padding_repeated_twice = [0, 0] * k
            if padding == "same":
                for d, n, i in zip(self.dilation, self.kernel_size, range(k - 1, -1, -1)):
                    total = d * (n - 1)
                    self._reversed_padding_repeated_twice[2 * i] = total // 2
                    self._reversed_padding_repeated_twice[2 * i + 1] = total - total // 2
        else:
            self._reversed_padding_repeated_twice = tuple(p for p in reversed(self.padding) for _ in range(2))
        if self.transposed:
            self.weight = empty_parameter(in_channels, out_channels // groups, *self.kernel_size, dtype=dtype,
                                          device=device)
            if bias:
                self.bias = empty_parameter(out_channels, dtype=dtype, device=device)
            else:
                self.register_parameter("bias", None)
            self.reset_parameters()
        else:
            add_weight_and_bias(self, (out_channels, in_channels // groups, *self.kernel_size), bias, dtype, device)

    def reset_parameters(self):
        init.reset_weight_and_bias(self.weight, self.bias)

    def forward(self, input):
        conv = (F.conv1d, F.conv2d, F.conv3d)[self.dims - 1]
        if self.padding_mode != "zeros":
            return conv(F.pad(input, self._reversed_padding_repeated_twice, mode=self.padding_mode), self.weight,
                        self.bias, self.stride, (0,) * self.dims, self.dilation, self.groups)
        return conv(input, self.weight, self.bias, self.stride, self.padding, self.dilation, self.groups)

    def extra_repr(self):
        s = f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, stride={self.stride}"
        if self.padding != (0,) * len(self.padding):
            s += f", padding={self.padding}"
        if self.dilation != (1,) * len(self.dilation):
            s += f", dilation={self.dilation}"
        if self.output_padding != (0,) * len(self.output_padding):
            s += f", output_padding={self.output_padding}"
        if self.groups != 1:
            s += f", groups={self.groups}"
        if self.bias is None:
            s += ", bias=False"
        if self.padding_mode != "zeros":
            s += f", padding_mode={self.padding_mode}"
        return s


class Conv1d(_ConvNd):
    dims = 1


class Conv2d(_ConvNd):
    dims = 2


class Conv3d(_ConvNd):
    dims = 3


class _ConvTransposeNd(_ConvNd):
    transposed = True

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, output_padding=0, groups=1,
                 bias=True, dilation=1, padding_mode="zeros", device=None, dtype=None):
        if padding_mode != "zeros":
            raise ValueError(f'Only "zeros" padding mode is supported for {self.__class__.__name__}')
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation, groups, bias, padding_mode,
                         device, dtype, output_padding)

    def _output_padding(self, input, output_size):
        """torch's: the output_padding that makes the output `output_size`, checked to be reachable."""
        if output_size is None:
            return self.output_padding
        k = self.dims
        lead = 2 if input.dim() == k + 2 else 1
        output_size = list(output_size)
        if len(output_size) == lead + k:
            output_size = output_size[lead:]
        if len(output_size) != k:
            raise ValueError(f"ConvTranspose{k}D: for {input.dim()}D input, output_size must have {k} or {lead + k} "
                             f"elements (got {len(output_size)})")
        min_sizes = [(input.shape[d + lead] - 1) * self.stride[d] - 2 * self.padding[d] +
                     self.dilation[d] * (self.kernel_size[d] - 1) + 1 for d in range(k)]
        max_sizes = [m + s - 1 for m, s in zip(min_sizes, self.stride)]
        for size, low, high in zip(output_size, min_sizes, max_sizes):
            if size < low or size > high:
                raise ValueError(f"requested an output size of {output_size}, but valid sizes range from {min_sizes} "
                                 f"to {max_sizes} (for an input of {input.shape[2:]})")
        return [size - low for size, low in zip(output_size, min_sizes)]

    def forward(self, input, output_size=None):
        conv = (F.conv_transpose1d, F.conv_transpose2d, F.conv_transpose3d)[self.dims - 1]
        output_padding = self._output_padding(input, output_size)
        return conv(input, self.weight, self.bias, self.stride, self.padding, output_padding, self.groups,
                    self.dilation)


class ConvTranspose1d(_ConvTransposeNd):
    dims = 1


class ConvTranspose2d(_ConvTransposeNd):
    dims = 2


class ConvTranspose3d(_ConvTransposeNd):
    dims = 3


class MaxPool2d(Module):
    def __init__(self, kernel_size, stride=None, padding=0, dilation=1, return_indices=False, ceil_mode=False):
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding, self.dilation = padding, dilation
        self.return_indices, self.ceil_mode = return_indices, ceil_mode

    def forward(self, input):
        return F.max_pool2d(input, self.kernel_size, self.stride, self.padding, self.dilation,
                            ceil_mode=self.ceil_mode, return_indices=self.return_indices)

    def extra_repr(self):
        return (f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}, "
                f"dilation={self.dilation}, ceil_mode={self.ceil_mode}")

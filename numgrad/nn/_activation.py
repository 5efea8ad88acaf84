"""The activations of nn.functional beyond relu/gelu: op-table entries, their in-place forms, and the composites
(glu, prelu, rrelu) recorded under torch's node names."""
import warnings

from .._core import dtypes
from .._core.grad_mode import no_grad
from .._core.shapes import wrap_dim
from ..ops import functional as _core, join, pointwise
from ..ops.elementwise import apply
from ..ops.random import generator as _generator
from ..ops import creation
from ..node import record
from ..tensor import _inplace


def _maybe_in_place(name, input, inplace, *args, in_place_name=None):
    """apply(name) out of place, or written into `input` (in_place_name: the entry whose node reads the result,
    as torch's in-place forms record EluBackward1 and the like)."""
    if not inplace:
        return apply(name, input, *args)
    entry = in_place_name or name

    def op(self, *a):
        return apply(entry, self, *a)
    op.__name__ = entry
    return _inplace(op, elementwise=False)(input, *args)  # (its options are no operands)


def silu(input, inplace=False):
    return _maybe_in_place("silu", input, inplace)


def mish(input, inplace=False):
    return _maybe_in_place("mish", input, inplace)


def hardsigmoid(input, inplace=False):
    return _maybe_in_place("hardsigmoid", input, inplace)


def hardswish(input, inplace=False):
    return _maybe_in_place("hardswish", input, inplace)


def hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False):
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    if not input.dtype.is_floating_point:  # the bounds take the input's type: an integer result stays integer
        min_val, max_val = int(min_val), int(max_val)
    if input.dtype is dtypes.uint8 and (min_val < 0 or max_val < 0):  # the bounds as the kernel reads them
        raise RuntimeError("cannot do hardtanh on an unsigned type with negative limits")
    return _maybe_in_place("hardtanh", input, inplace, min_val, max_val)


def hardtanh_(input, min_val=-1.0, max_val=1.0):
    return hardtanh(input, min_val, max_val, inplace=True)


def _threshold(input, threshold, value, inplace=False):  # (named so: its argument `threshold` hides it)
    if not inplace:
        return pointwise.threshold(input, threshold, value)

    def op(self, *args):
        return pointwise.threshold_in_place(self, *args)
    op.__name__ = "threshold"
    return _inplace(op, elementwise=False, overlap=False)(input, threshold, value)  # (torch skips the check too)


threshold = _threshold


def threshold_(input, threshold, value):
    _core._tensor_arg("threshold_", input, 1, "input")
    return _threshold(input, threshold, value, inplace=True)


def relu6(input, inplace=False):
    return hardtanh(input, 0.0, 6.0, inplace)


def elu(input, alpha=1.0, inplace=False):
    return _maybe_in_place("elu", input, inplace, alpha, in_place_name="elu_result")


def elu_(input, alpha=1.0):
    return elu(input, alpha, inplace=True)


def selu(input, inplace=False):
    return _maybe_in_place("selu", input, inplace, in_place_name="selu_result")


def selu_(input):
    return selu(input, inplace=True)


def celu(input, alpha=1.0, inplace=False):
    if alpha == 0:
        raise RuntimeError("ZeroDivisionError: alpha cannot be 0 for CELU")
    return _maybe_in_place("celu", input, inplace, alpha, in_place_name="celu_result")


def celu_(input, alpha=1.0):
    return celu(input, alpha, inplace=True)


def leaky_relu(input, negative_slope=0.01, inplace=False):
    if inplace and negative_slope < 0:
        return _inplace(_leaky_relu_refusing_backward, elementwise=False)(input, negative_slope)
    return _maybe_in_place("leaky_relu", input, inplace, negative_slope, in_place_name="leaky_relu_result")


def leaky_relu_(input, negative_slope=0.01):
    return leaky_relu(input, negative_slope, inplace=True)


def _leaky_relu_refusing_backward(self, negative_slope):
    """torch's in-place leaky_relu with a negative slope: the forward works, its backward raises (the result
    alone no longer tells which side of 0 the input was)."""
    with no_grad():
        out = apply("leaky_relu", self, negative_slope)
    record("LeakyReluBackward1", _raise_negative_slope, [self], [out], saved={"negative_slope": negative_slope})
    return out


def _raise_negative_slope(node, g):
    raise RuntimeError(
        "In-place leakyReLu backward calculation is triggered with a negative slope which is not supported. "
        "This is caused by calling in-place forward function with a negative slope, please call out-of-place "
        "version instead. File an issue at https://github.com/pytorch/pytorch if you do require supporting "
        "in-place leakRelu backward calculation with negative slope")


def logsigmoid(input):
    return apply("logsigmoid", input)


def softplus(input, beta=1.0, threshold=20.0):
    return apply("softplus", input, beta, threshold)


def softsign(input):
    return input / (_core.abs(input) + 1)  # a composite, as torch's (DivBackward0)


def tanhshrink(input):
    return input - _core.tanh(input)  # a composite, as torch's (SubBackward0)


softshrink, hardshrink = pointwise.softshrink, pointwise.hardshrink


# ---- composites recorded under torch's node names ----------------------------------------------------------

def glu(input, dim=-1):
    if input.dim() == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    d = wrap_dim(dim, input.dim())
    if input.shape[d] % 2:
        raise RuntimeError(f"Halving dimension must be even, but dimension {d} is size {input.shape[d]}")
    if not input.dtype.is_floating_point:
        raise NotImplementedError(f'"glu_cpu" not implemented for \'{input.dtype.word}\'')
    with no_grad():
        a, b = join.chunk(input, 2, d)
        out = a * _core.sigmoid(b)
    record("GluBackward0", _glu_backward, [input], [out], saved={"self": input, "dim": dim})
    return out


def _glu_backward(node, g):
    a, b = join.chunk(node.saved("self"), 2, node.saved("dim"))
    s = _core.sigmoid(b)
    return (join.cat([g * s, g * a * s * (1 - s)], node.saved("dim")),)


prelu = pointwise.prelu


def rrelu(input, lower=1.0 / 8, upper=1.0 / 3, training=False, inplace=False):
    """Leaky ReLU whose negative slope is drawn uniformly in [lower, upper] per element while training, and is
    their mean otherwise."""
    with no_grad():
        if training:
            slopes = creation.tensor(_generator().uniform(lower, upper, input.shape), dtype=input.dtype)
        else:
            slopes = (lower + upper) / 2
        noise = _core.where(input > 0, creation.ones_like(input), creation.full_like(input, 0) + slopes)
    if inplace:
        return _inplace(_rrelu_in_place(noise), elementwise=False)(input)
    with no_grad():
        out = input * noise
    record("RreluWithNoiseBackward0", _rrelu_backward, [input], [out], saved={"noise": noise})
    return out


def _rrelu_in_place(noise):
    def rrelu(self):
        with no_grad():
            out = self * noise
        record("RreluWithNoiseBackward1", _rrelu_backward, [self], [out], saved={"noise": noise})
        return out
    return rrelu


def gumbel_softmax(logits, tau=1, hard=False, eps=1e-10, dim=-1):
    """softmax((logits + Gumbel(0, 1) noise) / tau); `hard`: its one-hot argmax, with the soft sample's gradient
    (straight through)."""
    if eps != 1e-10:
        warnings.warn("`eps` parameter is deprecated and has no effect.", stacklevel=2)
    with no_grad():
        exponentials = creation.tensor(_generator().exponential(size=logits.shape), dtype=logits.dtype,
                                       device=logits.device)
    gumbels = (logits + -exponentials.log()) / tau
    y_soft = gumbels.softmax(dim)
    if not hard:
        return y_soft
    index = y_soft.max(dim, keepdim=True)[1]
    y_hard = creation.zeros_like(logits).scatter_(dim, index, 1.0)
    return y_hard - y_soft.detach() + y_soft


def _rrelu_backward(node, g):
    return (g * node.saved("noise"),)


def rrelu_(input, lower=1.0 / 8, upper=1.0 / 3, training=False):
    return rrelu(input, lower, upper, training, inplace=True)


__all__ = ["silu", "mish", "hardsigmoid", "hardswish", "hardtanh", "hardtanh_", "threshold", "threshold_", "relu6",
           "elu", "elu_", "leaky_relu", "leaky_relu_", "selu", "selu_", "celu", "celu_", "logsigmoid", "softplus",
           "softsign", "tanhshrink",
           "softshrink", "hardshrink", "glu", "prelu", "rrelu", "rrelu_",
           "gumbel_softmax"]

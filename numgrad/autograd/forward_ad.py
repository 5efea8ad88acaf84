"""torch.autograd.forward_ad: dual levels, make_dual and unpack_dual; ops hand the active level their results."""
import contextlib
import typing
import weakref

from .._core.state import STATE
from ..node import SavedTensor
from ..tensor_base import TensorBase
from . import jvp_rules

__all__ = ["UnpackedDualTensor", "enter_dual_level", "exit_dual_level", "make_dual", "unpack_dual", "dual_level"]

NO_LEVEL = "Trying to create a dual Tensor for forward AD but no level exists, make sure to enter_dual_level() first."


class UnpackedDualTensor(typing.NamedTuple):
    primal: TensorBase
    tangent: typing.Optional[TensorBase]


@contextlib.contextmanager
def _suspended():
    """The tangents' own computation does not propagate tangents (torch has one level at a time)."""
    level, STATE.forward_ad = STATE.forward_ad, None
    try:
        yield level
    finally:
        STATE.forward_ad = level


class _Level:
    """The active dual level: gives ops' results their tangents, and forgets every tangent when it exits."""

    def __init__(self, index):
        self.index = index
        self.duals = []  # weak references to the tensors holding a tangent of this level

    def give(self, t, tangent):
        t._fw_grad = tangent
        self.duals.append(weakref.ref(t))
        node = t._grad_fn
        if node is not None:  # the node may keep t as a saved output, rebuilt in backward: with this tangent
            for saved in node._saved.values():
                if saved.__class__ is SavedTensor and saved.is_output and saved.output_nr == t._output_nr:
                    saved.tangent = (self, tangent)

    def elementwise(self, entry, args, result):
        if not result._dtype.is_floating_point:
            return
        for a in args:
            if isinstance(a, TensorBase) and a._fw_grad is not None:
                break
        else:
            return
        with _suspended():
            tangent = jvp_rules.elementwise_tangent(entry, args, result)
        if tangent is not None:
            self.give(result, tangent)

    def recorded(self, name, backward_fn, inputs, outputs, saved, saved_outputs):
        tangents = [x._fw_grad if x is not None else None for x in inputs]
        if all(t is None for t in tangents):
            return
        with _suspended():
            found = jvp_rules.recorded_tangents(name, backward_fn, inputs, outputs, saved, saved_outputs, tangents)
        for out, tangent in zip(outputs, found):
            if tangent is not None and out._dtype.is_floating_point:
                self.give(out, tangent)

    def written(self, target, result):
        """An in-place op: `target` now holds `result`, and its tangent (none: zeros, if target had one)."""
        tangent = result._fw_grad
        if tangent is None and target._fw_grad is not None:
            with _suspended():
                tangent = target._fw_grad.new_zeros(target._shape)
        if tangent is not None:
            self.give(target, tangent)

    def close(self):
        for ref in self.duals:
            t = ref()
            if t is not None:
                t._fw_grad = None
        self.duals = []


def enter_dual_level():
    if STATE.forward_ad is not None:
        raise RuntimeError("Nested forward mode AD is not supported at the moment")
    STATE.forward_ad = _Level(0)
    return 0


def exit_dual_level(*, level=None):
    current = STATE.forward_ad
    if level is None:
        level = current.index if current is not None else -1
    if level < 0:
        raise RuntimeError("Dual level must be a positive number.")
    if current is None or level != current.index:
        raise RuntimeError("Trying to exit a forward AD level that was not the last one that was created. This is "
                           "not supported.")
    current.close()
    STATE.forward_ad = None


def _level_of(level, where):
    current = STATE.forward_ad
    if level is None:
        return current
    if current is None or level != current.index:
        raise RuntimeError(f"Invalid level given to {where}")
    return current


def make_dual(tensor, tangent, *, level=None):
    """A view of `tensor` carrying `tangent` at the (current) dual level."""
    if STATE.forward_ad is None and level is None:
        raise RuntimeError(NO_LEVEL)
    if not tensor._dtype.is_floating_point:
        raise ValueError(f"Expected primal to be floating point or complex, but got: {tensor._dtype}")
    if not tangent._dtype.is_floating_point:
        raise ValueError(f"Expected tangent to be floating point or complex, but got: {tangent._dtype}")
    current = _level_of(level, "_make_dual")
    if current is None:
        raise RuntimeError(NO_LEVEL)
    if tangent._shape != tensor._shape:
        raise RuntimeError("Trying to set a forward gradient that has a different size than that of the original "
                           f"Tensor, this is not supported. Tensor is of size {list(tensor._shape)} while the given "
                           f"forward gradient is of size {list(tangent._shape)}.")
    if tensor._fw_grad is not None:
        raise RuntimeError(f"Making a dual Tensor based on a Tensor that already has a forward gradient at the same "
                           f"level {current.index} is not supported.")
    with _suspended():
        dual = tensor.view(tensor._shape)
    current.give(dual, tangent)
    return dual


def unpack_dual(tensor, *, level=None):
    """(primal, tangent): a view of `tensor` without its tangent, and the tangent (None outside a level)."""
    current = STATE.forward_ad if level is None else _level_of(level, "_unpack_dual")
    if current is None:
        return UnpackedDualTensor(tensor, None)
    with _suspended():
        primal = tensor.view(tensor._shape)
    return UnpackedDualTensor(primal, tensor._fw_grad)


class dual_level:
    """Context manager of one forward-AD level: tangents made inside it are dropped when it exits."""

    def __enter__(self):
        return enter_dual_level()

    def __exit__(self, *exc):
        exit_dual_level()

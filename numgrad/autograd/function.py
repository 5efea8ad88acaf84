"""Custom differentiable functions: autograd.Function with forward(ctx, ...) / backward(ctx, ...)."""
import functools

import numpy as np

from .._core.grad_mode import no_grad
from .._core.state import STATE
from ..kernels import tape
from ..node import Node, SavedTensor, edge_of
from ..ops.creation import zeros
from ..node import FREED
from ..ops.reduction import sum_to
from ..ops.shape import view_of
from ..tensor_base import TensorBase


def _give_tangents(cls, ctx, tensors, outputs):
    """Forward AD through a custom Function: its jvp(ctx, *input tangents) gives the outputs' tangents."""
    level, STATE.forward_ad = STATE.forward_ad, None
    try:
        found = cls.jvp(ctx, *[t._fw_grad if t is not None else None for t in tensors])
    finally:
        STATE.forward_ad = level
    for out, tangent in zip(outputs, found if isinstance(found, tuple) else (found,)):
        if isinstance(out, TensorBase) and tangent is not None:
            level.give(out, tangent)


class FunctionCtx:
    """What forward can tell backward; the node object itself plays this role, as in torch."""

    def save_for_backward(self, *tensors):
        self._to_save = tensors

    @property
    def saved_tensors(self):
        if self._freed:
            raise RuntimeError(FREED)
        return tuple(s.unpack(self) if isinstance(s, SavedTensor) else s for s in self._saved_list)

    def mark_dirty(self, *tensors):
        self._dirty = tensors

    def mark_non_differentiable(self, *tensors):
        self._non_differentiable = tensors

    def set_materialize_grads(self, value):
        self.materialize_grads = bool(value)


class BackwardCFunction(FunctionCtx, Node):
    _function = None
    __repr__ = object.__repr__  # <torch.autograd.function.MultiplyAddBackward object at 0x...>

    def __init__(self):
        Node.__init__(self)
        self._to_save, self._dirty, self._non_differentiable = (), (), ()
        self._saved_list, self.materialize_grads, self.needs_input_grad = (), True, ()

    def release(self):
        super().release()
        for s in self._saved_list:
            if isinstance(s, SavedTensor):
                s.release()

    def apply_without_gradients(self, grads):
        return self.apply(grads)  # torch calls backward all the same, with zeros unless materialize_grads is off

    def apply(self, grads):
        n_out = len(self._output_meta)
        grads = list(grads) + [None] * (n_out - len(grads))
        if self.materialize_grads:
            grads = [g if g is not None else _zeros(meta) for g, meta in zip(grads, self._output_meta)]
        result = self._function.backward(self, *grads)
        if not isinstance(result, tuple):
            result = (result,)
        expected = len(self._arg_meta)
        if len(result) < expected or (len(result) > expected and any(r is not None for r in result[expected:])):
            raise RuntimeError(f"function {type(self).__name__} returned an incorrect number of gradients "
                               f"(expected {expected}, got {len(result)})")
        for i, (r, meta) in enumerate(zip(result, self._arg_meta)):
            if r is None:
                continue
            if meta is None:
                raise RuntimeError(f"function {type(self).__name__} returned a gradient different than None at "
                                   f"position {i + 1}, but the corresponding forward input was not a Variable")
            if not isinstance(r, TensorBase):
                raise RuntimeError(f"expected Variable or None (got {type(r).__name__})")
        return [self._checked(i, r) for i, (r, meta) in enumerate(zip(result, self._arg_meta)) if meta is not None]

    def _checked(self, i, grad):
        """A returned gradient must fit its input: summed down if it was broadcast, cast to its dtype."""
        if grad is None:
            return None
        shape, dtype = self._arg_meta[i]
        if tuple(grad.shape) != shape:
            try:  # the input must be expandable to the gradient's shape
                ok = np.broadcast_shapes(shape, tuple(grad.shape)) == tuple(grad.shape)
            except ValueError:
                ok = False
            if not ok:
                raise RuntimeError(f"Function {type(self).__name__} returned an invalid gradient at index {i} - got "
                                   f"{list(grad.shape)} but expected shape compatible with {list(shape)}")
            grad = sum_to(grad, shape)
        return grad if grad.dtype is dtype else grad.to(dtype)


def _zeros(meta):
    shape, dtype = meta
    return zeros(*shape, dtype=dtype)


class FunctionMeta(type):
    """Gives each Function subclass its node class, named `<Name>Backward` as in torch."""

    def __init__(cls, name, bases, attrs):
        super().__init__(name, bases, attrs)
        # the module torch gives these classes, so that printed grad_fns read the same
        cls._backward_cls = type(name + "Backward", (BackwardCFunction,),
                                 {"_function": cls, "__module__": "torch.autograd.function"})


class Function(metaclass=FunctionMeta):
    @staticmethod
    def forward(ctx, *args, **kwargs):
        raise NotImplementedError("You must implement the forward function for custom autograd.Function.")

    @staticmethod
    def setup_context(ctx, inputs, output):
        raise NotImplementedError("setup_context is not implemented.")

    @staticmethod
    def backward(ctx, *grad_outputs):
        raise NotImplementedError("You must implement either the backward or vjp method for your custom "
                                  "autograd.Function to use it with backward mode AD.")

    vjp = backward

    @staticmethod
    def jvp(ctx, *grad_inputs):
        raise NotImplementedError("You must implement the jvp function for custom autograd.Function to use it with "
                                  "forward mode AD.")

    @classmethod
    def apply(cls, *args, **kwargs):
        tape.graph_break(f"custom autograd.Function {cls.__name__} (its Python forward and backward)")
        ctx = cls._backward_cls()
        tensors = [a if isinstance(a, TensorBase) else None for a in args]
        ctx.needs_input_grad = tuple(t is not None and t._requires_grad for t in tensors)
        uses_setup = cls.setup_context is not Function.setup_context
        with no_grad():
            output = cls.forward(*args, **kwargs) if uses_setup else cls.forward(ctx, *args, **kwargs)
        if uses_setup:
            cls.setup_context(ctx, args, output)
        single = not isinstance(output, tuple)
        outputs = [output] if single else list(output)
        record = STATE.grad_enabled and any(ctx.needs_input_grad)
        for i, out in enumerate(outputs):
            if isinstance(out, TensorBase) and any(out is t for t in tensors) and not any(out is d for d in ctx._dirty):
                outputs[i] = view_of(out, out._data)  # an input returned as is: a new alias of it
        if record:
            for d in ctx._dirty:
                if d._requires_grad and d._grad_fn is None:
                    raise RuntimeError("a leaf Variable that requires grad has been used in an in-place operation.")
            # only tensor arguments are edges; backward still returns one gradient per argument
            ctx.next_functions = tuple(edge_of(t) for t in tensors if t is not None)
            ctx._arg_meta = [(t._data.shape, t._dtype) if t is not None else None for t in tensors]
            ctx._output_meta = [(o._data.shape, o._dtype) if isinstance(o, TensorBase) else ((), None) for o in outputs]
            for i, out in enumerate(outputs):
                if not isinstance(out, TensorBase) or any(out is t for t in ctx._non_differentiable):
                    continue
                if out._dtype.is_floating_point:
                    out._grad_fn, out._requires_grad, out._output_nr = ctx, True, i
        else:
            ctx._output_meta = []
        for d in ctx._dirty:
            d._vc[0] += 1  # torch counts mark_dirty as one more modification
        ctx._saved_list = tuple(SavedTensor(t, ctx, False) if isinstance(t, TensorBase) else t for t in ctx._to_save)
        ctx._to_save = ()
        if STATE.forward_ad is not None and any(t is not None and t._fw_grad is not None for t in tensors):
            _give_tangents(cls, ctx, tensors, outputs)
        return outputs[0] if single else tuple(outputs)


def once_differentiable(fn):
    """Runs backward without recording it: its result cannot be differentiated again."""
    @functools.wraps(fn)
    def wrapper(ctx, *args):
        with no_grad():
            return fn(ctx, *args)
    return wrapper

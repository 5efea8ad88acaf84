"""torch.utils.checkpoint: activation checkpointing. A checkpointed function's activations are not kept for
backward; backward runs the function again (with the random state it had, so dropout draws the same mask)
and takes what it needs from that run."""
from .._core.grad_mode import enable_grad, no_grad
from .._core.warn import warn
from ..autograd import Function, backward as autograd_backward
from ..autograd.graph import saved_tensors_hooks
from ..ops import random
from ..tensor_base import TensorBase

__all__ = ["checkpoint", "checkpoint_sequential", "CheckpointError"]

USE_REENTRANT_MISSING = (
    "torch.utils.checkpoint: the use_reentrant parameter should be passed explicitly. Starting in PyTorch 2.9, "
    "calling checkpoint without use_reentrant will raise an exception. use_reentrant=False is recommended, but "
    "if you need to preserve the current default behavior, you can pass use_reentrant=True. Refer to docs for "
    "more details on the differences between the two variants.")


class CheckpointError(RuntimeError):
    """The recomputation in backward did not save what the forward did (a nondeterministic function)."""


def _rng_state():
    return random.get_rng_state()


def _run_with_rng(state, fn, *args, **kwargs):
    """fn(...) drawing from the random state `state` (None: as it is), leaving the caller's state as it was."""
    if state is None:
        return fn(*args, **kwargs)
    with random.fork_rng():
        random.set_rng_state(state)
        return fn(*args, **kwargs)


def checkpoint(function, *args, use_reentrant=None, context_fn=None, determinism_check="default", debug=False,
               preserve_rng_state=True, **kwargs):
    """function(*args, **kwargs) without keeping its activations: backward recomputes them."""
    if use_reentrant is None:
        warn(USE_REENTRANT_MISSING)
        use_reentrant = True
    if use_reentrant:
        if kwargs:
            raise ValueError("Unexpected keyword arguments: " + ",".join(kwargs))
        if context_fn is not None or debug:
            raise ValueError("Passing `context_fn` or `debug` is only supported when use_reentrant=False.")
        return CheckpointFunction.apply(function, preserve_rng_state, *args)
    return _NonReentrant(function, args, kwargs, preserve_rng_state, determinism_check).run()


class CheckpointFunction(Function):
    """use_reentrant=True: the function runs without grad; backward runs it again with grad and backpropagates
    through that second graph (torch's CheckpointFunction)."""

    @staticmethod
    def forward(ctx, run_function, preserve_rng_state, *args):
        ctx.run_function, ctx.rng = run_function, _rng_state() if preserve_rng_state else None
        ctx.inputs = [None if isinstance(a, TensorBase) else a for a in args]
        ctx.tensor_indices = [i for i, a in enumerate(args) if isinstance(a, TensorBase)]
        ctx.save_for_backward(*[a for a in args if isinstance(a, TensorBase)])
        if not any(isinstance(a, TensorBase) and a.requires_grad for a in args):
            warn("None of the inputs have requires_grad=True. Gradients will be None")
        with no_grad():
            return run_function(*args)

    @staticmethod
    def backward(ctx, *grads):
        inputs = list(ctx.inputs)
        for i, t in zip(ctx.tensor_indices, ctx.saved_tensors):
            inputs[i] = t.detach().requires_grad_(t.requires_grad)
        with enable_grad():
            outputs = _run_with_rng(ctx.rng, ctx.run_function, *inputs)
        outputs = outputs if isinstance(outputs, tuple) else (outputs,)
        pairs = [(o, g) for o, g in zip(outputs, grads)
                 if isinstance(o, TensorBase) and o.requires_grad and g is not None]
        if not pairs:
            raise RuntimeError("none of output has requires_grad=True, this checkpoint() is not necessary")
        autograd_backward([o for o, _ in pairs], [g for _, g in pairs])
        return (None, None) + tuple(a.grad if isinstance(a, TensorBase) else None for a in inputs)


class _NonReentrant:
    """use_reentrant=False: the function runs with grad, but each tensor its ops save is replaced by its
    position in the run; the first unpack in backward runs the function again and hands out what that run
    saved at the same positions."""

    def __init__(self, function, args, kwargs, preserve_rng_state, determinism_check):
        if determinism_check not in ("default", "none"):
            raise ValueError(f"determinism_check should be one of ['default', 'none'], but got {determinism_check}")
        self.function, self.args, self.kwargs = function, args, kwargs
        self.check = determinism_check == "default"
        self.rng = _rng_state() if preserve_rng_state else None
        self.shapes, self.recomputed = [], {}

    def run(self):
        with saved_tensors_hooks(self._pack, self._unpack):
            return self.function(*self.args, **self.kwargs)

    def _pack(self, t):
        self.shapes.append((tuple(t.shape), t.dtype))
        return len(self.shapes) - 1

    def _unpack(self, index):
        if index not in self.recomputed:
            self._recompute()
        return self.recomputed.pop(index)

    def _recompute(self):
        saved = []

        def keep(t):  # the recomputed graph itself keeps nothing: it is never backpropagated
            saved.append(t.detach())

        with enable_grad(), saved_tensors_hooks(keep, _nothing):
            _run_with_rng(self.rng, self.function, *self.args, **self.kwargs)
        if self.check:
            got = [(tuple(t.shape), t.dtype) for t in saved]
            if got[:len(self.shapes)] != self.shapes:
                raise CheckpointError(
                    "torch.utils.checkpoint: Recomputed values for the following tensors have different metadata "
                    f"than during the forward pass.\nsaved during forward: {self.shapes}\nrecomputed: {got}")
        self.recomputed = dict(enumerate(saved[:len(self.shapes)]))


def _nothing(packed):
    return None


def checkpoint_sequential(functions, segments, input, use_reentrant=None, **kwargs):
    """Runs `functions` (a Sequential or a list of modules) in `segments` chunks, checkpointing each but the
    last, whose activations backward needs first anyway."""
    if use_reentrant is None:
        warn(USE_REENTRANT_MISSING)
        use_reentrant = True
    if isinstance(functions, (list, tuple)):
        functions = list(functions)
    else:
        functions = list(functions.children())

    def run_segment(start, end):
        def forward(x):
            for j in range(start, end + 1):
                x = functions[j](x)
            return x
        return forward

    size = len(functions) // segments
    end = -1
    for start in range(0, size * (segments - 1), size):
        end = start + size - 1
        input = checkpoint(run_segment(start, end), input, use_reentrant=use_reentrant,
                           preserve_rng_state=kwargs.get("preserve_rng_state", True))
    return run_segment(end + 1, len(functions) - 1)(input)

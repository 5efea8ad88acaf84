"""Graph nodes (grad_fn objects), AccumulateGrad for leaves, saved tensors with version checks, hooks."""
import itertools
import weakref

import numpy as np

from . import lazy
from ._core.hooks import HookDict, add_hook
from ._core.messages import op_name
from ._core.state import ANOMALY, STATE
from ._core.warn import user_stack
from .kernels import dispatch, tape
from .kernels.arrays import dtype_name
from .tensor_base import TensorBase, wants_grad

FREED = ("Trying to backward through the graph a second time (or directly access saved tensors after they "
         "have already been freed). Saved intermediate values of the graph are freed when you call "
         ".backward() or autograd.grad(). Specify retain_graph=True if you need to backward through the "
         "graph a second time or if you need to access saved tensors after calling backward.")
INFERENCE_SAVE = ("Inference tensors cannot be saved for backward. Please do not use Tensors created in "
                  "inference mode in computation tracked by autograd. To work around this, you can make a "
                  "clone to get a normal tensor and use it in autograd, or use `torch.no_grad()` instead of "
                  "`torch.inference_mode()`.")

_sequence = itertools.count()
next_sequence = _sequence.__next__  # a new node's number
# torch numbers nodes in the order they are recorded and runs the ready one with the highest number first;
# AccumulateGrad and error nodes (NotImplemented) take the largest number, so they run as soon as ready
LAST = 2 ** 64 - 1


def sequence_now():
    """A number below every node recorded from now on (numgrad.compile tells a call's nodes so)."""
    return next(_sequence)


class Node:
    """A backward function; subclasses are named as torch names them (MulBackward0, ...)."""

    # Hook tables stay these shared empty ones until a hook is registered (most nodes never get one):
    # nodes are made on every op, so their construction is kept to the minimum.
    _tensor_pre_hooks = {}  # output_nr -> HookDict of tensor hooks (register_hook on outputs)
    _retained = {}  # output_nr -> weakref of the tensor that called retain_grad()
    _pre_hooks = HookDict()
    _post_hooks = HookDict()
    _freed = False
    next_functions = ()
    # whether the backward can read an incoming gradient still pending (a fused elementwise expression) inside
    # its own kernel, never storing it: an elementwise node then leaves that gradient pending (softmax's)
    takes_pending_grad = False

    def __init__(self):
        self._seq = next_sequence()
        self._saved = {}
        if ANOMALY.enabled:  # the forward call that made this node, named when its backward fails
            self.metadata["traceback_"] = user_stack()

    def _own(self, table, factory=HookDict):
        """This node's own (mutable) copy of one of the class-level empty hook tables."""
        if table not in self.__dict__:
            setattr(self, table, factory())
        return getattr(self, table)

    @property
    def metadata(self):
        return self._own("_metadata", dict)

    def name(self):
        return type(self).__name__

    def apply_without_gradients(self, grads):
        """What the node does when no gradient reaches it (all of `grads` None): torch's engine still runs it,
        so it unpacks what it saved (a tensor modified since raises), and passes no gradient on."""
        check_saved_versions(self)
        return [None] * len(self.next_functions)

    def __repr__(self):
        return f"<{type(self).__name__} object at {hex(id(self))}>"

    def has_hooks(self):
        """Whether user code runs with this node in backward: its pre- or post-hooks, a hook registered on
        one of its outputs, or retain_grad on one."""
        return bool(self._pre_hooks or self._post_hooks or self._tensor_pre_hooks or self._retained)

    def register_hook(self, fn):
        return add_hook(self._own("_post_hooks"), fn)

    def register_prehook(self, fn):
        return add_hook(self._own("_pre_hooks"), fn)

    def save(self, name, value, is_output=False):
        """Saves a tensor (packed with version and hooks) or a plain value for backward."""
        self._saved[name] = SavedTensor(value, self, is_output) if isinstance(value, TensorBase) else value

    def saved(self, name):
        value = self._saved[name]
        return value.unpack(self) if isinstance(value, SavedTensor) else value

    def release(self):
        self._freed = True
        for v in self._saved.values():
            if v.__class__ is SavedTensor:
                v.release()

    def __getattr__(self, attr):
        if attr.startswith("_saved_") and attr[7:] in self.__dict__.get("_saved", {}):
            return self.saved(attr[7:])  # a released SavedTensor raises torch's error itself
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{attr}'")

    def __dir__(self):
        return list(super().__dir__()) + ["_saved_" + k for k in self._saved]

    def apply(self, grads):
        """Gradients w.r.t. each entry of next_functions, from gradients w.r.t. this node's outputs."""
        raise NotImplementedError

    def __call__(self, *grads):
        return tuple(self.apply(list(grads)))


class AccumulateGrad(Node):
    """The node standing for a leaf tensor: it writes the gradient into `.grad`."""

    def __init__(self, variable):
        self._saved = {}
        self._seq = LAST
        self.variable = variable

    def name(self):
        return "torch::autograd::AccumulateGrad"

    def apply(self, grads):
        if grads[0] is not None and self.variable._grad_fn is not None:  # an in-place op gave the leaf a history
            raise RuntimeError("leaf variable has been moved into the graph interior")
        if self.variable._requires_grad:  # torch's AccumulateGrad drops the gradient of a leaf no longer requiring it
            accumulate_into_grad(self.variable, grads[0])
            hooks = self.variable.__dict__.get("_post_accumulate_grad_hooks")
            if hooks:
                tape.graph_break("a post-accumulate-grad hook runs during backward")
                for hook in list(hooks.values()):
                    result = hook(self.variable)
                    if result is not None and not isinstance(result, TensorBase):
                        raise TypeError(f"expected Variable, but hook returned '{type(result).__name__}'")
        return []


def grad_accumulator(t):
    """The leaf's AccumulateGrad, created once and kept alive by the graphs that use it."""
    ref = t._accumulator
    acc = ref() if ref is not None else None
    if acc is None:
        acc = AccumulateGrad(t)
        t._accumulator = weakref.ref(acc)
    return acc


def edge_of(t):
    """The (node, output_nr) a gradient for tensor `t` flows into, or (None, 0) when it needs none."""
    if t is None:
        return (None, 0)
    if t._base is not None and t._vc[0] != t._view_version:  # its memory was written since: see grad_fn
        t._refresh_view_history()
    if not t._requires_grad:
        return (None, 0)
    if t._grad_fn is not None:
        return (t._grad_fn, t._output_nr)
    return (grad_accumulator(t), 0)


def _type_string(t, dims=True):
    # torch names a tensor by its legacy type (torch.FloatTensor, torch.cuda.FloatTensor), and bool, which has
    # none, by its dispatch key and scalar type (CPUBoolType)
    cuda = t.device.type == "cuda"
    name = (f"{'CUDA' if cuda else 'CPU'}BoolType" if t._dtype.word == "Bool" else
            f"torch.{'cuda.' if cuda else ''}{t._dtype.word}Tensor")
    return f"{name} [{', '.join(str(s) for s in t.shape)}]" if dims else name


DETACHED_IN_PLACE = ("Trying to use a saved tensor that has been detached in-place, i.e. with .detach_().This is not "
                     "supported, please use out-of-place `.detach()` instead")


class SavedTensor:
    """A tensor saved for backward: checks on unpack that no in-place op changed it since.
    An op's own output is kept without its grad_fn (no reference cycle) and rebuilt on unpack."""

    __slots__ = ("tensor", "data", "version", "vc", "dtype", "requires_grad", "output_nr", "is_output",
                 "hooks", "packed", "freed", "producer", "was_leaf", "tangent")

    def __init__(self, t, node, is_output):
        if t._is_inference and not STATE.inference:
            raise RuntimeError(INFERENCE_SAVE)
        self.freed, self.is_output, self.version, self.vc = False, is_output, t._vc[0], t._vc
        self.tangent = None  # (forward-AD level, tangent) of a saved output: its rebuilt form carries it in that level
        self.producer = None  # for an output written in place through a view: weak references to it and its grad_fn
        self.was_leaf = t._grad_fn is None
        hooks = STATE.saved_tensor_hooks
        self.hooks = hooks[-1] if hooks else None
        self.output_nr = t._output_nr
        if self.hooks is not None:
            self.packed, self.tensor = self.hooks[0](t), None
        elif is_output:
            # an op's output requires grad even if its node is not linked to it yet; a pending output
            # stays pending (the node keeps its expression, not the tensor: no reference cycle)
            self.tensor, self.dtype, self.requires_grad = None, t._dtype, True
            self.data = t._arr if t._arr is not None else t._lazy
        else:
            self.tensor = t

    def release(self):
        self.freed = True
        self.tensor = self.packed = self.data = None

    def unpack(self, node):
        if self.freed:
            raise RuntimeError(FREED)
        if self.hooks is not None:
            return self.hooks[1](self.packed)
        if self.tensor is not None and not self.was_leaf and self.tensor._grad_fn is None:
            raise RuntimeError(DETACHED_IN_PLACE)
        if self.vc[0] != self.version:
            shown = self.tensor if self.tensor is not None else self._rebuilt()
            # torch names the op that produced the tensor as it is now (the in-place op, usually)
            fn = self.tensor.grad_fn if self.tensor is not None else node
            producer = self._producer()
            op = op_name(producer if producer is not None else fn)
            nr = self.tensor._output_nr if self.tensor is not None else self.output_nr
            where = f", which is output {nr} of {op}," if op else ""
            raise RuntimeError(
                "one of the variables needed for gradient computation has been modified by an inplace "
                f"operation: [{_type_string(shown)}]{where} is at version {self.vc[0]}; expected version "
                f"{self.version} instead. Hint: enable anomaly detection to find the operation that failed "
                "to compute its gradient, with torch.autograd.set_detect_anomaly(True, check_nan=False).")
        if self.tensor is not None:
            return self.tensor
        out = self._rebuilt()
        out._vc, out._requires_grad = self.vc, self.requires_grad
        if self.tangent is not None and STATE.forward_ad is self.tangent[0]:
            self.tangent[0].give(out, self.tangent[1])
        if self.requires_grad:
            out._grad_fn, out._output_nr = node, self.output_nr
        return out

    def _producer(self):
        """The grad_fn torch's error names for an output written in place through a view, while torch's weak
        reference to it would live: the view (its owner) alive and still holding it. (torch's graph may keep it
        alive longer through later ops on the view; numgrad's graph, built differently, cannot tell.)"""
        if self.producer is None:
            return None
        view, node = self.producer[0](), self.producer[1]()
        return node if view is not None and view._grad_fn is node else None

    def _rebuilt(self):
        data = self.data
        # an array (host or GPU), not a pending expression (a host array first: hasattr's AttributeError costs)
        if data.__class__ is np.ndarray or not hasattr(data, "force"):
            return TensorBase._make(data, self.dtype)
        out = TensorBase._make(None, self.dtype)
        out._lazy = data
        return out


def check_saved_versions(node):
    """torch's backward unpacks every saved tensor before computing: the saved inputs in alphabetical order
    of their names, then the saved outputs (its generated code sorts them so), and the first one an in-place
    op modified raises."""
    stale = None
    for key, v in node._saved.items():  # (a loop: a list only when something is stale, which is rare)
        if v.__class__ is SavedTensor and v.vc[0] != v.version:
            stale = (stale or []) + [(v.is_output, key, v)]
    if stale:
        min(stale, key=lambda s: s[:2])[2].unpack(node)


class OpNode(Node):
    """A node whose backward is a function of (node, *output grads) written with tensor ops, so that
    with create_graph it is itself recorded and differentiable."""

    backward_fn = None

    def apply(self, grads):
        check_saved_versions(self)
        return list(self.backward_fn(*grads))

    def input_shape(self, i):
        return self.input_meta[i][0]


_node_classes = {}


def op_node_class(name, backward_fn):
    """The node class for `name`; a C++-style name ("torch::autograd::CopySlices") names the class by
    its last part and is what name() returns, as in torch."""
    key = (name, backward_fn)
    cls = _node_classes.get(key)
    if cls is None:
        def bound(self, *grads, _fn=backward_fn):
            return _fn(self, *grads)
        attrs = {"backward_fn": bound, "takes_pending_grad": getattr(backward_fn, "takes_pending_grad", False)}
        if "::" in name:
            attrs["name"] = lambda self, _full=name: _full
        cls = _node_classes[key] = type(name.split("::")[-1], (OpNode,), attrs)
    return cls


def check_differentiable(outputs):
    """torch's refusal to give an integer or bool result a grad_fn (an input of that dtype can require grad
    after an in-place write of a value that does)."""
    for out in outputs:
        if not out._dtype.is_floating_point:
            raise RuntimeError(f"Autograd not support dtype: {out._dtype.word}")


def zero_gradients(node, g):
    """A backward of zeros: for each input that takes a gradient, zeros of its shape and dtype (torch's
    zeros_like(grad): an inf or NaN incoming gradient still gives 0)."""
    return tuple(TensorBase._make(dispatch.zeros(meta[0], meta[1].np, g._data), meta[1]) if edge[0] is not None
                 else None for meta, edge in zip(node.input_meta, node.next_functions))


def needs_grad(*tensors):
    if STATE.grad_enabled:  # (a loop, not any() over a generator: every op asks, backward's ops too)
        for t in tensors:
            if t is not None and wants_grad(t):
                return True
    return False


def record(name, backward_fn, inputs, outputs, saved=None, saved_outputs=(), inplace=False):
    """Links `outputs` to a new node named `name` when grad mode is on and an input requires grad.
    `backward_fn(node, *grads)` returns one gradient (or None) per input; `saved` values and the
    outputs named in `saved_outputs` ({name: index}) are available as node.saved(name). Only an
    in-place op (`inplace`) may record an integer or bool output, as torch's rebase_history does."""
    if not STATE.grad_enabled or not needs_grad(*inputs):  # (the first test spares backward's ops a call)
        if STATE.forward_ad is not None:  # forward AD: the outputs' tangents, whether or not a node is recorded
            STATE.forward_ad.recorded(name, backward_fn, inputs, outputs, saved, saved_outputs)
        return None
    if not inplace:
        check_differentiable(outputs)
    node = op_node_class(name, backward_fn)()
    edges, meta = [], []  # (loops, not comprehensions, which cost a call each on Python 3.11)
    for t in inputs:
        if t is None:
            edges.append((None, 0))
            meta.append(None)
            continue
        fn, arr = t._grad_fn, t._arr
        # (edge_of's usual case, a non-view with a grad_fn, and TensorBase._shape's array case inlined)
        edges.append((fn, t._output_nr) if fn is not None and t._base is None else edge_of(t))
        meta.append((arr.shape if arr is not None else t._shape, t._dtype))
    node.next_functions, node.input_meta = tuple(edges), tuple(meta)
    if saved:
        own = node._saved
        for key, value in saved.items():  # Node.save, inlined
            own[key] = SavedTensor(value, node, False) if isinstance(value, TensorBase) else value
    for i, out in enumerate(outputs):
        out._grad_fn, out._requires_grad, out._output_nr = node, True, i
    if saved_outputs:
        for key, i in dict(saved_outputs).items():
            node.save(key, outputs[i], is_output=True)
    if STATE.forward_ad is not None:
        STATE.forward_ad.recorded(name, backward_fn, inputs, outputs, saved, saved_outputs)
    return node


# ---- AccumulateGrad: what a leaf does with its gradient ----------------------------------------

def hooked(hook, g):
    """A tensor hook's result for gradient g (g itself when it returns None), checked as torch checks it."""
    return _checked_value(hook, g, hook(g))


def hooked_tuple(hook, before, result):
    """A node hook's `result` replacing the gradients `before` (kept when it returns None): torch wants a tuple
    of as many values, each checked as a tensor hook's result (a None in it drops that gradient)."""
    if result is None:
        return list(before)
    if not isinstance(result, tuple):
        raise TypeError(f"expected tuple, but hook returned '{type(result).__name__}'")
    if len(result) != len(before):
        raise RuntimeError(f"hook '{_hook_name(hook)}' has returned an incorrect number of values (got {len(result)}, "
                           f"but expected {len(before)})")
    return [_checked_value(hook, b, r) if r is not None else None for b, r in zip(before, result)]


def _hook_name(hook):
    return getattr(hook, "__name__", "<unknown>")


def _checked_value(hook, original, result):
    """torch's check_single_result: a hook may replace a gradient only by a tensor of its type and size."""
    if result is None:
        return original
    if original is None:
        raise RuntimeError("can't replace a None gradient with a non-None value")
    if not isinstance(result, TensorBase):
        raise TypeError(f"expected Variable, but hook returned '{type(result).__name__}'")
    if result._dtype is not original._dtype or result.device != original.device:
        raise RuntimeError(f"hook '{_hook_name(hook)}' has changed the type of value (was "
                           f"{_type_string(original, dims=False)} got {_type_string(result, dims=False)})")
    if result.shape != original.shape:
        raise RuntimeError(f"hook '{_hook_name(hook)}' has changed the size of value")
    return result


def _copy_backward(node, g):
    return None, g


def _recorded_copy(g):
    out = TensorBase._make(g._data.copy(), g._dtype)
    record("CopyBackwards", _copy_backward, [None, g], [out])
    return out


def accumulate_into_grad(leaf, g, create_graph=None):
    """AccumulateGrad: `.grad` += g (a fresh tensor the first time, since g may be shared with other branches
    of the graph). The leaf's hooks ran before, in the engine, as torch runs them (autograd.grad too)."""
    if g is None:
        return
    if create_graph is None:
        create_graph = STATE.grad_enabled  # inside the engine, grad mode is create_graph
    rec = STATE.recorder if tape.active else None
    if rec is not None:
        rec.read_grad(leaf)
    if create_graph:  # .grad keeps the graph of the gradient, through a copy as in torch
        leaf._grad = _recorded_copy(g) if leaf._grad is None else leaf._grad + g
        if rec is not None:
            rec.set_grad(leaf, leaf._grad)
    elif leaf._grad is None:
        # the leaf's array as it is: _data would compute the pending results reading it, for nothing
        variable = leaf._arr if leaf._arr is not None else np.empty(leaf._shape, g._dtype.np)
        # (a computed gradient, the usual one, is no rider: its layout alone decides; a trace sees g read by _data)
        arr = g._arr if rec is None else None
        if g._fresh and g._grad_fn is None and (_obeys_layout(arr, variable) if arr is not None else
                                                 _stays_pending(g, variable) or _obeys_layout(g._data, variable)):
            g._fresh = False
            leaf._grad = g  # made by the engine for this leaf alone: keep it instead of copying
        else:
            leaf._grad = TensorBase._make(_copy_in_layout(g._data, variable), g._dtype)
        if rec is not None:
            rec.set_grad(leaf, leaf._grad)
    else:
        add_into(leaf._grad, g)


def _stays_pending(g, variable):
    """A rider (lazy.add_rider) becomes .grad unforced, when it will come out in the layout .grad needs."""
    return lazy.is_rider(g) and variable.__class__ is np.ndarray and \
        (variable.flags.c_contiguous or not lazy.is_dense_array(variable))


def _obeys_layout(grad, variable):
    """torch's layout contract for .grad: the variable's strides when it is dense, else C order."""
    if grad.strides == variable.strides:
        return True
    if not dispatch.is_host(grad) or not dispatch.is_host(variable):  # GPU arrays are C order
        return grad.flags.c_contiguous
    return grad.flags.c_contiguous and (variable.flags.c_contiguous or not lazy.is_dense_array(variable))


def _copy_in_layout(grad, variable):
    """A copy of `grad` obeying the layout contract (torch's clone_obey_contract)."""
    if not dispatch.is_host(grad) or not dispatch.is_host(variable):
        return tape.call(grad.copy)
    out = np.empty_like(variable, dtype=grad.dtype) if lazy.is_dense_array(variable) else \
        np.empty(grad.shape, grad.dtype)  # empty_like keeps a dense array's strides
    rec = tape.recorder()
    if rec is not None:
        rec.known[id(out)] = out  # a new buffer: the copy below is its only write
    dispatch.copy_into(out, grad)
    return out


_ADD_INPUTS, _ADD_OUTPUTS, _TWO_ARRAYS = ("a", "b"), (("out", "a + b"),), (True, True)


def add_into(acc, g):
    """acc += g without recording: .grad accumulation outside create_graph."""
    arr, other = acc._data, g._data
    if arr.flags.c_contiguous and other.shape == arr.shape and g._dtype is acc._dtype and \
            not acc._dtype.is_narrow:  # (a half type adds through its own rounding: add_)
        flat = arr.reshape(-1)
        n = flat.size
        if flat.__class__ is np.ndarray and other.__class__ is np.ndarray and other.flags.c_contiguous and \
                lazy.computes_at_once(n) and tape.profiler is None:  # the usual small case: the kernel at once
            dispatch.small_elementwise_kernel("add", _ADD_INPUTS, _TWO_ARRAYS, _ADD_OUTPUTS, dtype_name(flat.dtype))(
                0, n, flat, other.reshape(-1), flat)
            acc._vc[0] += 1
            return
        other = dispatch.contiguous(other).reshape(-1)
        run = dispatch.run_small_elementwise if lazy.computes_at_once(n) and \
            flat.__class__ is np.ndarray and other.__class__ is np.ndarray else dispatch.run_elementwise
        run("add", _ADD_INPUTS, _ADD_OUTPUTS, [flat, other], None, n, dtype_name(flat.dtype), outs=[flat])
        acc._vc[0] += 1
    else:
        acc.add_(g)

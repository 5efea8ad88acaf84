"""TensorBase: a tensor's storage (an array, or a pending fused expression), shape, dtype, device and
autograd fields. The ops below numgrad.tensor make and read TensorBase; numgrad.tensor.Tensor, the class
users see, adds the methods and operators that call the ops, and every result is made as a Tensor."""
import math
import weakref

from . import lazy
from ._core import dtypes, printing
from ._core.warn import warn, warn_once
from ._core.device import CPU
from ._core.hooks import HookDict, add_hook
from ._core.messages import (DETACH_VIEW_INPLACE, INFERENCE_INPLACE, INTERNAL_OVERLAP, LEAF_INPLACE,
                             MULTI_OUTPUT_VIEW_NO_GRAD, NO_GRAD_VIEW_REASON, NON_LEAF_GRAD, NON_LEAF_REQUIRES_GRAD,
                             PARTIAL_OVERLAP, VIEW_OF_LEAF_INPLACE, multi_output_view_written, op_name)
from ._core.shapes import Size, wrap_dim
from ._core.state import STATE
from .kernels import tape
from .kernels.dispatch import (data_ptr, device_of_array, element_offset, host_view, internal_overlap, is_host,
                               overlap, storage, to_host)


def wants_grad(t):
    """Whether op input `t` requires grad as torch reads it: a view whose memory was written in place since
    (through its base or another view) first takes its new history, which may require grad."""
    if t._base is not None and t._vc[0] != t._view_version:
        return t.requires_grad
    return t._requires_grad or _base_requires_grad(t)


def _base_requires_grad(t):
    """torch's DifferentiableViewMeta::requires_grad: a view with no history of its own (made without grad, or
    before its base was made to require grad) requires grad when its base does; its grad_fn stays None, so
    ops on it require grad while their gradient flows nowhere."""
    return t._base is not None and t._grad_fn is None and t._base._requires_grad


def _any_requires_grad(inputs):
    return any(isinstance(t, TensorBase) and t._requires_grad for t in inputs)


class TensorBase:
    __slots__ = ("_arr", "_lazy", "_dtype", "_requires_grad", "_grad_fn", "_output_nr", "_grad", "_vc", "_base",
                 "_hooks", "_retains_grad", "_is_inference", "_accumulator", "_fresh", "_view_version", "__weakref__",
                 "__dict__")
    __array_priority__ = 1000  # numpy scalars defer to our reflected operators

    _result_class = None  # the class results are made as: numgrad.tensor.Tensor
    # "grad" or "no grad" on the outputs of unbind/split (and views of them) made in grad mode, as they
    # require grad or not: torch's MULTI_OUTPUT_NODE views, which refuse in-place writes (_check_inplace,
    # and Tensor._write for a write that would make a "no grad" one require grad)
    _multi_output = False
    # a float view made in no_grad mode (or a view of one): the version of its memory when it was made; torch's
    # CreationMeta::NO_GRAD_MODE, whose in-place writes and rebased reads in grad mode it refuses
    _no_grad_view = None
    _fw_grad = None  # the tangent of forward AD's active level (autograd/forward_ad.py), set only while it lasts

    def __init_subclass__(cls, result_class=False, **kwargs):
        super().__init_subclass__(**kwargs)
        if result_class:
            TensorBase._result_class = cls

    @classmethod
    def _make(cls, data, dtype, requires_grad=False):
        t = object.__new__(TensorBase._result_class if cls is TensorBase else cls)
        t._arr, t._lazy, t._dtype, t._requires_grad = data, None, dtype, requires_grad
        t._grad_fn = t._grad = t._base = t._hooks = t._accumulator = None
        t._output_nr, t._vc, t._retains_grad, t._is_inference = 0, [0], False, STATE.inference
        t._fresh = False  # a gradient buffer nobody else holds (see node.accumulate_into_grad)
        if tape.active and STATE.recorder is not None:
            STATE.recorder.made(t, data)
        return t

    # ---- storage: an array, or a pending fused expression (see lazy.py) -------------------------
    @property
    def _data(self):
        """The values as a NumPy array: computes a pending result, and first computes the pending
        results that read this storage, since the caller may be about to write to it."""
        arr = self._arr
        if arr is None:
            arr = self._arr = self._lazy.force()
            self._lazy = None
        if lazy.READERS:
            lazy.before_access(arr)
        if tape.active and STATE.recorder is not None:
            STATE.recorder.seen(self, arr)
        return arr

    @_data.setter
    def _data(self, arr):
        """Replaces the storage. Pending results that read this tensor must keep the values it holds now,
        not the replacement: reading _data first computes this tensor and every pending result that reads
        its storage."""
        if self._arr is not None or self._lazy is not None:
            self._data  # noqa: B018
        self._arr, self._lazy = arr, None

    @property
    def _shape(self):
        arr = self._arr
        return arr.shape if arr is not None else self._lazy.shape

    # ---- metadata -------------------------------------------------------------------------------
    @property
    def shape(self):
        return Size(self._shape)

    def size(self, dim=None):
        return Size(self._shape) if dim is None else self._shape[self._wrap_dim(dim)]

    def _wrap_dim(self, dim):
        return wrap_dim(dim, len(self._shape))

    def dim(self):
        return len(self._shape)

    ndim = property(dim)

    def numel(self):
        return math.prod(self._shape)

    nelement = numel

    @property
    def dtype(self):
        return self._dtype

    @property
    def device(self):
        arr = self._arr
        return self._lazy.device if arr is None else device_of_array(arr)

    @property
    def is_cuda(self):
        return self.device.type == "cuda"

    @property
    def _host(self):
        """The values as a NumPy array, copied from the GPU for a CUDA tensor: for printing, item(),
        tolist() and control flow on a value, the only reads that may leave the device."""
        tape.graph_break("a tensor's value is read into Python (item, tolist, printing, control flow)")
        return to_host(self._data)

    def type(self, dtype=None):
        """torch's legacy type name ('torch.FloatTensor', 'torch.cuda.FloatTensor'), or a conversion."""
        if dtype is None:
            return f"torch.{'cuda.' if self.is_cuda else ''}{self._dtype.word}Tensor"
        return self.to(dtypes.from_legacy_type(dtype))

    def is_floating_point(self):
        return self._dtype.is_floating_point

    def element_size(self):
        return self._dtype.itemsize

    @property
    def itemsize(self):
        return self._dtype.itemsize

    @property
    def nbytes(self):
        return math.prod(self._shape) * self._dtype.itemsize

    def storage_offset(self):
        """Where this tensor starts in the memory it shares with its base and views, in elements."""
        arr = self._data
        return element_offset(arr, storage(arr)) if arr.size else 0

    def is_contiguous(self):
        return self._data.flags.c_contiguous

    def data_ptr(self):
        data = self._data
        return data_ptr(data)

    def get_device(self):
        return -1 if self.device.type == "cpu" else (self.device.index or 0)

    @property
    def __cuda_array_interface__(self):
        if not self.is_cuda:
            raise AttributeError(f"Can't get __cuda_array_interface__ on non-CUDA tensor type: {self.type()} "
                                 "If CUDA data is required use tensor.cuda() to copy tensor to device memory.")
        if self._requires_grad:
            raise RuntimeError("Can't get __cuda_array_interface__ on Variable that requires grad. If gradients "
                               "aren't required, use var.detach() to get Variable that doesn't require grad.")
        return self._data.__cuda_array_interface__

    def stride(self, dim=None):
        strides = tuple(s // self._dtype.itemsize for s in self._data.strides)
        return strides if dim is None else strides[self._wrap_dim(dim)]

    def is_inference(self):
        return self._is_inference

    # ---- autograd fields ------------------------------------------------------------------------
    @property
    def requires_grad(self):
        if self._no_grad_view is not None:  # torch reads the flag without regenerating (which may raise)
            return self._requires_grad or _base_requires_grad(self)
        if self._base is not None and self._vc[0] != self._view_version:
            if self._multi_output == "grad":  # torch reads the flag without regenerating (which would raise)
                return self._requires_grad or self._base._requires_grad
            self._refresh_view_history()
        return self._requires_grad or _base_requires_grad(self)

    @requires_grad.setter
    def requires_grad(self, flag):
        if self._grad_fn is not None:  # the attribute form words it more briefly than requires_grad_()
            raise RuntimeError("you can only change requires_grad flags of leaf variables." if flag else
                               NON_LEAF_REQUIRES_GRAD)
        self.requires_grad_(flag)

    def requires_grad_(self, requires_grad=True):
        if self._grad_fn is not None and not requires_grad:
            raise RuntimeError(NON_LEAF_REQUIRES_GRAD)
        # the dtype is judged for a non-leaf too (an integer one requires grad after an in-place write)
        if requires_grad and not self._dtype.is_floating_point:
            raise RuntimeError("only Tensors of floating point dtype can require gradients")
        if self._grad_fn is not None:
            return self
        if requires_grad and self._is_inference and not STATE.inference:
            raise RuntimeError("Setting requires_grad=True on inference tensor outside InferenceMode is not "
                               "allowed.")
        self._requires_grad = bool(requires_grad)
        return self

    @property
    def is_leaf(self):
        return self.grad_fn is None

    @property
    def grad_fn(self):
        if self._base is not None and self._vc[0] != self._view_version:
            self._refresh_view_history()
        return self._grad_fn

    def _refresh_view_history(self):
        """A differentiable view whose memory was written in place since its history was recorded (through
        its base or another view) gets it again from the base, as torch regenerates a view's grad_fn: the
        ops layer does it (Tensor._refresh_view_history); a bare TensorBase has no ops to call."""

    @property
    def grad(self):
        if self._grad_fn is not None and not self._retains_grad:
            warn(NON_LEAF_GRAD)
        return self._grad

    @grad.setter
    def grad(self, value):
        if value is not None:
            if not isinstance(value, TensorBase):
                raise TypeError(f"assigned grad expected to be a Tensor or None but got grad of type "
                                f"{type(value).__name__}")
            if value.shape != self.shape:
                raise RuntimeError("assigned grad has data of a different size")
            if value._dtype is not self._dtype:
                raise RuntimeError("assigned grad has data of a different type")
        self._grad = value
        if tape.active and STATE.recorder is not None:
            STATE.recorder.set_grad(self, value)

    @grad.deleter
    def grad(self):
        self._grad = None
        if tape.active and STATE.recorder is not None:
            STATE.recorder.set_grad(self, None)

    @property
    def output_nr(self):
        return self._output_nr

    @property
    def _version(self):
        tape.graph_break("_version is read into Python")
        return self._vc[0]

    @property
    def retains_grad(self):
        return self._retains_grad

    def retain_grad(self):
        if not self.requires_grad:  # a view requires grad when its base does
            raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
        if self._grad_fn is not None and not self._retains_grad:
            self._grad_fn._own("_retained")[self._output_nr] = weakref.ref(self)
            self._retains_grad = True

    def _move_retained(self, old, old_nr):
        """torch moves retain_grad to a tensor's new grad_fn (an in-place write, a regenerated view): .grad is
        the gradient of its latest value."""
        if self._retains_grad and old is not None and old is not self._grad_fn and self._grad_fn is not None:
            old._own("_retained").pop(old_nr, None)
            self._grad_fn._own("_retained")[self._output_nr] = weakref.ref(self)

    def register_hook(self, hook):
        if not self._requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        if self._grad_fn is not None:
            hooks = self._grad_fn._own("_tensor_pre_hooks").setdefault(self._output_nr, HookDict())
        else:
            if self._hooks is None:
                self._hooks = HookDict()
            hooks = self._hooks
        return add_hook(hooks, hook)

    def register_post_accumulate_grad_hook(self, hook):
        """hook(tensor) runs after backward has accumulated this leaf's gradient into `.grad`."""
        if not self._requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        if self._grad_fn is not None:
            raise RuntimeError("post accumulate grad hooks cannot be registered on non-leaf tensors")
        hooks = self.__dict__.setdefault("_post_accumulate_grad_hooks", HookDict())
        return add_hook(hooks, hook)

    def detach(self):
        t = TensorBase._make(self._data, self._dtype)
        t._vc, t._is_inference = self._vc, self._is_inference  # detach shares the version counter
        return t

    def detach_(self):
        if self._base is not None:
            raise RuntimeError(DETACH_VIEW_INPLACE)
        self._grad_fn, self._requires_grad, self._output_nr = None, False, 0
        return self

    @property
    def data(self):
        t = TensorBase._make(self._data, self._dtype)  # .data changes are invisible to autograd
        t._is_inference = self._is_inference
        return t

    @data.setter
    def data(self, value):
        self._data, self._dtype = value._data, value._dtype

    # ---- conversion -----------------------------------------------------------------------------
    def numpy(self, force=False):
        if self._requires_grad and not force:
            raise RuntimeError("Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() "
                               "instead.")
        data = host_view(self._data)
        tape.graph_break("numpy() hands the tensor's memory to NumPy code")
        lazy.export(data)  # NumPy code may write to it from now on
        return data

    def __array__(self, dtype=None, copy=None):
        data = self.numpy()
        return data if dtype is None else data.astype(dtype)

    def item(self):
        if self._data.size != 1:
            raise RuntimeError(f"a Tensor with {self._data.size} elements cannot be converted to Scalar")
        return self._host.reshape(-1)[0].item()

    def tolist(self):
        return self._host.tolist()

    def _scalar_for_python(self, warn_grad=False):
        if self._data.size != 1:
            raise ValueError("only one element tensors can be converted to Python scalars")
        if warn_grad and self._requires_grad:
            warn_once("Converting a tensor with requires_grad=True to a scalar may lead to unexpected "
                      "behavior.\nConsider using tensor.detach() first. (Triggered internally at "
                      "/__w/pytorch/pytorch/torch/csrc/autograd/generated/python_variable_methods.cpp:822.)")
        return self.item()

    def __float__(self):
        return float(self._scalar_for_python(warn_grad=True))

    def __int__(self):
        return int(self._scalar_for_python())

    def __index__(self):
        if self._dtype.is_floating_point or self._data.size != 1:
            raise TypeError("only integer tensors of a single element can be converted to an index")
        return int(self.item())

    def __bool__(self):
        if self._data.size != 1:
            raise RuntimeError("Boolean value of Tensor with no values is ambiguous" if self._data.size == 0 else
                               "Boolean value of Tensor with more than one value is ambiguous")
        return bool(self.item())

    def __len__(self):
        shape = self._shape
        if not shape:
            raise TypeError("len() of a 0-d tensor")
        return shape[0]

    def __iter__(self):
        if self._data.ndim == 0:
            raise TypeError("iteration over a 0-d tensor")
        return iter(self.unbind(0))

    def __hash__(self):
        return id(self)

    def __repr__(self, *, tensor_contents=None):
        return printing.format_tensor(self._host, dtype=self._dtype.name, device=str(self.device),
                                       grad_fn=type(self._grad_fn).__name__ if self._grad_fn is not None else None,
                                       requires_grad=self._requires_grad,
                                       default_dtype=dtypes.get_default_dtype().name,
                                       tangent=repr(self._fw_grad) if self._fw_grad is not None else None)

    __str__ = __repr__

    def __format__(self, spec):
        if self._data.ndim == 0:
            return format(self.item(), spec)
        return format(repr(self), spec)

    def __deepcopy__(self, memo):
        t = TensorBase._make(self._data.copy(), self._dtype, self._requires_grad)
        memo[id(self)] = t
        return t

    # ---- in-place machinery -------------------------------------------------------------------
    def _check_inplace(self, autograd=True, inputs=(), view_op=None):
        """torch's refusals of an in-place write; a non-differentiable op (autograd=False: logical_not_) skips
        the autograd ones, as torch does. An output of unbind/split made without grad refuses a write only of an
        input that requires grad (`inputs`: the op's operands), before the op's own checks of them. `view_op`
        names the view written, where torch writes through another view than numgrad (fill_diagonal_: AsStrided)."""
        if self._is_inference and not STATE.inference:
            raise RuntimeError(INFERENCE_INPLACE)
        if STATE.grad_enabled and autograd:
            if self._requires_grad and self._grad_fn is None and self._base is None:
                raise RuntimeError(LEAF_INPLACE)  # a view's own refusals come first (handle_view_on_rebase)
            if self._multi_output == "grad" and self._requires_grad and self._grad_fn is not None:
                raise RuntimeError(multi_output_view_written(self._output_nr, view_op or op_name(self._grad_fn)))
            if self._multi_output == "no grad" and (self._requires_grad or _any_requires_grad(inputs)):
                raise RuntimeError(MULTI_OUTPUT_VIEW_NO_GRAD)
            if self._no_grad_view is not None and (self._requires_grad or _base_requires_grad(self)
                                                   or _any_requires_grad(inputs)):
                op = view_op or op_name(self._grad_fn)
                what = "A view was created" if self._grad_fn is None else \
                    f"Output {self._output_nr} of {op} is a view of a view which was created"
                raise RuntimeError(f"{what} in no_grad mode and is being modified inplace with grad mode enabled. "
                                   + NO_GRAD_VIEW_REASON)
            base = self._base  # torch: the view requires grad (its own history, or its base's) and its base is a leaf
            if base is not None and base._grad_fn is None and (base._requires_grad or self._requires_grad):
                raise RuntimeError(VIEW_OF_LEAF_INPLACE)
            if self._requires_grad and self._grad_fn is None:  # a view made to require grad, of a non-leaf base
                raise RuntimeError(LEAF_INPLACE)

    def _check_overlap(self, inputs=(), internal=True, full=False, copy=False):
        """torch's refusals before an in-place write into self: self's elements meeting each other (an
        expanded view; fill_ and the deprecated masked_fill_/index_put_ skip this with internal=False), or an
        input that partly shares self's memory (with `full`, as index_put_ checks, any shared memory, itself
        too; with `copy`, as copy_, the same data as self is no write at all). A pending tensor has fresh memory
        of its own: nothing to check."""
        arr = self._arr
        if arr is None:
            return
        if copy and len(inputs) == 1 and isinstance(inputs[0], TensorBase) and inputs[0]._arr is not None and \
                inputs[0]._dtype is self._dtype and overlap(arr, inputs[0]._arr, exact=True) == "full":
            return  # copy_ of the same data: torch returns before it judges anything
        if internal and internal_overlap(arr):
            raise RuntimeError(INTERNAL_OVERLAP)
        for t in inputs:
            if isinstance(t, TensorBase) and (t is not self or full) and t._arr is not None:
                status = "full" if t is self else overlap(arr, t._arr)  # itself: full, even when empty
                if status == "partial" or (full and status == "full"):
                    raise RuntimeError(PARTIAL_OVERLAP)


def check_same_device(*tensors, cpu_scalars=False):
    """The device an op on `tensors` (other values are skipped) runs on, or torch's error for two
    devices. With `cpu_scalars` a 0-d CPU tensor joins an op on any device, as a scalar does in torch's
    elementwise ops."""
    found = None
    for t in tensors:
        if not isinstance(t, TensorBase):
            continue
        arr = t._arr  # the device property, inlined: this runs on every op
        d = t._lazy.device if arr is None else CPU if is_host(arr) else device_of_array(arr)
        if cpu_scalars and d is CPU and not t._shape:
            continue
        if found is None:
            found = d
        elif d != found:
            raise RuntimeError(f"Expected all tensors to be on the same device, but found at least two devices, "
                               f"{found} and {d}!")
    return found or CPU

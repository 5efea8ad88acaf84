"""Shape ops that return views (reshape, view, transpose, permute, expand, squeeze, ...), with backward."""
import math

import numpy as np

from .._core import dtypes
from .._core.warn import warn_once
from .._core.grad_mode import enable_grad
from .._core.messages import INTERNAL_OVERLAP, NO_GRAD_VIEW_REBASED, op_name
from .._core.shapes import storage_span, wrap_dim
from .._core.state import STATE
from .. import lazy
from ..kernels import dispatch, tape
from ..kernels.dispatch import indexing as device_index
from ..node import _type_string, needs_grad, record
from ..tensor_base import TensorBase
from .elementwise import apply


def view_of(base, data):
    """A tensor sharing `base`'s storage and version counter. A view made in grad mode of a float tensor is
    differentiable: it remembers the version its history belongs to (see regenerate_view); others None."""
    t = TensorBase._make(data, base._dtype)
    t._vc, t._base, t._is_inference = base._vc, base._base if base._base is not None else base, base._is_inference
    t._view_version = base._vc[0] if STATE.grad_enabled and base._dtype.is_floating_point else None
    if base._multi_output:  # a view of an unbind/split output keeps its refusal of in-place writes
        t._multi_output = base._multi_output
    if base._dtype.is_floating_point and (not STATE.grad_enabled or base._no_grad_view is not None):
        t._no_grad_view = base._vc[0]  # made in no_grad mode, or a view of such a view: see _check_inplace
    return t


def regenerate_view(view):
    """The history of a differentiable view whose memory was written in place since its grad_fn was
    recorded: its region of the root, the root carrying the writes' history (torch regenerates the view's
    grad_fn as AsStridedBackward0 of its base the same way). Without it the view would keep differentiating
    its values from before the write. A view made in no_grad mode cannot take it: torch refuses."""
    if view._no_grad_view is not None and view._vc[0] != view._no_grad_view and view._base._requires_grad:
        raise RuntimeError(NO_GRAD_VIEW_REBASED)
    if view._view_version is None:
        return
    root = view._base
    if view._multi_output == "grad" and (view._grad_fn is not None or root._requires_grad):
        # torch's handle_view_on_rebase, indirect: an unbind/split output cannot take the write's history
        raise RuntimeError(f"Output {view._output_nr} of {op_name(view._grad_fn)} is a view and its base or another "
                           "view of its base has been modified inplace. This view is the output of a function that "
                           "returns multiple views. Such functions do not allow the output views to be modified "
                           "inplace. You should replace the inplace operation by an out-of-place one.")
    view._view_version = view._vc[0]
    if not root._requires_grad:
        return
    old, old_nr = view._grad_fn, view._output_nr
    with enable_grad():  # read under no_grad too (grad_fn, requires_grad), the history is the same
        record("AsStridedBackward0", _region_backward, [root], [view], {"spec": _region_spec(view, root)})
    view._move_retained(old, old_nr)


def _shape_arg(shape):
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = tuple(shape[0])
    return tuple(map(int, shape))


def _infer(shape, numel):
    """at::infer_size: at most one -1, no other negative size (checked in order), the sizes multiplying
    up to `numel`."""
    if min(shape, default=0) < 0:
        shape = _inferred(shape, numel)
    if math.prod(shape) != numel:
        raise RuntimeError(f"shape '[{', '.join(str(s) for s in shape)}]' is invalid for input of size {numel}")
    return tuple(shape)


def _inferred(shape, numel):
    """`shape` with its -1 size worked out, or torch's error for its negative sizes."""
    shape = list(shape)
    inferred = False
    for i, s in enumerate(shape):
        if s == -1:
            if inferred:
                raise RuntimeError("only one dimension can be inferred")
            inferred = True
        elif s < 0:
            raise RuntimeError(f"invalid shape dimension {s} at index {i} of shape {shape}")
    known = -math.prod(shape)  # (the one -1 among sizes of at least 0)
    if known == 0 and numel == 0:
        raise RuntimeError(f"cannot reshape tensor of 0 elements into shape {list(shape)} because the "
                           "unspecified dimension size -1 can be any value and is ambiguous")
    if known == 0 or numel % known:
        raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
    shape[shape.index(-1)] = numel // known
    return shape


def _view_backward(node, g):
    return (viewed_gradient(g, node.input_meta[0][0]),)


def viewed_gradient(g, shape):
    """g.reshape(shape) for a gradient in a first-order backward (no node to record, no trace or forward AD to
    serve): C-contiguous host memory is viewed at once, as reshape would, without parsing the shape again (a
    view's backward gets its input's own sizes)."""
    arr = g._arr
    if arr.__class__ is np.ndarray and arr.flags.c_contiguous and eager_first_order():
        return view_of(g, arr.reshape(shape))
    return g.reshape(shape)


def eager_first_order():
    """Whether a backward runs first-order and eagerly: no node to record (create_graph), no forward AD or
    numgrad.compile trace to serve, so that a host gradient may be viewed or joined at once."""
    return not STATE.grad_enabled and STATE.forward_ad is None and not tape.active


def view(t, *shape):
    shape = _infer(_shape_arg(shape), t._data.size)
    try:
        data = t._data.view()
        data.shape = shape  # raises instead of copying when the strides do not allow a view
    except AttributeError:
        raise RuntimeError("view size is not compatible with input tensor's size and stride (at least one "
                           "dimension spans across two contiguous subspaces). Use .reshape(...) instead.")
    out = view_of(t, data)
    record("ViewBackward0", _view_backward, [t], [out])
    return out


def _strided_view(arr, shape):
    """Non-contiguous `arr` seen with `shape` without a copy, or None where that takes one. (Setting a NumPy
    array's .shape makes the copy first to find that it needs one, 7 us for the GPT block's heads;
    reshape(copy=False) fails at once, and its view is the same.)"""
    if arr.__class__ is np.ndarray:
        try:
            return arr.reshape(shape, copy=False)
        except ValueError:
            return None
    data = arr.view()  # a GPU array: its shape setter refuses what needs a copy
    try:
        data.shape = shape
    except AttributeError:
        return None
    return data


def reshape(t, *shape):
    arr = t._data
    shape = _infer(_shape_arg(shape), arr.size)
    if arr.flags.c_contiguous:  # a view of any shape: set on a view of the array, cheaper than reshape()
        data = arr.view()
        data.shape = shape
        out, name = view_of(t, data), "ViewBackward0"
    else:
        data = _strided_view(arr, shape)
        if data is not None:  # torch aliases a strided tensor (_reshape_alias) where it views a contiguous one
            out, name = view_of(t, data), "ReshapeAliasBackward0"
        else:
            out, name = TensorBase._make(dispatch.reshape_copy(arr, shape), t._dtype), "UnsafeViewBackward0"
    record(name, _view_backward, [t], [out])
    return out


def flatten(t, start_dim=0, end_dim=-1):
    nd = t._data.ndim
    s, e = wrap_dim(start_dim, nd), wrap_dim(end_dim, nd)  # a 0-d tensor takes dims 0 and -1 only
    if nd == 0:
        return reshape(t, 1)
    if s > e:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    if s == e:  # nothing to merge: torch returns the tensor itself, not a view
        return t
    shape = t._data.shape
    return reshape(t, *shape[:s], math.prod(shape[s:e + 1]), *shape[e + 1:])


def unflatten(t, dim, sizes):
    sizes = [int(s) for s in sizes]
    if not sizes:  # torch checks the sizes before the dim
        raise RuntimeError("unflatten: sizes must be non-empty")
    if t._data.ndim == 0:  # torch wraps the dim error of a 0-d input in its own (a dim out of range is its own)
        wrap_dim(dim, 0)
        raise RuntimeError("unflatten got an unexpected error:\nDimension specified as 0 but tensor has no dimensions")
    d = wrap_dim(dim, t._data.ndim)
    shape = t._data.shape
    try:
        sizes = _infer(sizes, shape[d])
    except RuntimeError as e:
        if "is invalid for input of size" not in str(e):
            raise
        raise RuntimeError(f"unflatten: Provided sizes {sizes} don't multiply up to the size of dim {d} ({shape[d]}) "
                           "in the input tensor") from None
    return reshape(t, *shape[:d], *sizes, *shape[d + 1:])


def _unsqueeze_backward(node, g):
    return (g.squeeze(node.saved("dim")),)


def unsqueeze(t, dim):
    d = wrap_dim(dim, t._data.ndim + 1)
    out = view_of(t, np.expand_dims(t._data, d))
    record("UnsqueezeBackward0", _unsqueeze_backward, [t], [out], {"dim": d})
    return out


def _squeeze_backward(node, g):
    return (viewed_gradient(g, node.input_meta[0][0]),)


def squeeze(t, dim=None):
    shape = t._data.shape
    if dim is None:
        dims, name = tuple(i for i, s in enumerate(shape) if s == 1), "SqueezeBackward0"
    else:
        dims = dim if isinstance(dim, (tuple, list)) else (dim,)
        dims = tuple(wrap_dim(d, len(shape)) for d in dims)
        dims, name = tuple(d for d in dims if shape and shape[d] == 1), (  # a 0-d tensor has nothing to squeeze
            "SqueezeBackward1" if not isinstance(dim, (tuple, list)) else "SqueezeBackward2")
    out = view_of(t, np.squeeze(t._data, axis=dims) if dims else t._data.view())
    record(name, _squeeze_backward, [t], [out], {"dim": dim} if dim is not None else None)
    return out


def _permute_backward(node, g):
    inverse = np.argsort(node.saved("dims"))
    return (g.permute(*inverse.tolist()),)


def permute(t, *dims, _name="PermuteBackward0"):
    dims, nd = _shape_arg(dims), t._data.ndim
    if len(dims) != nd:  # torch's wording, "sparse_coo" included
        raise RuntimeError("permute(sparse_coo): number of dimensions in the tensor input does not match the length of "
                           f"the desired ordering of dimensions i.e. input.dim() = {nd} is not equal to len(dims) = "
                           f"{len(dims)}")
    wrapped = []
    for d in dims:
        d = wrap_dim(d, nd)
        if d in wrapped:
            raise RuntimeError("permute(): duplicate dims are not allowed.")
        wrapped.append(d)
    dims = tuple(wrapped)
    out = view_of(t, t._data.transpose(dims))
    record(_name, _permute_backward, [t], [out], {"dims": dims})
    return out


def _transpose_backward(node, g):
    d0, d1, arr = node.saved("dim0"), node.saved("dim1"), g._arr
    if arr.__class__ is np.ndarray and arr.ndim and eager_first_order():  # the view at once (the dims are wrapped)
        return (view_of(g, arr.swapaxes(d0, d1)),)
    return (g.transpose(d0, d1),)


def transpose(t, dim0, dim1, _name="TransposeBackward0"):
    nd = t._data.ndim
    d0, d1 = wrap_dim(dim0, nd), wrap_dim(dim1, nd)
    # (the array's own method: np.swapaxes's Python wrapper costs as much again; 0-d: dims 0 and -1 are itself)
    out = view_of(t, t._data.swapaxes(d0, d1) if nd else t._data.view())
    record(_name, _transpose_backward, [t], [out], {"dim0": d0, "dim1": d1})
    return out


def t_(t):
    if t._data.ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {t._data.ndim}D")
    if t._data.ndim < 2:
        out = view_of(t, t._data.view())
        record("TBackward0", _identity_backward, [t], [out])
        return out
    return transpose(t, 0, 1, _name="TBackward0")


def _identity_backward(node, g):
    return (g,)


def T(t):
    # both warnings come once per process (TORCH_WARN_ONCE)
    if t._data.ndim == 0:
        warn_once("Tensor.T is deprecated on 0-D tensors. This function is the identity in these cases. (Triggered "
                  "internally at /__w/pytorch/pytorch/aten/src/ATen/native/TensorShape.cpp:4321.)")
    elif t._data.ndim != 2:
        warn_once("The use of `x.T` on tensors of dimension other than 2 to reverse their shape is deprecated "
                  "and it will throw an error in a future release. Consider `x.mT` to transpose batches of "
                  "matrices or `x.permute(*torch.arange(x.ndim - 1, -1, -1))` to reverse the dimensions of a "
                  "tensor. (Triggered internally at "
                  "/__w/pytorch/pytorch/aten/src/ATen/native/TensorShape.cpp:4314.)")
    return permute(t, *reversed(range(t._data.ndim)))


def _expand_backward(node, g):
    shape = node.input_meta[0][0]
    return (g if g._data.shape == shape else g._sum_to(shape),)  # (an expand to its own sizes: nothing to sum)


def expand(t, *sizes):
    sizes = _shape_arg(sizes)
    shape = t._data.shape
    if len(sizes) < len(shape):
        kind = _type_string(t).split(" ")[0]
        raise RuntimeError(f"expand({kind}{{[{', '.join(map(str, shape))}]}}, size=[{', '.join(map(str, sizes))}]): "
                           f"the number of sizes provided ({len(sizes)}) must be greater or equal to the number of "
                           f"dimensions in the tensor ({len(shape)})")
    lead = len(sizes) - len(shape)
    target = list(sizes)
    for i in reversed(range(len(sizes))):  # from the last dim, as torch's infer_expand_geometry (its errors too)
        s, cur = sizes[i], shape[i - lead] if i >= lead else None
        if s == -1:
            if cur is None:
                raise RuntimeError(f"The expanded size of the tensor (-1) isn't allowed in a leading, "
                                   f"non-existing dimension {i}")
            target[i] = cur
        elif cur is not None and cur != 1 and cur != s:
            raise RuntimeError(f"The expanded size of the tensor ({s}) must match the existing size ({cur}) at "
                               f"non-singleton dimension {i}.  Target sizes: [{', '.join(map(str, sizes))}].  "
                               f"Tensor sizes: [{', '.join(map(str, shape))}]")
    target = tuple(target)
    data = t._data
    # the same shape (matmul expands each operand to the batch it has): the view broadcast_view would make,
    # without NumPy's as_strided, which costs more than the rest of the op
    same = target == shape and data.__class__ is np.ndarray
    out = view_of(t, data.view() if same else dispatch.broadcast_view(data, target))
    record("ExpandBackward0", _expand_backward, [t], [out])
    return out


def matrix_transpose(t):
    """Tensor.mT: the last two dims swapped; a 0-d tensor itself, with torch's deprecation warning."""
    if t._data.ndim == 0:
        warn_once("Tensor.mT is deprecated on 0-D tensors. This function is the identity in these cases. (Triggered "
                  "internally at /__w/pytorch/pytorch/aten/src/ATen/native/TensorShape.cpp:4373.)")
        return t
    if t._data.ndim < 2:
        raise RuntimeError(f"tensor.mT is only supported on matrices or batches of matrices. Got {t._data.ndim}-D "
                           "tensor.")
    return transpose(t, -2, -1)


def expand_as(t, other):
    return expand(t, *other.shape)


def _clone_backward(node, g):
    return (g,)


def _copy(arr, order=None):
    """A copy of `arr` (in NumPy's `order` for a host array): a recorded call, numgrad.compile replays it."""
    return arr.copy() if order is None else arr.copy(order=order)


def clone(t, order=None):
    """A copy, on the tensor's device. torch's preserve_format keeps a dense input's strides (a transposed
    one's memory order: NumPy's order 'K') and gives others C order; contiguous() asks for C order."""
    data = t._data
    if dispatch.is_host(data):
        data = dispatch.numpy_op(_copy, data, order or ("K" if lazy.is_dense_array(data) else "C"))
    else:
        data = dispatch.numpy_op(_copy, data)
    out = TensorBase._make(data, t._dtype)
    record("CloneBackward0", _clone_backward, [t], [out])
    return out


def contiguous(t):
    return t if t._data.flags.c_contiguous else clone(t, "C")


def _to_copy_backward(node, g):
    return (g.to(node.input_meta[0][1]),)


@np.errstate(all="ignore")  # IEEE results (inf, NaN) without NumPy's warnings: torch is silent
def to_dtype(t, dtype, copy=False):
    if dtype is t._dtype and not copy:
        return t
    out = TensorBase._make(_strides_kept(dtypes.cast(t._data, dtype), t._data), dtype)
    if dtype.is_floating_point:
        record("ToCopyBackward0", _to_copy_backward, [t], [out])
    return out


def _strides_kept(out, src):
    """torch copies a dense tensor into one of its very strides; NumPy's astype keeps the order but gives size-1
    dims C strides (a transposed row's (1, n) became (n, 1), which its elementwise results then follow)."""
    if 1 in src.shape and src.ndim > 1 and dispatch.is_host(src) and (src.flags.c_contiguous or src.flags.f_contiguous):
        strides = tuple(o if n != 1 else s // src.itemsize * out.itemsize
                        for o, s, n in zip(out.strides, src.strides, src.shape))
        if strides != out.strides:
            return np.lib.stride_tricks.as_strided(out, strides=strides)
    return out


# ---- in-place writes through a view: the root's graph is rebased onto a CopySlices node -------------

def _region_spec(view, root):
    """Where `view` sits in its root's memory: (shape, element strides, element offset) of the view, then the
    root's shape and element strides; the root may have any layout without negative strides (a transposed
    elementwise result, say), as torch's CopySlices works in the base's own geometry."""
    arr = root._data
    itemsize = arr.itemsize
    root_strides = tuple(s // itemsize for s in arr.strides)
    if any(s < 0 for s in root_strides):  # only from_numpy makes these; torch refuses such arrays outright
        raise RuntimeError("numgrad: an in-place op on a view of a tensor with negative strides is not supported; "
                           "call .clone() on the tensor first")
    offset = dispatch.element_offset(view._data, arr)
    return (view._data.shape, tuple(s // itemsize for s in view._data.strides), offset, arr.shape, root_strides)


def _strided(flat, spec):
    shape, strides, offset = spec[:3]
    return dispatch.strided(flat, shape, strides, offset)


def _root_memory(spec, make):
    """(flat array spanning the root's memory made by `make(size)`, the root-shaped view of it)."""
    shape, strides = spec[3], spec[4]
    if strides == lazy.contiguous_strides(shape):
        flat = make(math.prod(shape))
        return flat, flat.reshape(shape)
    flat = make(storage_span(shape, strides))
    return flat, dispatch.strided(flat, shape, strides, 0)


def _in_root_memory(g, spec):
    """A root-shaped gradient laid out as the root's memory, flat."""
    if spec[4] == lazy.contiguous_strides(spec[3]):
        return dispatch.contiguous(g._data).reshape(-1)
    flat, root = _root_memory(spec, lambda n: dispatch.zeros(n, g._dtype.np, g._data))
    dispatch.copy_into(root, g._data)  # recorded: a replay repeats it (NumPy's own write it would not)
    return flat


def region_of(g, spec):
    """The part of a root-shaped gradient that a view covers (a copy), differentiably."""
    out = TensorBase._make(_strided(_in_root_memory(g, spec), spec).copy(), g._dtype)
    record("AsStridedBackward0", _region_backward, [g], [out], {"spec": spec})
    return out


def _overlaps(spec):
    """Whether several elements of a view with this spec are one memory location (an expanded view)."""
    shape, strides, _ = spec[:3]
    return math.prod(shape) > 0 and any(st == 0 and n > 1 for n, st in zip(shape, strides))


def embed_region(gv, spec, root_shape):
    """A root-shaped tensor of zeros holding `gv` where the view sits, differentiably; where elements of the
    view share a location their gradients add up, as torch's as_strided backward."""
    flat, root = _root_memory(spec, lambda n: dispatch.zeros(n, gv._dtype.np, gv._data))
    if _overlaps(spec):
        shape, strides, offset = spec[:3]
        where = offset + sum(np.arange(n).reshape((-1,) + (1,) * (len(shape) - 1 - d)) * st
                             for d, (n, st) in enumerate(zip(shape, strides)))
        where = np.broadcast_to(where, shape).reshape(-1)
        values = dispatch.contiguous(gv._data).reshape(-1)
        device_index.scatter_along_axis(flat, device_index.upload_indices((where,), flat)[0], 0, values, True)
    else:
        dispatch.copy_into(_strided(flat, spec), gv._data)
    out = TensorBase._make(root, gv._dtype)
    record("AsStridedScatterBackward0", _embed_backward, [gv], [out], {"spec": spec})
    return out


def _region_backward(node, gv):
    return (embed_region(gv, node.saved("spec"), node.input_shape(0)),)


def _embed_backward(node, g):
    return (region_of(g, node.saved("spec")),)


def _copy_slices_backward(node, g):
    spec = node.saved("spec")
    if node.next_functions[0][0] is not None and _overlaps(spec):
        # torch copies the base's gradient into the view's region of it (grad.as_strided(view)), a copy_ into
        # memory whose elements meet: refused, so an in-place write into an expanded view fails in backward
        raise RuntimeError(INTERNAL_OVERLAP)
    keep, keep_root = _root_memory(spec, lambda n: dispatch.full(n, True, np.bool_, g._data))
    # the overwritten region no longer depends on the old values
    dispatch.copy_into(_strided(keep, spec), dispatch.full((), False, np.bool_, g._data))
    return zeros_where_not(g, keep_root), region_of(g, spec)


def zeros_where_not(g, keep):
    """g where the bool array `keep` is set, else 0, as torch's copy of zeros into the gradient (g * keep
    would turn an inf or NaN gradient of an overwritten element into NaN); differentiable in g."""
    return apply("where", TensorBase._make(keep, dtypes.bool_), g, 0.0)


def rebase_view(view, result):
    """After `view` was overwritten in place with `result` (which requires grad), the root's gradient
    flows through a CopySlices node and the view's through its region of the root, as in torch."""
    root = view._base
    spec = _region_spec(view, root)
    out = view_of(root, root._data)
    # history of an in-place write: an integer root may take it (see record)
    node = record("torch::autograd::CopySlices", _copy_slices_backward, [root, result], [out], {"spec": spec},
                  inplace=True)
    if node is None or not needs_grad(result):
        return
    root._grad_fn, root._requires_grad, root._output_nr = node, True, 0
    record("AsStridedBackward0", _region_backward, [root], [view], {"spec": spec}, inplace=True)
    view._view_version = view._vc[0]

"""Products through BLAS (numpy): matmul, mm, bmm, mv, dot, outer, with backward."""
import math

import numpy as np

from .._core import dtypes
from .._core.state import STATE
from ..kernels import dispatch, tape
from ..node import record, zero_gradients
from ..tensor_base import TensorBase, check_same_device
from .._core.shapes import broadcast_shapes
from .autocast import lower_precision
from .shape import viewed_gradient

__all__ = ["bmm", "dot", "ger", "matmul", "mm", "mm_laid_out", "mv", "outer"]



def _check_tensors(op, a, b, names=("input", "other")):
    for i, (t, nm) in enumerate(zip((a, b), names)):
        if not isinstance(t, TensorBase):
            raise TypeError(f"{op}(): argument '{nm}' (position {i + 1}) must be Tensor, not {type(t).__name__}")
    check_same_device(a, b)


def _no_bool(kernel, a):
    if a._dtype is dtypes.bool_:
        raise NotImplementedError(f"\"{kernel}\" not implemented for 'Bool'")


# torch's names for the second operand each product saves (node._saved_mat2 and the like; they also fix the
# order in which a backward unpacks them, see node.check_saved_versions)
_SECOND = {"MmBackward0": "mat2", "BmmBackward0": "mat2", "MvBackward0": "vec", "DotBackward0": "tensor"}


def _product(name, backward, a, b, data, dtype=None, saved=None):
    """Records a product node; each operand is saved only when the other one needs its gradient."""
    dtype = dtype or a._dtype
    out = TensorBase._make(dispatch.asarray(data, dtype.np), dtype)
    record(name, backward, [a, b], [out],
           {"self": a if b._requires_grad else None, _SECOND[name]: b if a._requires_grad else None, **(saved or {})})
    return out


def _layouts(a, b):
    """What torch's MmBackward0 saves of each operand's layout: sizes always, strides (in elements) of an
    operand that needs its gradient, which follows that layout (see _mm_backward)."""
    if not (a._requires_grad or b._requires_grad):
        return None  # no node to save them on
    saved = {}
    for name, t in (("self", a), ("mat2", b)):
        data = t._data
        saved[name + "_sym_sizes"] = data.shape
        saved[name + "_sym_strides"] = tuple(st // data.itemsize for st in data.strides) if t._requires_grad else ()
    return saved


def _operands(node):
    return node.saved("self"), node.saved(_SECOND[node.name()])


def _wants(node, i):
    return node.next_functions[i][0] is not None


# Backward rules: g is the incoming gradient, a and b the operands.

def _mm_backward(node, g):
    # as torch's mm_mat1_backward and mm_mat2_backward: the gradient of an operand stored column-major (w.t()
    # in x @ w.t()) is made column-major, so that the transpose's backward hands w a C-contiguous gradient
    a, b = _operands(node)
    grad_a = grad_b = None
    if _wants(node, 0):
        grad_a = _transposed_product(b, g.t()) if _column_major(node, "self", g) else g.mm(b.t())
    if _wants(node, 1):
        grad_b = _transposed_product(g.t(), a) if _column_major(node, "mat2", g) else a.t().mm(g)
    return grad_a, grad_b


def _column_major(node, name, g):
    """torch's test of an operand's saved layout (host arrays: a GPU array is C order, as its product)."""
    strides, sizes = node.saved(name + "_sym_strides"), node.saved(name + "_sym_sizes")
    return len(strides) == 2 and strides[0] == 1 and strides[1] == sizes[0] and dispatch.is_host(g._data)


def _bmm_backward(node, g):
    a, b = _operands(node)
    if not (STATE.grad_enabled or STATE.autocast is not None or STATE.forward_ad is not None):
        x, y, d = None if a is None else a._data, None if b is None else b._data, g._data
        if d.__class__ is np.ndarray and d.dtype in _BLAS_FLOATS and all(
                v is None or (v.__class__ is np.ndarray and v.dtype == d.dtype) for v in (x, y)):
            # a first-order backward on the host: the products alone, as bmm computes them, without bmm's checks
            # (the forward passed them) or the transposes' views; IEEE results without NumPy's warnings, as bmm
            with np.errstate(all="ignore"):
                return (TensorBase._make(_batched_product(d, y.swapaxes(1, 2)), g._dtype) if _wants(node, 0) else None,
                        TensorBase._make(_batched_product(x.swapaxes(1, 2), d), g._dtype) if _wants(node, 1) else None)
    return (g.bmm(b.mT) if _wants(node, 0) else None,
            a.mT.bmm(g) if _wants(node, 1) else None)


def _mv_backward(node, g):
    a, b = _operands(node)
    return (g.unsqueeze(1) * b if _wants(node, 0) else None,
            a.t().mv(g) if _wants(node, 1) else None)


def _dot_backward(node, g):
    a, b = _operands(node)
    return (g * b if _wants(node, 0) else None,
            g * a if _wants(node, 1) else None)


def _transposed_product(x, y):
    return mm_laid_out(x, y, (y._data.shape[1], x._data.shape[0]), transposed=True)


def mm_laid_out(x, y, shape, transposed=False):
    """x.mm(y) as a gradient laid out like its tensor: viewed with `shape` (C order), or with `transposed` its
    transpose (x @ y).t() stored column-major. In a first-order backward on the host, one GEMM into memory
    the result owns (AccumulateGrad keeps it, or its transpose, without a copy); else mm's own path
    (create_graph's graph, autocast) and a view."""
    if STATE.grad_enabled or STATE.autocast is not None or not x._dtype.is_floating_point or \
            x._dtype is not y._dtype or not dispatch.is_host(x._data) or not dispatch.is_host(y._data):
        product = x.mm(y)
        return product.t() if transposed else product.reshape(shape)
    (n, k), m = x._data.shape, y._data.shape[1]
    with np.errstate(all="ignore"):  # IEEE results (inf, NaN) without NumPy's warnings, as mm
        return TensorBase._make(dispatch.matmul_laid_out(x._data, y._data, shape, transposed,
                                                         _single_products(n, k, m)), x._dtype)


def backward_mm(a, b, a_transposed=False):
    """a.mm(b), or with `a_transposed` a.t().mm(b), as a backward formula computes it. In a first-order backward
    on the host (no graph to record, no autocast or forward AD to serve: mm would make no node), the product
    alone, as mm computes it, without the transpose's view or mm's checks, which the forward already passed. The
    caller ignores NumPy's floating-point errors (np.errstate), as mm does: a backward with two products enters
    that state once."""
    if STATE.grad_enabled or STATE.autocast is not None or STATE.forward_ad is not None or \
            a._dtype is not b._dtype or not a._dtype.is_floating_point:
        return (a.t() if a_transposed else a).mm(b)
    x, y = a._data, b._data
    if x.__class__ is not np.ndarray or y.__class__ is not np.ndarray:
        return (a.t() if a_transposed else a).mm(b)
    return TensorBase._make(_host_product(x.T if a_transposed else x, y), a._dtype)


def _host_product(x, y):
    """mm's product of host arrays x and y (backward_mm's caller ignores NumPy's floating-point errors)."""
    (n, k), m = x.shape, y.shape[1]
    return x * y if _single_products(n, k, m) else dispatch.matmul(x, y)


def _single_products(n, k, m):
    """torch's gemm with an inner size of 1 gives the single products as they are (0 * -x is -0.0, where a
    sum from +0 is +0.0); with one row or one column it takes gemv, which sums."""
    return k == 1 and n > 1 and m > 1


@lower_precision
@np.errstate(all="ignore")  # IEEE results (inf, NaN) without NumPy's warnings: torch is silent
def mm(input, mat2):
    _check_tensors("mm", input, mat2, ("input", "mat2"))
    a, b = input, mat2
    if a._data.ndim != 2:
        raise RuntimeError("self must be a matrix")
    if b._data.ndim != 2:
        raise RuntimeError("mat2 must be a matrix")
    (n, k), (k2, m) = a._data.shape, b._data.shape
    if k != k2:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({n}x{k} and {k2}x{m})")
    if a._dtype is not b._dtype:
        raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: {a._dtype.c_name} != "
                           f"{b._dtype.c_name}")
    if k and n and m:  # an empty inner dim gives zeros, an empty result nothing, without the kernel (bool too)
        _no_bool("addmm_impl_cpu_", a)
    if _single_products(n, k, m) and a._dtype.is_floating_point and dispatch.is_host(a._data):
        return _product("MmBackward0", _mm_backward, a, b, a._data * b._data, saved=_layouts(a, b))
    return _product("MmBackward0", _mm_backward, a, b, dispatch.matmul(a._data, b._data), saved=_layouts(a, b))


@lower_precision
@np.errstate(all="ignore")  # IEEE results (inf, NaN) without NumPy's warnings: torch is silent
def bmm(input, mat2):
    _check_tensors("bmm", input, mat2, ("input", "mat2"))
    a, b = input, mat2
    if a._data.ndim != 3:
        raise RuntimeError("batch1 must be a 3D tensor")
    if b._data.ndim != 3:
        raise RuntimeError("batch2 must be a 3D tensor")
    (batch, _, k), shape2 = a._data.shape, b._data.shape
    if shape2[:2] != (batch, k):
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: [{batch}, {k}] but got: "
                           f"[{shape2[0]}, {shape2[1]}].")
    if a._data.size == 0 or b._data.size == 0:  # torch returns before its dtype checks: zeros of mat2's dtype
        data = dispatch.zeros(a._data.shape[:2] + shape2[2:], b._dtype.np, b._data)
        return _product("BmmBackward0", zero_gradients, a, b, data, b._dtype)  # each operand's own dtype
    _no_bool("bmm", a)  # torch dispatches on batch1's dtype first, then compares batch2's
    if a._dtype is not b._dtype:
        raise RuntimeError(f"expected scalar type {a._dtype.word} but found {b._dtype.word}")
    return _product("BmmBackward0", _bmm_backward, a, b, _batched_product(a._data, b._data))


def _batched_product(a, b):
    """dispatch.matmul of two 3-d arrays; a host float batch `b` of column-major matrices (a transpose's view) is
    copied to row-major first: NumPy's batched matmul runs BLAS's transposed-right products of such small
    matrices 1.3-1.7x slower than the copy and a plain one (the GPT block's attention, (16, 64, 32) @
    (16, 32, 64).mT: 98 -> 55 us; the same sums, the same values). A column-major left operand keeps its
    layout: that product is not slower."""
    strides, size = b.strides, b.itemsize
    if b.__class__ is np.ndarray and a.__class__ is np.ndarray and b.dtype in _BLAS_FLOATS and \
            strides[-2] == size and strides[-1] != size:
        return tape.call_into("out", _host_rows_first_product, a, b)
    return dispatch.matmul(a, b)


_BLAS_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))


def _host_rows_first_product(a, b, out=None):
    return np.matmul(a, np.ascontiguousarray(b), out=out)


@np.errstate(all="ignore")  # IEEE results (inf, NaN) without NumPy's warnings: torch is silent
def mv(input, vec):
    _check_tensors("mv", input, vec, ("input", "vec"))
    a, b = input, vec
    if a._data.ndim == 0:  # torch reads the input's size(0) first
        raise IndexError("Dimension specified as 0 but tensor has no dimensions")
    if a._data.ndim != 2 or b._data.ndim != 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got 1, {a._data.ndim}, {b._data.ndim}")
    (n, k), (k2,) = a._data.shape, b._data.shape
    if k != k2:
        raise RuntimeError(f"size mismatch, got input ({n}), mat ({n}x{k}), vec ({k2})")
    if a._dtype is not b._dtype:
        vt, mt = b._dtype.word, a._dtype.word
        raise RuntimeError(f"addmv input tensors must have the same dtype, but got {vt}, {mt}, and {vt}")
    if n and k:  # an empty matrix: no kernel runs (bool too)
        _no_bool("addmv_impl_cpu", a)
    return _product("MvBackward0", _mv_backward, a, b, dispatch.matmul(a._data, b._data))


@np.errstate(all="ignore")  # IEEE results (inf, NaN) without NumPy's warnings: torch is silent
def dot(input, tensor):
    _check_tensors("dot", input, tensor, ("input", "tensor"))
    a, b = input, tensor
    if a._data.ndim != 1 or b._data.ndim != 1:
        raise RuntimeError(f"1D tensors expected, but got {a._data.ndim}D and {b._data.ndim}D tensors")
    if a._dtype is not b._dtype:
        raise RuntimeError(f"dot : expected both vectors to have same dtype, but found {a._dtype.word} and "
                           f"{b._dtype.word}")
    if a._data.shape != b._data.shape:
        n, m = a._data.shape[0], b._data.shape[0]
        raise RuntimeError(f"inconsistent tensor size, expected tensor [{n}] and src [{m}] to have the same number of "
                           f"elements, but got {n} and {m} elements respectively")
    _no_bool("dot", a)
    return _product("DotBackward0", _dot_backward, a, b, np.dot(a._data, b._data))


def outer(input, vec2):
    _check_tensors("outer", input, vec2, ("input", "vec2"))
    for t, nm in ((input, "self"), (vec2, "vec2")):
        if t._data.ndim != 1:
            raise RuntimeError(f"outer: Expected 1-D argument {nm}, but got {t._data.ndim}-D")
    return input.reshape(-1, 1) * vec2  # as torch builds it: MulBackward0 over a view


ger = outer


def _unsafe_view_backward(node, g):
    return (viewed_gradient(g, node.input_meta[0][0]),)


def _unsafe_view(t, shape):
    out = TensorBase._make(t._data.reshape(shape), t._dtype)
    record("UnsafeViewBackward0", _unsafe_view_backward, [t], [out])
    return out


def _squeeze0_backward(node, g):
    return (g.unsqueeze(0),)


def _squeeze0(t):
    # torch squeezes the mm result in place (squeeze_): the product is no view of anything, at version 1
    out = TensorBase._make(t._data[0], t._dtype)
    out._vc[0] = 1
    record("SqueezeBackward4", _squeeze0_backward, [t], [out])
    return out


def _should_fold(a, b):
    """torch folds the batch of the larger operand into mm/mv rows when that needs no copy, or when the
    smaller operand requires grad (its gradient is then one mm rather than a sum over a bmm batch)."""
    t1, t2 = (a._data, b) if a._data.ndim >= b._data.ndim else (np.swapaxes(b._data, -1, -2), a)
    if not (t1.ndim >= 3 and t2._data.ndim <= 2):
        return False
    if t2._requires_grad:
        return True
    if a._data.ndim == 2:
        return False
    if t1.size == 0:
        return True
    return all(t1.strides[i] == t1.strides[i + 1] * t1.shape[i + 1] for i in range(t1.ndim - 2))


@lower_precision
def matmul(input, other):
    """torch.matmul, built as torch builds it (dot, mv, mm, folded mm/mv, or broadcast bmm) so that the
    graph and the error messages match."""
    _check_tensors("matmul", input, other)
    a, b = input, other
    d1, d2 = a._data.ndim, b._data.ndim
    if d1 == 0 or d2 == 0:
        raise RuntimeError(f"both arguments to matmul need to be at least 1D, but they are {d1}D and {d2}D")
    if d1 == 1 and d2 == 1:
        return dot(a, b)
    if d1 == 2 and d2 == 1:
        return mv(a, b)
    if d1 == 1 and d2 == 2:
        return _squeeze0(mm(a.unsqueeze(0), b))
    if d1 == 2 and d2 == 2:
        return mm(a, b)
    if _should_fold(a, b):
        transpose = d2 > d1
        t1 = b.mT if transpose else a
        t2 = (a.t() if d1 == 2 else a) if transpose else b
        shape = list(t1._data.shape[:-1])
        folded = t1.reshape(math.prod(shape), t1._data.shape[-1])
        if t2._data.ndim == 1:
            return _unsafe_view(folded.mv(t2), shape)
        out = _unsafe_view(folded.mm(t2), shape + [t2._data.shape[1]])
        return out.mT.contiguous() if transpose else out
    n, m1 = (a._data.shape[-2] if d1 > 1 else 1), a._data.shape[-1]
    m2, p = (b._data.shape[-2] if d2 > 1 else b._data.shape[-1]), (b._data.shape[-1] if d2 > 1 else 1)
    batch1, batch2 = a._data.shape[:-2], b._data.shape[:-2]
    if d1 == 3 and d2 == 3 and batch1[0] != batch2[0]:  # a broadcast matrix that needs grad: fold instead
        if batch1[0] == 1 and a._requires_grad:
            return matmul(a.squeeze(0), b)
        if batch2[0] == 1 and b._requires_grad:
            return matmul(a, b.squeeze(0))
    batch = list(broadcast_shapes(batch1, batch2))
    size = math.prod(batch)
    a3 = a.expand(*batch, n, m1).reshape(size, n, m1)
    if d2 == 1:
        out = a3.bmm(b.expand(*batch, m2).reshape(size, m2).unsqueeze(2)).squeeze(-1)
    else:
        out = a3.bmm(b.expand(*batch, m2, p).reshape(size, m2, p))
    return _unsafe_view(out, batch + ([n] if d1 > 1 else []) + ([p] if d2 > 1 else []))



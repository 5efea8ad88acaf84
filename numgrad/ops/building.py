"""Tensors assembled from others as torch's composites assemble them: atleast_1d/2d/3d, cartesian_prod,
block_diag, vander, argwhere, isin, and Tensor.fill_diagonal_'s writes through diagonal views."""
import numpy as np

from .._core import dtypes
from ..kernels import dispatch
from ..node import record
from ..tensor_base import TensorBase
from . import creation, join, reshaping, scan
from .functional import _tensor_arg, _type_name, nonzero

__all__ = ["atleast_1d", "atleast_2d", "atleast_3d", "cartesian_prod", "block_diag", "vander", "argwhere", "isin"]


def _atleast(name, reshape_0d, grow, tensors):
    """torch's atleast_Nd: one tensor gives one tensor, several (or a list) a tuple."""
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        return tuple(_atleast(name, reshape_0d, grow, (t,)) for t in tensors[0])
    if len(tensors) != 1:
        return tuple(_atleast(name, reshape_0d, grow, (t,)) for t in tensors)
    (t,) = tensors
    if not isinstance(t, TensorBase):
        raise TypeError(f"{name}() received an invalid combination of arguments - got ({_type_name(t)}), but expected "
                        f"one of:\n * (Tensor input)\n      didn't match because some of the arguments have invalid "
                        f"types: (!{_type_name(t)}!)\n * (tuple of Tensors tensors)\n      didn't match because some "
                        f"of the arguments have invalid types: (!{_type_name(t)}!)\n")
    if len(t._shape) == 0:
        return t.reshape(reshape_0d)
    return grow(t)


def atleast_1d(*tensors):
    return _atleast("atleast_1d", (1,), lambda t: t, tensors)


def atleast_2d(*tensors):
    return _atleast("atleast_2d", (1, 1), lambda t: t.unsqueeze(0) if len(t._shape) == 1 else t, tensors)


def _grow_3d(t):
    if len(t._shape) == 1:
        return t.unsqueeze(0).unsqueeze(-1)
    return t.unsqueeze(-1) if len(t._shape) == 2 else t


def atleast_3d(*tensors):
    return _atleast("atleast_3d", (1, 1, 1), _grow_3d, tensors)


def cartesian_prod(*tensors):
    for t in tensors:
        if len(t._shape) != 1:
            raise RuntimeError(f"Expect a 1D vector, but got shape {list(t._shape)}")
    if len(tensors) == 1:
        return tensors[0]
    grids = reshaping.meshgrid(*tensors, indexing="ij")
    return join.stack([g.flatten() for g in grids], 1)


def _block_diag_backward(node, g):
    grads, row, col = [], 0, 0
    for shape_, dtype in node.input_meta:
        rows, cols = (1, 1) if len(shape_) == 0 else ((1, shape_[0]) if len(shape_) == 1 else shape_)
        piece = g[row:row + rows, col:col + cols].reshape(shape_)
        grads.append(None if not dtype.is_floating_point else piece if dtype is g.dtype else piece.to(dtype))
        row, col = row + rows, col + cols
    return tuple(grads)


def block_diag(*tensors):
    blocks = []
    for i, t in enumerate(tensors):
        if len(t._shape) > 2:
            raise RuntimeError(f"torch.block_diag: Input tensors must have 2 or fewer dimensions. Input {i} has "
                               f"{len(t._shape)} dimensions")
        blocks.append(dispatch.to_host(t._data).reshape((1, 1) if t._data.ndim == 0 else
                                                        ((1, -1) if t._data.ndim == 1 else t._data.shape)))
    dtype = dtypes.result_type([(t._dtype, 1) for t in tensors], []) if tensors else dtypes.get_default_dtype()
    out = np.zeros((sum(b.shape[0] for b in blocks), sum(b.shape[1] for b in blocks)) if blocks else (1, 0),
                   dtype.np)
    row = col = 0
    for b in blocks:
        out[row:row + b.shape[0], col:col + b.shape[1]] = b
        row, col = row + b.shape[0], col + b.shape[1]
    result = TensorBase._make(out, dtype)
    if dtype.is_floating_point:
        record("BlockDiagBackward0", _block_diag_backward, list(tensors), [result])
    return result


def vander(x, N=None, increasing=False):
    _tensor_arg("vander", x, 1, "x")
    if len(x._shape) != 1:
        raise RuntimeError("x must be a one-dimensional tensor.")
    n = x._shape[0] if N is None else N
    if n < 0:
        raise RuntimeError("N must be non-negative.")
    dtype = dtypes.promote_types(x._dtype, dtypes.int64)  # cumprod's integer promotion, as torch's comment says
    result = creation.empty(x._shape[0], n, dtype=dtype)
    if n > 0:
        result.fill_(1)
        if n > 1:
            result[:, 1:].copy_(x.unsqueeze(1))
            result[:, 1:].copy_(scan.cumprod(result[:, 1:], 1))
    return result if increasing else reshaping.flip(result, (1,))


def argwhere(input):
    _tensor_arg("argwhere", input, 1, "input")
    return nonzero(input)


def isin(elements, test_elements, *, assume_unique=False, invert=False):
    tensors = [v for v in (elements, test_elements) if isinstance(v, TensorBase)]
    if not tensors:
        got = f"{_type_name(elements)}, {_type_name(test_elements)}"
        raise TypeError(f"isin() received an invalid combination of arguments - got ({got}), but expected one "
                        "of:\n * (Tensor elements, Tensor test_elements, *, bool assume_unique = False, bool invert = "
                        "False, "
                        "Tensor out = None)\n * (Number element, Tensor test_elements, *, bool assume_unique = False, "
                        "bool invert = False, Tensor out = None)\n * (Tensor elements, Number test_element, *, bool "
                        "assume_unique = False, bool invert = False, Tensor out = None)\n")
    if any(t._dtype is dtypes.bool_ for t in tensors) or any(isinstance(v, (bool, np.bool_))
                                                             for v in (elements, test_elements)):
        raise RuntimeError("Unsupported input type encountered for isin(): Bool")
    common = dtypes.result_type([(t._dtype, len(t._shape)) for t in tensors],
                                [v for v in (elements, test_elements) if not isinstance(v, TensorBase)])
    n = elements.numel() if isinstance(elements, TensorBase) else 1
    if isinstance(test_elements, TensorBase) and n and test_elements._dtype is common and \
            test_elements.numel() < int(10.0 * n ** 0.145):
        test_elements.view(-1)  # torch's brute-force path views the test elements flat: a layout that cannot refuses
    values = [np.asarray(dispatch.to_host(v._data) if isinstance(v, TensorBase) else v).astype(common.np)
              for v in (elements, test_elements)]
    found = np.isin(values[0], values[1].reshape(-1), invert=invert)
    return TensorBase._make(np.asarray(found, np.bool_), dtypes.bool_)


def fill_diagonal_(self, fill_value, wrap=False):
    """Tensor.fill_diagonal_: fill_ through views of the main diagonal (and, with wrap, of the diagonals below it
    that a tall matrix's flat layout continues into, every width + 1 rows), so that autograd records CopySlices."""
    nd = len(self._shape)
    if nd < 2:
        raise RuntimeError("dimensions must larger than 1")
    if nd > 2 and any(s != self._shape[0] for s in self._shape[1:]):
        raise RuntimeError("all dimensions of input must be of equal length")
    height, width = self._shape[:2]
    starts = range(0, height, width + 1) if wrap and nd == 2 and height > width + 1 else (0,)
    for start in starts:
        diagonal = self if start == 0 else self[start:]
        while len(diagonal.shape) > 1:
            diagonal = diagonal.diagonal(0, 0, -1)
        diagonal._check_inplace(view_op="AsStrided")  # torch writes through self.as_strided(...): its refusals name it
        diagonal.fill_(fill_value)
    return self

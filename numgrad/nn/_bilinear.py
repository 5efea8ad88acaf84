"""bilinear: x1^T A x2 + b as torch computes it (_trilinear over the flattened batch, TrilinearBackward0, then a
view and the bias), with torch's checks in its order."""
from .._core.grad_mode import no_grad
from .._core.shapes import wrap_dim
from ..node import record
from ..ops.einsum import einsum
from ._common import new_tensor, wants


def _size(t, dim):
    return t.shape[wrap_dim(dim, t.dim())]


def _trilinear_backward(node, g):
    x1, weight, x2 = node.saved("i1"), node.saved("i2"), node.saved("i3")
    return (einsum("bo,oij,bj->bi", g, weight, x2) if wants(node, 0) else None,
            einsum("bo,bi,bj->oij", g, x1, x2) if wants(node, 1) else None,
            einsum("bo,bi,oij->bj", g, x1, weight) if wants(node, 2) else None)


def _trilinear(x1, weight, x2):
    with no_grad():
        out = einsum("bi,oij,bj->bo", x1, weight, x2)
    out = new_tensor(out._data, x1._dtype)
    record("TrilinearBackward0", _trilinear_backward, [x1, weight, x2], [out], {"i1": x1, "i2": weight, "i3": x2})
    return out


def _check(input1, input2, weight, bias):
    named = [("input1", input1), ("input2", input2), ("weight", weight)] + ([("bias", bias)] * (bias is not None))
    if any(t._dtype is not input1._dtype for _, t in named):
        raise RuntimeError("All tensors must have the same dtype, got " +
                           ", ".join(f"{name}: {t._dtype.c_name}" for name, t in named))
    if input1.dim() != input2.dim():
        raise RuntimeError(f"bilinear(): input dimensions do not match: got {input1.dim()} and {input2.dim()}")
    for i in range(input1.dim() - 1):
        if input1.shape[i] != input2.shape[i]:
            raise RuntimeError(f"bilinear(): input batch dimensions do not match at dim {i}: got {input1.shape[i]} "
                               f"and {input2.shape[i]}")
    for name, x, dim in (("input1", input1, 1), ("input2", input2, 2)):
        if _size(x, -1) != _size(weight, dim):
            raise RuntimeError(f"bilinear(): {name} size does not match weight size: got {_size(x, -1)} but "
                               f"expected {_size(weight, dim)}")
    if bias is not None and _size(bias, 0) != _size(weight, 0):
        raise RuntimeError(f"bilinear(): bias size does not match weight size: got {_size(bias, 0)} but expected "
                           f"{_size(weight, 0)}")


def bilinear(input1, input2, weight, bias=None):
    _check(input1, input2, weight, bias)
    output_size = tuple(input1.shape[:-1]) + (weight.shape[0],)
    out = _trilinear(input1.reshape(-1, input1.shape[-1]), weight, input2.reshape(-1, input2.shape[-1]))
    out = out.reshape(output_size)
    return out + bias if bias is not None else out

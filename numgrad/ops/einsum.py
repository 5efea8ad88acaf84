"""Contractions built as torch builds them from differentiable ops: einsum, tensordot, kron (gradients come free)."""
import math

from .._core import dtypes
from .._core.shapes import wrap_dim
from ..node import needs_grad
from ..tensor_base import TensorBase
from . import reduction, shape
from .elementwise import apply
from .linalg import _unsafe_view, bmm, mm
from .reshaping import diagonal, movedim

__all__ = ["einsum", "kron", "tensordot"]

_LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
_ELLIPSIS = "."  # one label standing for every dim an ellipsis covers (they are kept together)


def _sublist_equation(args):
    """einsum(op0, sublist0, op1, sublist1, ..., [sublist_out]) as an equation string and its operands."""
    def labels(sub):
        out = ""
        for s in sub:
            if s is Ellipsis:
                out += "..."
            elif isinstance(s, int) and 0 <= s < 52:
                out += _LETTERS[s]
            else:
                raise ValueError(f"einsum(): subscript in subscript list is not within the valid range [0, 52)")
        return out
    operands, subs = list(args[0::2]), [labels(s) for s in args[1::2]]
    if len(args) % 2:  # the trailing output sublist
        operands, output = operands[:-1], labels(args[-1])
        return ",".join(subs) + "->" + output, operands
    return ",".join(subs), operands


def _parse_operand(text, start, t, i):
    """The labels of operand i (an ellipsis as one _ELLIPSIS entry) and how many dims the ellipsis covers."""
    labels, pos, k = [], start, 0
    while k < len(text):
        c = text[k]
        if c == ".":
            if text[k:k + 3] != "..." or _ELLIPSIS in labels:
                raise RuntimeError("einsum(): found '.' for operand " + str(i) + " that is not part of any ellipsis")
            labels.append(_ELLIPSIS)
            k += 3
            continue
        if c not in _LETTERS:
            raise RuntimeError(f"einsum(): invalid subscript given at index {pos + k} in the equation string, "
                               "subscripts must be in [a-zA-Z]")
        labels.append(c)
        k += 1
    nd, named = len(t._shape), len([c for c in labels if c != _ELLIPSIS])
    if _ELLIPSIS in labels:
        if named > nd:
            raise RuntimeError(f"einsum(): the number of subscripts in the equation ({named}) is more than the number "
                               f"of dimensions ({nd}) for operand {i}")
    elif named != nd:
        raise RuntimeError(f"einsum(): the number of subscripts in the equation ({named}) does not match the number of "
                           f"dimensions ({nd}) for operand {i} and no ellipsis was given")
    return labels, nd - named


def einsum(*args):
    if len(args) < 2:
        raise RuntimeError("einsum(): must specify the equation string and at least one operand, or at least one "
                           "operand and its subscripts list")
    if isinstance(args[0], str):
        equation = args[0]
        operands = list(args[1]) if len(args) == 2 and isinstance(args[1], (list, tuple)) else list(args[1:])
    else:
        equation, operands = _sublist_equation(args)
    equation = equation.replace(" ", "")
    lhs, arrow, rhs = equation.partition("->")
    terms = lhs.split(",")
    if len(terms) > len(operands):
        raise RuntimeError("einsum(): fewer operands were provided than specified in the equation")
    if len(terms) < len(operands):
        raise RuntimeError("einsum(): more operands were provided than specified in the equation")
    parsed, start = [], 0
    for i, (term, t) in enumerate(zip(terms, operands)):
        parsed.append(_parse_operand(term, start, t, i))
        start += len(term) + 1
    ell_dims = max((n for labels, n in parsed if _ELLIPSIS in labels), default=0)
    if arrow:
        out = []
        for k, c in enumerate(rhs.replace("...", _ELLIPSIS)):
            if c != _ELLIPSIS and c not in _LETTERS:
                raise RuntimeError(f"einsum(): invalid subscript given at index {len(lhs) + 2 + k} in the equation "
                                   "string, subscripts must be in [a-zA-Z]")
            if c in out:
                raise RuntimeError(f"einsum(): output subscript {c} appears more than once in the output")
            if not any(c in labels for labels, _ in parsed):
                raise RuntimeError(f"einsum(): output subscript {c} does not appear in the equation for any input "
                                   "operand")
            out.append(c)
    else:  # implicit output: the ellipsis, then the labels seen once, in alphabetical order (upper case first)
        counts = {}
        for labels, _ in parsed:
            for c in labels:
                counts[c] = counts.get(c, 0) + 1
        out = ([_ELLIPSIS] if _ELLIPSIS in counts else []) + sorted(
            (c for c, n in counts.items() if n == 1 and c != _ELLIPSIS), key=_LETTERS.index)
    return _contract(operands, parsed, out, ell_dims)


def _dims_of(labels, ell_dims, n_ell):
    """Each dim's label, the ellipsis' dims named by their position among all ellipsis dims (right aligned)."""
    dims = []
    for c in labels:
        dims += [("...", ell_dims - n_ell + j) for j in range(n_ell)] if c == _ELLIPSIS else [c]
    return dims


def _contract(operands, parsed, out, ell_dims):
    out_dims = _dims_of(out, ell_dims, ell_dims)
    every = []
    for labels, n_ell in parsed:
        every += _dims_of(labels, ell_dims, n_ell)
    rest = [("...", j) for j in range(ell_dims) if ("...", j) in every and ("...", j) not in out_dims]
    rest += sorted({d for d in every if isinstance(d, str) and d not in out_dims}, key=_LETTERS.index)
    order = out_dims + rest  # torch's permuted layout: the output's dims, then the contracted ones
    sizes, last = {}, {}
    permuted = []
    for i, (t, (labels, n_ell)) in enumerate(zip(operands, parsed)):
        dims = _dims_of(labels, ell_dims, n_ell)
        j = 0
        while j < len(dims):  # a repeated label: its diagonal, moved to the first place it appears
            first = dims.index(dims[j])
            if first != j:
                if t._shape[first] != t._shape[j]:
                    raise RuntimeError(f"einsum(): subscript {dims[j]} is repeated for operand {i} but the sizes don't "
                                       f"match, {t._shape[j]} != {t._shape[first]}")
                t = movedim(diagonal(t, 0, first, j), -1, first)
                del dims[j]
            else:
                j += 1
        for d, n in zip(dims, t._shape):
            if d in sizes and n != 1 and sizes[d] != 1 and sizes[d] != n:
                if isinstance(d, tuple):
                    raise RuntimeError(f"einsum(): dimension {d[1]} covered by ellipsis in operand {i}has size {n} "
                                       "which does not broadcast with previously seen ellipsis with size "
                                       f"{sizes[d]} for the respective dimension")
                raise RuntimeError(f"einsum(): subscript {d} has size {n} for operand {i} which does not broadcast "
                                   f"with previously seen size {sizes[d]}")
            if d not in sizes or sizes[d] == 1:
                sizes[d] = n
            if n != 1:  # the last operand where the dim is not 1 (torch's dim_last_op; 0 when none)
                last[d] = i
        for d in order:  # a label this operand lacks: a new dim of size 1 at the end, then placed by the permute
            if d not in dims:
                t = shape.unsqueeze(t, -1)
                dims.append(d)
        permuted.append(shape.permute(t, *[dims.index(d) for d in order]))
    n_out = len(out_dims)
    result, contracted = permuted[0], order[n_out:]
    if len(permuted) > 1:  # dims no later operand has (other than as 1): summed now (squeezed when of size 1)
        dim = n_out
        for d in contracted:
            if last.get(d, 0) == 0:
                result = shape.squeeze(result, dim) if result._shape[dim] == 1 else reduction.sum(result, dim)
            else:
                dim += 1
    for i in range(1, len(permuted)):
        operand, sum_dims, dim = permuted[i], [], n_out
        for d in contracted:
            if last.get(d, 0) < i:  # the result has dropped it already
                operand = shape.squeeze(operand, dim)
            elif last[d] == i and result._shape[dim] == 1:
                operand, result = reduction.sum(operand, dim), shape.squeeze(result, dim)
            else:
                if last[d] == i:
                    sum_dims.append(dim)
                dim += 1
        if not sum_dims:
            result = apply("mul", result, operand)
        else:
            result = _sumproduct_pair(result, operand, sum_dims)
    if contracted:
        if len(permuted) > 1:
            result = shape.view(result, *result._shape[:n_out])
        else:
            result = reduction.sum(result, list(range(n_out, len(order))))
    return result


def _sumproduct_pair(left, right, sum_dims):
    """(left * right).sum(sum_dims) through one bmm, as torch's sumproduct_pair."""
    lro, lo, ro = [], [], []
    lro_size = lo_size = ro_size = sum_size = 1
    for i in range(len(left._shape)):
        sl, sr = left._shape[i] != 1, right._shape[i] != 1
        if i in sum_dims:
            if sl and sr:
                sum_size *= left._shape[i]
            elif sl:
                left = reduction.sum(left, i, True)
            elif sr:
                right = reduction.sum(right, i, True)
        elif sl and sr:
            lro.append(i)
            lro_size *= left._shape[i]
        elif sl:
            lo.append(i)
            lo_size *= left._shape[i]
        else:
            ro.append(i)
            ro_size *= right._shape[i]
    if lo and ro and ro[-1] < lo[0]:  # torch swaps the operands so that bmm writes the output's order
        left, right, lo, ro, lo_size, ro_size = right, left, ro, lo, ro_size, lo_size
    left, right = _bmm_operands(left, right, lo_size * sum_size * ro_size)
    out_size = [left._shape[d] for d in lro] + [left._shape[d] for d in lo] + [1] * len(sum_dims) + \
        [right._shape[d] for d in ro]
    lperm, rperm = lro + lo + sum_dims + ro, lro + sum_dims + ro + lo
    operm = [0] * len(out_size)
    for i, d in enumerate(lro + lo + sum_dims + ro):
        operm[d] = i
    left = shape.reshape(shape.permute(left, *lperm), lro_size, lo_size, sum_size)
    right = shape.reshape(shape.permute(right, *rperm), lro_size, sum_size, ro_size)
    result = shape.permute(shape.view(bmm(left, right), *out_size), *operm)
    return shape.view(result, *[n for i, n in enumerate(result._shape) if i not in sum_dims])


def _bmm_operands(left, right, work):
    """torch's bmm refusals of mixed dtypes, worded by its path: the plain loop for less than 400 products (it
    reads by the first operand's type), else BLAS's; with nothing to multiply it checks nothing and the result
    takes the second operand's dtype."""
    a, b = left._dtype, right._dtype
    if not left.numel() or not right.numel():
        if a is not b:
            if needs_grad(left, right) and not b.is_floating_point:
                raise RuntimeError(f"Autograd not support dtype: {b.word}")
            left = left.to(b)
        return left, right
    if a is dtypes.bool_ and (b is dtypes.bool_ or work < 400):
        raise NotImplementedError("\"bmm\" not implemented for 'Bool'")
    if a is not b:
        if work < 400:
            raise RuntimeError(f"expected scalar type {a.word} but found {b.word}")
        if b.is_floating_point:
            raise RuntimeError(f"expected scalar type {b.word} but found {a.word}")
        raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: {a.c_name} != {b.c_name}")
    return left, right


def tensordot(a, b, dims=2, out=None):
    if not isinstance(a, TensorBase) or not isinstance(b, TensorBase):
        raise RuntimeError("tensordot expects its first two arguments to be tensors")
    if isinstance(dims, TensorBase):
        dims = dims.tolist()
    if isinstance(dims, int):
        if dims < 0:
            raise RuntimeError(f"tensordot expects dims >= 0, but got dims={dims}")
        if dims > min(len(a._shape), len(b._shape)):
            raise RuntimeError(f"tensordot expects dims < ndim_a or ndim_b, but got dims={dims}")
        dims_a, dims_b = list(range(-dims, 0)), list(range(dims))
    else:
        if len(dims) != 2:
            raise RuntimeError("tensordot expects dims to be a pair of lists or ints")
        if isinstance(dims[0], int):
            raise TypeError("tensordot(): argument 'dims_self' (position 3) must be tuple of ints, not int")
        dims_a, dims_b = (list(d) for d in dims)
    if len(dims_a) != len(dims_b):
        raise RuntimeError("both dimension lists should have same length")
    na, nb = len(a._shape), len(b._shape)
    given = list(zip(dims_a, dims_b))
    dims_a, dims_b = [wrap_dim(d, na) for d in dims_a], [wrap_dim(d, nb) for d in dims_b]
    t1, t2, csize = a, b, 1
    for (da, db), (ga, gb) in zip(zip(dims_a, dims_b), given):
        s1, s2 = a._shape[da], b._shape[db]
        if s2 == 1:  # a broadcast dim sums right away
            t1 = reduction.sum(t1, da, True)
        elif s1 == 1:
            t2 = reduction.sum(t2, db, True)
        else:
            if s1 != s2:
                raise RuntimeError(f"contracted dimensions need to match, but first has size {s1} in dim {ga} and "
                                   f"second has size {s2} in dim {gb}")
            csize *= s1
    free_a = [d for d in range(na) if d not in dims_a]
    free_b = [d for d in range(nb) if d not in dims_b]
    rsizes = [a._shape[d] for d in free_a] + [b._shape[d] for d in free_b]
    size1, size2 = math.prod(a._shape[d] for d in free_a), math.prod(b._shape[d] for d in free_b)
    t1 = shape.reshape(shape.permute(t1, *(free_a + dims_a)), size1, csize)
    t2 = shape.reshape(shape.permute(t2, *(dims_b + free_b)), csize, size2)
    return shape.reshape(mm(t1, t2), *rsizes)


def kron(input, other):
    nd = max(len(input._shape), len(other._shape))
    pad_a, pad_b = nd - len(input._shape), nd - len(other._shape)
    a_shape, b_shape, r_shape = [], [], []
    for i in range(nd):
        sa = input._shape[i - pad_a] if i >= pad_a else 1
        sb = other._shape[i - pad_b] if i >= pad_b else 1
        a_shape += [sa, 1]
        b_shape += [1, sb]
        r_shape.append(sa * sb)
    return _unsafe_view(apply("mul", _unsafe_view(input, a_shape), _unsafe_view(other, b_shape)), r_shape)

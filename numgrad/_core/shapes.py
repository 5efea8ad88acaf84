"""Shapes: torch.Size, dim wrapping and broadcasting, with torch's error messages."""
import math


class Size(tuple):
    """torch.Size: a tuple that prints as `torch.Size([2, 3])`."""

    def __repr__(self):
        return f"torch.Size([{', '.join(str(d) for d in self)}])"

    def numel(self):
        return math.prod(self)

    def __getitem__(self, i):
        r = tuple.__getitem__(self, i)
        return Size(r) if isinstance(i, slice) else r

    # joined or repeated with tuples, a Size stays a Size, as torch's
    def __add__(self, other):
        return Size(tuple.__add__(self, other)) if isinstance(other, tuple) else NotImplemented

    def __radd__(self, other):
        return Size(tuple.__add__(other, self)) if isinstance(other, tuple) else NotImplemented

    def __mul__(self, n):
        return Size(tuple.__mul__(self, n))

    __rmul__ = __mul__


def storage_span(shape, strides):
    """Elements from the first to one past the last that a view of `shape` and element `strides` (none
    negative) reaches: 0 for an empty view."""
    if not math.prod(shape):
        return 0
    return 1 + sum((n - 1) * st for n, st in zip(shape, strides))


def wrap_dim(dim, ndim):
    n = max(ndim, 1)
    if not -n <= dim < n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {dim})")
    return dim % n


def broadcast_shapes(*shapes):
    """The broadcast of `shapes`, each taken in turn against the shape so far, with torch's message for the
    first mismatch (found from the last dim, as at::infer_size looks)."""
    return iterator_shape(*shapes) if shapes else ()


def infer_size(a, b):
    """at::infer_size: the broadcast of shapes `a` and `b`, with torch's message naming them a and b."""
    ndim = max(len(a), len(b))
    out = [0] * ndim
    for i in range(ndim - 1, -1, -1):
        off = ndim - 1 - i
        da = a[len(a) - 1 - off] if off < len(a) else 1
        db = b[len(b) - 1 - off] if off < len(b) else 1
        if da != db and da != 1 and db != 1:
            raise RuntimeError(f"The size of tensor a ({da}) must match the size of tensor b ({db}) at non-singleton "
                               f"dimension {i}")
        out[i] = db if da == 1 else da
    return tuple(out)


def iterator_shape(*shapes):
    """The shape a TensorIterator over operands of `shapes` runs over: each operand broadcast in turn
    against the shape so far (so torch's message names the shape so far a and the operand b)."""
    shape = tuple(shapes[0])
    for s in shapes[1:]:
        if tuple(s) != shape:
            shape = infer_size(shape, s)
    return shape


def check_inplace(out, *inputs):
    """An in-place op on a tensor of shape `out` with operands of shapes `inputs` (torch's add_, lerp_,
    addcmul_...): the operands must broadcast to `out` itself. Returns `out`."""
    shape = iterator_shape(out, *inputs)
    if shape != tuple(out):
        raise RuntimeError(f"output with shape {list(out)} doesn't match the broadcast shape {list(shape)}")
    return tuple(out)

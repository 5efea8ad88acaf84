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


def wrap_dim(dim, ndim):
    n = max(ndim, 1)
    if not -n <= dim < n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {dim})")
    return dim % n


def broadcast_shapes(*shapes):
    ndim = max((len(s) for s in shapes), default=0)
    out = [1] * ndim
    for s in shapes:
        for i, d in enumerate(s, ndim - len(s)):
            if out[i] == 1:
                out[i] = d
            elif d != 1 and d != out[i]:
                raise RuntimeError(_mismatch(shapes, i, ndim))
    return tuple(out)


def _mismatch(shapes, i, ndim):
    a, b = shapes[0], shapes[1] if len(shapes) > 1 else shapes[0]
    da = a[i - (ndim - len(a))] if i >= ndim - len(a) else 1
    db = b[i - (ndim - len(b))] if i >= ndim - len(b) else 1
    return (f"The size of tensor a ({da}) must match the size of tensor b ({db}) at non-singleton "
            f"dimension {i}")

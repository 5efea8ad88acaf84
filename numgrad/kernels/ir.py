"""The fused-kernel IR: a region of elementwise ops as straight-line steps over leaves, for any target."""
import numpy as np

from . import lower, tape
from .arrays import on_gpu

SCALAR_TYPES = {"bool_": np.bool_, "int64": np.int64, "float32": np.float32, "float64": np.float64}
NAMED = 256  # vars l0.., v0.. named once here rather than formatted on every step
LEAF_NAMES = tuple(f"l{k}" for k in range(NAMED))
STEP_NAMES = tuple(f"v{k}" for k in range(NAMED))


class Leaf:
    """A kernel input: an array indexed by the flat position (full), by the position within a row (row),
    by the row (col), by the full position modulo its size (tail: trailing dims repeated), one value on the
    GPU (one), or a scalar; the target's layout decides the kind."""
    __slots__ = ("value", "dtype", "kind")

    def __init__(self, value, dtype, kind):
        self.value, self.dtype, self.kind = value, dtype, kind


class Program:
    """Straight-line code for one element, recorded as hashable steps so that a region seen before finds
    its kernel without generating any source. Each step is (expression in the op-table vocabulary,
    ((name, ref, dtype it is read as), ...), dtype it computes in, result dtype); refs are leaves l0, l1,
    ..., earlier steps v0, v1, ..., or literals. Built by lazy.py and autograd/fused_backward.py.

    With `order` (the result's dims, slowest first) the region runs in the result's memory order: its
    shape is the permuted one and host array leaves are broadcast and transposed to it, so an input laid
    out as the result is read straight, as a C-contiguous array."""

    def __init__(self, shape, order=None):
        self.order = order
        self.full_shape = shape  # the result's own shape, which leaves broadcast to
        self.shape = shape if order is None else tuple(shape[d] for d in order)
        self.target = "cpu"  # "cuda" once a leaf lives on the GPU (cuda/fused.py runs it)
        self.leaves = []
        self.leaf_vars = {}  # id(array) -> leaf var, so one tensor used twice is read once
        self.steps = []
        self.var_dtypes = {}
        self.memo = {}  # id(pending expression) -> var: a value read twice is computed once
        self.sources = None  # while numgrad.compile traces: leaf index -> the array a scalar leaf was read from
        self.ops = []  # the names of the ops (or backward nodes) it merges, for the profiler and debugging

    def leaf(self, value, dtype_name):
        """A leaf for an ndarray (broadcastable to the shape) or a scalar; returns its var."""
        if value.__class__ is not np.ndarray and on_gpu(value):  # GPU memory: never read here (the usual
            # leaf, a host array, skips the on_gpu call: programs are built on every op)
            key = id(value)
            var = self.leaf_vars.get(key)
            if var is None:
                self.target = "cuda"
                var = self.leaf_vars[key] = self._add_leaf(value, dtype_name, "array")
            return var
        if isinstance(value, np.ndarray):
            key = id(value)
            var = self.leaf_vars.get(key)
            if var is not None:
                return var
            # one value, possibly expanded (an empty array has no value to read, even with stride 0); while
            # numgrad.compile traces, the array is remembered: a replay reads the value again (refresh)
            if value.size == 1 or (value.size and not any(value.strides)):
                if tape.active:
                    self.sources = self.sources or {}
                    self.sources[len(self.leaves)] = value
                var = self._add_leaf(value.flat[0], dtype_name, "scalar")
            else:
                var = self._add_leaf(value if self.order is None else self._permuted(value), dtype_name, "array")
            self.leaf_vars[key] = var
            return var
        return self._add_leaf(value, dtype_name, "scalar")

    def _permuted(self, arr):
        """Host array `arr` as the kernel reads it: broadcast and transposed to the region's order."""
        if arr.shape != self.full_shape:
            arr = np.broadcast_to(arr, self.full_shape)
        return arr.transpose(self.order)

    def _add_leaf(self, value, dtype_name, kind):
        leaves = self.leaves
        var = LEAF_NAMES[len(leaves)] if len(leaves) < NAMED else f"l{len(leaves)}"
        if kind == "scalar":
            value = SCALAR_TYPES[dtype_name](value)
        leaves.append(Leaf(value, dtype_name, kind))
        self.var_dtypes[var] = dtype_name
        return var

    def step(self, expr, mapping, compute, dtype_name):
        steps = self.steps
        var = STEP_NAMES[len(steps)] if len(steps) < NAMED else f"v{len(steps)}"
        steps.append((expr, mapping, compute, dtype_name))
        self.var_dtypes[var] = dtype_name
        return var

    def total(self, refs, dtype_name):
        """A step adding `refs` (read as `dtype_name`)."""
        names = tuple(f"t{k}" for k in range(len(refs)))
        return self.step(" + ".join(names) if refs else "0",
                         tuple((n, r, dtype_name) for n, r in zip(names, refs)), dtype_name, dtype_name)

    def code(self):
        """The steps as kernel source lines (only for a region not seen before)."""
        lines, dtypes = [], {}
        for var, leaf in zip((f"l{k}" for k in range(len(self.leaves))), self.leaves):
            dtypes[var] = leaf.dtype
        for k, (expr, mapping, compute, dtype_name) in enumerate(self.steps):
            reads = tuple((name, ref if want is None or dtypes.get(ref, want) == want else f"np.{want}({ref})")
                          for name, ref, want in mapping)
            var = f"v{k}"
            lines.append((var, f"np.{dtype_name}({lower.substitute(expr, reads, compute, self.target)})"))
            dtypes[var] = dtype_name
        return lines

    def refresh(self):
        """Reads the scalar leaves taken from arrays again (a replay of a traced program)."""
        for i, source in self.sources.items():
            leaf = self.leaves[i]
            leaf.value = SCALAR_TYPES[leaf.dtype](source.flat[0])

    def key(self, outputs):
        return (self.target, tuple(self.steps), tuple((leaf.kind, leaf.dtype) for leaf in self.leaves), outputs)


SCALAR_DTYPES = {k: np.dtype(v) for k, v in SCALAR_TYPES.items()}

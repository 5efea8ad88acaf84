"""Rewrites of a finished trace's tape into fewer, leaner kernel calls, each giving the values of the calls it
replaces bit for bit: two adjacent recorded calls that one kernel does in a single pass become one entry (the
first's place keeps a no-op, so that entry indices stay valid), a ReLU's backward and the column sums of its
result (the next Linear's bias gradient), as an MLP's backward records them; any other float sum over the rows
of a 2-d array (a bias gradient) becomes one call of the column sums kernel, and NumPy's in-place add of a row
to a 2-d array (a Linear's bias, where no ReLU takes it into its kernel) one call of a row-add kernel. Where
the step's caches are cold (its GEMMs ran in between), each recorded call costs 20-40 us more than its kernel
(the MLP steps' entries replaced: 365-400 -> 174-187 us)."""
import numpy as np

from ..kernels import dispatch
from ..kernels.dispatch import bias
from ..ops.elementwise import _kernel_flats

# the op table's relu_backward as _kernel_flats records it: kernel name, inputs, (output, expression)
_RELU_BACKWARD = ("relu_backward", ("g", "out"), (("grad_a", "(where(out <= 0, 0, g))"),))


def _nothing():
    """The entry left where a fused call was."""


_nothing.describes = "(fused into the next entry)"


def fuse(rec, forward_entries):
    """Rewrites rec's entries (the first `forward_entries`), recipes and touches in place wherever a fusion
    applies. Runs before slots and argument bindings are planned, so that they remake the fused call."""
    for i in range(forward_entries - 1):
        first, second = rec.recipes.get(i), rec.recipes.get(i + 1)
        if first is None or second is None:
            continue
        args = _relu_backward_then_sums(first, second)
        if args is None:
            continue
        sums = second[4]
        rec.recipes[i + 1] = (bias.relu_backward_sums, args, {}, "out_sums", sums)
        del rec.recipes[i]
        rec.touches[i + 1] = rec.touches.get(i, set()) | rec.touches.get(i + 1, set())
        rec.touches[i] = set()
        rec.entries[i] = _nothing
        rec.entries[i + 1] = bias.relu_backward_sums.prepare(sums, *args)
    for i, recipe in list(rec.recipes.items()):
        if i >= forward_entries:
            continue
        data = _column_sums_of(recipe)
        if data is not None:
            sums = recipe[4]
            rec.recipes[i] = (bias.column_sums, (data,), {}, "out_sums", sums)
            rec.entries[i] = bias.column_sums.prepare(sums, data)
        elif _row_add(recipe):
            x, b = recipe[1]
            rec.recipes[i] = (bias.add_to_rows, (x, b), {}, None, x)
            rec.entries[i] = bias.add_to_rows.prepare(x, x, b)


def _row_add(recipe):
    """Whether `recipe` is np.add(x, b, out=x) of a 2-d x and a row b that add_to_rows serves."""
    fn, args, kwargs, out_kw, result = recipe
    if fn is not np.add or out_kw is not None or len(args) != 2 or kwargs.keys() != {"out"}:
        return False
    x, b = args
    out = kwargs["out"]
    return (out is x or (isinstance(out, tuple) and len(out) == 1 and out[0] is x)) and result is x and \
        bias.row_addable(x, b)


def _column_sums_of(recipe):
    """The summed array when `recipe` is a float sum over dim 0 of a 2-d array into its own dtype that the
    column sums kernel gives bit for bit; else None."""
    fn, args, kwargs, out_kw, sums = recipe
    if fn is not bias.host_float_sum or kwargs or out_kw != "out" or len(args) != 5:
        return None
    entry, data, axes, out_dtype, kept = args
    if getattr(entry, "name", None) != "sum" or tuple(axes) != (0,) or data.__class__ is not np.ndarray or \
            np.dtype(out_dtype) != data.dtype:
        return None
    return data if bias.summable(data, sums) else None


def _relu_backward_then_sums(first, second):
    """(g, out, grad as rows) when recipe `first` is the op table's ReLU backward into a new flat array and
    `second` the float column sums of exactly that array (dim 0, its own dtype); else None."""
    fn, args, kwargs, out_kw, result = first
    if fn is not _kernel_flats or kwargs or out_kw != "outs" or len(args) != 5 or len(result) != 1:
        return None
    plan, arrays, shape, n, np_dtype = args
    if (getattr(plan, "kernel_name", None), getattr(plan, "kernel_inputs", None),
            tuple(getattr(plan, "exprs", ()))) != _RELU_BACKWARD or any(plan.bool_used) or len(arrays) != 2:
        return None
    fn2, args2, kwargs2, out_kw2, sums = second
    if fn2 is not bias.host_float_sum or kwargs2 or out_kw2 != "out" or len(args2) != 5:
        return None
    entry, data, axes, out_dtype, kept = args2
    flat, (g, out) = result[0], arrays
    if getattr(entry, "name", None) != "sum" or tuple(axes) != (0,) or len(shape) != 2 or \
            data.__class__ is not np.ndarray or flat.__class__ is not np.ndarray or \
            g.__class__ is not np.ndarray or out.__class__ is not np.ndarray or sums.__class__ is not np.ndarray:
        return None
    if data.shape != tuple(shape) or g.shape != tuple(shape) or out.shape != tuple(shape) or \
            flat.size != n or n != g.size or np.dtype(out_dtype) != g.dtype or np.dtype(np_dtype) != g.dtype or \
            dispatch.storage(data) is not dispatch.storage(flat) or \
            dispatch.data_ptr(data) != dispatch.data_ptr(flat) or not data.flags.c_contiguous:
        return None
    grad = flat.reshape(shape)
    return (g, out, grad) if bias.fusable(g, out, grad, sums) else None

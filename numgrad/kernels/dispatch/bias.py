"""A Linear layer's bias in numgrad.compile's tape (compile/fuse.py), each in place of the recorded calls: the bias
added to the product's rows as one kernel call, a ReLU's backward followed by the column sums of its result as
one CPU kernel, and a float sum over the rows of a 2-d array as the column sums kernel alone."""
import functools

import numpy as np

from ..cpu import bias as cpu_bias
from ..cpu import kernels as cpu_kernels
from ..cpu import threads as cpu_threads
from . import _host_float_sum, column_sums_into

FLOATS = (np.dtype(np.float32), np.dtype(np.float64))
host_float_sum = _host_float_sum  # the recorded column sum this kernel replaces


def fusable(g, out, grad, sums):
    """Whether the fused kernel computes grad = relu_backward(g, out) and sums = grad.sum(0) as the two
    recorded calls did: host C-order 2-d arrays of one float dtype with a row at least, `grad` the rows of
    the backward's own result, `sums` one C-order row; and a range the backward's kernel would not have split
    over threads (one thread here would be slower)."""
    if not all(a.__class__ is np.ndarray and a.flags.c_contiguous for a in (g, out, grad, sums)):
        return False
    dtype = g.dtype
    return g.ndim == 2 and g.shape[0] >= 1 and out.shape == g.shape and grad.shape == g.shape and \
        dtype in FLOATS and out.dtype == dtype and grad.dtype == dtype and sums.dtype == dtype and \
        sums.size == g.shape[1] and (g.size < cpu_threads.PARALLEL_MIN or cpu_threads.count() == 1)


def row_addable(x, b):
    """Whether add_to_rows gives NumPy's x + b into x: host C-order 2-d `x` of a float dtype with a row at least,
    `b` a C-order row of its dtype, in memory of its own."""
    return x.__class__ is np.ndarray and b.__class__ is np.ndarray and x.flags.c_contiguous and \
        b.flags.c_contiguous and x.ndim == 2 and b.ndim == 1 and x.shape[0] >= 1 and x.dtype in FLOATS and \
        b.dtype == x.dtype and b.size == x.shape[1] and not np.may_share_memory(x, b)


def add_to_rows(x, b):
    """x += b (a row added to each of x's rows, in place); returns x."""
    cpu_bias.add_to_rows(x, b)
    return x


def _prepare_add_to_rows(result, x, b):
    """The kernel bound once (NumPy's add with out= through the recorded call took 31-39 us in the MLP step)."""
    replay = functools.partial(cpu_bias.add_to_rows, x, b)
    replay.describes = f"bias added to the rows of {x.shape} (prepared)"
    return replay


add_to_rows.prepare = _prepare_add_to_rows


def summable(data, sums):
    """Whether the column sums kernel gives what the recorded float sum of `data` over dim 0 gave: host C-order
    2-d `data` of one float dtype with a row at least, `sums` one C-order row of it, a range the fold would not
    have split over threads."""
    return data.__class__ is np.ndarray and sums.__class__ is np.ndarray and data.flags.c_contiguous and \
        sums.flags.c_contiguous and data.ndim == 2 and data.shape[0] >= 1 and data.dtype in FLOATS and \
        sums.dtype == data.dtype and sums.size == data.shape[1] and \
        (data.size < cpu_threads.PARALLEL_MIN or cpu_threads.count() == 1)


def column_sums(data, out_sums=None):
    """data.sum(0) of a 2-d float array as sum's float fold gives it (returned, in `out_sums` when given)."""
    sums = np.empty(data.shape[1], data.dtype) if out_sums is None else out_sums
    column_sums_into(data, sums)
    return sums


def _prepare_column_sums(result, data, out_sums=None):
    """The kernel bound once: one call of three arguments (the recorded sum's replay, a fold, then NumPy's add
    under errstate, took 41-64 us on a (256, 10) gradient in a cold cache, the kernel 9-16 us)."""
    replay = functools.partial(cpu_kernels.column_sums, data, np.empty(data.shape[1], np.float64),
                               result.reshape(-1))
    replay.describes = f"float sum of {data.shape} over (0,) by the column sums kernel (prepared)"
    return replay


column_sums.prepare = _prepare_column_sums


def relu_backward_sums(g, out, grad, out_sums=None):
    """grad[...] = where(out <= 0, 0, g) and the column sums of grad (returned, in `out_sums` when given)."""
    sums = np.empty(g.shape[1], g.dtype) if out_sums is None else out_sums
    cpu_bias.relu_backward_column_sums(g, out, grad, np.empty(g.shape[1], np.float64), sums.reshape(-1))
    return sums


def _prepare_relu_backward_sums(result, g, out, grad, out_sums=None):
    """The kernel bound once to the arrays and a float64 scratch row (a replay writes the same memory)."""
    replay = functools.partial(cpu_bias.relu_backward_column_sums, g, out, grad,
                               np.empty(g.shape[1], np.float64), result.reshape(-1))
    replay.describes = f"relu backward + column sums of {g.shape} (prepared)"
    return replay


relu_backward_sums.prepare = _prepare_relu_backward_sums

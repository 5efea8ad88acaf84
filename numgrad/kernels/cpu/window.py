"""Sliding-window kernels for conv2d and max_pool2d: im2col, col2im, max pooling with its indices and the
pooling gradient's scatter, each one pass over memory (NumPy's strided copies and argmax took several)."""
import functools

import numpy as np

from .. import loader
from ..arrays import dtype_name
from . import threads
from .kernels import HEADER, LOOP_HEADER

# Geometry `g` is (n, c, h, w, kh, kw, sh, sw, ph, pw, dh, dw, oh, ow). Positions outside the input read
# as zero (im2col) or are skipped (pooling); every kernel takes a (start, stop) range of independent rows
# so that threads.over can split it.
_SOURCE = """
@njit(inline="always")
def _inside(off, sw, w, ow):
    # the output columns xo in [lo, hi) whose input column xo * sw + off lies in [0, w): the rest read zero
    # (im2col) or add nothing (col2im), with no test left in the inner loop (which then vectorises)
    lo = max(0, -(off // sw))
    hi = min(ow, -((off - w) // sw))
    return lo, max(lo, hi)


{header}
def im2col(start, stop, x, cols, g):
    n, c, h, w, kh, kw, sh, sw, ph, pw, dh, dw, oh, ow = g
    # x is (n*c*h*w,) flat, cols (c*kh*kw*n*oh*ow,): row r is channel r // (kh*kw) at kernel offset (i, j).
    # Flat arrays and unsigned positions, as max_pool: a view per output row and Numba's wrapping of signed
    # indices cost more than the copies of these short rows (the convnet's (32, 8, 13, 13) input, 3x3, on one
    # SkylakeX core: 140 -> 86 us)
    for r in range(start, stop):
        ch = r // (kh * kw)
        i = r // kw % kh
        j = r % kw
        off = j * dw - pw
        lo, hi = _inside(off, sw, w, ow)
        ulo, uhi, uow = np.uint64(lo), np.uint64(hi), np.uint64(ow)
        for b in range(n):
            plane = (b * c + ch) * h * w
            for y in range(oh):
                d = np.uint64(((r * n + b) * oh + y) * ow)
                iy = y * sh + i * dh - ph
                if iy < 0 or iy >= h:
                    for xo in range(np.uint64(0), uow):
                        cols[d + xo] = 0
                    continue
                for xo in range(np.uint64(0), ulo):
                    cols[d + xo] = 0
                first = plane + iy * w + off
                if sw == 1:  # contiguous on both sides: a vector copy
                    src = np.uint64(first)
                    for xo in range(ulo, uhi):
                        cols[d + xo] = x[src + xo]
                else:
                    for xo in range(lo, hi):
                        cols[d + np.uint64(xo)] = x[np.uint64(first + xo * sw)]
                for xo in range(uhi, uow):
                    cols[d + xo] = 0


{header}
def col2im(start, stop, cols, out, g):
    n, c, h, w, kh, kw, sh, sw, ph, pw, dh, dw, oh, ow = g
    # cols is (c*kh*kw*n*oh*ow,) flat, out (n*c*h*w,) zeroed: plane p adds back every column entry read from
    # it, offsets (i, j) in order (flat and unsigned as im2col: the convnet's 126 -> 101 us)
    for p in range(start, stop):
        b = p // c
        ch = p % c
        plane = p * h * w
        for i in range(kh):
            for j in range(kw):
                r = (ch * kh + i) * kw + j
                off = j * dw - pw
                lo, hi = _inside(off, sw, w, ow)
                ulo, uhi = np.uint64(lo), np.uint64(hi)
                for y in range(oh):
                    iy = y * sh + i * dh - ph
                    if iy < 0 or iy >= h:
                        continue
                    src = np.uint64(((r * n + b) * oh + y) * ow)
                    first = plane + iy * w + off
                    if sw == 1:  # contiguous on both sides: a vector add (distinct targets: same sums)
                        dst = np.uint64(first)
                        for xo in range(ulo, uhi):
                            out[dst + xo] += cols[src + xo]
                    else:
                        for xo in range(lo, hi):
                            out[np.uint64(first + xo * sw)] += cols[src + np.uint64(xo)]


@njit(inline="always")
def _pick(v, pos, best, where):
    # the later value wins only when greater, or a NaN over a number: the first maximum, the first NaN (NumPy's
    # argmax). Selects, not a branch: on random data the branch mispredicted half the time (the (32, 8, 26, 26)
    # pool of the benchmark's convnet: 1.10 -> 0.78 ms)
    take = (v > best) | ((v != v) & (best == best))
    return (v if take else best), (pos if take else where)


@njit(inline="always")
def _window_max(x, base, y0, x0, i0, i1, j0, j1, w, dh, dw, lowest):
    # one window's rows [i0, i1) and columns [j0, j1) in order, from `lowest` at the window's first position
    best = lowest
    where = y0 * w + x0
    for i in range(i0, i1):
        row_start = (y0 + i * dh) * w + x0
        for j in range(j0, j1):
            pos = row_start + j * dw
            best, where = _pick(x[base + np.uint64(pos)], pos, best, where)
    return best, where


{header}
def max_pool(start, stop, x, values, indices, g, lowest):
    n, c, h, w, kh, kw, sh, sw, ph, pw, dh, dw, oh, ow = g
    # x is (n*c*h*w,) flat, values and indices (n*c*oh*ow,); the first maximum wins, a NaN beats any number
    # (NumPy's argmax over the window, padding read as `lowest`: a window whose values are all `lowest` keeps
    # its first position). The offsets inside the input are counted first, so no index needs checking. A
    # window wholly inside (every window without padding) needs no count: the four floor divisions per window
    # cost more than its reads (the (32, 8, 26, 26) pool of the benchmark's convnet: 0.73 -> 0.56 ms).
    # Flat arrays and unsigned positions: a row view per window row and Numba's wrapping of signed indices
    # cost a quarter of the time (the same pool on a znver5 core: 440 -> 320 us; 3x3, stride 2, padding 1:
    # 1070 -> 820 us). A 2x2 window wholly inside is read unrolled, each row's pair picked, then the rows:
    # `_pick` is associative, so the pairs give the one pass's result, with no loops to count (the convnet's
    # pool on one SkylakeX core: 444 -> 210 us).
    plane = h * w
    pairs = kh == 2 and kw == 2 and dh == 1 and dw == 1
    for p in range(start, stop):
        base = np.uint64(p * plane)
        out_row = p * oh * ow
        for y in range(oh):
            y0 = y * sh - ph
            rows_inside = y0 >= 0 and y0 + (kh - 1) * dh < h
            if rows_inside:
                i0, i1 = 0, kh
            else:
                i0 = max(0, (-y0 + dh - 1) // dh)
                i1 = min(kh, (h - y0 + dh - 1) // dh)
            for xo in range(ow):
                x0 = xo * sw - pw
                columns_inside = x0 >= 0 and x0 + (kw - 1) * dw < w
                if pairs and rows_inside and columns_inside:
                    a = y0 * w + x0
                    b = a + w
                    best, where = _pick(x[base + np.uint64(a + 1)], a + 1, x[base + np.uint64(a)], a)
                    below, below_where = _pick(x[base + np.uint64(b + 1)], b + 1, x[base + np.uint64(b)], b)
                    best, where = _pick(below, below_where, best, where)
                else:
                    if columns_inside:
                        j0, j1 = 0, kw
                    else:
                        j0 = max(0, (-x0 + dw - 1) // dw)
                        j1 = min(kw, (w - x0 + dw - 1) // dw)
                    best, where = _window_max(x, base, y0, x0, i0, i1, j0, j1, w, dh, dw, lowest)
                o = np.uint64(out_row + y * ow + xo)
                values[o] = best
                indices[o] = where


{header}
def max_pool_pairs(start, stop, x, values, indices, g, pair_values, pair_columns):
    n, c, h, w, kh, kw, sh, sw, ph, pw, dh, dw, oh, ow = g
    # max_pool's 2x2 windows at stride 2 without padding over planes of even width, in two passes that each run
    # one long loop: first every row's column pairs over the planes' flat run (pair_values and pair_columns,
    # (n*c*h*w/2,): the pair's winner and whether it was the right one), then each output's upper and lower
    # pair. The same picks in the same order as max_pool's unrolled 2x2 (`_pick` is associative), so the same
    # values and indices; a loop over a row's 13 windows did not vectorise (the convnet's (32, 8, 26, 26) pool
    # on one SkylakeX core: 210 -> 110 us)
    plane = h * w
    for k in range(np.uint64(start * plane // 2), np.uint64(stop * plane // 2)):
        v, right = _pick(x[k + k + np.uint64(1)], np.int32(1), x[k + k], np.int32(0))
        pair_values[k] = v
        pair_columns[k] = right
    half = w // 2
    for p in range(start, stop):
        out_row = np.uint64(p * oh * ow)
        for y in range(oh):
            upper = np.uint64((p * h + 2 * y) * half)
            lower = upper + np.uint64(half)
            first = 2 * y * w
            o = out_row + np.uint64(y * ow)
            for xo in range(np.uint64(0), np.uint64(ow)):
                best, where = _pick(pair_values[lower + xo], pair_columns[lower + xo] + w, pair_values[upper + xo],
                                    pair_columns[upper + xo])
                values[o + xo] = best
                indices[o + xo] = first + 2 * np.int64(xo) + where


{header}
def unpool(start, stop, g, idx, out):
    # out is (rows, plane), zeroed; windows do not overlap, so each position gets at most one value, added onto
    # the zero as torch does (a -0.0 gradient lands as +0.0)
    for r in range(start, stop):
        for q in range(idx.shape[1]):
            out[r, idx[r, q]] += g[r, q]
"""


@functools.lru_cache(maxsize=None)
def _module():
    return loader.load_module("window", HEADER + _SOURCE.format(header=LOOP_HEADER))


# A window kernel splits over the threads from 8x the streaming kernels' threshold: its rows' working set is
# re-read by the other core after the hand-off, and on this VM (2 cores, hand-off 28 us) each of the convnet's
# window kernels ran slower split over two threads than on one, both cores idle or not (im2col (279k elements)
# 85 -> 107 us, col2im 103 -> 126, the 2x2 pool 101 -> 126; a split waits for a worker that another process
# may hold off the core for milliseconds)
PARALLEL_MIN = 8 * threads.PARALLEL_MIN


def _over(kernel, rows, size, *args):
    threads.over(kernel, rows, *args, parallel=size >= PARALLEL_MIN)


def im2col(x, g, out=None):
    """(c*kh*kw, n*oh*ow) columns of (n, c, h, w) array `x` for geometry tuple `g` (into C-order `out`)."""
    n, c, _, _, kh, kw, _, _, _, _, _, _, oh, ow = g
    out = np.empty((c * kh * kw, n * oh * ow), x.dtype) if out is None else out
    _over(_module().im2col, c * kh * kw, out.size, np.ascontiguousarray(x).reshape(-1), out.reshape(-1), g)
    return out


def col2im(cols, g, out=None):
    """The adjoint of im2col: (n, c, h, w), each column entry added to the input position it came from
    (into C-order `out`)."""
    n, c, h, w, kh, kw, _, _, _, _, _, _, oh, ow = g
    if out is None:
        out = np.zeros((n, c, h, w), cols.dtype)
    else:
        out.fill(0)
    _over(_module().col2im, n * c, cols.size, np.ascontiguousarray(cols).reshape(-1), out.reshape(-1), g)
    return out


_POOL_READ_COST = 4


def max_pool(x, g, lowest, values=None, indices=None):
    """Each window's maximum of (n, c, h, w) array `x` and its flat index into the input plane (into
    C-order `values` and `indices`)."""
    n, c, _, _, kh, kw, _, _, _, _, _, _, oh, ow = g
    values = np.empty((n, c, oh, ow), x.dtype) if values is None else values
    indices = np.empty((n, c, oh, ow), np.int64) if indices is None else indices
    # each read of a window is a compare and two selects in a chain, counted as 4 elements of the streaming
    # kernels PARALLEL_MIN is set for (on one znver5 core a read took 1.9 ns, an element of relu's backward or a
    # fused map 0.4-0.5 ns; the convnet's (32, 8, 26, 26) pool: 173k reads, 330 us alone, 210 us split over two)
    x = np.ascontiguousarray(x).reshape(-1)
    if _pairs(g):
        half = x.size // 2
        _over(_module().max_pool_pairs, n * c, values.size * kh * kw * _POOL_READ_COST, x, values.reshape(-1),
              indices.reshape(-1), g, np.empty(half, x.dtype), np.empty(half, np.int32))
    else:
        _over(_module().max_pool, n * c, values.size * kh * kw * _POOL_READ_COST, x, values.reshape(-1),
              indices.reshape(-1), g, x.dtype.type(lowest))
    return values, indices


def _pairs(g):
    """Whether geometry `g` is max_pool_pairs': 2x2 windows at stride 2, no padding nor dilation, an even width,
    no window past the input (ceil_mode's)."""
    n, c, h, w, kh, kw, sh, sw, ph, pw, dh, dw, oh, ow = g
    return (kh, kw, sh, sw, ph, pw, dh, dw) == (2, 2, 2, 2, 0, 0, 1, 1) and w % 2 == 0 and 2 * oh <= h and \
        2 * ow == w


def unpool(g, idx, plane, out=None):
    """(rows, plane) zeros with row r's values of `g` put at its flat positions `idx[r]` (no overlaps;
    into C-order `out`)."""
    rows = idx.shape[0]
    if out is None:
        out = np.zeros((rows, plane), g.dtype)
    else:
        out.fill(0)
    _over(_module().unpool, rows, out.size, np.ascontiguousarray(g).reshape(idx.shape), np.ascontiguousarray(idx),
          out)
    return out


_DTYPES = frozenset(("float32", "float64", "int8", "int16", "int32", "int64", "uint8"))


def supports(dtype):
    """Whether the kernels take arrays of `dtype` (others go NumPy's way); by the remembered name (NumPy builds a
    dtype's name on each read, which cost more than a kernel's other Python work)."""
    return dtype_name(dtype) in _DTYPES

"""torch's CPU order statistics step by step, so that ties come out at torch's indices: libstdc++'s introsort,
nth_element and partial_sort (topk, mode) and ATen's quick_select (kthvalue), over rows of keys with their
positions. Which of several equal values wins depends on every swap these algorithms make, so each is ported as
GCC writes it.

Comparators (`how`): LESS is a < b (mode's std::sort); NAN_FIRST puts larger values and NaN first (topk largest,
and kthvalue's gt_or_nan); NAN_LAST puts smaller values first and NaN last (topk smallest)."""
import numpy as np
from numba import njit

from ..loader import guard_caches as _guard_caches

LESS, NAN_FIRST, NAN_LAST = 0, 1, 2
_THRESHOLD = 16  # libstdc++'s _S_threshold: introsort leaves runs this short to the final insertion sort


@njit(cache=True, inline="always")
def _before(how, x, y):
    if how == LESS:
        return x < y
    if how == NAN_FIRST:
        return (x != x and y == y) or x > y
    return (x == x and y != y) or x < y


@njit(cache=True, inline="always")
def _swap(v, ix, i, j):
    v[i], v[j] = v[j], v[i]
    ix[i], ix[j] = ix[j], ix[i]


@njit(cache=True)
def _lg(n):
    r = 0
    while n > 1:
        n >>= 1
        r += 1
    return r


@njit(cache=True)
def _move_median_to_first(how, v, ix, result, a, b, c):
    if _before(how, v[a], v[b]):
        if _before(how, v[b], v[c]):
            _swap(v, ix, result, b)
        elif _before(how, v[a], v[c]):
            _swap(v, ix, result, c)
        else:
            _swap(v, ix, result, a)
    elif _before(how, v[a], v[c]):
        _swap(v, ix, result, a)
    elif _before(how, v[b], v[c]):
        _swap(v, ix, result, c)
    else:
        _swap(v, ix, result, b)


@njit(cache=True)
def _partition_pivot(how, v, ix, first, last):
    mid = first + (last - first) // 2
    _move_median_to_first(how, v, ix, first, first + 1, mid, last - 1)
    pivot, lo, hi = first, first + 1, last
    while True:
        while _before(how, v[lo], v[pivot]):
            lo += 1
        hi -= 1
        while _before(how, v[pivot], v[hi]):
            hi -= 1
        if not lo < hi:
            return lo
        _swap(v, ix, lo, hi)
        lo += 1


@njit(cache=True)
def _linear_insert(how, v, ix, last):
    value, index = v[last], ix[last]
    prev = last - 1
    while _before(how, value, v[prev]):
        v[last], ix[last] = v[prev], ix[prev]
        last = prev
        prev -= 1
    v[last], ix[last] = value, index


@njit(cache=True)
def _insertion_sort(how, v, ix, first, last):
    if first == last:
        return
    for i in range(first + 1, last):
        if _before(how, v[i], v[first]):
            value, index = v[i], ix[i]
            for j in range(i, first, -1):
                v[j], ix[j] = v[j - 1], ix[j - 1]
            v[first], ix[first] = value, index
        else:
            _linear_insert(how, v, ix, i)


@njit(cache=True)
def _push_heap(how, v, ix, first, hole, top, value, index):
    parent = (hole - 1) // 2
    while hole > top and _before(how, v[first + parent], value):
        v[first + hole], ix[first + hole] = v[first + parent], ix[first + parent]
        hole = parent
        parent = (hole - 1) // 2
    v[first + hole], ix[first + hole] = value, index


@njit(cache=True)
def _adjust_heap(how, v, ix, first, hole, length, value, index):
    top = hole
    child = hole
    while child < (length - 1) // 2:
        child = 2 * (child + 1)
        if _before(how, v[first + child], v[first + child - 1]):
            child -= 1
        v[first + hole], ix[first + hole] = v[first + child], ix[first + child]
        hole = child
    if length & 1 == 0 and child == (length - 2) // 2:
        child = 2 * (child + 1)
        v[first + hole], ix[first + hole] = v[first + child - 1], ix[first + child - 1]
        hole = child - 1
    _push_heap(how, v, ix, first, hole, top, value, index)


@njit(cache=True)
def _make_heap(how, v, ix, first, last):
    length = last - first
    if length < 2:
        return
    parent = (length - 2) // 2
    while True:
        _adjust_heap(how, v, ix, first, parent, length, v[first + parent], ix[first + parent])
        if parent == 0:
            return
        parent -= 1


@njit(cache=True)
def _pop_heap_into(how, v, ix, first, last, result):
    value, index = v[result], ix[result]
    v[result], ix[result] = v[first], ix[first]
    _adjust_heap(how, v, ix, first, 0, last - first, value, index)


@njit(cache=True)
def _sort_heap(how, v, ix, first, last):
    while last - first > 1:
        last -= 1
        _pop_heap_into(how, v, ix, first, last, last)


@njit(cache=True)
def _heap_select(how, v, ix, first, middle, last):
    _make_heap(how, v, ix, first, middle)
    for i in range(middle, last):
        if _before(how, v[i], v[first]):
            _pop_heap_into(how, v, ix, first, middle, i)


@njit(cache=True)
def _std_sort(how, v, ix, first, last):
    """std::sort: introsort (segments processed from a stack: each touches only its own range, so the order in
    which they are done changes nothing), then the final insertion sort."""
    if first == last:
        return
    stack = np.empty((2 * _lg(last - first) + 4 + 64, 3), np.int64)
    stack[0, 0], stack[0, 1], stack[0, 2] = first, last, 2 * _lg(last - first)
    top = 1
    while top:
        top -= 1
        lo, hi, depth = stack[top, 0], stack[top, 1], stack[top, 2]
        while hi - lo > _THRESHOLD:
            if depth == 0:
                _heap_select(how, v, ix, lo, hi, hi)
                _sort_heap(how, v, ix, lo, hi)
                break
            depth -= 1
            cut = _partition_pivot(how, v, ix, lo, hi)
            if top == stack.shape[0]:
                grown = np.empty((2 * top, 3), np.int64)
                grown[:top] = stack
                stack = grown
            stack[top, 0], stack[top, 1], stack[top, 2] = cut, hi, depth
            top += 1
            hi = cut
    if last - first > _THRESHOLD:
        _insertion_sort(how, v, ix, first, first + _THRESHOLD)
        for i in range(first + _THRESHOLD, last):
            _linear_insert(how, v, ix, i)
    else:
        _insertion_sort(how, v, ix, first, last)


@njit(cache=True)
def _nth_element(how, v, ix, first, nth, last):
    if first == last or nth == last:
        return
    depth = 2 * _lg(last - first)
    while last - first > 3:
        if depth == 0:
            _heap_select(how, v, ix, first, nth + 1, last)
            _swap(v, ix, first, nth)
            return
        depth -= 1
        cut = _partition_pivot(how, v, ix, first, last)
        if cut <= nth:
            first = cut
        else:
            last = cut
    _insertion_sort(how, v, ix, first, last)


@njit(cache=True, nogil=True)
def topk_rows(keys, k, largest, sort):
    """Positions of each row's k largest (or smallest) keys in the order torch's topk_impl_loop leaves them."""
    rows, n = keys.shape
    how = NAN_FIRST if largest else NAN_LAST
    out = np.empty((rows, k), np.int64)
    if k == 0:
        return out
    v, ix = np.empty(n, keys.dtype), np.empty(n, np.int64)
    for r in range(rows):
        for j in range(n):
            v[j], ix[j] = keys[r, j], j
        if k * 64 <= n:  # std::partial_sort: sorted whatever `sort` says
            _heap_select(how, v, ix, 0, k, n)
            _sort_heap(how, v, ix, 0, k)
        else:
            _nth_element(how, v, ix, 0, k - 1, n)
            if sort:
                _std_sort(how, v, ix, 0, k - 1)
        out[r] = ix[:k]
    return out


@njit(cache=True, nogil=True)
def kthvalue_rows(keys, k):
    """Positions of each row's k-th smallest key (k from 1) as ATen's quick_select_template finds it."""
    rows, n = keys.shape
    out = np.empty(rows, np.int64)
    v, ix = np.empty(n, keys.dtype), np.empty(n, np.int64)
    target = k - 1
    for r in range(rows):
        for j in range(n):
            v[j], ix[j] = keys[r, j], j
        lo, hi = 0, n - 1
        while True:
            if hi <= lo:
                break
            if hi == lo + 1:
                if _before(NAN_FIRST, v[lo], v[hi]):
                    _swap(v, ix, lo, hi)
                break
            mid = lo + (hi - lo) // 2
            _swap(v, ix, mid, lo + 1)
            if _before(NAN_FIRST, v[lo + 1], v[hi]):
                _swap(v, ix, lo + 1, hi)
            if _before(NAN_FIRST, v[lo], v[hi]):
                _swap(v, ix, lo, hi)
            if _before(NAN_FIRST, v[lo + 1], v[lo]):
                _swap(v, ix, lo + 1, lo)
            i, j, pivot = lo + 1, hi, v[lo]
            while True:
                i += 1
                while _before(NAN_FIRST, pivot, v[i]):
                    i += 1
                j -= 1
                while _before(NAN_FIRST, v[j], pivot):
                    j -= 1
                if j < i:
                    break
                _swap(v, ix, i, j)
            _swap(v, ix, lo, j)
            if j <= target:
                lo = i
            if j >= target:
                hi = j - 1
        out[r] = ix[target]
    return out


@njit(cache=True, nogil=True)
def mode_rows(keys):
    """Position of each row's most frequent key as torch's mode kernel picks it: after std::sort by value, the
    last position in the first longest run of equal keys."""
    rows, n = keys.shape
    out = np.empty(rows, np.int64)
    v, ix = np.empty(n, keys.dtype), np.empty(n, np.int64)
    for r in range(rows):
        for j in range(n):
            v[j], ix[j] = keys[r, j], j
        _std_sort(LESS, v, ix, 0, n)
        best, run, longest = 0, 0, 0
        for i in range(n):
            run += 1
            if i == n - 1 or v[i] != v[i + 1]:
                if run > longest:
                    best, longest = ix[i], run
                run = 0
        out[r] = best
    return out


_guard_caches(globals())  # numgrad checks what Numba loads from its cache (loader._RecoveringCache)

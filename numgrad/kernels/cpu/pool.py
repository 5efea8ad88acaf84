"""Reused output buffers for large kernel results. A fresh 40 MB array costs ~10^4 page faults, more
than the arithmetic that fills it; the pool keeps the memory of the arrays it hands out and hands it out
again once every user of an array is gone.

The state is explicit and bounded:

- A *block* is a run of memory the pool owns (a memoryview of a byte array). It is either **free**, in
  `_free` under its size, or **leased**: `empty` wraps it in a new array and records a `_Lease` (a weak
  reference to that array) in `_leased`.
- Every view of the array, and every NumPy array exported from a tensor (`.numpy()`, `np.asarray`,
  a memoryview, a DLPack capsule), keeps the array itself alive: its `base` is a memoryview, not an
  ndarray, so NumPy's views stop collapsing their bases at it. The lease's callback therefore runs only
  once nothing can reach the memory, and puts the block on a queue (`_returned`); the next call of this
  module, under the lock, moves it back to `_free`. A block is never in `_free` and leased at once, and
  the lock makes taking one from `_free` atomic, so two threads never get the same memory.
- `reserved` (bytes of every block, free or leased) stays within the cap, `NUMGRAD_POOL_MAX_BYTES`
  (default 1 GiB; 0 turns the pool off; lowering it with `set_max_bytes` releases leased blocks above
  it as they come back). A new block that would not fit first makes room by releasing
  free blocks of other sizes (the sizes first pooled go first); if it still does not fit, the array is
  a plain, unpooled one.
"""
import collections
import os
import threading
import weakref

import numpy as np

MIN_BYTES = 1 << 20  # smaller arrays come from malloc's own free lists
DEFAULT_MAX_BYTES = 1 << 30
ENV = "NUMGRAD_POOL_MAX_BYTES"
ALIGN = 64  # blocks start on a cache line


def _cap_from_env():
    value = os.environ.get(ENV, "").strip()
    if not value:
        return DEFAULT_MAX_BYTES
    try:
        cap = int(value)
    except ValueError:
        raise ValueError(f"{ENV} must be a whole number of bytes (0 disables the buffer pool), got {value!r}")
    if cap < 0:
        raise ValueError(f"{ENV} must be a whole number of bytes (0 disables the buffer pool), got {value!r}")
    return cap


class _Lease(weakref.ref):
    """A weak reference to an array the pool handed out, with the block it wraps; its callback queues
    it for return once the array is gone."""
    __slots__ = ("block", "key")


_lock = threading.Lock()
_free = {}  # nbytes -> free blocks of that size (the last freed is handed out first)
_leased = {}  # id(array) -> _Lease of an array in use
_returned = collections.deque()  # leases whose arrays are gone; appended without the lock (any thread)
_counts = {"reserved": 0, "allocated": 0, "cap": _cap_from_env(), "hits": 0, "misses": 0, "releases": 0}


def _reinit_after_fork():
    global _lock
    _lock = threading.Lock()  # another thread of the parent may have held it


os.register_at_fork(after_in_child=_reinit_after_fork)


def _new_block(nbytes):
    raw = np.empty(nbytes + ALIGN, np.uint8)
    start = -raw.ctypes.data % ALIGN
    return memoryview(raw)[start:start + nbytes]


def _drain():
    """Under the lock: blocks whose arrays are gone become free (or are released above the cap)."""
    c = _counts
    while _returned:
        lease = _returned.popleft()
        if _leased.get(lease.key) is lease:
            del _leased[lease.key]
        block = lease.block
        c["allocated"] -= block.nbytes
        if c["reserved"] <= c["cap"]:
            _free.setdefault(block.nbytes, []).append(block)
        else:  # the cap was lowered while it was leased
            c["reserved"] -= block.nbytes
            c["releases"] += 1


def _make_room(nbytes):
    """Under the lock: whether a new block of `nbytes` fits under the cap, releasing free blocks of
    other sizes to make it fit."""
    c = _counts
    if nbytes > c["cap"]:
        return False
    for size in list(_free):
        blocks = _free[size]
        while blocks and c["reserved"] + nbytes > c["cap"]:
            blocks.pop(0)
            c["reserved"] -= size
            c["releases"] += 1
        if not blocks:
            del _free[size]
    return c["reserved"] + nbytes <= c["cap"]


def empty(n, dtype, shape=None):
    """An uninitialised flat array of `n` elements of `dtype`: pooled memory when it is large. With `shape`
    (of n elements) the array has that shape in C order and is still nobody's view (a reshaped flat array
    would be one, and the engine copies a gradient that is a view rather than keep it as a leaf's .grad)."""
    dtype = np.dtype(dtype)
    nbytes = n * dtype.itemsize
    if nbytes < MIN_BYTES:
        return np.empty(n if shape is None else shape, dtype)
    c = _counts
    with _lock:
        _drain()
        blocks = _free.get(nbytes)
        if blocks:
            block = blocks.pop()
            c["hits"] += 1
        else:
            c["misses"] += 1
            if not _make_room(nbytes):
                block = None
            else:
                block = _new_block(nbytes)
                c["reserved"] += nbytes
        if block is not None:
            arr = np.frombuffer(block, dtype, n)
            if shape is not None:
                try:  # the block cast to the shape: views of the array collapse to it (np.ndarray(buffer=)
                    #   would put a hidden array between, and views would outlive the lease)
                    arr = np.asarray(block.cast(dtype.char, tuple(shape)))
                except (TypeError, ValueError):  # a format memoryview lacks: flat, reshaped below
                    pass
            lease = _Lease(arr, _returned.append)
            lease.block, lease.key = block, id(arr)
            _leased[lease.key] = lease
            c["allocated"] += nbytes
            return arr if shape is None or arr.ndim == len(shape) else arr.reshape(shape)
    return np.empty(n if shape is None else shape, dtype)


def is_buffer(arr):
    """Whether `arr` is an array the pool handed out and still in use, itself and not a view of it."""
    lease = _leased.get(id(arr))
    return lease is not None and lease() is arr


def empty_cache():
    """Releases every pooled buffer that no tensor, view or exported array uses any more: its memory goes
    back to the system. Buffers in use stay and are released when they are freed, if called again."""
    with _lock:
        _drain()
        for size, blocks in _free.items():
            _counts["reserved"] -= size * len(blocks)
            _counts["releases"] += len(blocks)
        _free.clear()


def set_max_bytes(cap):
    """Sets the cap on pooled bytes (0 turns pooling off), releasing free buffers above it; returns the
    previous cap. The cap starts as NUMGRAD_POOL_MAX_BYTES says."""
    if cap < 0:
        raise ValueError(f"the pool's cap must be at least 0, got {cap}")
    with _lock:
        _drain()
        previous, _counts["cap"] = _counts["cap"], int(cap)
        for size in list(_free):
            blocks = _free[size]
            while blocks and _counts["reserved"] > cap:
                blocks.pop(0)
                _counts["reserved"] -= size
                _counts["releases"] += 1
            if not blocks:
                del _free[size]
    return previous


def memory_reserved():
    """Bytes of memory the pool holds: the buffers in use and the free ones."""
    with _lock:
        _drain()
        return _counts["reserved"]


def memory_allocated():
    """Bytes of the pool's buffers in use now: each buffer the pool handed out (a kernel result of at
    least MIN_BYTES) counts, in full, while any tensor, view of it or array exported from it (`.numpy()`)
    is alive. Arrays below MIN_BYTES, or made when the pool was full or off, are not counted."""
    with _lock:
        _drain()
        return _counts["allocated"]


def memory_stats():
    """The pool's state, a dict: `reserved` and `allocated` bytes (see memory_reserved and
    memory_allocated), `cap` (the most it may reserve), `hits` (requests served with a free buffer),
    `misses` (requests of at least MIN_BYTES that needed new memory), `releases` (buffers given back to
    the system: by empty_cache, to make room under the cap, or when the cap was lowered)."""
    with _lock:
        _drain()
        return dict(_counts)

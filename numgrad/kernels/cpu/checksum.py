"""Checksums of host memory in fixed pieces, the pieces spread over the threads (zlib's crc32 releases the
GIL on large buffers), so that numgrad.compile's check of what a trace left in memory costs half as long."""
import zlib

import numpy as np

from . import threads

PIECE = 1 << 18  # bytes per crc32: fixed, so that an array's checksum never depends on what it is batched with
THREADED_MIN = 2 * PIECE  # below this many bytes in all, handing pieces to a thread costs more than it saves


def _pieces(root):
    """The bytes of array `root` (C order) as PIECE-sized buffers."""
    flat = (root if root.flags.c_contiguous else np.ascontiguousarray(root)).reshape(-1).view(np.uint8)
    return [flat[s:s + PIECE] for s in range(0, max(flat.size, 1), PIECE)]


def _crcs(pieces):
    return [zlib.crc32(p) for p in pieces]


def checksums(roots):
    """One checksum (a tuple of crc32s) for each host array in `roots`."""
    per_root = [_pieces(r) for r in roots]
    pieces = [p for ps in per_root for p in ps]
    total = sum(p.size for p in pieces)
    parts = threads.count()
    if parts > 1 and total >= THREADED_MIN:
        # contiguous runs of pieces with about equal bytes, one per thread
        cuts, acc, share = [0], 0, total / parts
        for i, p in enumerate(pieces):
            acc += p.size
            if acc >= share * len(cuts) and len(cuts) < parts:
                cuts.append(i + 1)
        cuts.append(len(pieces))
        runs = threads.run([lambda a=a, b=b: _crcs(pieces[a:b]) for a, b in zip(cuts, cuts[1:]) if a < b])
        crcs = [c for run in runs for c in run]
    else:
        crcs = _crcs(pieces)
    out, k = [], 0
    for ps in per_root:
        out.append(tuple(crcs[k:k + len(ps)]))
        k += len(ps)
    return out

"""The buffer pool (numgrad/kernels/cpu/pool.py): a buffer is handed out again only once nothing uses it
(tensors, views, exported arrays), the cap (NUMGRAD_POOL_MAX_BYTES, 0 = off) holds, empty_cache gives the
memory back to the system, the statistics add up, and threads never share a buffer."""
import gc
import os
import subprocess
import sys
import threading

import numpy as np
import pytest

import numgrad
from numgrad.kernels.cpu import pool

N = pool.MIN_BYTES // 4 + 256  # float32 elements: just above the pooling threshold
NBYTES = N * 4


@pytest.fixture(autouse=True)
def fresh_pool():
    gc.collect()
    pool.empty_cache()
    previous = pool.set_max_bytes(pool.DEFAULT_MAX_BYTES)
    yield
    gc.collect()
    pool.set_max_bytes(previous)
    pool.empty_cache()


def _span(arr):
    start = arr.__array_interface__["data"][0]
    return start, start + arr.nbytes


def _overlaps(a, b):
    (a0, a1), (b0, b1) = _span(a), _span(b)
    return a0 < b1 and b0 < a1


def test_reuses_a_buffer_only_once_it_is_free():
    first = pool.empty(N, np.float32)
    second = pool.empty(N, np.float32)
    assert not _overlaps(first, second)  # first is still held here
    address = _span(first)[0]
    hits = pool.memory_stats()["hits"]
    del first
    third = pool.empty(N, np.float32)
    assert _span(third)[0] == address and pool.memory_stats()["hits"] == hits + 1
    assert pool.is_buffer(third) and not pool.is_buffer(third[1:])
    # a buffer of the same size in bytes serves another dtype
    del third
    other = pool.empty(N // 2, np.float64)
    assert _span(other)[0] == address and other.dtype == np.float64


# everything that can keep a buffer's memory reachable after the array itself is dropped
HOLDERS = {
    "slice": lambda a: a[3:],
    "reshape": lambda a: a.reshape(2, -1) if a.size % 2 == 0 else a[:, None],
    "dtype view": lambda a: a.view(np.int32),
    "view of a view": lambda a: a[1:][::2].reshape(-1)[1:],
    "memoryview": memoryview,
    "frombuffer": lambda a: np.frombuffer(a, np.uint8),
    "dlpack capsule": lambda a: a.__dlpack__(),
    "from_dlpack": lambda a: np.from_dlpack(a),
    "strided": lambda a: np.lib.stride_tricks.as_strided(a, (4,), (8,)),
}


@pytest.mark.parametrize("holder", HOLDERS, ids=list(HOLDERS))
def test_a_view_or_export_keeps_its_buffer_from_reuse(holder):
    arr = pool.empty(N, np.float32)
    held = HOLDERS[holder](arr)
    allocated, (start, stop) = pool.memory_allocated(), _span(arr)
    del arr
    gc.collect()
    assert pool.memory_allocated() == allocated  # still in use
    others = [pool.empty(N, np.float32) for _ in range(3)]
    assert not any(_span(o)[0] < stop and start < _span(o)[1] for o in others)
    del others, held
    gc.collect()
    assert pool.memory_allocated() == allocated - NBYTES  # released once the last holder went
    again = [pool.empty(N, np.float32) for _ in range(4)]
    assert any(_span(o)[0] == start for o in again)  # and handed out again


def test_exported_tensor_values_survive_later_ops():
    x = numgrad.tensor(np.linspace(0, 1, N, dtype=np.float32), requires_grad=True)
    y = x * 2 + 1
    exported, sliced = y.detach().numpy(), y.detach()[5:]
    expected = exported.copy()
    assert pool.is_buffer(exported) or pool.is_buffer(exported.base)  # the result's buffer is pooled
    del y
    gc.collect()
    z = [(x * k - 3).detach() for k in range(4)]  # new results while the export lives
    np.testing.assert_array_equal(exported, expected)
    np.testing.assert_array_equal(sliced.numpy(), expected[5:])
    assert not any(np.shares_memory(exported, t.numpy()) for t in z)
    (x * x).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * x.detach().numpy(), rtol=1e-6)


def test_statistics_add_up():
    before = pool.memory_stats()
    arrays = [pool.empty(N, np.float32) for _ in range(3)]
    stats = pool.memory_stats()
    assert stats["allocated"] == before["allocated"] + 3 * NBYTES
    assert stats["reserved"] >= stats["allocated"] and stats["misses"] >= before["misses"] + 3
    assert stats["cap"] == pool.DEFAULT_MAX_BYTES
    del arrays[0]
    assert pool.memory_allocated() == before["allocated"] + 2 * NBYTES
    assert pool.memory_reserved() == stats["reserved"]  # the freed buffer is kept for reuse
    small = pool.empty(10, np.float32)  # below MIN_BYTES: plain NumPy memory, not counted
    assert not pool.is_buffer(small) and pool.memory_allocated() == before["allocated"] + 2 * NBYTES
    assert numgrad.memory_stats() == pool.memory_stats()
    assert numgrad.memory_allocated() == pool.memory_allocated()
    assert numgrad.memory_reserved() == pool.memory_reserved()


def test_empty_cache_releases_free_buffers_only():
    kept = pool.empty(N, np.float32)
    dropped = [pool.empty(N, np.float32) for _ in range(3)]
    reserved, releases = pool.memory_reserved(), pool.memory_stats()["releases"]
    del dropped
    assert pool.memory_reserved() == reserved
    assert numgrad.empty_cache() is None
    assert pool.memory_reserved() == reserved - 3 * NBYTES == pool.memory_allocated()
    assert pool.memory_stats()["releases"] == releases + 3
    kept[:] = 1  # still valid
    allocated = pool.memory_allocated()
    del kept
    numgrad.empty_cache()
    assert pool.memory_reserved() == pool.memory_allocated() == allocated - NBYTES


@pytest.mark.parametrize("cap", [0, 3 * NBYTES + 100])
def test_the_cap_holds(cap):
    pool.set_max_bytes(cap)
    room = max(0, cap - pool.memory_reserved())  # arrays other tests left alive may hold some
    arrays = [pool.empty(N, np.float32) for _ in range(6)]
    stats = pool.memory_stats()
    assert stats["cap"] == cap and stats["reserved"] <= cap
    assert sum(pool.is_buffer(a) for a in arrays) == room // NBYTES  # the rest are plain arrays
    for i, a in enumerate(arrays):
        a[:] = i
    assert all((a == i).all() for i, a in enumerate(arrays))
    # a new size makes room by releasing free buffers of other sizes
    del arrays
    big = pool.empty(2 * N, np.float32)
    assert pool.is_buffer(big) == (room >= 2 * NBYTES)
    assert pool.memory_reserved() <= cap
    # results are right with the pool off or full
    x = numgrad.tensor(np.arange(2 * N, dtype=np.float32), requires_grad=True)
    (x * 3 + 1).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.full(2 * N, 3, np.float32))


def test_lowering_the_cap_releases_buffers_as_they_come_back():
    arrays = [pool.empty(N, np.float32) for _ in range(3)]
    pool.set_max_bytes(NBYTES)
    assert pool.memory_reserved() == 3 * NBYTES  # in use: not taken away
    del arrays
    assert pool.memory_reserved() <= NBYTES


_ENV_PROBE = "import numgrad; print(numgrad.memory_stats()['cap'])"


@pytest.mark.parametrize("value, cap", [(None, 1 << 30), ("0", 0), (" 5000000 ", 5000000)])
def test_the_cap_comes_from_the_environment(value, cap):
    env = {k: v for k, v in os.environ.items() if k != pool.ENV}
    if value is not None:
        env[pool.ENV] = value
    out = subprocess.run([sys.executable, "-c", _ENV_PROBE], env=env, capture_output=True, text=True, check=True)
    assert int(out.stdout) == cap


def test_a_bad_cap_in_the_environment_says_what_is_wrong():
    env = dict(os.environ, **{pool.ENV: "1GB"})
    out = subprocess.run([sys.executable, "-c", _ENV_PROBE], env=env, capture_output=True, text=True)
    assert out.returncode != 0 and "NUMGRAD_POOL_MAX_BYTES must be a whole number of bytes" in out.stderr


_RSS_PROBE = """
import gc, os, numpy as np, numgrad
def rss():
    return int(open("/proc/self/statm").read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
x = numgrad.tensor(np.ones(16 << 20, np.float32))  # 64 MiB per result: allocated with mmap, freed with munmap
(x + x).numpy()  # loads the kernel first
gc.collect()
numgrad.empty_cache()
base = rss()
ys = [x + x for k in range(6)]
for y in ys:
    y.numpy()  # computes it
del ys, y
gc.collect()
held, reserved = rss() - base, numgrad.memory_reserved()
numgrad.empty_cache()
print(held >> 20, reserved >> 20, (rss() - base) >> 20, numgrad.memory_reserved() >> 20)
"""


def test_empty_cache_gives_the_memory_back_to_the_system():
    out = subprocess.run([sys.executable, "-c", _RSS_PROBE], capture_output=True, text=True, check=True)
    held, reserved, after, reserved_after = map(int, out.stdout.split())
    assert reserved == 6 * 64 and held >= 6 * 64 - 16  # the pool kept them (resident)
    assert reserved_after == 0 and after <= 16


def test_threads_never_share_a_buffer():
    workers, rounds = 6, 150
    barrier = threading.Barrier(workers)
    errors = []

    def work(tag):
        try:
            barrier.wait()
            held = []
            for r in range(rounds):
                arr = pool.empty(N, np.float32)
                arr[:] = tag * 1000 + r
                held.append((arr, tag * 1000 + r))
                if len(held) > 2:  # keep a few alive while the others allocate
                    old, value = held.pop(0)
                    if not (old == value).all():
                        errors.append(f"thread {tag}: buffer overwritten")
                        return
        except Exception as e:  # pragma: no cover - reported below
            errors.append(repr(e))

    before = pool.memory_stats()
    threads = [threading.Thread(target=work, args=(t,)) for t in range(workers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    stats = pool.memory_stats()
    assert stats["hits"] > before["hits"] and stats["allocated"] == before["allocated"]


def test_threads_running_large_fused_ops_get_right_results():
    workers, rounds = 4, 8
    data = np.random.default_rng(0).standard_normal((workers, 2 * N)).astype(np.float32)
    errors = []

    def work(i):
        try:
            for r in range(rounds):
                x = numgrad.tensor(data[i], requires_grad=True)
                y = (x * (i + 1) + r).sin() * x
                y.sum().backward()
                ref = np.sin(data[i] * (i + 1) + r) * data[i]
                grad = np.cos(data[i] * (i + 1) + r) * (i + 1) * data[i] + np.sin(data[i] * (i + 1) + r)
                np.testing.assert_allclose(y.detach().numpy(), ref, rtol=1e-4, atol=1e-5)
                np.testing.assert_allclose(x.grad.numpy(), grad, rtol=1e-4, atol=1e-4)
        except Exception as e:
            errors.append(f"thread {i}: {e!r}")

    threads = [threading.Thread(target=work, args=(i,)) for i in range(workers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []

"""glibc malloc's fixed thresholds (kernels/cpu/host_memory.py): freed arrays are reused without page faults,
the environment can turn it off, and empty_cache gives the heap's free memory back."""
import os
import subprocess
import sys
import textwrap

import pytest

from numgrad.kernels.cpu import host_memory

pytestmark = pytest.mark.skipif(host_memory._glibc() is None, reason="malloc's thresholds are glibc's")

# four 2 MiB arrays written and freed: glibc, adapting on its own, gives the freed top of its heap back each
# time (more than twice the largest mmapped chunk it has seen), so the next round faults every page in again.
# The probe prints whether malloc was tuned, the page faults of a round and the heap's releasable top
# (mallinfo2's keepcost: what stays for the next round; with transparent huge pages the fault count alone
# could not tell the two apart)
PROBE = textwrap.dedent("""
    import ctypes, resource, numpy as np
    import numgrad
    from numgrad.kernels.cpu import host_memory

    class Mallinfo2(ctypes.Structure):
        _fields_ = [(name, ctypes.c_size_t) for name in ("arena", "ordblks", "smblks", "hblks", "hblkhd",
                                                           "usmblks", "fsmblks", "uordblks", "fordblks", "keepcost")]

    libc = host_memory._glibc()
    mallinfo2 = getattr(libc, "mallinfo2", None)  # glibc 2.33 on; before it the top's size is unknown (-1)
    if mallinfo2 is not None:
        mallinfo2.restype = Mallinfo2

    def round_of_arrays():
        held = [np.empty(2 << 20, np.uint8) for _ in range(4)]
        for a in held:
            a.fill(1)

    for _ in range(5):
        round_of_arrays()
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    for _ in range(20):
        round_of_arrays()
    faults = (resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before) // 20
    print(host_memory.tuned(), faults, -1 if mallinfo2 is None else mallinfo2().keepcost)
""")


def _probe(**env):
    """(tuned, page faults a round, the heap's releasable top in bytes) in a new process with `env`."""
    full = {k: v for k, v in os.environ.items() if not k.startswith("MALLOC_") and k != host_memory.ENV}
    full.update(env)
    out = subprocess.run([sys.executable, "-c", PROBE], env=full, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    tuned, faults, kept = out.stdout.split()
    return tuned == "True", int(faults), int(kept)


def test_freed_arrays_stay_in_the_heap_and_are_reused_without_page_faults():
    tuned, faults, kept = _probe()
    assert tuned
    assert kept == -1 or kept >= 8 << 20  # the round's four arrays, freed at the heap's top, wait for the next
    assert faults < 64  # 2 048 pages a round when glibc trims its heap (below)


def test_untuned_malloc_gives_the_freed_arrays_back():
    # what the tuning is for, shown on this machine's glibc: the freed top is trimmed every round (and, without
    # transparent huge pages, each round faults its 2 048 pages in again)
    tuned, faults, kept = _probe(NUMGRAD_MALLOC_TUNING="0")
    assert not tuned
    if kept == -1:  # a glibc without mallinfo2: the faults show it
        assert faults > 1000
    else:
        assert kept < 8 << 20, (kept, faults)


@pytest.mark.parametrize("env", [{"MALLOC_MMAP_THRESHOLD_": "131072"}, {"MALLOC_TRIM_THRESHOLD_": "131072"}])
def test_glibc_settings_in_the_environment_win(env):
    tuned, _, _ = _probe(**env)
    assert not tuned


def test_a_bad_setting_is_refused():
    full = dict(os.environ, NUMGRAD_MALLOC_TUNING="yes")
    out = subprocess.run([sys.executable, "-c", "import numgrad"], env=full, capture_output=True, text=True,
                         timeout=120)
    assert out.returncode != 0
    assert "ValueError: NUMGRAD_MALLOC_TUNING must be 0 (leave malloc as it is) or 1, got 'yes'" in out.stderr


def test_empty_cache_gives_the_heaps_free_memory_back():
    source = textwrap.dedent("""
        import numpy as np
        import numgrad

        def resident():
            with open("/proc/self/statm") as f:
                return int(f.read().split()[1]) * 4096

        held = [np.ones(1 << 20, np.uint8) for _ in range(48)]  # below the mmap threshold: in the heap
        keep = np.ones(16, np.uint8)  # above them: the heap's top cannot simply shrink past it
        del held
        before = resident()
        numgrad.empty_cache()
        print(before - resident())
    """)
    out = subprocess.run([sys.executable, "-c", source], capture_output=True, text=True, timeout=120,
                         env={k: v for k, v in os.environ.items() if k != host_memory.ENV})
    assert out.returncode == 0, out.stderr
    assert int(out.stdout) > 32 << 20

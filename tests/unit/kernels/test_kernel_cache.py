"""The kernel disk cache (numgrad/kernels/loader.py) trusts nothing it reads: a kernel file is run only when its
bytes are the generated source, anything else is rewritten atomically; a directory that is not writable,
belongs to another user or that others can write to is replaced by a private temporary one with one warning.

Each test points NUMGRAD_CACHE_DIR at its own directory and gets a fresh directory state (loader._DIRS), so
nothing carries over between tests; process-wide behaviour (one warning per process, two processes at once,
Numba's on-disk cache) is checked in subprocesses."""
import importlib.util
import os
import pathlib
import py_compile
import shutil
import stat
import subprocess
import sys
import time
import uuid
import warnings

import numpy as np
import pytest

from numgrad.kernels import loader

ROOT = hasattr(os, "geteuid") and os.geteuid() == 0


@pytest.fixture
def cache(tmp_path, monkeypatch):
    """A cache directory for this test alone, and a fresh directory state; test modules leave sys.modules."""
    path = tmp_path / "cache"
    monkeypatch.setenv("NUMGRAD_CACHE_DIR", str(path))
    dirs = loader._CacheDirs()
    monkeypatch.setattr(loader, "_DIRS", dirs)
    before = set(sys.modules)
    yield path
    for name in set(sys.modules) - before:
        if name.startswith("numgrad_k_cachetest_"):
            del sys.modules[name]
    if dirs.fallback:
        shutil.rmtree(dirs.fallback)


def _source():
    """A kernel source no other test (or earlier run) has loaded: kernel(x) = 2 * x + 1."""
    return (f"# cache test {uuid.uuid4().hex}\nfrom numba import njit\n\n\n@njit(cache=True)\n"
            "def kernel(x):\n    return 2.0 * x + 1.0\n")


def _file(directory, source):
    return directory / (loader.module_name("cachetest", source) + ".py")


def _load(source):
    return loader.load_module("cachetest", source).kernel(3.0)


def test_a_new_directory_is_private(cache):
    target = cache / "deeper"
    os.environ["NUMGRAD_CACHE_DIR"] = str(target)  # restored by the fixture's monkeypatch
    source = _source()
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        assert _load(source) == 7.0
    assert not [w for w in record if "kernel cache" in str(w.message)]
    assert stat.S_IMODE(target.stat().st_mode) == 0o700
    assert stat.S_IMODE((target / "__pycache__").stat().st_mode) == 0o700  # before Numba makes it
    assert _file(target, source).read_text() == source
    assert not [p for p in target.iterdir() if p.name.endswith(".tmp") or p.name.startswith(".numgrad-probe")]


PLANT = "import pathlib\npathlib.Path({marker!r}).write_text('ran')\n"


@pytest.mark.parametrize("damage", ["edited", "truncated", "garbage", "empty", "planted"])
def test_a_damaged_kernel_file_is_rewritten_and_never_run(cache, tmp_path, damage):
    source = _source()
    marker = tmp_path / "marker"
    content = {
        "edited": source.replace("2.0 * x", "3.0 * x").encode(),  # valid Python, another result
        "truncated": source.encode()[:len(source) // 2],
        "garbage": bytes(range(256)) * 3,  # not even UTF-8
        "empty": b"",
        "planted": (PLANT.format(marker=str(marker)) + source).encode(),  # the right kernel, plus a side effect
    }[damage]
    cache.mkdir(mode=0o700)
    _file(cache, source).write_bytes(content)
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        assert _load(source) == 7.0
    assert not [w for w in record if "kernel cache" in str(w.message)]
    assert _file(cache, source).read_text() == source
    assert not marker.exists()


def test_a_planted_pyc_never_runs(cache, tmp_path):
    """Python's import would run __pycache__/<name>.pyc when its header matches the source's mtime and size;
    the loader compiles the verified source itself."""
    source = _source() + "# " + "-" * 400 + "\n"  # room for the planted code in the same size
    marker = tmp_path / "marker"
    evil = PLANT.format(marker=str(marker)) + "def kernel(x):\n    return -1.0\n"
    evil = evil + "#" * (len(source) - len(evil) - 1) + "\n"
    assert len(evil) == len(source)
    cache.mkdir(mode=0o700)
    path = _file(cache, source)
    path.write_text(evil)
    pyc = py_compile.compile(str(path), cfile=importlib.util.cache_from_source(str(path)), doraise=True)
    stamp = path.stat()
    path.write_text(source)
    os.utime(path, ns=(stamp.st_atime_ns, stamp.st_mtime_ns))  # the .pyc's header now matches the real source
    assert os.path.exists(pyc)
    assert _load(source) == 7.0
    assert not marker.exists()


def _fallback_warning(record, reason):
    ours = [w for w in record if "kernel cache" in str(w.message)]  # not Numba's own, if any
    assert len(ours) == 1, [str(w.message) for w in record]
    message = str(ours[0].message)
    assert ours[0].category is UserWarning
    assert "NUMGRAD_CACHE_DIR" in message and reason in message and loader._DIRS.fallback in message
    return message


def _loads_in_fallback(sources):
    for source in sources:
        assert _load(source) == 7.0
    fallback = loader._DIRS.fallback
    assert fallback and stat.S_IMODE(os.stat(fallback).st_mode) == 0o700
    for source in sources:
        assert _file(pathlib.Path(fallback), source).read_text() == source


@pytest.mark.parametrize("how", ["parent is a file", "read-only directory"])
def test_an_unwritable_directory_falls_back_with_one_warning(cache, how):
    if how == "parent is a file":  # unwritable even for root
        cache.write_text("not a directory")
        target = cache / "kernels"
        os.environ["NUMGRAD_CACHE_DIR"] = str(target)
        reason = "cannot be created"
    else:
        if ROOT:
            pytest.skip("root writes into a directory whatever its mode, so a read-only directory cannot be "
                        "provoked (the parent-is-a-file case covers the fallback as root)")
        cache.mkdir(mode=0o500)
        target = cache
        reason = "not writable"
    sources = [_source(), _source()]
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        _loads_in_fallback(sources)
        assert loader.cache_dir() == loader._DIRS.fallback
    message = _fallback_warning(record, reason)
    assert str(target) in message


@pytest.mark.parametrize("where, mode", [(".", 0o770), (".", 0o707), (".", 0o1777), ("__pycache__", 0o777)])
def test_a_directory_others_can_write_is_refused(cache, where, mode):
    source = _source()
    marker = cache.parent / "marker"
    (cache / "__pycache__").mkdir(parents=True)
    _file(cache, source).write_text(PLANT.format(marker=str(marker)) + source)
    os.chmod(cache / where, mode)
    try:
        with warnings.catch_warnings(record=True) as record:
            warnings.simplefilter("always")
            _loads_in_fallback([source])
        _fallback_warning(record, "writable by other users")
        assert not marker.exists()
    finally:
        os.chmod(cache / where, 0o700)


@pytest.mark.skipif(not ROOT, reason="only root can give a directory to another user")
def test_a_directory_of_another_user_is_refused(cache):
    cache.mkdir(mode=0o700)
    os.chown(cache, 65534, 65534)
    source = _source()
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        _loads_in_fallback([source])
    _fallback_warning(record, "belongs to another user")
    assert not _file(cache, source).exists()


def test_a_failed_write_after_the_checks_falls_back(cache, monkeypatch):
    """A directory that passed its checks but then cannot take a file (full, removed, ...) also falls back."""
    real_write, calls = loader._write, []

    def failing_once(path, data):
        calls.append(path)
        if len(calls) == 1:
            raise OSError(28, "No space left on device")
        real_write(path, data)

    monkeypatch.setattr(loader, "_write", failing_once)
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        _loads_in_fallback([_source(), _source()])
    _fallback_warning(record, "No space left on device")
    assert calls[0].startswith(str(cache)) and all(c.startswith(loader._DIRS.fallback) for c in calls[1:])


# ---- Numba's index: a signature mapped to another signature's machine code

SCALED = "import numpy as np\nfrom numba import njit\n\n\n@njit(cache=True)\ndef kernel(x, s):\n    return x.sum() * s\n"


def _fresh_kernel(source):
    """The kernel of `source` as a new process would see it: a new dispatcher (no overloads in memory) over
    the same file, so the same Numba cache."""
    name = loader.module_name("cachetest", source)
    sys.modules.pop(name, None)
    return loader.load_module("cachetest", source).kernel


def test_an_overload_filed_under_another_signature_is_compiled_again(cache):
    """Two processes saving two signatures of one kernel at once can both take the same data file: Numba's
    index is read, changed and written without a lock. Its index then maps one signature to the other's
    code, which Numba loads without looking (a float scale ran int64 code: 0.5 became 0)."""
    from numba import types
    source = f"# cache test {uuid.uuid4().hex}\n" + SCALED
    x = np.arange(10.0)
    first = _fresh_kernel(source)
    assert first(x, 2) == 90.0  # compiled for (float64[::1], int64) and saved
    cache_file = first._cache._cache_file
    (key, data_name), = cache_file._load_index().items()
    as_float = (types.Array(types.float64, 1, "C"), types.float64)
    cache_file._save_index({key: data_name, (as_float,) + key[1:]: data_name})  # what the lost update leaves
    second = _fresh_kernel(source)
    assert second(x, 0.5) == 22.5 and second(x, 2) == 90.0
    index = cache_file._load_index()
    assert len(index) == 2 and len(set(index.values())) == 2  # each signature has a data file of its own
    third = _fresh_kernel(source)  # both now load from the cache, each its own code
    assert third(x, 0.5) == 22.5 and third(x, 2) == 90.0
    assert sum(third._cache_hits.values()) == 2 and not third._cache_misses


def test_the_packages_own_kernels_check_what_they_load():
    """The same check for the njit functions numgrad ships (compiled on a new machine by whichever processes
    first need them, pytest-xdist's workers among them)."""
    from numba.core.registry import CPUDispatcher
    from numgrad.kernels.cpu import loss, norm, scalar_math, scatter
    dispatchers = [v for m in (loss, norm, scalar_math, scatter) for v in vars(m).values()
                   if isinstance(v, CPUDispatcher) and v._cache.__class__.__name__ != "NullCache"]
    assert len(dispatchers) >= 20
    assert all(type(d._cache) is loader._RecoveringCache for d in dispatchers)


# ---- whole processes: numgrad's own kernels, Numba's on-disk cache, one warning per process

MUL = ("import numgrad as t; t.set_fusion(False); x = t.tensor([1., 2., 3.]); "
       "print((x * x).tolist(), (x * 2 + 1).tolist())")
EXPECTED = "[1.0, 4.0, 9.0] [3.0, 5.0, 7.0]"


def _run(directory, code=MUL, **env):
    env = dict(os.environ, NUMGRAD_CACHE_DIR=str(directory), **env)
    out = subprocess.run([sys.executable, "-W", "always::UserWarning", "-c", code], env=env, check=False,
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    return out


def test_damaged_files_of_real_kernels_across_processes(tmp_path):
    cache = tmp_path / "cache"
    first = _run(cache)  # compiles, and Numba caches the machine code next to the files
    assert first.stdout.strip() == EXPECTED and "UserWarning" not in first.stderr
    kernels = sorted(cache.glob("numgrad_k_*.py"))
    mul = [p for p in kernels if p.name.startswith("numgrad_k_mul_float32_")]
    assert mul and all(" * " in p.read_text() for p in mul)
    for p in mul:  # still valid Python, but adds: trusted, it would print [2.0, 4.0, 6.0]
        p.write_text(p.read_text().replace(" * ", " + "))
    second = _run(cache)
    assert second.stdout.strip() == EXPECTED and "UserWarning" not in second.stderr
    originals = {p: p.read_bytes() for p in kernels}
    for p in kernels:
        p.write_bytes(originals[p][:len(originals[p]) // 3])
    third = _run(cache)
    assert third.stdout.strip() == EXPECTED and "Error" not in third.stderr
    assert {p: p.read_bytes() for p in kernels} == originals


@pytest.mark.parametrize("damage", ["truncated", "garbage"])
def test_damaged_numba_cache_files_are_compiled_again(tmp_path, damage):
    """Numba raises its unpickling error for a damaged index or data file in every process; numgrad's CPU
    kernels compile again and rewrite them."""
    cache = tmp_path / "cache"
    assert _run(cache).stdout.strip() == EXPECTED
    numba_files = sorted(cache.glob("__pycache__/numgrad_k_*.nb[ic]"))
    assert {p.suffix for p in numba_files} == {".nbi", ".nbc"}
    for kind in (".nbc", ".nbi"):  # the data files alone, then the index files too
        for p in numba_files:
            if p.suffix == kind:
                p.write_bytes(p.read_bytes()[:10] if damage == "truncated" else b"\x80garbage" * 10)
        for _ in range(2):
            out = _run(cache)
            assert out.stdout.strip() == EXPECTED and "Error" not in out.stderr, out.stderr
    assert all(p.stat().st_size > 100 for p in numba_files)


def test_one_warning_per_process_for_many_kernels(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    out = _run(blocker / "cache", MUL + "; print(t.exp(x).sum().item() > 0, (x - 1).abs().tolist())")
    assert out.stdout.strip().splitlines() == [EXPECTED, "True [0.0, 1.0, 2.0]"]
    assert out.stderr.count("UserWarning") == 1 and str(blocker / "cache") in out.stderr, out.stderr


RACE = """
import os, sys, time
import numgrad as t
open(sys.argv[1], "w").close()
while not os.path.exists(sys.argv[2]):
    time.sleep(0.005)
t.set_fusion(False)
x = t.tensor([1., 2., 3.])
print(((x * 3 - 1).exp() / 7).tolist())
"""


def test_two_processes_compile_the_same_new_kernel_at_once(tmp_path):
    cache, go = tmp_path / "cache", tmp_path / "go"
    env = dict(os.environ, NUMGRAD_CACHE_DIR=str(cache))
    ready = [tmp_path / f"ready{i}" for i in range(2)]
    procs = [subprocess.Popen([sys.executable, "-W", "always::UserWarning", "-c", RACE, str(r), str(go)], env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for r in ready]
    try:
        while not all(r.exists() for r in ready):  # both imported numgrad: start them together
            assert all(p.poll() is None for p in procs), [p.communicate() for p in procs]
            time.sleep(0.01)
        go.write_text("")
        results = [p.communicate(timeout=300) for p in procs]
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
    assert [p.returncode for p in procs] == [0, 0], [err for _, err in results]
    assert results[0][0] == results[1][0] and results[0][0].startswith("[")
    assert not any("kernel cache" in err for _, err in results), [err for _, err in results]
    assert not [p.name for p in cache.iterdir() if p.name.endswith(".tmp")]
    assert _run(cache, RACE.replace("sys.argv[1]", "os.devnull").replace("sys.argv[2]", "os.devnull"),
                ).stdout == results[0][0]

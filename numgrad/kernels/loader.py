"""Loads generated kernel source as a module from a content-hashed file, so Numba's cache=True works.

The cache directory is not trusted blindly:

- A kernel file is used only when its bytes are exactly the source that numgrad generated (the file name
  carries a digest of that source; the comparison is with the whole source, which is stronger than any
  digest). Anything else (edited, truncated, garbage, a planted file of the same name) is rewritten, and
  its contents are never executed: the module runs the verified bytes, compiled here, so neither a change
  to the file after the check nor a planted `__pycache__/*.pyc` is ever run.
- A file is written atomically (a unique temporary file, then a rename), so a process never sees half a
  file and two processes that write the same kernel at once both succeed.
- Numba's own cache (`__pycache__/*.nbi`, `*.nbc`) lies in the same directory, and Numba unpickles those
  files (the index before it even compares its stamp with the source file's hash): a planted one runs
  its code, and we cannot verify them. The defence is the directory itself: it is created with mode 0700
  (its `__pycache__` too), and a directory (or `__pycache__`) that belongs to another user or that other
  users can write to is refused. (NUMBA_CACHE_DIR, if set, sends Numba's files elsewhere, outside these
  checks; ACLs are not inspected.) Damage short of planting (a truncated or garbage index or data file,
  which Numba would report as an unpickling error in every process) makes a CPU kernel compile again
  and rewrite its Numba cache (_RecoveringCache).
- Numba's index is a read-modify-write without a lock: two processes saving two signatures of one function
  at once (two pytest-xdist workers, DataLoader workers, MPI ranks on a new machine) can both pick the same
  data file, and the index then maps one signature to the other's machine code. Numba loads it without
  looking: a float scale ran int64 code and 0.5 became 0. _RecoveringCache checks that a loaded overload
  is the signature asked for, and otherwise drops that index entry and compiles again. Every CPU
  dispatcher of numgrad gets it (guard_caches): generated kernels when loaded, the package's own njit
  modules after their definitions.
- A directory that cannot be used (refused, not creatable, not writable: checked with a real write, so
  that it also holds for root) is replaced by one private temporary directory (mode 0700) for the rest of
  the process, announced by a single UserWarning.
"""
import atexit
import contextlib
import hashlib
import importlib.util
import os
import shutil
import stat
import sys
import tempfile
import threading
import warnings

from numba.core import sigutils
from numba.core.caching import FunctionCache
from numba.core.registry import CPUDispatcher


def _configured_dir():
    return os.environ.get("NUMGRAD_CACHE_DIR") or os.path.join(os.path.expanduser("~"), ".cache", "numgrad")


def _problem(path):
    """Why `path` cannot hold kernel files, or None when it can. Creates it (mode 0700) when missing."""
    try:
        os.makedirs(path, mode=0o700, exist_ok=True)
    except OSError as e:
        return f"it cannot be created: {e}"
    pycache = os.path.join(path, "__pycache__")
    for directory in (path, pycache):
        try:
            st = os.stat(directory)
        except FileNotFoundError:
            continue  # no __pycache__ yet: made below, inside the checked directory
        except OSError as e:
            return f"{directory} cannot be inspected: {e}"
        if not stat.S_ISDIR(st.st_mode):
            return f"{directory} is not a directory"
        if hasattr(os, "geteuid") and st.st_uid != os.geteuid():
            return f"{directory} belongs to another user (uid {st.st_uid})"
        if st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
            return f"{directory} is writable by other users (mode {oct(stat.S_IMODE(st.st_mode))})"
    try:
        # made here with mode 0700 before Numba makes it with the umask's mode (0775 under umask 002)
        os.makedirs(pycache, mode=0o700, exist_ok=True)
        for directory in (path, pycache):  # a real write: root writes through a read-only mode
            fd, probe = tempfile.mkstemp(dir=directory, prefix=".numgrad-probe-")
            os.close(fd)
            os.remove(probe)
    except OSError as e:
        return f"it is not writable: {e}"
    return None


class _CacheDirs:
    """Where kernel files go: the configured directory (NUMGRAD_CACHE_DIR, read again on every call, else
    ~/.cache/numgrad) once it has passed `_problem`'s checks (once per directory and process: a directory
    that passed is this user's and only this user can change its mode), or else one private temporary
    directory for the rest of the process. Used under _LOADING."""

    def __init__(self):
        self.usable = {}  # configured path -> the directory used for it
        self.fallback = None
        self.warned = False

    def get(self):
        configured = _configured_dir()
        path = self.usable.get(configured)
        if path is None:
            problem = _problem(configured)
            path = os.path.abspath(configured) if problem is None else self._fall_back(configured, problem)
            self.usable[configured] = path
        return path

    def give_up(self, directory, problem):
        """`directory` failed after its checks (a write into it failed): its users go to the fallback."""
        if directory == self.fallback:
            return False
        for configured, path in list(self.usable.items()):
            if path == directory:
                self._fall_back(configured, problem)
        return True

    def _fall_back(self, configured, problem):
        if self.fallback is None:
            self.fallback = tempfile.mkdtemp(prefix="numgrad-kernels-")  # mode 0700, this user's
            atexit.register(_remove, self.fallback, os.getpid())  # nothing in it outlives the process
        self.usable[configured] = self.fallback
        if not self.warned:
            self.warned = True
            warnings.warn(f"numgrad: not using the kernel cache directory {configured!r}: {problem}. Kernels "
                          f"are compiled into the private temporary directory {self.fallback!r} for the rest of "
                          "this process, so the next process compiles them again. Set NUMGRAD_CACHE_DIR to a "
                          "directory that only you can write to.", UserWarning, stacklevel=2)
        return self.fallback


def _remove(directory, pid):
    if os.getpid() == pid:  # not in a forked child that exits through atexit: the directory is its parent's
        shutil.rmtree(directory, ignore_errors=True)


_DIRS = _CacheDirs()
_LOADING = threading.RLock()


def cache_dir():
    """The directory kernel files go to (see _CacheDirs)."""
    with _LOADING:
        return _DIRS.get()


def file_digest(path):
    """A digest of a helper module: Numba's cache does not notice when an inlined helper changes, so a
    target's helpers' digest is part of every generated source (and of its file name)."""
    with open(path, "rb") as f:
        return hashlib.sha1(f.read()).hexdigest()[:12]


def module_name(readable_name, source):
    """The module (and file) name of a kernel: its readable name and a digest of its source."""
    return f"numgrad_k_{readable_name}_{hashlib.sha1(source.encode()).hexdigest()[:16]}"


def load_module(readable_name, source):
    """Writes `source` to a file named by its content hash and imports it, so Numba's cache=True
    (which cannot cache functions made with exec) finds the compiled code in the next process."""
    name = module_name(readable_name, source)
    with _LOADING:  # another thread must never see a module that is still being executed
        if name not in sys.modules:
            sys.modules[name] = _import(name, source)
    return sys.modules[name]


def _holds(path, data):
    """Whether the file at `path` is exactly `data` (a missing or unreadable file is not)."""
    try:
        with open(path, "rb") as f:
            return f.read(len(data) + 1) == data
    except OSError:
        return False


def _write(path, data):
    """Atomically: a unique temporary file (mode 0600) renamed over `path`, so a reader sees the whole old
    file or the whole new one, and concurrent writers of the same (identical) file all succeed."""
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), prefix=os.path.basename(path) + ".", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.remove(tmp)
        raise


def _import(name, source):
    data = source.encode()
    while True:
        directory = _DIRS.get()
        path = os.path.join(directory, name + ".py")
        if _holds(path, data):
            break
        try:
            _write(path, data)  # missing, or anything but the source: (re)written, never run
            break
        except OSError as e:
            if not _DIRS.give_up(directory, f"writing {name}.py failed: {e}"):
                raise  # the private fallback directory itself failed
    if os.environ.get("NUMGRAD_DEBUG"):
        print(f"# ---- numgrad kernel {name} ({path})\n{source}", file=sys.stderr)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    # the verified bytes run, not the file read again (nor its .pyc); the file name is the code's
    # co_filename, which Numba's cache locates (and stamps with the file's hash, equal to these bytes')
    exec(compile(data, path, "exec", dont_inherit=True), module.__dict__)  # noqa: S102 (verified source)
    guard_caches(vars(module))
    return module


class _RecoveringCache(FunctionCache):
    """Numba's cache of a CPU kernel, except that an index or data file it cannot read (truncated, garbage:
    Numba would raise the unpickling error in every process, forever) is reset to an empty index, and an
    overload whose signature is not the one asked for (another signature's data file, after two processes
    saved at once) is dropped from the index: either way the kernel compiles again and its cache is
    rewritten."""

    def load_overload(self, sig, target_context):
        try:
            cres = super().load_overload(sig, target_context)
        except Exception:  # noqa: BLE001 (whatever the damage, compiling again is the cure)
            self.flush()  # an empty index, written atomically; saving the new overload reads it back
            return None
        if cres is not None and tuple(cres.signature.args) != tuple(sigutils.normalize_signature(sig)[0]):
            self._forget(sig, target_context)
            return None
        return cres

    def _forget(self, sig, target_context):
        """Drops `sig`'s index entry, so that saving its own overload takes a data file of its own (the
        entry's file holds another signature's code, which another entry may still name)."""
        key = self._index_key(sig, target_context.codegen())
        cache_file = self._cache_file
        overloads = cache_file._load_index()
        if overloads.pop(key, None) is not None:
            cache_file._save_index(overloads)


def guard_caches(namespace):
    """Gives the cached njit functions of a module's namespace (its globals()) numgrad's checks of Numba's
    cache (_RecoveringCache): generated kernels when loaded, the package's own kernel modules after their
    definitions."""
    for value in list(namespace.values()):
        if isinstance(value, CPUDispatcher) and type(getattr(value, "_cache", None)) is FunctionCache:
            value._cache.__class__ = _RecoveringCache  # same state, more checks


_modules = {}


def cached(key, readable_name, source_fn):
    """The module for `key` (a hashable description such as a fused program's key): a key seen before
    finds its module without generating any source."""
    module = _modules.get(key)
    if module is None:
        module = _modules[key] = load_module(readable_name, source_fn())
    return module

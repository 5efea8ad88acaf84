"""Loads generated kernel source as a module from a content-hashed file, so Numba's cache=True works."""
import hashlib
import importlib.util
import os
import sys
import threading


def cache_dir():
    path = os.environ.get("NUMGRAD_CACHE_DIR") or os.path.join(os.path.expanduser("~"), ".cache", "numgrad")
    os.makedirs(path, exist_ok=True)
    return path


def file_digest(path):
    """A digest of a helper module: Numba's cache does not notice when an inlined helper changes, so a
    target's helpers' digest is part of every generated source (and of its file name)."""
    with open(path, "rb") as f:
        return hashlib.sha1(f.read()).hexdigest()[:12]


def load_module(readable_name, source):
    """Writes `source` to a file named by its content hash and imports it, so Numba's cache=True
    (which cannot cache functions made with exec) finds the compiled code in the next process."""
    digest = hashlib.sha1(source.encode()).hexdigest()[:16]
    module_name = f"numgrad_k_{readable_name}_{digest}"
    with _LOADING:  # another thread must never see a module that is still being executed
        if module_name not in sys.modules:
            sys.modules[module_name] = _import(module_name, source)
    return sys.modules[module_name]


_LOADING = threading.RLock()


def _import(module_name, source):
    path = os.path.join(cache_dir(), module_name + ".py")
    if not os.path.exists(path):
        tmp = f"{path}.{os.getpid()}.tmp"
        with open(tmp, "w") as f:
            f.write(source)
        os.replace(tmp, path)  # atomic: concurrent test processes never see half a file
    if os.environ.get("NUMGRAD_DEBUG"):
        print(f"# ---- numgrad kernel {module_name} ({path})\n{source}", file=sys.stderr)
    spec = importlib.util.spec_from_file_location(module_name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_modules = {}


def cached(key, readable_name, source_fn):
    """The module for `key` (a hashable description such as a fused program's key): a key seen before
    finds its module without generating any source."""
    module = _modules.get(key)
    if module is None:
        module = _modules[key] = load_module(readable_name, source_fn())
    return module

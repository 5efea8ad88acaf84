"""The architecture's rules, checked on the code itself: layers import downward only (import-linter's
contracts in pyproject.toml), no import cycle anywhere in numgrad/, and function-level imports only for
optional heavy dependencies (numba.cuda, torch, matplotlib), and numgrad's own CUDA kernels only in the one lazy
loader (kernels/dispatch/lazy_cuda.py)."""
import ast
import pathlib
import shutil
import subprocess
import sys

import pytest

PACKAGE = pathlib.Path(__file__).resolve().parents[2] / "numgrad"
# what a function may import: numba-cuda (or its cuda.core) and the heavy optional libraries; numgrad's own
# CUDA kernels only in the loader that imports them once for everyone
OPTIONAL = ("numba.cuda", "cuda.core", "torch", "matplotlib", "mpi4py")
CUDA_LOADER, CUDA_KERNELS = "numgrad.kernels.dispatch.lazy_cuda", "numgrad.kernels.cuda."


def _modules():
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        yield name, path, path.name == "__init__.py"


def _imports(name, path, is_package):
    """(imported module, inside a function?) for each import statement of module `name`."""
    found = []

    def visit(node, in_function):
        for child in ast.iter_child_nodes(node):
            inner = in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef))
            if isinstance(child, ast.Import):
                found.extend((alias.name, inner) for alias in child.names)
            elif isinstance(child, ast.ImportFrom):
                base = child.module or ""
                if child.level:
                    here = name.split(".") if is_package else name.split(".")[:-1]
                    here = here[:len(here) - (child.level - 1)]
                    base = ".".join(here + ([base] if base else []))
                found.extend((f"{base}.{alias.name}", inner) for alias in child.names)
            visit(child, inner)

    visit(ast.parse(path.read_text()), False)
    return found


def _graph():
    modules = {name: (path, pkg) for name, path, pkg in _modules()}

    def owner(target):  # `from pkg import name` names a module or something inside one
        while target and target not in modules:
            target = target.rpartition(".")[0]
        return target

    graph, function_level = {}, []
    for name, (path, pkg) in modules.items():
        graph[name] = set()
        for target, inner in _imports(name, path, pkg):
            lazy_cuda = name == CUDA_LOADER and target.startswith(CUDA_KERNELS)
            if inner and not (target.startswith(OPTIONAL) or lazy_cuda):
                function_level.append(f"{name} imports {target} inside a function")
            module = owner(target) if target.startswith("numgrad") else None
            if module and module != name:
                graph[name].add(module)
    return graph, function_level


def test_function_level_imports_only_for_optional_dependencies():
    assert _graph()[1] == []


def test_no_import_cycle():
    graph, _ = _graph()
    index, low, stack, on_stack, cycles = {}, {}, [], set(), []

    def connect(v):  # Tarjan's strongly connected components
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph[v]:
            if w not in index:
                connect(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10_000))
    for v in graph:
        if v not in index:
            connect(v)
    assert cycles == []


def test_import_linter_contracts_hold():
    lint = shutil.which("lint-imports", path=str(pathlib.Path(sys.executable).parent))
    if lint is None:
        pytest.fail("lint-imports is not installed: it is in the test extra (import-linter)")
    result = subprocess.run([lint, "--config", str(PACKAGE.parent / "pyproject.toml")], cwd=PACKAGE.parent,
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr


def test_no_module_attaches_methods_to_the_tensor_classes():
    """Tensor's methods are written in its class body (numgrad/tensor.py): nothing assigns attributes onto
    Tensor or TensorBase from outside, and nothing calls setattr on them."""
    attached = []
    for name, path, _ in _modules():
        for node in ast.walk(ast.parse(path.read_text())):
            targets = node.targets if isinstance(node, ast.Assign) else \
                [node.target] if isinstance(node, (ast.AugAssign, ast.AnnAssign)) else []
            for target in targets:
                for t in ast.walk(target):
                    if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and \
                            t.value.id in ("Tensor", "TensorBase") and t.attr != "_result_class":
                        attached.append(f"{name}:{node.lineno} {t.value.id}.{t.attr}")
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "setattr" and node.args and \
                    isinstance(node.args[0], ast.Name) and node.args[0].id in ("Tensor", "TensorBase"):
                attached.append(f"{name}:{node.lineno} setattr({node.args[0].id}, ...)")
    assert attached == []

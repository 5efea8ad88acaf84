"""A loop that adds reorderably (intrinsics.add_reorderable) must not store: LLVM vectorises a storing loop
behind a runtime check of the arrays' distance in memory and runs the scalar loop, whose additions go in another
order, when they lie close, so the result's last bit would depend on where malloc put the arrays. Checked on
the source of every kernel a workload of reducing ops loads, and on the package's own kernel modules."""
import ast
import os
import sys

import numpy as np
import pytest

import numgrad
from numgrad.kernels import cpu, loader

ADDS = {"add_reorderable", "radd"}


def _own_nodes(statements):
    """The nodes of a loop body, not descending into the loops nested in it (their bodies are loops of their own)."""
    stack = list(statements)
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.For, ast.While)):  # its header (the range) belongs to this loop, its body not
            stack.append(node.iter if isinstance(node, ast.For) else node.test)
            continue
        yield node
        stack.extend(ast.iter_child_nodes(node))


def _stores(node):
    targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(
        node, (ast.AugAssign, ast.AnnAssign)) else []
    return any(isinstance(t, ast.Subscript) for t in targets)


def adding_loops_that_store(source):
    """The line numbers of the loops in `source` that both add reorderably and store into an array."""
    found = []
    for loop in ast.walk(ast.parse(source)):
        if isinstance(loop, (ast.For, ast.While)):
            own = list(_own_nodes(loop.body))
            adds = any(isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in ADDS for n in own)
            if adds and any(_stores(n) for n in own):
                found.append(loop.lineno)
    return found


def test_the_check_finds_a_loop_that_sums_as_it_stores():
    assert adding_loops_that_store("for j in range(K):\n    d[j] = a[j]\n    s = add_reorderable(s, d[j])\n") == [1]
    assert adding_loops_that_store("for j in range(K):\n    d[j] = a[j]\nfor j in range(K):\n"
                                   "    s = add_reorderable(s, d[j])\n") == []
    assert adding_loops_that_store("for o in range(R):\n    out[o] = 0\n    for j in range(K):\n"
                                   "        s = add_reorderable(s, a[j])\n") == []  # (the store is the outer loop's)


def _reducing_workload():
    rng = np.random.default_rng(0)
    for dtype in (numgrad.float32, numgrad.float64):
        x, w, b = (numgrad.tensor(rng.standard_normal(s), dtype=dtype, requires_grad=True)
                   for s in ((6, 40), (6, 40), (40,)))
        for f in (numgrad.softmax, numgrad.log_softmax):
            (f(x, -1) * w).sum().backward()  # the pending gradient's row kernel, with w's rider
            (f(x + b, -1) * 2).sum().backward()  # the pending input's forward row kernel
            f(x, -1).backward(w.detach())  # the plain row kernels
        ((x * w).sum(-1) + x.sum(1)).sum().backward()  # a fused sum and a row sum
        numgrad.nn.functional.layer_norm(x, (40,), w[0], b).sum().backward()
        numgrad.nn.functional.cross_entropy(x + b, numgrad.tensor([1, 0, 3, 2, 5, 4])).backward()


def _generated_sources(monkeypatch, workload):
    """The source of every kernel module `workload` uses, as generated now (not read back from a file, which
    another test may have removed or damaged): the loader's memos are emptied for the call, so each module is
    asked for again, and a module already imported is still returned, not compiled again."""
    sources = {}
    load_module = loader.load_module

    def recording(readable_name, source):
        sources[loader.module_name(readable_name, source)] = source
        return load_module(readable_name, source)
    monkeypatch.setattr(loader, "load_module", recording)
    monkeypatch.setattr(loader, "_modules", {})
    for module in list(sys.modules.values()):  # the cpu modules' functools.lru_cache'd module getters
        if getattr(module, "__name__", "").startswith("numgrad.kernels.cpu."):
            for value in list(vars(module).values()):
                if callable(getattr(value, "cache_clear", None)):
                    value.cache_clear()
    workload()
    return sources


@pytest.mark.usefixtures("fused_everywhere")  # (the workload's tensors are small: its fused kernels must run)
def test_no_kernel_adds_reorderably_in_a_loop_that_stores(monkeypatch):
    sources = _generated_sources(monkeypatch, _reducing_workload)
    package = os.path.dirname(cpu.__file__)
    for name in sorted(os.listdir(package)):
        if name.endswith(".py"):
            with open(os.path.join(package, name)) as f:
                sources[name] = f.read()
    assert any("add_reorderable(s" in s for s in sources.values())  # the workload loaded reducing kernels
    assert any(name.startswith("numgrad_k_softmax_pending") for name in sources)
    offenders = {name: lines for name, s in sources.items() if (lines := adding_loops_that_store(s))}
    assert not offenders, offenders

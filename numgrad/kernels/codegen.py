"""Writes kernel source from op-table expressions for any target; knows no Numba decorator."""
import ast
import hashlib
import importlib.util
import os
import sys
import threading

# The small math vocabulary of the op table, as spelled inside a kernel.
KERNEL_FUNCS = {
    "exp": "math.exp", "log": "math.log", "log1p": "math.log1p", "expm1": "math.expm1",
    "sqrt": "math.sqrt", "sin": "math.sin", "cos": "math.cos", "tan": "math.tan",
    "tanh": "math.tanh", "erf": "math.erf", "abs": "abs", "where": "where", "sign": "sign",
    "sigmoid": "sigmoid", "isnan": "isnan", "maximum": "maximum", "minimum": "minimum",
}


class _Lower(ast.NodeTransformer):
    """Renames inputs to their loop-local loads and types every numeric literal with the kernel dtype,
    because a bare Python float would silently promote a float32 kernel to float64."""

    def __init__(self, array_names, scalar_names, dtype_name):
        self.array_names, self.scalar_names, self.dtype_name = array_names, scalar_names, dtype_name

    def visit_Name(self, node):
        if node.id in self.array_names:
            return ast.copy_location(ast.Name(node.id + "_i", ast.Load()), node)
        if node.id in self.scalar_names or node.id in KERNEL_FUNCS:
            return node
        raise NameError(f"unknown name {node.id!r} in kernel expression")

    def visit_Constant(self, node):
        if isinstance(node.value, bool) or not isinstance(node.value, (int, float)):
            return node
        call = ast.parse(f"np.{self.dtype_name}({node.value!r})", mode="eval").body
        return ast.copy_location(call, node)

    def visit_Call(self, node):
        node.args = [self.visit(a) for a in node.args]
        node.func = ast.parse(KERNEL_FUNCS[node.func.id], mode="eval").body
        return node


def lower(expr, array_names, scalar_names, dtype_name):
    tree = _Lower(set(array_names), set(scalar_names), dtype_name).visit(ast.parse(expr, mode="eval"))
    return ast.unparse(tree)


HEADER = "import math\nimport numpy as np\nfrom numba import njit, prange\nfrom numgrad.kernels.scalar_math import *\n"


def elementwise_source(inputs, is_array, outputs, dtype_name, loop_headers):
    """One loop body shared by every header: `outputs` maps output names to expressions of `inputs`.
    `loop_headers` maps a function name to its (decorator, range function)."""
    arrays = [n for n, arr in zip(inputs, is_array) if arr]
    scalars = [n for n, arr in zip(inputs, is_array) if not arr]
    params = ", ".join(list(inputs) + list(outputs) + ["n"])
    loads = "".join(f"        {n}_i = {n}[i]\n" for n in arrays)
    stores = "".join(f"        {o}[i] = {lower(e, arrays, scalars, dtype_name)}\n" for o, e in outputs.items())
    parts = [HEADER]
    for fn_name, (decorator, range_fn) in loop_headers.items():
        parts.append(f"\n\n{decorator}\ndef {fn_name}({params}):\n    for i in {range_fn}(n):\n{loads}{stores}")
    return "".join(parts)


def cache_dir():
    path = os.environ.get("NUMGRAD_CACHE_DIR") or os.path.join(os.path.expanduser("~"), ".cache", "numgrad")
    os.makedirs(path, exist_ok=True)
    return path


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


def reduction_source(update, acc_dtype_name, loop_headers):
    """A reduction over the middle axis of a contiguous (outer, K, inner) array, in blocks of the inner
    axis so that the innermost loop runs over contiguous memory. `update` is a statement list (using
    `acc`, `best`, `x_i`, `k`) that folds element `x_i` at position `k` into the accumulator."""
    def body(indent, acc_ref, best_ref):
        lines = []
        for stmt in update:
            stmt = stmt.replace("ACC", acc_ref).replace("BEST", best_ref)
            lines.append(" " * indent + stmt)
        return "\n".join(lines) + "\n"

    parts = [HEADER]
    for fn_name, (decorator, range_fn) in loop_headers.items():
        parts.append(f"""

{decorator}
def {fn_name}(x, out, idx, outer, K, inner, B):
    nb = (inner + B - 1) // B
    for t in {range_fn}(outer * nb):
        o = t // nb
        j0 = (t % nb) * B
        j1 = min(j0 + B, inner)
        base = o * K * inner
        if inner == 1:
            acc = np.{acc_dtype_name}(x[base])
            best = 0
            for k in range(1, K):
                x_i = np.{acc_dtype_name}(x[base + k])
{body(16, "acc", "best")}            out[o] = acc
            idx[o] = best
        else:
            accs = np.empty(j1 - j0, np.{acc_dtype_name})
            bests = np.zeros(j1 - j0, np.int64)
            for j in range(j0, j1):
                accs[j - j0] = x[base + j]
            for k in range(1, K):
                row = base + k * inner
                for j in range(j0, j1):
                    x_i = np.{acc_dtype_name}(x[row + j])
{body(20, "accs[j - j0]", "bests[j - j0]")}            for j in range(j0, j1):
                out[o * inner + j] = accs[j - j0]
                idx[o * inner + j] = bests[j - j0]
""")
    return "".join(parts)

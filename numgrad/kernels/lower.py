"""Writes kernel source from op-table expressions for any target; knows no Numba decorator."""
import ast
import dataclasses
import functools

from . import loader

# Helpers each target writes as an inlined scalar function (cpu/scalar_math.py, cuda/cuda_math.py); the
# rest of the op table's math vocabulary maps to Python's math module or builtins.
HELPERS = ("where", "sign", "sigmoid", "isnan", "maximum", "minimum", "power", "scalar_power", "power_int",
           "remainder", "fmod", "fmod_int", "trunc_div", "erfinv", "nan_of")

# Python's math functions that Numba compiles for the CPU and for CUDA: an op-table expression may call any
# of them by name, so an op built on one (atan, say) needs nothing beyond its table entry.
MATH = ("exp", "log", "log1p", "expm1", "log2", "log10", "sqrt", "sin", "cos", "tan", "asin", "acos", "atan",
        "sinh", "cosh", "tanh", "asinh", "acosh", "atanh", "erf", "erfc", "copysign", "hypot")

# The op table's math vocabulary, as spelled inside a kernel. gelu_erf is erf as torch's GELU computes it: the
# library's erf, except in float32 on the CPU (scalar_math.gelu_erf_f32).
KERNEL_FUNCS = {**{name: f"math.{name}" for name in MATH}, "abs": "abs", **{name: name for name in HELPERS},
                "gelu_erf": "math.erf"}


# float32 versions that vectorise (scalar_math.py); float64 keeps the library's
FLOAT32_FUNCS = {"exp": "exp_f32", "tanh": "tanh_f32", "sigmoid": "sigmoid_f32", "erf": "erf_f32",
                 "gelu_erf": "gelu_erf_f32"}
# integer versions where the float form would round or change type (fmod computes in floating point)
INTEGER_FUNCS = {"fmod": "fmod_int", "power": "power_int", "scalar_power": "power_int"}


def kernel_func(name, dtype_name, target="cpu"):
    if dtype_name.startswith(("int", "uint")) and name in INTEGER_FUNCS:
        return INTEGER_FUNCS[name]
    # the GPU's libdevice math is already fast in float32: only the CPU swaps in the vectorising forms
    return (target == "cpu" and dtype_name == "float32" and FLOAT32_FUNCS.get(name)) or KERNEL_FUNCS[name]


class _Lower(ast.NodeTransformer):
    """Renames inputs to their loop-local loads and types every numeric literal with the kernel dtype,
    because a bare Python float would silently promote a float32 kernel to float64."""

    def __init__(self, array_names, scalar_names, dtype_name, target):
        self.array_names, self.scalar_names, self.dtype_name = array_names, scalar_names, dtype_name
        self.target = target

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
        node.func = ast.parse(kernel_func(node.func.id, self.dtype_name, self.target), mode="eval").body
        return node


def lower(expr, array_names, scalar_names, dtype_name, target="cpu"):
    tree = _Lower(set(array_names), set(scalar_names), dtype_name, target).visit(ast.parse(expr, mode="eval"))
    return ast.unparse(tree)


@dataclasses.dataclass(frozen=True)
class Target:
    """What a generated loop needs from its target: the module header, the decorator line, the range
    parameters and loop line, how an array is viewed before the loop (`view`, formatted with `n`; None
    reads it directly) and the name an element is read through (`ref`, formatted with `n`)."""
    name: str
    header: str
    decorator: str
    range_params: tuple
    loop: str
    view: str
    ref: str
    prefix: str = ""  # of the kernel module's readable name


def elementwise_source(inputs, is_array, outputs, dtype_name, target):
    """One loop body over the target's range: `outputs` maps output names to expressions of `inputs`."""
    arrays = [n for n, arr in zip(inputs, is_array) if arr]
    scalars = [n for n, arr in zip(inputs, is_array) if not arr]
    params = ", ".join([*target.range_params, *inputs, *outputs])
    views = "".join(f"    {target.view.format(n=n)}\n" for n in [*arrays, *outputs]) if target.view else ""
    loads = "".join(f"        {n}_i = {target.ref.format(n=n)}[i]\n" for n in arrays)
    stores = "".join(f"        {target.ref.format(n=o)}[i] = {lower(e, arrays, scalars, dtype_name, target.name)}\n"
                     for o, e in outputs.items())
    return (f"{target.header}\n\n{target.decorator}\ndef kernel({params}):\n{views}    {target.loop}\n"
            f"{loads}{stores}")


def elementwise_kernel(name, inputs, is_array, outputs, dtype_name, target):
    """The target's kernel computing `outputs` ((name, expr) pairs) from `inputs` (`is_array` says which
    are arrays); `name` must identify inputs and outputs, as it keys the cache with the rest."""
    return loader.cached(
        ("elementwise", target.name, name, is_array, outputs, dtype_name), f"{target.prefix}{name}_{dtype_name}",
        lambda: elementwise_source(inputs, is_array, dict(outputs), dtype_name, target)).kernel


def fold_statements(update, indent, acc="acc", best="best"):
    """A reduction's update statements (spec.table.REDUCTIONS: they fold `x_i` at position `k` into ACC
    and BEST) as kernel lines on the given accumulator names; best=None drops the lines tracking the
    position (a fold of values keeps none)."""
    return "".join(" " * indent + stmt.replace("ACC", acc).replace("BEST", best or "") + "\n"
                   for stmt in update if best is not None or "BEST" not in stmt)


# torch's pow kernel computes these exponents without pow(): matching it keeps results bit-close and the
# loop free of library calls (which block SIMD)
POW_FORMS = {1: "a", 2: "a * a", 3: "a * a * a", 0.5: "math.sqrt(a)", -0.5: "1 / math.sqrt(a)", -1: "1 / a",
              -2: "1 / (a * a)"}


class _Substitute(ast.NodeTransformer):
    """Replaces input names by kernel expressions (`mapping`), folds constant arithmetic, rewrites
    constant small exponents as products, and types every literal with the kernel dtype."""

    def __init__(self, mapping, dtype_name, target):
        self.mapping, self.dtype_name, self.target = mapping, dtype_name, target

    def visit_Name(self, node):
        if node.id in self.mapping:
            return ast.parse(self.mapping[node.id], mode="eval").body
        if node.id in KERNEL_FUNCS or node.id in ("np", "math"):
            return node
        raise NameError(f"unknown name {node.id!r} in kernel expression")

    def visit_UnaryOp(self, node):
        node = self.generic_visit(node)
        if isinstance(node.op, ast.USub) and _is_number(node.operand):
            return ast.copy_location(ast.Constant(-node.operand.value), node)
        return node

    def visit_BinOp(self, node):
        node = self.generic_visit(node)
        if _is_number(node.left) and _is_number(node.right) and not isinstance(node.op, ast.Pow):
            value = eval(compile(ast.Expression(node), "<fold>", "eval"))
            return ast.copy_location(ast.Constant(value), node)
        if isinstance(node.op, ast.Pow) and _is_number(node.right) and node.right.value in POW_FORMS:
            form = ast.parse(POW_FORMS[node.right.value], mode="eval").body
            return _Replace(node.left).visit(form)
        return node

    def visit_Call(self, node):
        node.args = [self.visit(a) for a in node.args]
        if isinstance(node.func, ast.Name) and node.func.id in ("power", "scalar_power") and len(node.args) == 2 \
                and _is_number(node.args[1]) and node.args[1].value in POW_FORMS:  # pow's constant exponents too
            return _Replace(node.args[0]).visit(ast.parse(POW_FORMS[node.args[1].value], mode="eval").body)
        if isinstance(node.func, ast.Name) and node.func.id in KERNEL_FUNCS:
            node.func = ast.parse(kernel_func(node.func.id, self.dtype_name, self.target), mode="eval").body
        return node


def _is_number(node):
    return isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) and not isinstance(node.value, bool)


class _Replace(ast.NodeTransformer):
    def __init__(self, operand):
        self.operand = operand

    def visit_Name(self, node):
        return self.operand if node.id == "a" else node


class _TypeConstants(ast.NodeTransformer):
    def __init__(self, dtype_name):
        self.dtype_name = dtype_name

    def visit_Call(self, node):  # np.float32(...) casts already carry their type
        if isinstance(node.func, ast.Attribute) and isinstance(node.func.value, ast.Name) and \
                node.func.value.id == "np":
            return node
        return self.generic_visit(node)

    def visit_Constant(self, node):
        if not _is_number(node):
            return node
        return ast.copy_location(ast.parse(f"np.{self.dtype_name}({node.value!r})", mode="eval").body, node)


@functools.lru_cache(maxsize=None)
def substitute(expr, mapping, dtype_name, target="cpu"):
    """`expr` (op-table vocabulary) as kernel code: names replaced by `mapping` ((name, code) pairs)."""
    tree = _Substitute(dict(mapping), dtype_name, target).visit(ast.parse(expr, mode="eval"))
    tree = _TypeConstants(dtype_name).visit(tree)
    return ast.unparse(ast.fix_missing_locations(tree))

"""Pictures of the autograd graph, as torchviz draws them: make_dot gives Graphviz DOT source (no dependency),
rendered to SVG or PNG by Graphviz's `dot` program where it is installed; graph_text draws the same graph as
a tree for a terminal. Elementwise nodes that backward runs as one fused kernel are drawn inside one box."""
import html
import shutil
import subprocess

from ._core.state import STATE
from .autograd import fused_backward
from .autograd.engine import _dependencies
from .node import AccumulateGrad

__all__ = ["Digraph", "graph_text", "make_dot"]

SAVED_PREFIX = "_saved_"


class Digraph:
    """DOT source with torchviz's Digraph surface: `.source`, `render`, `pipe`, and SVG display in notebooks."""

    def __init__(self, source):
        self.source = source

    def __str__(self):
        return self.source

    def pipe(self, format="svg"):
        """The picture's bytes in `format` (svg, png, pdf, ...), drawn by Graphviz's dot program."""
        dot = shutil.which("dot")
        if dot is None:
            raise RuntimeError("rendering needs Graphviz's `dot` program on PATH (apt-get install graphviz, "
                               "brew install graphviz, conda install graphviz); Digraph.source is the DOT text")
        return subprocess.run([dot, f"-T{format}"], input=self.source.encode(), capture_output=True,
                              check=True).stdout

    def render(self, filename="graph", format="svg", cleanup=False, view=False):
        """Writes `filename.gv` (the source; removed with cleanup) and `filename.format`; returns the latter."""
        out = f"{filename}.{format}"
        with open(out, "wb") as f:
            f.write(self.pipe(format))
        if not cleanup:
            with open(f"{filename}.gv", "w") as f:
                f.write(self.source)
        return out

    def _repr_svg_(self):
        return self.pipe("svg").decode() if shutil.which("dot") else None


def _size(shape):
    return "(" + ", ".join(str(s) for s in shape) + ")"


def _roots(output):
    outputs = output if isinstance(output, (list, tuple)) else (output,)
    return [t for t in outputs if getattr(t, "grad_fn", None) is not None]


def _walk(roots):
    """Every node below the roots' grad_fns, each once, in the order first reached."""
    seen, order, stack = set(), [], [t.grad_fn for t in reversed(roots)]
    while stack:
        node = stack.pop()
        if node is None or node in seen:
            continue
        seen.add(node)
        order.append(node)
        stack.extend(child for child, _ in reversed(node.next_functions))
    return order


def fused_regions(roots):
    """node -> region number for the elementwise nodes backward would run together (fusion on)."""
    nodes = [t.grad_fn for t in roots]
    if not STATE.fusion or not nodes:
        return {}
    deps, regions, count = _dependencies(nodes), {}, 0
    for node in sorted(_walk(roots), key=lambda n: n._seq, reverse=True):  # in the order backward meets them
        if node in regions:
            continue
        members = fused_backward.region(node, deps, None, ())
        if members:
            regions.update((m, count) for m in members)
            count += 1
    return regions


def make_dot(var, params=None, show_attrs=False, show_saved=False, max_attr_chars=50):
    """The graph that produced `var` (a tensor or a sequence of them): grad_fn nodes by name, leaves named by
    `params` (e.g. dict(model.named_parameters())) with their sizes, outputs in green; with `show_saved`, the
    tensors each node saved (orange, with sizes)."""
    names = {id(p): name for name, p in (params or {}).items()}
    roots = _roots(var)
    regions = fused_regions(roots)
    lines = ["digraph {", '\tgraph [size="12,12"]',
             '\tnode [align=left fontname=monospace fontsize=10 height=0.2 ranksep=0.1 shape=box style=filled]']
    clusters = {}
    for node in _walk(roots):
        if isinstance(node, AccumulateGrad):
            v = node.variable
            label = f"{names.get(id(v), '')}\n {_size(v.shape)}".lstrip("\n")
            entry = f'\t{id(node)} [label="{_escape(label)}" fillcolor=lightblue]'
        else:
            label = node.name()
            if show_attrs:
                label += _attrs(node, max_attr_chars)
            entry = f'\t{id(node)} [label="{_escape(label)}" fillcolor=lightgrey]'
        (clusters.setdefault(regions[node], []) if node in regions else lines).append(entry)
        for child, _ in node.next_functions:
            if child is not None:
                lines.append(f"\t{id(child)} -> {id(node)}")
        if show_saved:
            lines += _saved(node)
    for number, entries in clusters.items():
        lines.append(f"\tsubgraph cluster_fused_{number} {{")
        lines.append('\t\tlabel="fused backward kernel" style=dashed color=darkorange fontname=monospace fontsize=9')
        lines += ["\t" + e for e in entries]
        lines.append("\t}")
    for i, t in enumerate(roots):
        lines.append(f'\tout{i} [label="{_escape(_size(t.shape))}" fillcolor=darkolivegreen1]')
        lines.append(f"\t{id(t.grad_fn)} -> out{i}")
    lines.append("}")
    return Digraph("\n".join(lines) + "\n")


def _saved(node):
    lines = []
    for attr in dir(node):
        if not attr.startswith(SAVED_PREFIX):
            continue
        try:
            value = getattr(node, attr)
        except RuntimeError:  # freed by a backward without retain_graph
            continue
        if hasattr(value, "shape"):
            key = f"{id(node)}_{attr}"
            label = f"{attr[len(SAVED_PREFIX):]}\n {_size(value.shape)}"
            lines.append(f'\t"{key}" [label="{_escape(label)}" fillcolor=orange]')
            lines.append(f'\t"{key}" -> {id(node)} [dir=none style=dashed]')
    return lines


def _attrs(node, limit):
    parts = []
    for attr in dir(node):
        if attr.startswith(SAVED_PREFIX):
            try:
                value = getattr(node, attr)
            except RuntimeError:
                continue
            text = _size(value.shape) if hasattr(value, "shape") else str(value)
            parts.append(f"{attr[len(SAVED_PREFIX):]}: {text[:limit]}")
    return ("\n" + "\n".join(parts)) if parts else ""


def _escape(text):
    return html.escape(text, quote=True).replace("\n", "\\n")


def graph_text(var, params=None):
    """The graph as an indented tree, the output's node first; a node reached again is shown once, then
    referred to as `(above)`. Fused backward regions are marked [fused k]."""
    names = {id(p): name for name, p in (params or {}).items()}
    roots = _roots(var)
    regions = fused_regions(roots)
    lines, shown = [], set()

    def label(node):
        if isinstance(node, AccumulateGrad):
            v = node.variable
            return f"AccumulateGrad {names.get(id(v), 'leaf')} {_size(v.shape)}"
        mark = f" [fused {regions[node]}]" if node in regions else ""
        return node.name() + mark

    for t in roots:
        stack = [(t.grad_fn, "", "", True)]
        while stack:
            node, prefix, branch, last = stack.pop()
            again = node in shown
            lines.append(prefix + branch + label(node) + (" (above)" if again else ""))
            if again:
                continue
            shown.add(node)
            children = [c for c, _ in node.next_functions if c is not None]
            inner = prefix + ("" if not branch else ("   " if last else "│  "))
            for k in range(len(children) - 1, -1, -1):
                final = k == len(children) - 1
                stack.append((children[k], inner, "└─ " if final else "├─ ", final))
    return "\n".join(lines)

"""numgrad.viz against torch's graphs: make_dot draws every grad_fn by torch's name with torch's edges, leaves
named from the module with their sizes, saved tensors on request; graph_text draws the same tree; the fused
backward regions are the nodes the engine runs in one kernel; DOT renders through Graphviz where it exists."""
import re
import shutil

import numpy as np
import pytest
import torch

import numgrad
from numgrad import viz
from numgrad.autograd import fused_backward


class _Params:
    """Two layers' parameters by name (nn.Linear's graph differs from torch's: it has no TBackward0 node)."""

    def __init__(self, lib):
        rng = np.random.default_rng(0)
        shapes = {"0.weight": (4, 3), "0.bias": (3,), "2.weight": (3, 2), "2.bias": (2,)}
        self.params = {k: lib.tensor(rng.standard_normal(v).astype(np.float32), requires_grad=True)
                       for k, v in shapes.items()}

    def named_parameters(self):
        return self.params.items()


def _model_and_loss(lib):
    model = _Params(lib)
    p = model.params
    x = lib.tensor(np.arange(8, dtype=np.float32).reshape(2, 4) / 8)
    h = (x @ p["0.weight"] + p["0.bias"]).tanh()
    loss = (((h @ p["2.weight"] + p["2.bias"]).sigmoid() * 2 + 1).exp()).mean()
    return model, loss


def _edges(root):
    """(child name, parent name) pairs of the graph under `root` (either library), and the node names."""
    edges, names, seen, stack = set(), [], set(), [root]
    while stack:
        node = stack.pop()
        if node in seen:
            continue
        seen.add(node)
        names.append(node.name())
        for child, _ in node.next_functions:
            if child is not None:
                edges.add((child.name(), node.name()))
                stack.append(child)
    return edges, sorted(names)


def test_make_dot_has_torchs_nodes_and_edges():
    ng_model, ng_loss = _model_and_loss(numgrad)
    _, t_loss = _model_and_loss(torch)
    dot = viz.make_dot(ng_loss, params=dict(ng_model.named_parameters()))
    ids = dict(re.findall(r'\t(\d+) \[label="([^"]*)"', dot.source))
    edges = {(ids[a].split("\\n")[0], ids[b].split("\\n")[0]) for a, b in re.findall(r"\t(\d+) -> (\d+)", dot.source)}
    leaf_labels = {ids[k] for k in ids if "\\n" in ids[k]}
    assert leaf_labels == {"0.weight\\n (4, 3)", "0.bias\\n (3)", "2.weight\\n (3, 2)", "2.bias\\n (2)"}
    t_edges, t_names = _edges(t_loss.grad_fn)
    named = {name: label.split("\\n")[0] for name, label in
             zip(["0.weight", "0.bias", "2.weight", "2.bias"], sorted(leaf_labels))}
    assert sorted(label if "\\n" not in label else "torch::autograd::AccumulateGrad" for label in ids.values()) == \
        t_names
    ours = {(a if a not in named.values() else "torch::autograd::AccumulateGrad", b) for a, b in edges}
    assert ours == t_edges
    assert "darkolivegreen1" in dot.source and str(dot) == dot.source


def test_show_saved_draws_each_saved_tensor_with_its_size():
    _, loss = _model_and_loss(numgrad)
    source = viz.make_dot(loss, show_saved=True).source
    assert 'label="result\\n (2, 2)" fillcolor=orange' in source  # ExpBackward0's and SigmoidBackward0's
    assert source.count("style=dashed]") == source.count("fillcolor=orange")


@pytest.mark.usefixtures("fused_everywhere")  # (the model's tensors are small: no region otherwise)
def test_fused_regions_are_the_nodes_backward_runs_as_one_kernel(monkeypatch):
    _, loss = _model_and_loss(numgrad)
    drawn = viz.fused_regions([loss])
    ran = []
    real = fused_backward.run
    monkeypatch.setattr(fused_backward, "run", lambda region, *a: ran.append(list(region)) or real(region, *a))
    loss.backward(retain_graph=True)
    groups = {}
    for node, number in drawn.items():
        groups.setdefault(number, set()).add(node)
    assert sorted(map(frozenset, groups.values()), key=len) == sorted(map(frozenset, ran), key=len)
    assert [sorted(n.name() for n in r) for r in ran] == [
        ["AddBackward0", "AddBackward0", "ExpBackward0", "MulBackward0", "SigmoidBackward0"],
        ["AddBackward0", "TanhBackward0"]]
    source = viz.make_dot(loss).source
    assert "subgraph cluster_fused_0" in source and "subgraph cluster_fused_1" in source
    assert sum("[fused 0]" in line for line in viz.graph_text(loss).splitlines()) == 5
    with numgrad.fusion(False):
        assert "[fused" not in viz.graph_text(loss) and "cluster" not in viz.make_dot(loss).source


def test_graph_text_marks_shared_nodes_and_names_leaves():
    x = numgrad.ones(2, requires_grad=True)
    y = x.exp()
    z = (y * y).sum()
    lines = viz.graph_text(z, {"x": x}).splitlines()
    assert lines[0] == "SumBackward0"
    assert sum("ExpBackward0" in line for line in lines) == 2 and lines[-1].endswith("(above)")
    assert "AccumulateGrad x (2)" in "\n".join(lines)


@pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz's dot program is not installed")
def test_renders_svg_and_png(tmp_path):
    _, loss = _model_and_loss(numgrad)
    dot = viz.make_dot(loss)
    assert dot.pipe("svg").lstrip().startswith(b"<?xml")
    path = dot.render(str(tmp_path / "graph"), format="png")
    assert open(path, "rb").read(4) == b"\x89PNG" and (tmp_path / "graph.gv").read_text() == dot.source


def test_render_without_graphviz_says_what_to_install(monkeypatch):
    monkeypatch.setattr(shutil, "which", lambda name: None)
    _, loss = _model_and_loss(numgrad)
    with pytest.raises(RuntimeError, match="Graphviz's `dot` program"):
        viz.make_dot(loss).pipe()

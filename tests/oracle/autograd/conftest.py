"""Fixtures of the autograd tests: layout_copies, a spy on the copies AccumulateGrad makes into a leaf's layout."""
import pytest

from numgrad import node as node_module


@pytest.fixture
def layout_copies(monkeypatch):
    """The shapes of the gradients AccumulateGrad copies into a leaf's layout."""
    copies = []
    original = node_module._copy_in_layout

    def spy(grad, variable):
        copies.append(grad.shape)
        return original(grad, variable)
    monkeypatch.setattr(node_module, "_copy_in_layout", spy)
    return copies

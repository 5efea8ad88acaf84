"""examples/digits_mlp.py: numgrad and torch give the same loss curve from the same initial weights, and
the command line reports the test accuracy and writes the loss-curve PNG."""
import importlib.util
import os
import subprocess
import sys

import numpy as np
import pytest

from helpers import REPO

pytest.importorskip("sklearn", reason="the example needs scikit-learn (in the test extra)")
pytest.importorskip("matplotlib", reason="the example needs matplotlib (in the test extra)")
pytest.importorskip("tqdm", reason="the example needs tqdm (in the test extra)")

EXAMPLE = REPO / "examples" / "digits_mlp.py"


def _example():
    spec = importlib.util.spec_from_file_location("digits_mlp", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_loss_curves_of_numgrad_and_torch_agree():
    import torch

    import numgrad
    example = _example()
    ours, our_accuracy = example.train(numgrad, epochs=2, progress=False)
    theirs, their_accuracy = example.train(torch, epochs=2, progress=False)
    assert len(ours) == len(theirs) == 2 * 22  # 1347 training digits in batches of 64
    np.testing.assert_allclose(ours, theirs, rtol=1e-4, atol=1e-6)
    assert ours[-1] < ours[0] / 2
    assert our_accuracy == their_accuracy and our_accuracy > 0.5  # two epochs only: the curves are the point


def test_command_line_reports_accuracy_and_writes_plot(tmp_path):
    png = tmp_path / "loss.png"
    env = dict(os.environ, PYTHONPATH=str(EXAMPLE.parent.parent) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    result = subprocess.run([sys.executable, str(EXAMPLE), "--epochs", "2", "--plot", str(png)],
                            capture_output=True, text=True, env=env, timeout=300)
    assert result.returncode == 0, result.stderr
    assert "numgrad: final loss" in result.stdout and "test accuracy" in result.stdout
    assert "numgrad: 100%" in result.stderr  # the tqdm progress bar
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"

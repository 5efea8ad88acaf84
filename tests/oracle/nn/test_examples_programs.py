"""examples/char_gpt.py and examples/mnist_synthetic.py, torch programs run unchanged on numgrad: the GPT's loss
curve equals torch's from the same weights and batches, it samples text and plots its loss; the MNIST
example's structure (DataLoader workers, Adadelta, StepLR, view_as, torch.accelerator) trains and tests."""
import json
import os
import subprocess
import sys

import numpy as np
import pytest

from helpers import REPO

pytest.importorskip("matplotlib", reason="the examples plot with matplotlib (in the test extra)")
pytest.importorskip("tqdm", reason="the examples show progress with tqdm (in the test extra)")


def _run(script, *args):
    env = dict(os.environ, PYTHONPATH=str(REPO))
    out = subprocess.run([sys.executable, str(REPO / "examples" / script), *args], capture_output=True, text=True,
                         env=env, timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    return out.stdout


def test_char_gpt_loss_curve_equals_torchs(tmp_path):
    curves = {}
    for lib, flag in (("numgrad", []), ("torch", ["--torch"])):
        losses, plot = tmp_path / f"{lib}.json", tmp_path / f"{lib}.png"
        out = _run("char_gpt.py", *flag, "--steps", "12", "--no-progress", "--sample", "40",
                   "--losses", str(losses), "--plot", str(plot))
        assert out.startswith(f"{lib}: final loss") and "--- sample ---" in out
        assert len(out.split("--- sample ---")[1]) >= 40 and plot.read_bytes()[:4] == b"\x89PNG"
        curves[lib] = json.loads(losses.read_text())
    np.testing.assert_allclose(curves["numgrad"], curves["torch"], rtol=1e-5, atol=1e-6)
    assert curves["numgrad"][-1] < curves["numgrad"][0] - 0.5


def test_mnist_structure_trains_with_dataloader_workers():
    out = _run("mnist_synthetic.py", "--epochs", "1", "--train-size", "256", "--log-interval", "2")
    assert "Train Epoch: 1 [0/256 (0%)]" in out
    accuracy = float(out.split("Accuracy: ")[1].split("(")[1].split("%")[0])
    assert accuracy >= 50, out

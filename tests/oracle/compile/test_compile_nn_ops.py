"""numgrad.compile of training steps through the padding, pooling, convolution, resampling and shuffle layers:
captured in one graph, replayed bitwise equal to eager numgrad and close to torch."""
import numpy as np
import pytest
import torch

import numgrad
from numgrad.bench.workloads import train_step


def _model_1d(lib):
    nn = lib.nn
    return nn.Sequential(nn.Conv1d(2, 4, 3, padding=1, padding_mode="reflect"), nn.ReLU(), nn.AvgPool1d(2),
                         nn.ConvTranspose1d(4, 3, 2, stride=2), nn.Upsample(scale_factor=2, mode="linear"),
                         nn.AdaptiveMaxPool1d(5), nn.Flatten(), nn.Linear(15, 5))


def _model_2d(lib):
    nn = lib.nn
    return nn.Sequential(nn.ReplicationPad2d(1), nn.Conv2d(2, 8, 3, groups=2), nn.PixelShuffle(2),
                         nn.AvgPool2d(3, 2, 1, count_include_pad=False), nn.ConvTranspose2d(2, 3, 3, stride=2,
                                                                                           output_padding=1),
                         nn.Upsample(size=(5, 5), mode="bilinear"), nn.AdaptiveAvgPool2d(2), nn.Flatten(),
                         nn.Linear(12, 5))


def _model_3d(lib):
    nn = lib.nn
    return nn.Sequential(nn.Conv3d(2, 3, 2, padding=1), nn.MaxPool3d(2), nn.Upsample(scale_factor=2),
                         nn.AdaptiveAvgPool3d(1), nn.Flatten(), nn.Linear(3, 5))


MODELS = {"1d": (_model_1d, (4, 2, 12)), "2d": (_model_2d, (4, 2, 6, 6)), "3d": (_model_3d, (2, 2, 4, 4, 4))}


@pytest.mark.parametrize("name", list(MODELS))
def test_compiled_training_steps_match_eager_and_torch(name):
    build, shape = MODELS[name]
    theirs = build(torch)
    state = {k: v.detach().numpy().copy() for k, v in theirs.state_dict().items()}
    rng = np.random.default_rng(1)
    batches = [(rng.standard_normal(shape).astype(np.float32), rng.integers(0, 5, shape[0])) for _ in range(4)]
    losses = []
    for compiled in (False, True):
        ours = build(numgrad)
        ours.load_state_dict(state)
        opt = numgrad.optim.SGD(ours.parameters(), lr=0.05, momentum=0.9)
        fn = numgrad.compile(train_step, fullgraph=True) if compiled else train_step
        losses.append([fn(numgrad, ours, opt, numgrad.tensor(x), numgrad.tensor(y)).item() for x, y in batches])
        if compiled:
            report = numgrad.explain(train_step)(numgrad, ours, opt, numgrad.tensor(batches[0][0]),
                                                 numgrad.tensor(batches[0][1]))
            assert (report.graph_count, report.graph_break_count) == (1, 0)
    opt = torch.optim.SGD(theirs.parameters(), lr=0.05, momentum=0.9)
    expected = [train_step(torch, theirs, opt, torch.tensor(x), torch.tensor(y)).item() for x, y in batches]
    assert losses[0] == losses[1]
    np.testing.assert_allclose(losses[0], expected, rtol=1e-4)

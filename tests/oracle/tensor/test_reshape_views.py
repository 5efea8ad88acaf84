"""reshape's choice between a view and a copy against torch's, over strided layouts (slices, transposes, size-one
and empty dims, expanded tensors): values, strides, view or not, grad_fn names and gradients."""
import numpy as np
import pytest

import numgrad
import torch

LAYOUTS = [  # (what the input is made of a contiguous (4, 6, 8) tensor, the shape asked)
    (lambda x: x, (24, 8)),
    (lambda x: x[:, :, :4], (4, 6, 2, 2)),  # a slice of the last dim: a view
    (lambda x: x[:, :, :4], (24, 4)),  # its first dims merge: a view
    (lambda x: x[:, :, :4], (4, 24)),  # across the slice: a copy
    (lambda x: x.transpose(0, 1), (6, 32)),  # a copy
    (lambda x: x.transpose(0, 1), (6, 4, 2, 4)),  # splits the contiguous last dim: a view
    (lambda x: x.transpose(1, 2), (4, 48)),  # a copy
    (lambda x: x.transpose(1, 2).reshape(4, 8, 2, 3), (4, 8, 6)),  # the GPT block's head merge: a copy
    (lambda x: x[:, :1].transpose(0, 1), (1, 4, 1, 8)),  # size-one dims added and removed: a view
    (lambda x: x[::2, :, ::3], (2, 6, 3)),  # a step in two dims, the same shape: a view
    (lambda x: x[::2, :, ::3], (12, 3)),  # merges dims of one step: a view
    (lambda x: x[::2, :, ::3], (36,)),  # a copy
    (lambda x: x[:, :0], (4, 0, 3)),  # empty
    (lambda x: x[:1, :1, :1].expand(3, 2, 4), (6, 4)),  # expanded: a view with zero strides
    (lambda x: x[:1, :1, :1].expand(3, 2, 4), (24,)),  # expanded: a copy
]


@pytest.mark.parametrize("make, shape", LAYOUTS)
def test_reshape_views_and_copies_as_torch(make, shape):
    values = np.arange(4 * 6 * 8, dtype=np.float64).reshape(4, 6, 8)
    outs, grads = [], []
    for lib in (numgrad, torch):
        x = lib.tensor(values, requires_grad=True)
        source = make(x)
        y = source.reshape(shape)
        weights = lib.tensor(np.arange(y.numel(), dtype=np.float64).reshape(tuple(y.shape)))
        (y * weights).sum().backward()
        outs.append((y.detach().numpy().copy(), tuple(y.shape), y.stride(), y._base is not None, y.grad_fn.name()))
        grads.append(x.grad.numpy())
    (ours, theirs) = outs
    np.testing.assert_array_equal(ours[0], theirs[0])
    assert ours[1:] == theirs[1:]
    np.testing.assert_array_equal(grads[0], grads[1])


def test_a_copying_reshape_does_not_write_through_and_a_view_does():
    for lib in (numgrad, torch):
        x = lib.tensor(np.arange(24, dtype=np.float32).reshape(2, 3, 4))
        copied, viewed = x.transpose(0, 1).reshape(3, 8), x[:, :, :2].reshape(6, 2)
        x.add_(100)
        assert float(copied[0, 0]) == 0 and float(viewed[0, 0]) == 100, lib.__name__


@pytest.mark.parametrize("numel, shape", [
    (24, (-1, -1)), (24, (2, -1, -1)), (24, (-2, 12)), (24, (-1, -3)), (24, (5, -1)), (24, (0, -1)), (0, (0, -1)),
    (0, (-1, 0)), (24, (7,)), (24, (-1,)), (24, (2, -1, 3)), (0, (2, -1)), (24, (4, 6, 1, -1)), (1, ()),
])
def test_reshape_sizes_and_their_errors_as_torch(numel, shape):
    outcomes = []
    for lib in (numgrad, torch):
        x = lib.tensor(np.arange(numel, dtype=np.float32))
        try:
            outcomes.append(tuple(x.reshape(shape).shape))
        except Exception as e:  # compared below: type and message
            outcomes.append((type(e).__name__, str(e)))
    assert outcomes[0] == outcomes[1]

"""The sliding-window kernels (kernels/cpu/window.py) against the NumPy paths they replace, bit for bit."""
import numpy as np
import pytest

from numgrad.kernels.cpu import window
from numgrad.kernels.dispatch import window as host
from numgrad.nn import _conv

# (shape, kernel, stride, padding, dilation, ceil_mode)
GEOMETRIES = [
    ((2, 3, 7, 6), (3, 3), (1, 1), (0, 0), (1, 1), False),
    ((2, 2, 8, 9), (3, 2), (2, 1), (1, 1), (1, 2), False),
    ((1, 4, 5, 5), (1, 1), (1, 1), (0, 0), (1, 1), False),
    ((3, 1, 9, 7), (2, 3), (2, 3), (1, 1), (2, 1), True),
    ((2, 2, 6, 6), (3, 3), (2, 2), (1, 1), (1, 1), True),
    ((0, 2, 4, 4), (2, 2), (2, 2), (0, 0), (1, 1), False),
    ((16, 8, 30, 30), (2, 2), (2, 2), (0, 0), (1, 1), False),
    ((2, 3, 7, 6), (2, 2), (2, 2), (0, 0), (1, 1), False),  # 2x2 pairs (max_pool_pairs), an odd height
    ((2, 3, 7, 6), (2, 2), (2, 2), (0, 0), (1, 1), True),  # a window past the last row: max_pool's
    ((1, 2, 6, 7), (2, 2), (2, 2), (0, 0), (1, 1), False),  # an odd width: max_pool's
]


def _geometry(shape, kernel, stride, padding, dilation, ceil_mode):
    out_hw = tuple(_conv._pool_out_size(s, k, st, p, d, ceil_mode)
                   for s, k, st, p, d in zip(shape[2:], kernel, stride, padding, dilation))
    return host.Geometry(shape, kernel, stride, padding, dilation, out_hw)


def _reference(monkeypatch, fn, *args):
    with monkeypatch.context() as m:
        m.setattr(window, "supports", lambda dtype: False)
        return fn(*args)


def _data(shape, dtype, rng):
    x = rng.standard_normal(shape) * 4
    return x.astype(dtype)


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64"])
@pytest.mark.parametrize("case", GEOMETRIES)
def test_im2col_col2im_match_numpy(monkeypatch, case, dtype):
    rng = np.random.default_rng(0)
    geo = _geometry(*case)
    x = _data(case[0], dtype, rng)
    cols = host.im2col_data(x, geo)
    np.testing.assert_array_equal(cols, _reference(monkeypatch, host.im2col_data, x, geo))
    g = _data(cols.shape, dtype, rng)
    back = host.col2im_data(g, geo)
    assert back.shape == x.shape
    np.testing.assert_array_equal(back, _reference(monkeypatch, host.col2im_data, g, geo))


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "uint8"])
@pytest.mark.parametrize("case", GEOMETRIES)
def test_max_pool_matches_numpy(monkeypatch, case, dtype):
    rng = np.random.default_rng(1)
    geo = _geometry(*case)
    x = _data(case[0], dtype, rng)
    if dtype.startswith("float") and x.size:  # NaNs and ties: the first maximum (or NaN) wins
        x.flat[::5] = np.nan
        x.flat[1::7] = x.flat[2::7][:x.flat[1::7].size]
        x.flat[3::11] = -np.inf
    values, indices = host.max_pool_arrays(x, geo)
    ref_values, ref_indices = _reference(monkeypatch, host.max_pool_arrays, x, geo)
    np.testing.assert_array_equal(values, ref_values)
    np.testing.assert_array_equal(indices, ref_indices)
    overlapping = any(s < d * (k - 1) + 1 for s, k, d in
                      zip((geo.sh, geo.sw), (geo.kh, geo.kw), (geo.dh, geo.dw)))
    if not overlapping and values.size:  # (the NumPy path cannot put into zero rows)
        rows, plane = geo.n * geo.c, geo.h * geo.w
        g = _data(values.shape, "float32", rng)
        idx = indices.reshape(rows, geo.oh * geo.ow)
        np.testing.assert_array_equal(host.unpool_array(g, idx, plane, False),
                                      _reference(monkeypatch, host.unpool_array, g, idx, plane, False))


@pytest.mark.parametrize("case", [GEOMETRIES[1], GEOMETRIES[6], GEOMETRIES[7]])
def test_kernels_split_over_threads_match_one_thread(monkeypatch, case):
    """Each window kernel's rows split over two threads (any size, by a threshold of 1) give one thread's result."""
    rng = np.random.default_rng(2)
    geo = _geometry(*case)
    x = _data(case[0], "float32", rng)
    cols = _data((geo.c * geo.kh * geo.kw, geo.n * geo.oh * geo.ow), "float32", rng)
    pooled, where = window.max_pool(x, geo.key(), -np.inf)
    g = _data(pooled.shape, "float32", rng)

    def run():
        return [window.im2col(x, geo.key()), window.col2im(cols, geo.key()), *window.max_pool(x, geo.key(), -np.inf),
                window.unpool(g.reshape(geo.n * geo.c, -1), where.reshape(geo.n * geo.c, -1), geo.h * geo.w)]
    monkeypatch.setattr(window.threads, "_chosen", [1])
    alone = run()
    monkeypatch.setattr(window.threads, "_chosen", [2])
    monkeypatch.setattr(window, "PARALLEL_MIN", 1)
    for got, want in zip(run(), alone):
        np.testing.assert_array_equal(got, want)


def test_all_minus_inf_windows_keep_their_first_position(monkeypatch):
    geo = _geometry((1, 1, 3, 3), (2, 2), (2, 2), (1, 1), (1, 1), True)
    x = np.full((1, 1, 3, 3), -np.inf, np.float32)
    got = host.max_pool_arrays(x, geo)
    ref = _reference(monkeypatch, host.max_pool_arrays, x, geo)
    np.testing.assert_array_equal(got[1], ref[1])


@pytest.mark.parametrize("conv, pool", [
    (dict(padding=1, stride=2, groups=2), dict(kernel_size=3, stride=1, padding=1)),  # overlapping windows
    (dict(padding=(2, 1), dilation=2), dict(kernel_size=2, ceil_mode=True)),
    (dict(bias=False), dict(kernel_size=(2, 3), stride=(2, 1), dilation=(1, 2))),
    (dict(), dict(kernel_size=2)),  # 2x2 pairs (max_pool_pairs) over a (9, 8) plane
])
def test_compiled_step_replays_the_kernels_bitwise(conv, pool):
    """A numgrad.compile replay (the kernels' prepared replays into the trace's buffers) equals eager."""
    import numgrad
    nn = numgrad.nn

    def make():
        numgrad.manual_seed(0)
        return nn.Sequential(nn.Conv2d(2, 4, 3, **conv), nn.ReLU(), nn.MaxPool2d(**pool), nn.Conv2d(4, 2, 1),
                             nn.Flatten())

    def step(model, x):
        loss = (model(x) ** 2).sum()
        loss.backward()
        return loss

    rng = np.random.default_rng(3)
    batches = [rng.standard_normal((3, 2, 11, 10)).astype(np.float32) for _ in range(4)]
    eager, compiled = make(), make()
    run = numgrad.compile(step)
    for x in batches:
        want = step(eager, numgrad.tensor(x, requires_grad=True))
        got = run(compiled, numgrad.tensor(x, requires_grad=True))
        np.testing.assert_array_equal(got.detach().numpy(), want.detach().numpy())
        for a, b in zip(compiled.parameters(), eager.parameters()):
            np.testing.assert_array_equal(a.grad.numpy(), b.grad.numpy())
            a.grad = b.grad = None
    assert run.variants  # the step was traced and replayed, not run eagerly

"""F.interpolate in every mode with align_corners, sizes, scale factors (recomputed or not) and antialias, the upsample
functions and layers against torch: values, grad_fn names, gradients, finite differences, errors, warnings."""
import warnings

import numpy as np
import pytest
import torch

import numgrad
from helpers.functional_compare import check_gradients, compare, same_error
from helpers.nn_compare import rand, run_module, twin

SHAPES = {"nearest": [(2, 3, 5), (2, 3, 5, 4), (1, 2, 3, 4, 5)], "nearest-exact": [(2, 3, 5), (2, 3, 5, 4),
                                                                                 (1, 2, 3, 4, 5)],
          "linear": [(2, 3, 5)], "bilinear": [(2, 3, 5, 4)], "bicubic": [(2, 3, 5, 4)], "trilinear": [(1, 2, 3, 4, 5)],
          "area": [(2, 3, 7), (2, 3, 7, 6), (1, 2, 5, 7, 6)]}
SIZES = [dict(scale_factor=2), dict(scale_factor=1.7), dict(scale_factor=0.6), dict(size=7), dict(size=3),
         dict(scale_factor=2.3, recompute_scale_factor=True), dict(scale_factor=1.0)]
CASES = [(mode, shape, corners, sizes)
         for mode, shapes in SHAPES.items() for shape in shapes
         for corners in ([None] if mode in ("nearest", "nearest-exact", "area") else [False, True])
         for sizes in SIZES if not (mode == "area" and sizes.get("scale_factor", 0) > 1)]


def _ids(case):
    mode, shape, corners, sizes = case
    return f"{mode}-{len(shape) - 2}d-{corners}-" + "-".join(f"{k}={v}" for k, v in sizes.items())


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["float32", "float64"])
@pytest.mark.parametrize("case", CASES, ids=[_ids(c) for c in CASES])
def test_interpolate_matches_torch(case, dtype):
    mode, shape, corners, sizes = case
    compare(lambda F, x: F.interpolate(x, mode=mode, align_corners=corners, **sizes), shape, dtype=dtype)


GRADCHECK = [(mode, shape, corners, sizes) for mode, shape, corners, sizes in CASES
             if sizes in (dict(scale_factor=1.7), dict(size=3))]


@pytest.mark.parametrize("case", GRADCHECK, ids=[_ids(c) for c in GRADCHECK])
def test_interpolate_gradcheck(case):
    mode, shape, corners, sizes = case
    check_gradients(lambda F, x: F.interpolate(x, mode=mode, align_corners=corners, **sizes), shape)


def test_per_dim_sizes_and_scales():
    compare(lambda F, x: F.interpolate(x, size=(3, 8), mode="bilinear"), (2, 3, 5, 4))
    compare(lambda F, x: F.interpolate(x, scale_factor=(0.5, 2.5), mode="bicubic", align_corners=True), (2, 3, 5, 4))
    compare(lambda F, x: F.interpolate(x, scale_factor=(1.5, 2, 0.7)), (1, 2, 3, 4, 5))


ERRORS = [
    ((1, 2, 4, 5), dict(size=(0, 2))),
    ((1, 2, 5), dict(size=0, mode="linear")),
    ((1, 2, 1, 4, 5), dict(size=(1, 0, 2), mode="trilinear")),
    ((1, 2, 4, 5), dict(scale_factor=0.1)),
    ((1, 2, 4, 5), dict(scale_factor=-1.0)),
    ((2, 4, 5), dict(scale_factor=2, mode="bicubic")),
    ((4, 5), dict(scale_factor=2)),
    ((1, 2, 4, 5), dict(scale_factor=2, align_corners=True)),
    ((1, 2, 4, 5), dict(size=2, scale_factor=2)),
    ((1, 2, 4, 5), dict()),
    ((1, 2, 4, 5), dict(size=(2, 3, 4))),
    ((1, 2, 4, 5), dict(size=(2.0, 3))),
    ((1, 2, 4, 5), dict(scale_factor=(2.0, 3.0, 1.0))),
    ((1, 2, 4, 5), dict(size=3, recompute_scale_factor=True)),
    ((1, 2, 4, 5), dict(scale_factor=2, mode="linear")),
    ((1, 2, 4), dict(scale_factor=2, mode="bilinear")),
    ((1, 2, 4, 5), dict(scale_factor=2, mode="foo")),
    ((1, 2, 4, 5), dict(scale_factor=2, mode="nearest", antialias=True)),
]


@pytest.mark.parametrize("shape, kwargs", ERRORS)
def test_interpolate_errors_match_torch(shape, kwargs):
    same_error(lambda F, x: F.interpolate(x, **kwargs), rand(*shape))


def test_integer_input_is_refused_as_torch():
    same_error(lambda F, x: F.interpolate(x, scale_factor=2), np.ones((1, 2, 3), np.int64))
    same_error(lambda F, x: F.interpolate(x, scale_factor=2, mode="linear"), np.ones((1, 2, 3), np.int64))


@pytest.mark.parametrize("name", ["upsample", "upsample_nearest", "upsample_bilinear"])
def test_deprecated_upsample_functions_warn(name):
    results = []
    for lib in (numgrad, torch):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            out = getattr(lib.nn.functional, name)(lib.tensor(rand(1, 2, 3, 4)), scale_factor=2)
        results.append((out.numpy(), [(w.category, str(w.message), w.filename) for w in caught]))
    np.testing.assert_allclose(results[0][0], results[1][0], rtol=1e-5)
    assert results[0][1] == results[1][1]
    assert results[0][1][0][2] == __file__


LAYERS = {
    "upsample_nearest": (lambda nn: nn.Upsample(scale_factor=2), (2, 3, 4, 4)),
    "upsample_linear": (lambda nn: nn.Upsample(size=7, mode="linear"), (2, 3, 4)),
    "upsample_bilinear_corners": (lambda nn: nn.Upsample(scale_factor=(2, 1.5), mode="bilinear", align_corners=True),
                                  (2, 3, 4, 4)),
    "upsample_trilinear": (lambda nn: nn.Upsample(scale_factor=2, mode="trilinear"), (1, 2, 3, 3, 3)),
    "upsample_bicubic": (lambda nn: nn.Upsample(size=(5, 6), mode="bicubic"), (2, 3, 4, 4)),
    "upsampling_nearest2d": (lambda nn: nn.UpsamplingNearest2d(size=(2, 3)), (2, 3, 4, 4)),
    "upsampling_bilinear2d": (lambda nn: nn.UpsamplingBilinear2d(scale_factor=2), (2, 3, 4, 4)),
}


@pytest.mark.parametrize("name", list(LAYERS))
def test_upsample_layers_match_torch(name):
    make, shape = LAYERS[name]
    ours, theirs = twin(lambda lib: make(lib.nn))
    assert repr(ours) == repr(theirs)
    run_module(ours, theirs, rand(*shape))


ANTIALIAS = [(mode, corners, sizes) for mode in ("bilinear", "bicubic") for corners in (False, True)
             for sizes in (dict(scale_factor=0.5), dict(scale_factor=0.3), dict(size=(3, 5)), dict(scale_factor=2),
                           dict(size=(9, 4)), dict(scale_factor=0.45, recompute_scale_factor=True))]


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["float32", "float64"])
@pytest.mark.parametrize("case", ANTIALIAS, ids=[f"{m}-{c}-{s}" for m, c, s in ANTIALIAS])
def test_antialias_matches_torch(case, dtype):
    mode, corners, sizes = case
    compare(lambda F, x: F.interpolate(x, mode=mode, align_corners=corners, antialias=True, **sizes), (2, 3, 11, 8),
            dtype=dtype)


@pytest.mark.parametrize("mode", ["bilinear", "bicubic"])
def test_antialias_gradcheck(mode):
    check_gradients(lambda F, x: F.interpolate(x, size=(4, 3), mode=mode, antialias=True), (1, 2, 9, 7))

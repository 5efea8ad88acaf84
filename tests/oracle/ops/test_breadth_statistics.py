"""nansum, nanmean, aminmax, count_nonzero, bincount, cov, corrcoef, trapezoid/trapz, renorm and cdist against torch:
values, dtypes, grad_fn names, gradients, errors and float64 gradchecks."""
import warnings

import numpy as np
import pytest

import numgrad

from helpers.op_compare import F64, check, check_error, rand

NAN = float("nan")
X = np.array([[1.0, 2.0, NAN], [3.0, -4.0, 5.0]], np.float32)
M = np.array([[1.0, 2, 4, 7], [0, 3, -1, 2], [5, 5, 6, 1]], np.float32)


def _gradcheck(fn, *arrays):
    ins = [numgrad.tensor(a, requires_grad=True) for a in arrays]
    assert numgrad.testing.gradcheck(lambda *ts: fn(numgrad, *ts), ins)


# ---- nansum / nanmean ----------------------------------------------------------------------------------

@pytest.mark.parametrize("kw", [{}, {"dim": 1}, {"dim": 0, "keepdim": True}, {"dim": (0, 1)}, {"dim": -1}])
def test_nansum_nanmean(kw):
    check(lambda lib, x: lib.nansum(x, **kw), X)
    check(lambda lib, x: x.nanmean(**kw), X)
    check(lambda lib, x: lib.nanmean(x, **kw), X.astype(F64))
    _gradcheck(lambda lib, x: lib.nansum(x, **kw), rand(2, 3, dtype=F64))
    _gradcheck(lambda lib, x: lib.nanmean(x, **kw), rand(2, 3, dtype=F64))


def test_nansum_nanmean_dtypes_and_errors():
    check(lambda lib: lib.nansum(lib.tensor([1, 2])))
    check(lambda lib: lib.tensor([True, True]).nansum())
    check(lambda lib, x: lib.nansum(x, dtype=lib.float64), X)
    check(lambda lib: lib.nanmean(lib.tensor([NAN, NAN])))
    check(lambda lib: lib.nansum(lib.zeros(0, 3), 0))
    check_error(lambda lib: lib.nanmean(lib.tensor([1, 2])))
    check_error(lambda lib, x: lib.nansum(x, 2), X)
    check_error(lambda lib, x: lib.nansum(x, (0, 0)), X)


# ---- aminmax --------------------------------------------------------------------------------------------

@pytest.mark.parametrize("kw", [{}, {"keepdim": True}, {"dim": 1}, {"dim": 0, "keepdim": True}, {"dim": -1}])
def test_aminmax(kw):
    ties = np.array([[1.0, 3.0, 3.0], [2.0, 2.0, -1.0]], np.float32)  # equal extremes share the gradient
    check(lambda lib, x: tuple(lib.aminmax(x, **kw)), ties)
    check(lambda lib, x: tuple(x.aminmax(**kw)), rand(2, 3))
    check(lambda lib, x: lib.aminmax(x, **kw).max, rand(2, 3))  # one output's gradient only
    _gradcheck(lambda lib, x: lib.aminmax(x, **kw).min * 2 + lib.aminmax(x, **kw).max, rand(2, 3, dtype=F64))


def test_aminmax_types_and_errors():
    for lib_name in ("torch", "numgrad"):
        lib = pytest.importorskip(lib_name)
        out = lib.aminmax(lib.tensor([[1.0, 0.0]]), dim=1)
        assert repr(out).startswith("torch.return_types.aminmax(\nmin=tensor([0.]),\nmax=tensor([1.]))")
    check(lambda lib: tuple(lib.aminmax(lib.tensor([[True, False]]), dim=1)))
    check(lambda lib: tuple(lib.aminmax(lib.tensor([[3, 1], [2, 5]]))))
    check(lambda lib: tuple(lib.aminmax(lib.zeros(0, 3), dim=1)))
    check(lambda lib: tuple(lib.aminmax(lib.tensor(3.0), dim=0)))
    check_error(lambda lib: lib.aminmax(lib.zeros(0, 3), dim=0))
    check_error(lambda lib: lib.aminmax(lib.zeros(0, 3)))
    check_error(lambda lib: lib.aminmax(lib.zeros(2, 3), dim=2))


# ---- count_nonzero, bincount -------------------------------------------------------------------------------

def test_count_nonzero():
    x = np.array([[1.0, 0.0, -0.0], [2.0, 3.0, NAN]], np.float32)
    for dim in (None, 0, 1, -1, (0, 1), ()):
        check(lambda lib, x: lib.count_nonzero(x) if dim is None else lib.count_nonzero(x, dim), x)
    check(lambda lib: lib.tensor([[True, False]]).count_nonzero(-1))
    check(lambda lib: lib.count_nonzero(lib.tensor(0)))
    check_error(lambda lib, x: lib.count_nonzero(x, 2), x)
    check_error(lambda lib, x: lib.count_nonzero(x, (0, 0)), x)


def test_bincount():
    idx = np.array([1, 1, 3, 0])
    check(lambda lib, i: lib.bincount(i), idx)
    check(lambda lib, i: i.bincount(minlength=6), idx)
    check(lambda lib, i: lib.bincount(i, lib.tensor([0.5, 1.0, 2.0, 4.0])), idx)
    check(lambda lib, i: lib.bincount(i, lib.tensor([0.5, 1.0, 2.0, 4.0], dtype=lib.float64), 2), idx)
    check(lambda lib, i: lib.bincount(i, lib.tensor([1, 2, 3, 4])), idx)
    check(lambda lib: lib.bincount(lib.tensor([1, 2], dtype=lib.uint8)))
    check(lambda lib: lib.bincount(lib.tensor([], dtype=lib.int64), minlength=3))
    for bad in ([1, -1, 3], [[1, 1]], [1.0, 2.0], [True]):
        check_error(lambda lib: lib.bincount(lib.tensor(bad)))
    check_error(lambda lib, i: lib.bincount(i, minlength=-1), idx)
    check_error(lambda lib, i: lib.bincount(i, lib.tensor([1.0, 2.0])), idx)


def test_bincount_weights_record_a_node_without_derivative():
    messages = []
    for lib_name in ("torch", "numgrad"):
        lib = pytest.importorskip(lib_name)
        out = lib.bincount(lib.tensor([1, 1, 3]), lib.tensor([0.5, 1.0, 2.0], requires_grad=True))
        assert type(out.grad_fn).__name__ == "NotImplemented"
        with pytest.raises(RuntimeError) as info:
            out.sum().backward()
        messages.append(str(info.value))
    assert messages[0] == messages[1]


# ---- cov / corrcoef --------------------------------------------------------------------------------------

@pytest.mark.parametrize("kw", [{}, {"correction": 0}, {"correction": 2}, {"fweights": [1, 2, 0, 3]},
                                {"aweights": [1.0, 0.2, 0.5, 3.0]},
                                {"fweights": [1, 2, 1, 3], "aweights": [1.0, 0.2, 0.5, 3.0], "correction": 2}])
def test_cov(kw):
    def fn(lib, m):
        return lib.cov(m, **{k: lib.tensor(v) if isinstance(v, list) else v for k, v in kw.items()})
    check(fn, M)
    check(fn, M[:1])
    check(lambda lib, m: fn(lib, m[0]), M)
    _gradcheck(fn, M.astype(F64))


def test_cov_dtypes_and_errors():
    check(lambda lib: lib.cov(lib.tensor([[1, 2, 4], [3, 1, 0]])))
    check(lambda lib, m: lib.cov(m, aweights=lib.tensor([1.0, 0.2, 0.5, 3.0], dtype=lib.float64)), M)
    for kw in ({"fweights": [1, -2, 0, 3]}, {"fweights": [1.0, 2, 0, 3]}, {"aweights": [1, 2, 0, 3]},
               {"fweights": [1, 2, 0]}, {"fweights": [[1, 2, 0, 3]]}, {"aweights": [-1.0, 2, 0, 3]},
               {"fweights": [0, 0, 0, 0]}):
        check_error(lambda lib, m: lib.cov(m, **{k: lib.tensor(v) for k, v in kw.items()}), M)
    check_error(lambda lib: lib.cov(lib.tensor([True])))
    check_error(lambda lib: lib.cov(lib.zeros(1, 2, 3)))
    check_error(lambda lib: lib.corrcoef(lib.zeros(1, 2, 3)))


def test_cov_warns_for_no_degrees_of_freedom():
    seen = []
    for lib_name in ("torch", "numgrad"):
        lib = pytest.importorskip(lib_name)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            out = lib.cov(lib.tensor([[1.0], [2.0]]))
        seen.append(([str(w.message).split(" (Triggered")[0] for w in caught], out.tolist()))
    assert seen[0][0] and seen[0][0][0] in seen[1][0][0] and str(seen[0][1]) == str(seen[1][1])


def test_corrcoef():
    check(lambda lib, m: lib.corrcoef(m), M)
    check(lambda lib, m: m.corrcoef(), M.astype(F64))
    check(lambda lib, m: lib.corrcoef(m[0]), M)
    check(lambda lib: lib.corrcoef(lib.tensor([[1, 2, 4], [3, 1, 0]])))
    _gradcheck(lambda lib, m: lib.corrcoef(m), M.astype(F64))


# ---- trapezoid / trapz -------------------------------------------------------------------------------------

@pytest.mark.parametrize("op", ["trapezoid", "trapz"])
def test_trapezoid(op):
    f = lambda lib: getattr(lib, op)  # noqa: E731
    check(lambda lib, y: f(lib)(y), M)
    check(lambda lib, y: f(lib)(y, dim=0), M)
    check(lambda lib, y: f(lib)(y, dx=0.5), M)
    check(lambda lib, y: f(lib)(y, dx=2), M.astype(F64))
    check(lambda lib, y: f(lib)(y, lib.tensor([0.0, 1.0, 3.0, 4.0])), M)
    check(lambda lib, y, x: f(lib)(y, x), M, rand(3, 4, seed=3))
    check(lambda lib, y, x: f(lib)(y, x, dim=0), M, rand(3, seed=3))
    check(lambda lib: f(lib)(lib.tensor([[1, 2, 3]])))
    check(lambda lib: f(lib)(lib.tensor([[1, 2, 3]]), lib.tensor([1, 2, 4])))
    check(lambda lib: f(lib)(lib.zeros(2, 0)))
    check(lambda lib: f(lib)(lib.zeros(2, 0), lib.zeros(0)))
    check_error(lambda lib: f(lib)(lib.tensor([[True]])))
    check_error(lambda lib: f(lib)(lib.tensor([[1.0, 2.0]]), lib.tensor([True, False])))
    check_error(lambda lib, y: f(lib)(y, lib.tensor([0.0, 1.0, 3.0])), M)
    _gradcheck(lambda lib, y, x: f(lib)(y, x), M.astype(F64), rand(3, 4, dtype=F64, seed=3))


# ---- renorm ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("p", [1, 2, 3, 0.5, float("inf")])
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_renorm(p, dim):
    check(lambda lib, x: lib.renorm(x, p, dim, 5.0), M)
    check(lambda lib, x: x.renorm(p, dim, 1.0), rand(2, 3, 2))
    _gradcheck(lambda lib, x: lib.renorm(x, p, dim, 2.0), rand(3, 4, dtype=F64))


def test_renorm_in_place_and_errors():
    check(lambda lib, x: (x * 1).renorm_(2, 0, 5.0), M)
    check(lambda lib, x: lib.renorm(x, 2, 0, 100.0), M)  # no slice above maxnorm: the input's values
    check_error(lambda lib, x: x.renorm(2, 0, -5.0), M)
    check_error(lambda lib, x: x.renorm(0, 0, 5.0), M)
    check_error(lambda lib, x: x.renorm(-1, 0, 5.0), M)
    check_error(lambda lib: lib.tensor([[1, 2]]).renorm(2, 0, 5.0))
    check_error(lambda lib: lib.tensor([1.0, 2.0]).renorm(2, 0, 5.0))


# ---- cdist ----------------------------------------------------------------------------------------------

MODES = ["use_mm_for_euclid_dist_if_necessary", "use_mm_for_euclid_dist", "donot_use_mm_for_euclid_dist"]


@pytest.mark.parametrize("p", [0, 0.5, 1, 1.5, 2, 3, float("inf")])
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("shapes", [((3, 4), (2, 4)), ((30, 4), (5, 4)), ((2, 3, 4), (2, 4)),
                                    ((2, 1, 30, 3), (3, 2, 3))])
def test_cdist(p, mode, shapes):
    a, b = rand(*shapes[0]), rand(*shapes[1], seed=1)
    if len(shapes[0]) == len(shapes[1]) == 2:
        b[0] = a[0]  # a zero distance: torch's subgradient 0
    check(lambda lib, a, b: lib.cdist(a, b, p=p, compute_mode=mode), a, b, rtol=1e-4, atol=1e-5)
    check(lambda lib, a, b: lib.cdist(a, b, p, mode), a.astype(F64), b.astype(F64), rtol=1e-9, atol=1e-10)


@pytest.mark.parametrize("p", [1, 2, 3, float("inf")])
def test_cdist_gradcheck(p):
    _gradcheck(lambda lib, a, b: lib.cdist(a, b, p), rand(3, 4, dtype=F64), rand(2, 4, dtype=F64, seed=1))
    _gradcheck(lambda lib, a, b: lib.cdist(a, b, p), rand(27, 2, dtype=F64), rand(2, 2, dtype=F64, seed=1))


def test_cdist_empty_and_errors():
    check(lambda lib: lib.cdist(lib.zeros(0, 4), lib.ones(2, 4)))
    check(lambda lib: lib.cdist(lib.zeros(3, 0), lib.ones(2, 0)))
    check(lambda lib, a, b: lib.cdist(a, b), rand(3, 0), rand(2, 0))
    check_error(lambda lib: lib.cdist(lib.ones(3), lib.ones(2, 3)))
    check_error(lambda lib: lib.cdist(lib.ones(2, 3), lib.ones(3)))
    check_error(lambda lib: lib.cdist(lib.ones(2, 3), lib.ones(2, 4)))
    check_error(lambda lib: lib.cdist(lib.ones(2, 3, dtype=lib.long), lib.ones(2, 3)))
    check_error(lambda lib: lib.cdist(lib.ones(2, 3), lib.ones(2, 3), p=-1))
    check_error(lambda lib: lib.cdist(lib.ones(2, 3), lib.ones(2, 3), compute_mode="x"))
    for mode in MODES[1:]:
        check_error(lambda lib: lib.cdist(lib.ones(2, 3), lib.ones(2, 3, dtype=lib.float64), compute_mode=mode))
        check_error(lambda lib: lib.cdist(lib.ones(2, 3, dtype=lib.float64), lib.ones(2, 3), compute_mode=mode))

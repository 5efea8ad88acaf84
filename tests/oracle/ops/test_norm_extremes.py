"""norm, var, std and logsumexp at the ends of float32's range (1e30, 3e38, 1e-30, denormals) against torch:
values (infinities and zeros where torch's overflow or underflow too) and gradients, fused and unfused. A norm
whose every result reads one element is that element's abs in torch, whatever the order: no square to overflow."""
import math
import warnings

import numpy as np
import pytest
import torch

import numgrad

EXTREMES = {"large": [1e30, -2e30, 3e30], "max": [3e38, -3e38, 1e38], "tiny": [1e-30, -2e-30, 3e-30],
            "denormal": [1e-40, -2e-40, 3e-41], "mixed": [1e30, -1e-30, 0.0], "overflow square": [2e19, 2e19, 1.0]}
ORDERS = [2, "fro", 3, 1, 0.5, -1, 0, math.inf, -math.inf]
DTYPES = {"float32": (np.float32, torch.float32, numgrad.float32),
          "float64": (np.float64, torch.float64, numgrad.float64)}


def _both(values, dtype, shape, requires_grad=False):
    data = np.asarray(values, DTYPES[dtype][0]).reshape(shape)
    return (torch.tensor(data, requires_grad=requires_grad),
            numgrad.tensor(data, requires_grad=requires_grad))


def _same(ours, theirs):
    """Values equal to torch's in float32 rounding, with infinities, NaNs and zeros where torch has them."""
    ours, theirs = ours.detach().numpy(), theirs.detach().numpy()
    assert ours.dtype == theirs.dtype and ours.shape == theirs.shape
    np.testing.assert_allclose(ours, theirs, rtol=2e-6, atol=0, equal_nan=True)


@pytest.fixture(params=[True, False], ids=["fused", "unfused"])
def fusion(request):
    with numgrad.fusion(request.param):
        yield


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", EXTREMES)
@pytest.mark.parametrize("p", ORDERS, ids=str)
def test_norm_of_one_element_is_its_abs(fusion, case, p, dtype):
    """[1e30].norm() is 1e30 (not inf), norm(dim=...) over a dim of one element too, and the gradient is the
    element's sign (torch's, NaN for the orders whose backward overflows)."""
    values = EXTREMES[case]
    for shape, dim in [((1,), None), ((3, 1), 1), ((1, 3), 0), ((3, 1), (1,)), ((), None)]:
        cut = values[:1] if shape in ((1,), ()) else values
        theirs_in, ours_in = _both(cut, dtype, shape, requires_grad=p != 0)
        theirs, ours = theirs_in.norm(p=p, dim=dim), ours_in.norm(p=p, dim=dim)
        _same(ours, theirs)
        if p not in (0, -1):  # (-1: torch's pow flushes a denormal |x|**-2 to 0; numgrad's keeps it)
            theirs.sum().backward()
            ours.sum().backward()
            _same(ours_in.grad, theirs_in.grad)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", EXTREMES)
@pytest.mark.parametrize("p", ORDERS, ids=str)
def test_norm_of_several_elements_overflows_as_torchs(fusion, case, p, dtype):
    """Several elements: float32 squares and powers overflow (inf) and underflow (0) where torch's do."""
    theirs_in, ours_in = _both(EXTREMES[case], dtype, (1, 3))
    for dim in (None, 1, (0, 1)):
        theirs, ours = theirs_in.norm(p=p, dim=dim), ours_in.norm(p=p, dim=dim)
        _same(ours, theirs)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", ["large", "max", "tiny", "denormal", "mixed"])
def test_norm_gradient_at_the_extremes(fusion, case, dtype):
    """Gradients of the 2-norm and the inf-norm over several elements (torch's 0 where the norm overflows)."""
    for p in (2, math.inf):
        theirs_in, ours_in = _both(EXTREMES[case], dtype, (3,), requires_grad=True)
        theirs_in.norm(p=p).backward()
        ours_in.norm(p=p).backward()
        _same(ours_in.grad, theirs_in.grad)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", ["large", "max", "tiny", "denormal", "mixed"])
def test_var_std_logsumexp_at_the_extremes(fusion, case, dtype):
    """var and std (two passes about the mean, squares of float32 in double) and logsumexp (shifted by the
    max) at float32's extremes, with their gradients, whole-tensor and along a dim."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a row of one element has no degree of freedom left
        for shape, dim in [((3,), None), ((1, 3), 1), ((3, 1), 1)]:
            for name in ("var", "std", "logsumexp"):
                theirs_in, ours_in = _both(EXTREMES[case], dtype, shape, requires_grad=True)
                args = (0 if dim is None else dim,) if name == "logsumexp" else ((dim,) if dim is not None else ())
                theirs, ours = getattr(theirs_in, name)(*args), getattr(ours_in, name)(*args)
                _same(ours, theirs)
                theirs.sum().backward()
                ours.sum().backward()
                _same(ours_in.grad, theirs_in.grad)

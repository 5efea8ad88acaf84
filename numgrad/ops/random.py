"""The global random generator: manual_seed, rand, randn, randint and their *_like forms."""
import numpy as np

from .._core import dtypes
from .creation import _size, _wrap

_generator = [np.random.default_rng()]


def manual_seed(seed):
    _generator[0] = np.random.default_rng(int(seed) % 2**64)  # torch takes a negative seed modulo 2**64
    return _generator[0]


def seed():
    s = int(np.random.SeedSequence().entropy % (2 ** 63))
    manual_seed(s)
    return s


def generator():
    return _generator[0]


def _float_dtype(dtype):
    d = dtypes.to_dtype(dtype) if dtype is not None else dtypes.get_default_dtype()
    if not d.is_floating_point:
        raise NotImplementedError(f'"check_uniform_bounds" not implemented for \'{ {"int64": "Long", "bool": "Bool"}[d.name] }\'')
    return d


def _sampler(draw, name):
    def sample(*size, dtype=None, device=None, requires_grad=False, generator=None, **kw):
        if "size" in kw:  # torch accepts rand(size=(2, 3)) as well as rand(2, 3)
            size = (kw.pop("size"),)
        d = _float_dtype(dtype)
        data = draw(generator or _generator[0], _size(size), d.np)
        return _wrap(data, d, device, requires_grad)
    sample.__name__ = name
    return sample


rand = _sampler(lambda rng, shape, dtype: rng.random(shape, dtype=dtype), "rand")
randn = _sampler(lambda rng, shape, dtype: rng.standard_normal(shape, dtype=dtype), "randn")


def randint(low=0, high=None, size=None, *, dtype=None, device=None, requires_grad=False, generator=None):
    if isinstance(high, (tuple, list)):  # randint(high, size)
        low, high, size = 0, low, high
    if high is None:
        low, high = 0, low
    if size is None:
        raise TypeError("randint() missing required argument 'size'")
    d = dtypes.to_dtype(dtype) if dtype is not None else dtypes.int64
    if low >= high:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={low} >= to={high}")
    if d is dtypes.bool_ and not 0 <= low <= 1:
        raise RuntimeError("from is out of bounds for bool")
    if d is dtypes.bool_ and not 0 <= high - 1 <= 1:
        raise RuntimeError("to - 1 is out of bounds for bool")
    data = (generator or _generator[0]).integers(low, high, _size((size,)), dtype=np.int64).astype(d.np)
    return _wrap(data, d, device, requires_grad)


def randperm(n, *, dtype=None, device=None, requires_grad=False):
    d = dtypes.to_dtype(dtype) if dtype is not None else dtypes.int64
    if n < 0:
        raise RuntimeError(f"Trying to create tensor with negative dimension {n}: [{n}]")
    return _wrap(_generator[0].permutation(int(n)).astype(d.np), d, device, requires_grad)


def rand_like(t, dtype=None, requires_grad=False, device=None):
    return rand(*t.shape, dtype=dtype or t.dtype, requires_grad=requires_grad, device=device or t.device)


def randn_like(t, dtype=None, requires_grad=False, device=None):
    return randn(*t.shape, dtype=dtype or t.dtype, requires_grad=requires_grad, device=device or t.device)


def randint_like(t, low=0, high=None, dtype=None, requires_grad=False, device=None):
    return randint(low, high, t.shape, dtype=dtype or t.dtype, requires_grad=requires_grad,
                   device=device or t.device)


def normal(mean=0.0, std=1.0, size=None, *, dtype=None, requires_grad=False):
    d = _float_dtype(dtype)
    if isinstance(std, (int, float)) and std < 0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {std:g}")
    data = _generator[0].normal(mean, std, size=tuple(size) if size is not None else ()).astype(d.np)
    return _wrap(data, d, None, requires_grad)

"""The default generator and the random functions: manual_seed, rand, randn, randint, randperm, normal,
multinomial and the *_like forms, each drawing from `generator=` or the default generator."""
import contextlib

import numpy as np

from .._core import dtypes
from .creation import _size, _wrap
from .generator import Generator, numpy_rng

default_generator = Generator()
default_generator.seed()  # torch's default generator starts from a nondeterministic seed


def manual_seed(seed):
    return default_generator.manual_seed(seed)


def seed():
    return default_generator.seed()


def initial_seed():
    return default_generator.initial_seed()


def get_rng_state():
    return default_generator.get_state()


def set_rng_state(new_state):
    default_generator.set_state(new_state)


@contextlib.contextmanager
def fork_rng(devices=None, enabled=True, _caller="fork_rng", _devices_kw="devices", device_type="cuda"):
    """Restores the default generator's state when the block ends (GPU draws come from it too in numgrad)."""
    if not enabled:
        yield
        return
    state = default_generator.get_state()
    try:
        yield
    finally:
        default_generator.set_state(state)


def generator():
    """The default generator's NumPy stream (for numgrad's own draws: dropout, nn.init)."""
    return default_generator._rng


def rng(generator=None):
    """The NumPy stream a `generator=` argument names (None: the default generator's)."""
    return numpy_rng(generator, default_generator)


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
        data = draw(rng(generator), _size(size), d.np)
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
    data = rng(generator).integers(low, high, _size((size,)), dtype=np.int64).astype(d.np)
    return _wrap(data, d, device, requires_grad)


def randperm(n, *, generator=None, dtype=None, device=None, requires_grad=False):
    d = dtypes.to_dtype(dtype) if dtype is not None else dtypes.int64
    if n < 0:
        raise RuntimeError(f"Trying to create tensor with negative dimension {n}: [{n}]")
    return _wrap(rng(generator).permutation(int(n)).astype(d.np), d, device, requires_grad)


def rand_like(t, dtype=None, requires_grad=False, device=None):
    return rand(*t.shape, dtype=dtype or t.dtype, requires_grad=requires_grad, device=device or t.device)


def randn_like(t, dtype=None, requires_grad=False, device=None):
    return randn(*t.shape, dtype=dtype or t.dtype, requires_grad=requires_grad, device=device or t.device)


def randint_like(t, low=0, high=None, dtype=None, requires_grad=False, device=None):
    return randint(low, high, t.shape, dtype=dtype or t.dtype, requires_grad=requires_grad,
                   device=device or t.device)


def normal(mean=0.0, std=1.0, size=None, *, generator=None, dtype=None, requires_grad=False):
    d = _float_dtype(dtype)
    if isinstance(std, (int, float)) and std < 0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {std:g}")
    data = rng(generator).normal(mean, std, size=tuple(size) if size is not None else ()).astype(d.np)
    return _wrap(data, d, None, requires_grad)


def multinomial(input, num_samples, replacement=False, *, generator=None):
    """Category indices drawn by weight from each row: with replacement by the inverse CDF, without by torch's
    exponential race (the largest w / Exp(1) first, so zero weights come last and only when they must)."""
    if not input.dtype.is_floating_point:
        raise RuntimeError(f"multinomial only supports floating-point dtypes for input, got: {input.dtype.word}")
    if input.dim() not in (1, 2):
        raise RuntimeError("prob_dist must be 1 or 2 dim")
    if num_samples <= 0:
        raise RuntimeError("cannot sample n_sample <= 0 samples")
    categories = input.shape[-1]
    if not replacement and num_samples > categories:
        raise RuntimeError("cannot sample n_sample > prob_dist.size(-1) samples without replacement")
    w = np.atleast_2d(input._host).astype(np.float64)
    if not np.isfinite(w).all() or (w < 0).any():
        raise RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
    if (w.sum(-1) <= 0).any():
        raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
    draw = rng(generator)
    if replacement:
        cdf = np.cumsum(w, -1)
        u = draw.random((w.shape[0], num_samples)) * cdf[:, -1:]
        picks = np.stack([np.searchsorted(c, row, side="right") for c, row in zip(cdf, u)])
        last_positive = categories - 1 - np.argmax(w[:, ::-1] > 0, axis=-1)  # rounding never picks a zero weight
        picks = np.minimum(picks, last_positive[:, None])
    else:
        keys = w / draw.exponential(size=w.shape)
        picks = np.argsort(-keys, axis=-1, kind="stable")[:, :num_samples]
    picks = picks.astype(np.int64)
    return _wrap(picks if input.dim() == 2 else picks[0], dtypes.int64, input.device, False)

"""torch.utils.data.sampler: the orders a DataLoader visits a dataset in, and their batching."""
import itertools

from ...ops.creation import as_tensor
from ...ops.generator import Generator
from ...ops.random import multinomial, randint, randperm, rng
from ..._core import dtypes

__all__ = ["BatchSampler", "RandomSampler", "Sampler", "SequentialSampler", "SubsetRandomSampler",
           "WeightedRandomSampler"]


class Sampler:
    """Iterates over indices (or lists of indices, for a batch sampler) of a dataset."""

    def __iter__(self):
        raise NotImplementedError

    def __class_getitem__(cls, item):
        return cls


def _positive_int(name, value):
    if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
        raise ValueError(f"{name} should be a positive integer value, but got {name}={value}")


def _bool(name, value, error=ValueError):
    if not isinstance(value, bool):
        raise error(f"{name} should be a boolean value, but got {name}={value}")


class SequentialSampler(Sampler):
    def __init__(self, data_source):
        self.data_source = data_source

    def __iter__(self):
        return iter(range(len(self.data_source)))

    def __len__(self):
        return len(self.data_source)


class RandomSampler(Sampler):
    """A new permutation each pass (or num_samples draws with replacement), from `generator` or, without
    one, from a generator seeded by the default generator at the start of each pass."""

    def __init__(self, data_source, replacement=False, num_samples=None, generator=None):
        self.data_source = data_source
        self.replacement = replacement
        self._num_samples = num_samples
        self.generator = generator
        _bool("replacement", replacement, TypeError)
        if not isinstance(self.num_samples, int) or self.num_samples <= 0:
            raise ValueError(f"num_samples should be a positive integer value, but got num_samples={self.num_samples}")

    @property
    def num_samples(self):
        return len(self.data_source) if self._num_samples is None else self._num_samples

    def __iter__(self):
        n = len(self.data_source)
        generator = self.generator
        if generator is None:
            generator = Generator().manual_seed(int(rng().integers(0, 2**63, dtype="int64")))
        if self.replacement:  # drawn 32 at a time, as torch draws them
            for _ in range(self.num_samples // 32):
                yield from randint(high=n, size=(32,), dtype=dtypes.int64, generator=generator).tolist()
            yield from randint(high=n, size=(self.num_samples % 32,), dtype=dtypes.int64,
                               generator=generator).tolist()
        else:
            for _ in range(self.num_samples // n):
                yield from randperm(n, generator=generator).tolist()
            yield from randperm(n, generator=generator).tolist()[:self.num_samples % n]

    def __len__(self):
        return self.num_samples


class SubsetRandomSampler(Sampler):
    """The given indices in a random order."""

    def __init__(self, indices, generator=None):
        self.indices = indices
        self.generator = generator

    def __iter__(self):
        for i in randperm(len(self.indices), generator=self.generator).tolist():
            yield self.indices[i]

    def __len__(self):
        return len(self.indices)


class WeightedRandomSampler(Sampler):
    """num_samples indices of [0, len(weights)) drawn with probabilities proportional to the weights."""

    def __init__(self, weights, num_samples, replacement=True, generator=None):
        _positive_int("num_samples", num_samples)
        _bool("replacement", replacement)
        weights_tensor = as_tensor(weights, dtype=dtypes.float64)
        if len(weights_tensor.shape) != 1:
            raise ValueError("weights should be a 1d sequence but given weights have shape "
                             f"{tuple(weights_tensor.shape)}")
        self.weights = weights_tensor
        self.num_samples = num_samples
        self.replacement = replacement
        self.generator = generator

    def __iter__(self):
        yield from multinomial(self.weights, self.num_samples, self.replacement, generator=self.generator).tolist()

    def __len__(self):
        return self.num_samples


class BatchSampler(Sampler):
    """Groups another sampler's indices into lists of batch_size (the last one shorter unless drop_last)."""

    def __init__(self, sampler, batch_size, drop_last):
        _positive_int("batch_size", batch_size)
        _bool("drop_last", drop_last)
        self.sampler = sampler
        self.batch_size = batch_size
        self.drop_last = drop_last

    def __iter__(self):
        sampler_iter = iter(self.sampler)
        if self.drop_last:
            yield from (list(batch) for batch in zip(*[sampler_iter] * self.batch_size))
        else:
            batch = list(itertools.islice(sampler_iter, self.batch_size))
            while batch:
                yield batch
                batch = list(itertools.islice(sampler_iter, self.batch_size))

    def __len__(self):
        if self.drop_last:
            return len(self.sampler) // self.batch_size
        return (len(self.sampler) + self.batch_size - 1) // self.batch_size

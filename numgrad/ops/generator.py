"""numgrad.Generator: torch.Generator's interface over a NumPy PCG64 stream (seed, state, device)."""
import numbers

import numpy as np

from .._core import dtypes
from .._core.device import device as as_device
from .creation import _wrap

DEFAULT_SEED = 67280421310721  # a fresh torch.Generator's seed
# torch's state is a ByteTensor (uint8); numgrad's state has that dtype once numgrad has uint8
STATE_DTYPE = getattr(dtypes, "uint8", dtypes.int64)
_STATE_BYTES = 16 + 16 + 1 + 4 + 8  # PCG64's state and increment, its cached 32-bit half, the initial seed


def _seed_value(seed):
    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral):
        raise RuntimeError(f"manual_seed expected a long, but got {type(seed).__name__}")
    return int(seed) % 2**64  # torch takes a negative seed modulo 2**64


class Generator:
    """A random stream of its own: numgrad's random functions and samplers take one as `generator=`.
    Values differ from torch's (another algorithm); seeding, state save/restore and independence behave as
    torch's do."""

    def __init__(self, device="cpu"):
        self.device = as_device(device)
        self.manual_seed(DEFAULT_SEED)

    def manual_seed(self, seed):
        self._initial_seed = _seed_value(seed)
        self._rng = np.random.Generator(np.random.PCG64(self._initial_seed))
        return self

    def seed(self):
        """Seeds from the system's entropy and returns the seed."""
        s = int(np.random.SeedSequence().entropy % 2**64)
        self.manual_seed(s)
        return s

    def initial_seed(self):
        return self._initial_seed

    def get_state(self):
        st = self._rng.bit_generator.state
        raw = (st["state"]["state"].to_bytes(16, "little") + st["state"]["inc"].to_bytes(16, "little")
               + bytes([st["has_uint32"]]) + st["uinteger"].to_bytes(4, "little")
               + self._initial_seed.to_bytes(8, "little"))
        return _wrap(np.frombuffer(raw, np.uint8).astype(STATE_DTYPE.np), STATE_DTYPE, None, False)

    def set_state(self, new_state):
        if getattr(new_state, "dtype", None) is not STATE_DTYPE:
            raise TypeError("RNG state must be a torch.ByteTensor")
        if new_state.numel() != _STATE_BYTES:
            raise RuntimeError(f"Expected a CPUGeneratorImplState of size {_STATE_BYTES} but found the input RNG "
                               f"state size to be {new_state.numel()}")
        raw = bytes(np.asarray(new_state.tolist(), np.uint8))
        rng = np.random.Generator(np.random.PCG64())
        rng.bit_generator.state = {"bit_generator": "PCG64",
                                   "state": {"state": int.from_bytes(raw[0:16], "little"),
                                             "inc": int.from_bytes(raw[16:32], "little")},
                                   "has_uint32": raw[32], "uinteger": int.from_bytes(raw[33:37], "little")}
        self._rng, self._initial_seed = rng, int.from_bytes(raw[37:45], "little")
        return self

    def __repr__(self):
        return f"<numgrad.Generator object at {hex(id(self))}>"


def numpy_rng(generator, default):
    """The NumPy stream to draw from: `generator`'s, or the default generator's."""
    if generator is None:
        return default._rng
    if not isinstance(generator, Generator):
        raise TypeError(f"expected a torch.Generator as generator, but got {type(generator).__name__}")
    return generator._rng

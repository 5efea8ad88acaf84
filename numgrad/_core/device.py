"""torch.device: where a tensor lives, the CPU or a GPU through Numba's CUDA target."""


class device:
    """Where a tensor lives: the CPU, or a GPU through Numba's CUDA target (numgrad.cuda)."""

    def __init__(self, type="cpu", index=None):
        if isinstance(type, device):
            type, index = type.type, type.index
        if ":" in type:
            type, index = type.split(":")[0], int(type.split(":")[1])
        if type not in ("cpu", "cuda"):
            raise RuntimeError(f"Expected one of cpu, cuda device type at start of device string: {type}")
        if isinstance(index, int) and index < 0:
            raise RuntimeError("Device index must not be negative")
        self.type, self.index = type, index

    def __repr__(self):
        return f"device(type='{self.type}')" if self.index is None else \
            f"device(type='{self.type}', index={self.index})"

    def __str__(self):
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __eq__(self, other):  # a device equals devices only: device("cpu") == "cpu" is False, as in torch
        return isinstance(other, device) and (self.type, self.index) == (other.type, other.index)

    def __hash__(self):
        return hash((self.type, self.index))


CPU = device("cpu")
CUDA0 = device("cuda", 0)

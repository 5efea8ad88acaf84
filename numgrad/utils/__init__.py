"""torch.utils's counterpart: utils.data (datasets and the DataLoader), utils.dlpack (the DLPack exchange) and
utils.checkpoint (activation checkpointing)."""
from . import checkpoint, data, dlpack

"""numgrad.nn.parallel: DistributedDataParallel over numgrad.distributed (MPI), and DataParallel."""
from .data_parallel import DataParallel
from .distributed import DistributedDataParallel

__all__ = ["DataParallel", "DistributedDataParallel"]

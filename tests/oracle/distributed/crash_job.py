"""Run by test_distributed.py under `mpiexec -n 2 python -m mpi4py`: rank 1 raises in its second step while
rank 0 waits in an all-reduce; the whole job must end with the error, not hang."""
import numgrad
import numgrad.distributed as dist
import numgrad.nn as nn
from numgrad.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group("mpi")
model = DDP(nn.Linear(4, 2))
for step in range(3):
    if step == 1 and dist.get_rank() == 1:
        raise ValueError("rank 1 failed in step 1")
    model(numgrad.ones(3, 4)).sum().backward()

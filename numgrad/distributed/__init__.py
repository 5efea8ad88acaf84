"""numgrad.distributed: torch.distributed's process groups and collectives, over MPI (mpi4py, imported on
first use: `pip install 'numgrad[dist]'`). Launch with `mpiexec -n N python -m mpi4py script.py` or
`python -m numgrad.distributed.run -n N script.py`."""
from .collectives import (GroupMember, ProcessGroup, ReduceOp, Work, all_gather, all_gather_into_tensor,
                          all_gather_object, all_reduce, barrier, broadcast, broadcast_object_list,
                          destroy_process_group, gather, get_backend, get_rank, get_world_size, group,
                          init_process_group, irecv, is_available, is_gloo_available, is_initialized,
                          is_mpi_available, is_nccl_available, isend, new_group, recv, reduce,
                          reduce_scatter_tensor, scatter, send)

__all__ = ["GroupMember", "ProcessGroup", "ReduceOp", "Work", "all_gather", "all_gather_into_tensor",
           "all_gather_object", "all_reduce", "barrier", "broadcast", "broadcast_object_list",
           "destroy_process_group", "gather", "get_backend", "get_rank", "get_world_size", "group",
           "init_process_group", "irecv", "is_available", "is_gloo_available", "is_initialized", "is_mpi_available",
           "is_nccl_available", "isend", "new_group", "recv", "reduce", "reduce_scatter_tensor", "scatter", "send"]

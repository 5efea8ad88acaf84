"""The MPI transport under numgrad.distributed: mpi4py imported on first use (an optional extra), the world
communicator and the groups made from it, and a tensor's memory as a buffer MPI reads and writes in place."""
import os
import warnings

import numpy as np

from ..kernels import dispatch, tape

_state = {"mpi": None, "world": None, "backend": None}


def mpi():
    """mpi4py's MPI module; a clear error where the `dist` extra is not installed."""
    if _state["mpi"] is None:
        try:
            from mpi4py import MPI
        except ImportError as e:
            raise RuntimeError("numgrad.distributed needs mpi4py and an MPI library: "
                               "pip install 'numgrad[dist]' (mpi4py and the mpich wheel)") from e
        _state["mpi"] = MPI
    return _state["mpi"]


def available():
    try:
        mpi()
    except RuntimeError:
        return False
    return True


def world():
    if _state["world"] is None:
        raise ValueError("Default process group has not been initialized, please make sure to call "
                         "init_process_group.")
    return _state["world"]


def set_world(comm, backend):
    _state["world"], _state["backend"] = comm, backend


def backend():
    world()
    return _state["backend"]


def launched_ranks():
    """(rank, world size) as the launcher's environment states them: mpiexec's PMI variables, Open MPI's,
    or torchrun's RANK/WORLD_SIZE; None where the process was started alone."""
    env = os.environ
    for rank, size in (("PMI_RANK", "PMI_SIZE"), ("OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"),
                       ("RANK", "WORLD_SIZE")):
        if rank in env and size in env:
            return int(env[rank]), int(env[size])
    return None


class Buffer:
    """A tensor's values as a C-contiguous host array MPI can use in place. A strided, read-only or GPU
    tensor goes through a staged copy that `commit` writes back (GPU: with a warning, once)."""

    def __init__(self, t, write=True):
        tape.graph_break("a collective communicates between processes")
        self.t, self.write = t, write
        arr = t._data
        self.gpu = arr.__class__ is not np.ndarray
        if self.gpu:
            warnings.warn("numgrad.distributed: a CUDA tensor is staged through host memory for MPI "
                          "(nccl4py is not used)", stacklevel=4)
            arr = dispatch.to_host(arr)
        self.direct = not self.gpu and arr.flags.c_contiguous and arr.flags.writeable
        self.array = arr if self.direct else np.ascontiguousarray(arr)

    def commit(self):
        """Writes the received values into the tensor (when they were staged) and counts an in-place change."""
        if not self.write:
            return
        if not self.direct:
            dst = self.t._data
            if self.gpu:
                dispatch.copy_into(dst, self.array)
            else:
                dst[...] = self.array
        self.t._vc[0] += 1

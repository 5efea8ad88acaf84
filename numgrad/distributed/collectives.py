"""torch.distributed's process group and collectives over MPI: each runs in place on the tensor's memory
(no pickling, no copies of contiguous host tensors), blocking or as a Work to wait on (async_op=True)."""
import enum
import os
import pickle

import numpy as np

from .._core import dtypes
from ..kernels import dispatch
from . import _mpi
from ._mpi import Buffer, mpi


class ReduceOp(enum.Enum):
    """How a collective combines the ranks' values (torch.distributed.ReduceOp's members)."""
    SUM = 0
    AVG = 1
    PRODUCT = 2
    MIN = 3
    MAX = 4
    BAND = 5
    BOR = 6
    BXOR = 7

    def __repr__(self):
        return f"<RedOpType.{self.name}: {self.value}>"


class ProcessGroup:
    """A set of ranks with a communicator of their own (torch's ProcessGroup); `comm` is None on a rank
    outside the group."""

    def __init__(self, comm, ranks):
        self.comm, self.ranks = comm, list(ranks)

    def rank(self):
        return self.comm.Get_rank() if self.comm is not None else -1

    def size(self):
        return len(self.ranks)

    def group_rank(self, global_rank):
        """The rank within this group of global rank `global_rank` (torch's src and dst are global)."""
        if global_rank not in self.ranks:
            raise ValueError(f"Global rank {global_rank} is not part of group {self}")
        return self.ranks.index(global_rank)

    def __repr__(self):
        return f"<numgrad.distributed.ProcessGroup ranks={self.ranks}>"


class _GroupMember:
    WORLD = None
    NON_GROUP_MEMBER = -100


GroupMember = group = _GroupMember


class Work:
    """A collective under way (async_op=True): wait() finishes it and writes its results into the tensors."""

    def __init__(self, requests, finish):
        self._requests, self._finish, self._done = requests, finish, False

    def wait(self, timeout=None):
        if not self._done:
            mpi().Request.Waitall(self._requests)
            self._done = True
            self._finish()
        return True

    def is_completed(self):
        if not self._done and mpi().Request.Testall(self._requests):
            self._done = True
            self._finish()
        return self._done

    def is_success(self):
        return self.is_completed()

    def result(self):
        self.wait()
        return []


def _start(comm, name, *args, **kwargs):
    """A collective's start: `start(True)` calls MPI's blocking `name` (Allreduce), `start(False)` its
    nonblocking twin (Iallreduce) and returns the request."""
    nonblocking = "I" + name[0].lower() + name[1:]
    return lambda blocking: getattr(comm, name if blocking else nonblocking)(*args, **kwargs)


def _done(start, finish, async_op):
    """Runs a collective at once, or (async_op) as a Work whose wait() finishes it; `finish` writes the
    results into the tensors."""
    if async_op:
        return Work([start(False)], finish)
    start(True)
    finish()
    return None


# ---- the process group ---------------------------------------------------------------------------------
BACKENDS = ("mpi", "gloo", "nccl", "cpu:gloo,cuda:nccl")


def init_process_group(backend=None, init_method=None, timeout=None, world_size=-1, rank=-1, store=None,
                       group_name="", pg_options=None, device_id=None):
    """Joins the MPI job this process was launched in (`mpiexec -n N python -m mpi4py script.py`, or
    `python -m numgrad.distributed.run -n N script.py`). Every backend name runs over MPI; rank and world
    size come from the launcher, and those given must agree with it."""
    if _GroupMember.WORLD is not None:
        raise ValueError("trying to initialize the default process group twice!")
    if backend is not None and str(backend).lower() not in BACKENDS:
        raise ValueError(f"Invalid backend: '{backend}'")
    comm = mpi().COMM_WORLD
    size, me = comm.Get_size(), comm.Get_rank()
    launched = _mpi.launched_ranks()
    if launched is not None and launched[1] > 1 and size == 1:
        raise RuntimeError(f"this process was launched as rank {launched[0]} of {launched[1]}, but MPI sees one "
                           "process: launch with `mpiexec -n N python -m mpi4py script.py` or "
                           "`python -m numgrad.distributed.run -n N script.py`")
    if world_size not in (-1, None) and world_size != size:
        raise ValueError(f"world_size={world_size} was given, but the MPI job has {size} processes")
    if rank not in (-1, None) and rank != me:
        raise ValueError(f"rank={rank} was given, but this process is MPI rank {me}")
    if size > 1 and "NUMBA_NUM_THREADS" not in os.environ:
        dispatch.set_num_threads(1)  # one compute thread per rank: N ranks on N cores, not N * cores threads
    _GroupMember.WORLD = ProcessGroup(comm, range(size))
    _mpi.set_world(_GroupMember.WORLD, str(backend or "mpi").lower())


def is_available():
    return _mpi.available()


def is_initialized():
    return _GroupMember.WORLD is not None


def is_mpi_available():
    return _mpi.available()


def is_gloo_available():
    return False


def is_nccl_available():
    return False


def get_backend(group=None):
    _group(group)
    return _mpi.backend()


def _group(group):
    world = _mpi.world()
    return world if group is None else group


def get_rank(group=None):
    return _group(group).rank()


def get_world_size(group=None):
    g = _group(group)
    return g.size() if g.comm is not None else -1


def new_group(ranks=None, timeout=None, backend=None, pg_options=None, use_local_synchronization=False):
    """A group of `ranks` (all by default); every rank of the world must call it, members or not."""
    world = _mpi.world()
    ranks = sorted(ranks) if ranks is not None else list(world.ranks)
    comm = world.comm.Create_group(world.comm.group.Incl(ranks))
    return ProcessGroup(comm if comm != mpi().COMM_NULL else None, ranks)


def destroy_process_group(group=None):
    g = _group(group)
    if g is _GroupMember.WORLD:
        _GroupMember.WORLD = None
        _mpi.set_world(None, None)
    elif g.comm is not None:
        g.comm.Free()
        g.comm = None


def barrier(group=None, async_op=False, device_ids=None):
    g = _group(group)
    if g.comm is None:
        return None
    return _done(_start(g.comm, "Barrier"), lambda: None, async_op)


# ---- reductions ----------------------------------------------------------------------------------------
_MPI_OPS = {ReduceOp.SUM: "SUM", ReduceOp.AVG: "SUM", ReduceOp.PRODUCT: "PROD", ReduceOp.MIN: "MIN",
            ReduceOp.MAX: "MAX", ReduceOp.BAND: "BAND", ReduceOp.BOR: "BOR", ReduceOp.BXOR: "BXOR"}
_BOOL_OPS = {ReduceOp.SUM: "LOR", ReduceOp.MAX: "LOR", ReduceOp.BOR: "LOR", ReduceOp.PRODUCT: "LAND",
             ReduceOp.MIN: "LAND", ReduceOp.BAND: "LAND", ReduceOp.BXOR: "LXOR"}


def _reduction(t, op):
    """(the MPI op, the array to reduce, what to do once reduced) for tensor `t`: AVG sums then divides; a
    dtype MPI cannot add (float16, bfloat16) is reduced in float32 and rounded back."""
    if not isinstance(op, ReduceOp):
        raise ValueError(f"Invalid reduce op: {op!r}")
    d = t._dtype
    if op is ReduceOp.AVG and not d.is_floating_point:
        raise ValueError(f"ReduceOp.AVG needs a floating-point tensor, got {d}")
    if op in (ReduceOp.BAND, ReduceOp.BOR, ReduceOp.BXOR) and d.is_floating_point:
        raise RuntimeError(f"Cannot use ReduceOp.{op.name} with a floating-point tensor ({d})")
    name = _BOOL_OPS[op] if d is dtypes.bool_ else _MPI_OPS[op]
    return getattr(mpi(), name)


def _computable(array):
    """`array`, or a float32 copy where MPI has no arithmetic for its dtype."""
    return array.astype(np.float32) if array.dtype.itemsize == 2 and array.dtype.kind in "fV" else array


def _finish_reduction(buf, work, op, size):
    def finish():
        if op is ReduceOp.AVG:
            np.divide(work, size, out=work, casting="unsafe")
        if work is not buf.array:
            buf.array[...] = work.astype(buf.array.dtype)
        buf.commit()
    return finish


def all_reduce(tensor, op=ReduceOp.SUM, group=None, async_op=False):
    """Every rank's `tensor` becomes the reduction (op) of all ranks' values, in place."""
    g = _group(group)
    if g.comm is None:
        return None
    mpi_op, buf = _reduction(tensor, op), Buffer(tensor)
    work = _computable(buf.array)
    start = _start(g.comm, "Allreduce", mpi().IN_PLACE, work, op=mpi_op)
    return _done(start, _finish_reduction(buf, work, op, g.size()), async_op)


def reduce(tensor, dst=0, op=ReduceOp.SUM, group=None, async_op=False):
    """Rank `dst`'s `tensor` becomes the reduction of all ranks' values; the others' are left as they are."""
    g = _group(group)
    if g.comm is None:
        return None
    root, mpi_op = g.group_rank(dst), _reduction(tensor, op)
    buf = Buffer(tensor, write=g.rank() == root)
    work = _computable(buf.array)
    if g.rank() == root:
        start = _start(g.comm, "Reduce", mpi().IN_PLACE, work, op=mpi_op, root=root)
    else:
        start = _start(g.comm, "Reduce", work, None, op=mpi_op, root=root)
    return _done(start, _finish_reduction(buf, work, op, g.size()), async_op)


def reduce_scatter_tensor(output, input, op=ReduceOp.SUM, group=None, async_op=False):
    """`output` on rank r becomes block r of the reduction of every rank's `input` (world size blocks)."""
    g = _group(group)
    if g.comm is None:
        return None
    if input.numel() != output.numel() * g.size():
        raise ValueError("input tensor must be the same size as output size times world size")
    mpi_op, src, buf = _reduction(input, op), Buffer(input, write=False), Buffer(output)
    send, work = _computable(src.array), _computable(buf.array)
    start = _start(g.comm, "Reduce_scatter_block", send, work, op=mpi_op)
    return _done(start, _finish_reduction(buf, work, op, g.size()), async_op)


# ---- data movement -------------------------------------------------------------------------------------
def _bytes(array):
    """Raw bytes for MPI's data movement, whatever the dtype (bfloat16 has no MPI type)."""
    return array.reshape(-1).view(np.uint8)


def broadcast(tensor, src, group=None, async_op=False):
    """Every rank's `tensor` becomes rank `src`'s."""
    g = _group(group)
    if g.comm is None:
        return None
    buf = Buffer(tensor)
    start = _start(g.comm, "Bcast", _bytes(buf.array), root=g.group_rank(src))
    return _done(start, buf.commit, async_op)


def _check_list(tensors, size, what):
    if len(tensors) != size:
        raise ValueError(f"{what} must have the same length as the world size ({size}), got {len(tensors)}")


def all_gather_into_tensor(output_tensor, input_tensor, group=None, async_op=False):
    """`output_tensor` (world size times `input_tensor`'s elements, concatenated or stacked) receives every
    rank's `input_tensor`, in rank order."""
    g = _group(group)
    if g.comm is None:
        return None
    if output_tensor.numel() != input_tensor.numel() * g.size():
        raise ValueError("output tensor size must be equal to world_size times input tensor size")
    if output_tensor.dtype != input_tensor.dtype:
        raise TypeError("output tensor must have the same type as input tensor")
    src, buf = Buffer(input_tensor, write=False), Buffer(output_tensor)
    start = _start(g.comm, "Allgather", _bytes(src.array), _bytes(buf.array))
    return _done(start, buf.commit, async_op)


def all_gather(tensor_list, tensor, group=None, async_op=False):
    """tensor_list[r] receives rank r's `tensor` on every rank."""
    g = _group(group)
    if g.comm is None:
        return None
    _check_list(tensor_list, g.size(), "tensor_list")
    src = Buffer(tensor, write=False)
    gathered = np.empty((g.size(),) + src.array.shape, src.array.dtype)
    start = _start(g.comm, "Allgather", _bytes(src.array), _bytes(gathered))
    return _done(start, lambda: _unpack(gathered, tensor_list), async_op)


def _unpack(rows, tensors):
    for row, t in zip(rows, tensors):
        buf = Buffer(t)
        buf.array[...] = row.reshape(buf.array.shape)
        buf.commit()


def gather(tensor, gather_list=None, dst=0, group=None, async_op=False):
    """Rank `dst`'s gather_list[r] receives rank r's `tensor`."""
    g = _group(group)
    if g.comm is None:
        return None
    root, src = g.group_rank(dst), Buffer(tensor, write=False)
    at_root = g.rank() == root
    if at_root:
        _check_list(gather_list or [], g.size(), "gather_list")
    elif gather_list:
        raise ValueError("Argument ``gather_list`` must NOT be specified on non-destination ranks.")
    gathered = np.empty((g.size(),) + src.array.shape, src.array.dtype) if at_root else None
    start = _start(g.comm, "Gather", _bytes(src.array), _bytes(gathered) if at_root else None, root=root)
    return _done(start, (lambda: _unpack(gathered, gather_list)) if at_root else (lambda: None), async_op)


def scatter(tensor, scatter_list=None, src=0, group=None, async_op=False):
    """Rank r's `tensor` receives rank `src`'s scatter_list[r]."""
    g = _group(group)
    if g.comm is None:
        return None
    root, buf = g.group_rank(src), Buffer(tensor)
    if g.rank() == root:
        _check_list(scatter_list or [], g.size(), "scatter_list")
        rows = np.stack([Buffer(t, write=False).array.reshape(buf.array.shape) for t in scatter_list])
        send = _bytes(rows)
    else:
        if scatter_list:
            raise ValueError("Argument ``scatter_list`` must NOT be specified on non-source ranks.")
        send = None
    start = _start(g.comm, "Scatter", send, _bytes(buf.array), root=root)
    return _done(start, buf.commit, async_op)


# ---- point to point ------------------------------------------------------------------------------------
def isend(tensor, dst, group=None, tag=0):
    g = _group(group)
    src = Buffer(tensor, write=False)
    return Work([g.comm.Isend(_bytes(src.array), dest=g.group_rank(dst), tag=tag)], lambda: None)


def irecv(tensor, src=None, group=None, tag=0):
    g = _group(group)
    buf = Buffer(tensor)
    source = mpi().ANY_SOURCE if src is None else g.group_rank(src)
    return Work([g.comm.Irecv(_bytes(buf.array), source=source, tag=tag)], buf.commit)


def send(tensor, dst, group=None, tag=0):
    isend(tensor, dst, group, tag).wait()


def recv(tensor, src=None, group=None, tag=0):
    """Receives into `tensor`; returns the sender's rank."""
    g = _group(group)
    buf, status = Buffer(tensor), mpi().Status()
    source = mpi().ANY_SOURCE if src is None else g.group_rank(src)
    g.comm.Recv(_bytes(buf.array), source=source, tag=tag, status=status)
    buf.commit()
    return g.ranks[status.Get_source()]


# ---- Python objects (pickled, as torch's *_object collectives) -----------------------------------------
def all_gather_object(object_list, obj, group=None):
    g = _group(group)
    _check_list(object_list, g.size(), "object_list")
    object_list[:] = [pickle.loads(b) for b in g.comm.allgather(pickle.dumps(obj))]


def broadcast_object_list(object_list, src=0, group=None, device=None):
    g = _group(group)
    object_list[:] = g.comm.bcast(list(object_list), root=g.group_rank(src))

"""Run by test_distributed.py under `mpiexec -n 2 python -m mpi4py`: every collective of numgrad.distributed
against the NumPy result; an AssertionError on any rank aborts the job (non-zero exit)."""
import numpy as np

import numgrad
import numgrad.distributed as dist

dist.init_process_group("mpi")
rank, size = dist.get_rank(), dist.get_world_size()
assert (rank, size) == (numgrad.distributed.get_rank(), 2) and dist.is_initialized()
assert numgrad.get_num_threads() == 1  # one compute thread per rank


def values(r, dtype=np.float32, shape=(3, 4)):
    return (np.arange(np.prod(shape)).reshape(shape) * (r + 1) + r).astype(dtype)


everyone = [values(r) for r in range(size)]
for op, fold in [(dist.ReduceOp.SUM, np.sum), (dist.ReduceOp.MAX, np.max), (dist.ReduceOp.MIN, np.min),
                 (dist.ReduceOp.PRODUCT, np.prod), (dist.ReduceOp.AVG, np.mean)]:
    t = numgrad.tensor(values(rank))
    assert dist.all_reduce(t, op=op) is None
    np.testing.assert_array_equal(t.numpy(), fold(np.stack(everyone), axis=0).astype(np.float32), err_msg=str(op))
# integers, bool, float64, a strided view (written back in place), an async reduction
ints = numgrad.tensor(values(rank, np.int64))
dist.all_reduce(ints, op=dist.ReduceOp.BXOR)
np.testing.assert_array_equal(ints.numpy(), values(0, np.int64) ^ values(1, np.int64))
flags = numgrad.tensor([rank == 0, False, True])
dist.all_reduce(flags)
assert flags.tolist() == [True, False, True]
base = numgrad.zeros(4, 6, dtype=numgrad.float64)
view = base[:, ::2]
view += rank + 1
version = view._version
dist.all_reduce(view)
assert view._version == version + 1
np.testing.assert_array_equal(base.numpy()[:, ::2], 3.0)
np.testing.assert_array_equal(base.numpy()[:, 1::2], 0.0)
work = dist.all_reduce(t := numgrad.ones(5) * (rank + 1), async_op=True)
assert work.wait() and work.is_completed()
assert t.tolist() == [3.0] * 5
# broadcast, all_gather, all_gather_into_tensor, reduce_scatter_tensor, reduce, gather, scatter
t = numgrad.tensor(values(rank))
dist.broadcast(t, src=1)
np.testing.assert_array_equal(t.numpy(), everyone[1])
parts = [numgrad.zeros(3, 4) for _ in range(size)]
dist.all_gather(parts, numgrad.tensor(values(rank)))
for r in range(size):
    np.testing.assert_array_equal(parts[r].numpy(), everyone[r])
out = numgrad.zeros(size * 3, 4)
dist.all_gather_into_tensor(out, numgrad.tensor(values(rank)))
np.testing.assert_array_equal(out.numpy(), np.concatenate(everyone))
stacked = numgrad.zeros(size, 3, 4)
dist.all_gather_into_tensor(stacked, numgrad.tensor(values(rank)))
np.testing.assert_array_equal(stacked.numpy(), np.stack(everyone))
block = numgrad.zeros(4)
dist.reduce_scatter_tensor(block, numgrad.tensor(values(rank, shape=(8,))))
np.testing.assert_array_equal(block.numpy(), (values(0, shape=(8,)) + values(1, shape=(8,)))[rank * 4:rank * 4 + 4])
t = numgrad.tensor(values(rank))
dist.reduce(t, dst=0, op=dist.ReduceOp.SUM)
np.testing.assert_array_equal(t.numpy(), everyone[0] + everyone[1] if rank == 0 else everyone[rank])
gathered = [numgrad.zeros(3, 4) for _ in range(size)] if rank == 1 else None
dist.gather(numgrad.tensor(values(rank)), gathered, dst=1)
if rank == 1:
    for r in range(size):
        np.testing.assert_array_equal(gathered[r].numpy(), everyone[r])
mine = numgrad.zeros(3, 4)
dist.scatter(mine, [numgrad.tensor(v) for v in everyone] if rank == 0 else None, src=0)
np.testing.assert_array_equal(mine.numpy(), everyone[rank])
# point to point, a group, Python objects, a barrier
if rank == 0:
    dist.send(numgrad.tensor([1.5, 2.5]), dst=1)
else:
    got = numgrad.zeros(2)
    assert dist.recv(got, src=0) == 0 and got.tolist() == [1.5, 2.5]
solo = dist.new_group([1])
assert dist.get_world_size(solo) == (1 if rank == 1 else -1)
objs = [None] * size
dist.all_gather_object(objs, {"rank": rank})
assert objs == [{"rank": 0}, {"rank": 1}]
dist.barrier()
try:
    dist.all_reduce(numgrad.ones(2), op=dist.ReduceOp.BAND)
except RuntimeError:
    pass
else:
    raise AssertionError("BAND on floats must raise")
dist.destroy_process_group()
assert not dist.is_initialized()
print(f"rank {rank}: collectives OK", flush=True)

"""DistributedDataParallel: every rank holds a replica of the module; during backward each parameter's
gradient goes into a bucket (~25 MB, parameters in reverse order, as torch's), and a bucket's averaging
all-reduce starts as soon as its last gradient is accumulated, while backward goes on with the rest. When
backward ends, the averaged gradients are written back into `.grad` on every rank."""
import contextlib

import numpy as np

from ... import distributed as dist
from ...autograd import engine, is_grad_enabled
from ...kernels import dispatch
from ...ops.creation import from_numpy
from ..module import Module

DEFAULT_FIRST_BUCKET_BYTES = 1 << 20  # torch's first bucket is small, so that its all-reduce starts early
UNFINISHED = ("Expected to have finished reduction in the prior iteration before starting a new one. This error "
              "indicates that your module has parameters that were not used in producing loss. You can enable "
              "unused parameter detection by passing the keyword argument `find_unused_parameters=True` to "
              "`torch.nn.parallel.DistributedDataParallel`, and by making sure all `forward` function outputs "
              "participate in calculating loss.")


class _Bucket:
    """Parameters whose gradients are all-reduced together, through one flat buffer."""

    def __init__(self, params):
        self.params = params
        self.sizes = [p.numel() for p in params]
        self.flat = np.empty(sum(self.sizes), params[0].dtype.np)
        self.pending, self.work, self.used = len(params), None, np.zeros(len(params), np.bool_)

    def reset(self):
        self.pending, self.work = len(self.params), None
        self.used[:] = 0


class DistributedDataParallel(Module):
    def __init__(self, module, device_ids=None, output_device=None, dim=0, broadcast_buffers=True,
                 process_group=None, bucket_cap_mb=None, find_unused_parameters=False, check_reduction=False,
                 gradient_as_bucket_view=False, static_graph=False, delay_all_reduce_named_params=None,
                 param_to_hook_all_reduce=None, mixed_precision=None, device_mesh=None):
        super().__init__()
        if not dist.is_initialized():
            raise ValueError("Default process group has not been initialized, please make sure to call "
                             "init_process_group.")
        if not any(p.requires_grad for p in module.parameters()):
            raise RuntimeError("DistributedDataParallel is not needed when a module doesn't have any parameter "
                               "that requires a gradient.")
        self.module, self.process_group = module, process_group
        self.broadcast_buffers, self.find_unused_parameters = broadcast_buffers, find_unused_parameters
        self.require_backward_grad_sync, self.require_forward_param_sync = True, True
        self._world = dist.get_world_size(process_group)
        self._sync_module_states()
        params = [p for p in module.parameters() if p.requires_grad]
        cap = int((25 if bucket_cap_mb is None else bucket_cap_mb) * 1024 * 1024)
        self._buckets = _make_buckets(params[::-1], cap)
        self._where = {id(p): (b, i) for b in self._buckets for i, p in enumerate(b.params)}
        self._hooks = [p.register_post_accumulate_grad_hook(self._grad_ready) for p in params]
        self._in_backward, self._unfinished = False, False

    def _sync_module_states(self):
        """Rank 0's parameters and buffers on every rank (as torch's DDP does at construction)."""
        src = self.process_group.ranks[0] if self.process_group is not None else 0
        for t in [*self.module.parameters(), *self.module.buffers()]:
            dist.broadcast(t, src, group=self.process_group)

    def forward(self, *inputs, **kwargs):
        if self._unfinished:
            raise RuntimeError(UNFINISHED)
        if self.broadcast_buffers and self.require_forward_param_sync:
            src = self.process_group.ranks[0] if self.process_group is not None else 0
            for b in self.module.buffers():
                dist.broadcast(b, src, group=self.process_group)
        for bucket in self._buckets:
            bucket.reset()
        out = self.module(*inputs, **kwargs)
        if self.find_unused_parameters and self.require_backward_grad_sync and is_grad_enabled():
            self._unused = _unused_parameters(out, self._where)
        else:
            self._unused = ()
        return out

    @contextlib.contextmanager
    def no_sync(self):
        """Gradients accumulate locally inside the block; the first backward outside it all-reduces them."""
        old, self.require_backward_grad_sync = self.require_backward_grad_sync, False
        try:
            yield
        finally:
            self.require_backward_grad_sync = old

    # ---- during backward ---------------------------------------------------------------------------------
    def _grad_ready(self, p):
        if not self.require_backward_grad_sync:
            return
        if not self._in_backward:
            self._in_backward = True
            engine.queue_callback(self._finish)
            for q in self._unused:  # a parameter that took no part in the loss counts as ready at once
                self._mark(q, used=False)
        self._mark(p, used=True)

    def _mark(self, p, used):
        bucket, i = self._where[id(p)]
        bucket.used[i] = used
        bucket.pending -= 1
        if bucket.pending == 0:
            self._launch(bucket)

    def _launch(self, bucket):
        offset = 0
        for p, n, used in zip(bucket.params, bucket.sizes, bucket.used):
            if used:
                bucket.flat[offset:offset + n] = dispatch.to_host(p.grad._data).reshape(-1)
            else:
                bucket.flat[offset:offset + n] = 0
            offset += n
        flat = from_numpy(bucket.flat)
        used = from_numpy(bucket.used) if self.find_unused_parameters else None
        bucket.work = [dist.all_reduce(flat, dist.ReduceOp.SUM, self.process_group, async_op=True)]
        if used is not None:  # which parameters some rank used: only those get a gradient
            bucket.work.append(dist.all_reduce(used, dist.ReduceOp.MAX, self.process_group, async_op=True))

    def _finish(self):
        """Once backward ends: waits for every bucket's all-reduce and writes the averages into `.grad`."""
        self._in_backward = False
        if any(b.pending for b in self._buckets):
            self._unfinished = True  # torch reports it when the next forward starts
            return
        for bucket in self._buckets:
            for work in bucket.work:
                work.wait()
            np.divide(bucket.flat, self._world, out=bucket.flat, casting="unsafe")
            offset = 0
            for p, n, used in zip(bucket.params, bucket.sizes, bucket.used):
                if used:
                    _write_grad(p, bucket.flat[offset:offset + n])
                offset += n


def _make_buckets(params, cap):
    """Parameters (in the order their gradients are expected) in buckets of at most `cap` bytes (the first
    of 1 MiB), each of one dtype and device."""
    buckets, current, size, limit = [], [], 0, min(cap, DEFAULT_FIRST_BUCKET_BYTES)
    for p in params:
        nbytes = p.numel() * p.element_size()
        if current and (size + nbytes > limit or p.dtype != current[0].dtype or p.device != current[0].device):
            buckets.append(_Bucket(current))
            current, size, limit = [], 0, cap
        current.append(p)
        size += nbytes
    if current:
        buckets.append(_Bucket(current))
    return buckets


def _write_grad(p, values):
    g = p.grad
    if g is None:
        p.grad = from_numpy(values.reshape(p.shape).copy())
        return
    dispatch.copy_into(g._data, values.reshape(g._data.shape))
    g._vc[0] += 1


def _unused_parameters(out, where):
    """The parameters (of `where`) the graph of `out` does not reach (torch's find_unused_parameters walk)."""
    reached, stack, seen = set(), [t.grad_fn for t in _tensors(out) if t.grad_fn is not None], set()
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        variable = getattr(node, "variable", None)
        if variable is not None:
            reached.add(id(variable))
        stack.extend(child for child, _ in node.next_functions)
    return [b.params[i] for b in {id(b): b for b, _ in where.values()}.values()
            for i, p in enumerate(b.params) if id(p) not in reached]


def _tensors(out):
    if hasattr(out, "grad_fn"):
        yield out
    elif isinstance(out, (list, tuple)):
        for o in out:
            yield from _tensors(o)
    elif isinstance(out, dict):
        for o in out.values():
            yield from _tensors(o)

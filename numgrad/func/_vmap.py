"""torch.func.vmap: `func` runs once on the whole batch through the batching rules of _batched.py (elementwise ops,
reductions, softmax, matmul, shape ops, as Tensor methods and operators); a function using anything without a rule
(numgrad's functions, modules, indexing, grad transforms, Python control flow on values) runs instead once per
sample, the results stacked: the fallback torch documents for ops without a batching rule. Either way the values
and gradients are the loop's; a function with side effects sees them once more when it falls back (its batched run
stops at the first op without a rule)."""
import copy
import functools

from ..ops import random as random_ops
from .._core.shapes import wrap_dim
from ..ops import join
from ..tensor_base import TensorBase
from ._batched import BatchedTensor, NoRule
from ._pytree import broadcast_prefix, flatten, unflatten

RANDOMNESS = ("error", "different", "same")
RANDOM_IN_VMAP = ("vmap: called random operation while in randomness error mode. Please either use the 'same' or "
                  "'different' randomness flags on vmap or perform the randomness operation out of vmap")


class _RefusingGenerator:
    """Stands for the global generator while vmap(randomness='error') runs: any draw raises torch's error."""

    def __getattr__(self, name):
        raise RuntimeError(RANDOM_IN_VMAP)


def _name(func):
    return getattr(func, "__name__", repr(func))


def _sample(x, dim, i):
    return x[(slice(None),) * dim + (i,)]


def _check_in_dims(func, in_dims, args):
    where = f"vmap({_name(func)}, in_dims={in_dims}, ...)(<inputs>)"
    if not isinstance(in_dims, (int, tuple)) or isinstance(in_dims, bool):
        raise ValueError(f"{where}: expected `in_dims` to be int or a (potentially nested) tuple matching the "
                         f"structure of inputs, got: {type(in_dims)}.")
    if not args:
        raise ValueError(f"vmap({_name(func)})(<inputs>): got no inputs. Maybe you forgot to add inputs, or you are "
                         "trying to vmap over a function with no inputs. The latter is unsupported.")
    leaves, spec = flatten(args)
    dims = broadcast_prefix(in_dims if isinstance(in_dims, tuple) else in_dims, args)
    if dims is None:
        raise ValueError(f"{where}: in_dims is not compatible with the structure of `inputs`.")
    for leaf, d in zip(leaves, dims):
        if d is None:
            continue
        if not isinstance(d, int):
            raise ValueError(f"{where}: Got in_dim={d} for an input but in_dim must be either an integer dimension or "
                             "None.")
        if not isinstance(leaf, TensorBase):
            raise ValueError(f"{where}: Got in_dim={d} for an input but the input is of type {type(leaf)}. We cannot "
                             "vmap over non-Tensor arguments, please use None as the respective in_dim")
        n = leaf.dim()
        if not -n <= d < n:
            raise ValueError(f"{where}: Got in_dim={d} for some input, but that input is a Tensor of dimensionality "
                             f"{n} so expected in_dim to satisfy -{n} <= in_dim < {n}.")
    mapped = [(leaf, d % leaf.dim()) if d is not None else (leaf, None) for leaf, d in zip(leaves, dims)]
    sizes = [leaf.shape[d] for leaf, d in mapped if d is not None]
    if not sizes:
        raise ValueError(f"vmap({_name(func)}, in_dims={in_dims}, ...)(<inputs>): at least one input must be a "
                         "Tensor with a mapped dimension (in_dim not None)")
    if len(set(sizes)) > 1:
        raise ValueError(f"vmap: Expected all tensors to have the same size in the mapped dimension, got sizes {sizes} "
                         "for the mapped dimension")
    return mapped, spec, sizes[0]


def _stacked(func, results, out_dims):
    first, spec = flatten(results[0])
    columns = [flatten(r)[0] for r in results]
    dims = broadcast_prefix(out_dims, results[0])
    if dims is None:
        raise ValueError(f"vmap({_name(func)}, ...): out_dims is not compatible with the structure of `outputs`.")
    out = []
    for j, (leaf, d) in enumerate(zip(first, dims)):
        if d is None:
            out.append(leaf)
            continue
        if not isinstance(leaf, TensorBase):
            raise ValueError(f"vmap({_name(func)}, ...): `{_name(func)}` must only return Tensors, got type "
                             f"{type(leaf)}. Did you mean to set out_dims= to None for output?")
        out.append(join.stack([c[j] for c in columns], d))
    return unflatten(out, spec)


def _moved_to_front(x, dim):
    return x if dim == 0 else x.permute(dim, *(d for d in range(x.dim()) if d != dim))


def _batched_call(func, mapped, spec, size, kwargs, out_dims):
    """func called once on BatchedTensors; raises NoRule (or the error a sample would raise) where it cannot."""
    args = [BatchedTensor(_moved_to_front(leaf, d)) if d is not None else leaf for leaf, d in mapped]
    output = func(*unflatten(args, spec), **kwargs)
    leaves, out_spec = flatten(output)
    dims = broadcast_prefix(out_dims, output)
    if dims is None:
        raise NoRule("out_dims")
    results = []
    for leaf, d in zip(leaves, dims):
        if d is None:
            if isinstance(leaf, BatchedTensor):
                raise NoRule("a batched output with out_dim None")
            results.append(leaf)
            continue
        if isinstance(leaf, BatchedTensor):
            value = leaf.value
        elif isinstance(leaf, TensorBase):  # independent of the mapped inputs: the same for every sample
            value = join.stack([leaf] * size)
        else:
            raise NoRule("a non-tensor output")
        n = value.dim() - 1
        d = wrap_dim(d, n + 1)
        order = list(range(1, n + 1))
        order.insert(d, 0)
        results.append(value.permute(*order) if d else value)
    return unflatten(results, out_spec)


def vmap(func, in_dims=0, out_dims=0, randomness="error", *, chunk_size=None):
    if randomness not in RANDOMNESS:
        raise RuntimeError(f"Only allowed values for randomness are 'error', 'different', or 'same'. Got {randomness}")

    @functools.wraps(func)
    def wrapped(*args, **kwargs):
        mapped, spec, size = _check_in_dims(func, in_dims, args)
        generator = random_ops.default_generator  # its NumPy stream is swapped while the batch runs
        start = generator._rng
        if randomness != "same":  # 'different': one draw would be shared by the batch, random ops take the loop
            generator._rng = _RefusingGenerator()
        try:  # ('same' shares one draw across the batch, as the loop does)
            return _batched_call(func, mapped, spec, size, kwargs, out_dims)
        except Exception:  # noqa: BLE001 - no batching rule, or an error the loop below raises again for a sample
            pass
        finally:
            generator._rng = start
        results = []
        try:
            for i in range(size):
                if randomness == "error":
                    generator._rng = _RefusingGenerator()
                elif randomness == "same":  # every sample draws what the first one does
                    generator._rng = copy.deepcopy(start)
                sample = [_sample(leaf, d, i) if d is not None else leaf for leaf, d in mapped]
                results.append(func(*unflatten(sample, spec), **kwargs))
        finally:
            if randomness != "different":
                generator._rng = generator._rng if randomness == "same" and results else start
        return _stacked(func, results, out_dims)
    return wrapped

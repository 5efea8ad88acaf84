"""The CUDA target, loaded on first use and kept: the one place numgrad imports its own CUDA kernels.

numba-cuda is optional and slow to import, so nothing loads kernels/cuda/ until a GPU array exists or is
asked for; every caller reaches it as `cuda().array`, `cuda().reduce`, ... through this function."""
import functools
import types


@functools.cache
def cuda():
    """The CUDA target's modules (array, fused, index, interop, kernels, optim, reduce), imported once."""
    from ..cuda import array, fused, index, interop, kernels, optim, reduce
    return types.SimpleNamespace(array=array, fused=fused, index=index, interop=interop, kernels=kernels,
                                 optim=optim, reduce=reduce)

"""CUDA optimizer kernels: dispatch/optim.py's bodies with a grid-stride loop header."""
from . import kernels as target


def kernel_source(body, dtype_name):
    """kernel(n, arrays..., scalars...): the CPU body's loop over [start, stop) becomes a grid-stride loop."""
    params, loop = body
    loop = loop.replace("for i in range(start, stop):", target.GRID_LOOP)
    return f"{target.HEADER}\nT = np.{dtype_name}\n\n\n{target.KERNEL_DECORATOR}\ndef kernel(n, {params}):{loop}"


def run(body, name, p, *args):
    """Updates DeviceArray `p` (and its gradient and state, DeviceArrays) in place on the GPU."""
    kernel = target.source_kernel(f"cuda_optim_{name}_{p.dtype.name}", kernel_source(body, p.dtype.name))
    arrays = [target.raw(a) for a in args if hasattr(a, "buf")]
    scalars = [a for a in args if not hasattr(a, "buf")]
    target.launch(kernel, p.size, target.raw(p), *arrays, *scalars)

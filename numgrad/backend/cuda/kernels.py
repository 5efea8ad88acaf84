"""CUDA target: the same generated loop bodies as cpu.py under a grid-stride header, and their launches.
Imported only when a CUDA tensor is made (numba.cuda is not needed to import numgrad)."""
import functools
import os

import numpy as np

from .. import loader, lower

# Under Numba's simulator every CUDA thread is a Python thread: small blocks and few of them keep the
# tests fast, and grid-stride loops make the results independent of the launch shape.
SIMULATOR = os.environ.get("NUMBA_ENABLE_CUDASIM", "0") not in ("", "0")
BLOCK = 32 if SIMULATOR else 256
MAX_BLOCKS = 2 if SIMULATOR else 65535


_HELPERS = os.path.join(os.path.dirname(__file__), "cuda_math.py")
HEADER = (f"# cuda helpers {loader.file_digest(_HELPERS)}\nimport math\nimport numpy as np\nfrom numba import cuda\n"
          "from numgrad.backend.cuda.cuda_math import *\n")
KERNEL_DECORATOR = "@cuda.jit(cache=True)"
# the loop header that replaces the CPU's `for i in range(...)`: each thread strides over the range
GRID_LOOP = "for i in range(cuda.grid(1), n, cuda.gridsize(1)):"


def blocks_for(n, block=BLOCK):
    return max(1, min(MAX_BLOCKS, -(-n // block)))


def launch(kernel, n, *args):
    """Runs a grid-stride kernel(n, *args) over n elements."""
    if n:
        kernel[blocks_for(n), BLOCK](n, *args)


def elementwise_source(inputs, is_array, outputs, dtype_name):
    """The CUDA twin of codegen.elementwise_source: the op table's expressions lowered the same way, over
    positions 0..n-1 of flat arrays."""
    arrays = [nm for nm, arr in zip(inputs, is_array) if arr]
    scalars = [nm for nm, arr in zip(inputs, is_array) if not arr]
    params = ", ".join(["n", *inputs, *outputs])
    loads = "".join(f"        {nm}_i = {nm}[i]\n" for nm in arrays)
    stores = "".join(f"        {o}[i] = {lower.lower(e, arrays, scalars, dtype_name, target='cuda')}\n"
                     for o, e in outputs.items())
    return f"{HEADER}\n\n{KERNEL_DECORATOR}\ndef kernel({params}):\n    {GRID_LOOP}\n{loads}{stores}"


_elementwise_cache = {}


def elementwise_kernel(name, inputs, is_array, outputs, dtype_name):
    key = (name, is_array, outputs, dtype_name)
    kernel = _elementwise_cache.get(key)
    if kernel is None:
        source = elementwise_source(inputs, is_array, dict(outputs), dtype_name)
        kernel = _elementwise_cache[key] = loader.load_module(f"cuda_{name}_{dtype_name}", source).kernel
    return kernel


def is_device_array(a):
    return not isinstance(a, (np.generic, int, float))


def raw(a):
    """The Numba device array a kernel takes: a DeviceArray view's flat buffer (see cuda/array.py)."""
    return a.flat_buffer() if hasattr(a, "flat_buffer") else a


@functools.lru_cache(maxsize=None)
def source_kernel(readable_name, source):
    """A kernel from generated source (used by fused regions and optimizer updates)."""
    return loader.load_module(readable_name, source).kernel

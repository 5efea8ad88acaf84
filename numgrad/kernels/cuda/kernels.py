"""CUDA target: the generated loop bodies of lower.py under a grid-stride header, and their launches.
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
_RULES = os.path.join(os.path.dirname(os.path.dirname(__file__)), "scalar_rules.py")
HEADER = (f"# cuda helpers {loader.file_digest(_HELPERS)} {loader.file_digest(_RULES)}\nimport math\nimport numpy as np\nfrom numba import cuda\n"
          "from numgrad.kernels.cuda.cuda_math import *\n")
KERNEL_DECORATOR = "@cuda.jit(cache=True)"
# the loop header that replaces the CPU's `for i in range(...)`: each thread strides over the range
GRID_LOOP = "for i in range(cuda.grid(1), n, cuda.gridsize(1)):"
TARGET = lower.Target("cuda", HEADER, KERNEL_DECORATOR, ("n",), GRID_LOOP, view=None, ref="{n}", prefix="cuda_")


def blocks_for(n, block=BLOCK):
    return max(1, min(MAX_BLOCKS, -(-n // block)))


def launch(kernel, n, *args):
    """Runs a grid-stride kernel(n, *args) over n elements."""
    if n:
        kernel[blocks_for(n), BLOCK](n, *args)


def elementwise_kernel(name, inputs, is_array, outputs, dtype_name):
    """The grid-stride kernel(n, *inputs, *outputs) computing `outputs` from `inputs`."""
    return lower.elementwise_kernel(name, inputs, is_array, outputs, dtype_name, TARGET)


def is_device_array(a):
    return not isinstance(a, (np.generic, int, float))


def raw(a):
    """The Numba device array a kernel takes: a DeviceArray view's flat buffer (see cuda/array.py)."""
    return a.flat_buffer() if hasattr(a, "flat_buffer") else a


@functools.lru_cache(maxsize=None)
def source_kernel(readable_name, source):
    """A kernel from generated source (used by fused regions and optimizer updates)."""
    return loader.load_module(readable_name, source).kernel

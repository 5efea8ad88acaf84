"""CPU optimizer kernels: backend/optim.py's bodies under the CPU loop header, split over threads."""
import functools

import numpy as np

from .. import loader
from . import threads
from .kernels import HEADER, LOOP_HEADER, PARALLEL_MIN


def kernel_source(body, dtype_name):
    """kernel(start, stop, arrays..., scalars...) updating elements [start, stop); `body` is one of
    backend/optim.py's (params, loop) pairs."""
    params, loop = body
    params = "start, stop, " + params
    return f"{HEADER}\nT = np.{dtype_name}\n\n\n{LOOP_HEADER}\ndef kernel({params}):{loop}"


@functools.lru_cache(maxsize=None)
def kernel(body, name, dtype_name):
    return loader.load_module(f"optim_{name}_{dtype_name}", kernel_source(body, dtype_name)).kernel


def run(body, name, p, *args):
    """Runs one optimizer's body over the host arrays (`p`, then its gradient and state), then scalars."""
    n = p.size
    arrays = [a for a in args if isinstance(a, np.ndarray)]
    scalars = [a for a in args if not isinstance(a, np.ndarray)]
    threads.over(kernel(body, name, p.dtype.name), n, p, *arrays, *scalars, parallel=n >= PARALLEL_MIN)

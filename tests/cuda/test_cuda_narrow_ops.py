"""Every op-table entry on uint8, int8, int16, int32, float16 and bfloat16 tensors on device='cuda' (Numba's
simulator, or a GPU) against the same call on the CPU: the CPU's bits where the arithmetic is exact (integers,
one correctly rounded float32 step rounded once to half), within two units in the last place where the float32
kernel calls a transcendental function; torch's refusals alike; half types' gradients too."""
import re

import numpy as np
import pytest
from helpers.cuda_narrow import HALF, NARROW, close, pair, same_bits, same_error
from oracle.ops.test_ops_table import CALLS, DIFFERENTIABLE, NAMES, SCALARS, draw_values

import numgrad
from numgrad.spec.table import ELEMENTWISE

# the scalar rules whose results both targets compute exactly alike (selections, sign tests, integer steps)
EXACT_CALLS = {"abs", "isnan", "maximum", "minimum", "remainder", "sign", "trunc_div", "where", "fmod", "copysign",
               "sqrt"}
SHAPES = {1: [(2, 3)], 2: [(2, 3), (3,)], 3: [(2, 3), (3,), (2, 1)]}


def exact(entry, result):
    """Whether the CPU's bits are expected: an integer or bool result, or a float one made by at most one
    arithmetic step and exact calls (a GPU may contract a * b + c into one rounding)."""
    if not result.dtype.is_floating_point:
        return True
    calls = set(re.findall(r"([A-Za-z_0-9.]+)\(", entry.forward))
    steps = len(re.findall(r"[-+*/](?![-+*/]|\d)", entry.forward.replace("**", "^")))
    return calls <= EXACT_CALLS and steps <= 1


def arguments(entry, dtype):
    """The call's arguments on both devices: tensors of `dtype` (bool where the entry reads bool), and the first
    of each scalar's listed values."""
    rng = np.random.default_rng(len(entry.name))
    tensors = [nm for nm in entry.inputs if nm not in entry.scalar_only]
    shapes = dict(zip(tensors, SHAPES[len(tensors)]))
    wide = "int32" if dtype in ("int8", "int16") else "float32" if dtype in HALF else dtype
    cpu, gpu = [], []
    for nm in entry.inputs:
        if nm in entry.scalar_only:
            value = SCALARS[(entry.name, nm)][0]
            cpu.append(value)
            gpu.append(value)
            continue
        values = draw_values(entry, nm, shapes[nm], rng, wide)
        want = "bool" if values.dtype == np.bool_ else dtype
        c, g = pair(values, want, requires_grad=dtype in HALF and want != "bool" and entry.name in DIFFERENTIABLE)
        cpu.append(c)
        gpu.append(g)
    return cpu, gpu


# logit of an integer is +-inf or NaN everywhere: the simulator's Python math raises on those (logit_eps, clamped
# first, runs the same kernel on integers)
CASES = [(name, dtype) for name in NAMES for dtype in NARROW if not (name == "logit" and dtype not in HALF)]


@pytest.mark.parametrize("name,dtype", CASES)
def test_op_table_entry_on_narrow_cuda_tensors(name, dtype):
    entry, fn = ELEMENTWISE[name], CALLS[name]
    cpu_args, gpu_args = arguments(entry, dtype)
    results = same_error(lambda device: fn(numgrad, *(cpu_args if device == "cpu" else gpu_args)))
    if results is None:  # refused alike (torch's refusal of the dtype)
        return
    cpu, gpu = results
    compare = same_bits if exact(entry, cpu) else close
    compare(cpu, gpu)
    leaves = [(c, g) for c, g in zip(cpu_args, gpu_args) if isinstance(c, numgrad.Tensor) and c.requires_grad]
    if leaves and cpu.requires_grad:
        for out in (cpu, gpu):
            out.backward(numgrad.ones_like(out) * 0.5)
        for c, g in leaves:
            assert (c.grad is None) == (g.grad is None)
            if c.grad is not None:
                close(c.grad, g.grad, ulps=4)


@pytest.mark.parametrize("dtype", NARROW)
def test_mixed_dtypes_promote_as_on_the_cpu(dtype):
    """A narrow tensor with a wider one, a 0-d tensor and Python numbers: torch's promotion, the CPU's bits."""
    x_cpu, x_gpu = pair(np.arange(-3, 3).reshape(2, 3), dtype)
    f_cpu, f_gpu = pair(np.linspace(-1, 1, 3), "float32")
    z_cpu, z_gpu = pair(np.array(3), "int64")
    i_cpu, i_gpu = pair(np.array([7, -2, 5]), "int32")
    calls = [lambda x, f, z, i: x + f, lambda x, f, z, i: x * z, lambda x, f, z, i: x - 1.5,
             lambda x, f, z, i: x * 300, lambda x, f, z, i: x + i, lambda x, f, z, i: (x < i) & (x != 0),
             lambda x, f, z, i: x / 3, lambda x, f, z, i: x // 2, lambda x, f, z, i: -x.abs()]
    for call in calls:
        same_bits(call(x_cpu, f_cpu, z_cpu, i_cpu), call(x_gpu, f_gpu, z_gpu, i_gpu))


@pytest.mark.parametrize("dtype", HALF)
def test_half_chain_gradients_on_cuda(dtype):
    """A chain of half-type ops (each rounded on store, gradients too) and its backward, as on the CPU."""
    values = np.linspace(-2, 2, 12).reshape(3, 4)
    x_cpu, x_gpu = pair(values, dtype, requires_grad=True)
    w_cpu, w_gpu = pair(values[::-1].copy() * 0.3, dtype, requires_grad=True)
    outs = []
    for x, w in ((x_cpu, w_cpu), (x_gpu, w_gpu)):
        y = ((x * w + 1) * x - w / 3).relu() * 2
        y.backward(numgrad.ones_like(y))
        outs.append(y)
    same_bits(*outs)
    same_bits(x_cpu.grad, x_gpu.grad)
    same_bits(w_cpu.grad, w_gpu.grad)

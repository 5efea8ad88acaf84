"""generate(draw) -> Program: inputs, then 1 to 8 steps chosen with torch's values in view (shapes, dtypes), and a
backward when the result is floating and requires grad; `programs()` is the same as a Hypothesis strategy."""
import numpy as np
import torch
from hypothesis import strategies as st

from . import inputs as gen_inputs
from .draw import HypothesisDraw
from .ops import operator_step, reduction, shape_op, table
from .ops_breadth import breadth
from .ops_extra import extra
from .ops_index import indexing, inplace
from .ops_loss import loss
from .ops_nn import nn_op
from .ops_pointwise import pointwise
from .ops_tensorops import tensor_ops
from .program import Backward, Interpreter, Lit, Program

FAMILIES = (table, table, operator_step, operator_step, reduction, shape_op, shape_op, indexing, inplace, extra, nn_op,
            tensor_ops, loss, pointwise, breadth)


def generate(d):
    program = Program(gen_inputs.inputs(d))
    run = Interpreter(torch, program)
    for _ in range(d.integer(1, 8)):
        step = d.choice(FAMILIES)(d, run.env)
        program.steps.append(step)
        try:
            step.outs = run.step(step)
        except Exception:  # the program ends at its first error: the error is what gets compared
            return program
    grads = [i for i, t in enumerate(run.env) if t.requires_grad and t.dtype.is_floating_point]
    if grads and d.chance(0.85):
        i = grads[-1] if d.chance(0.7) else d.choice(grads)
        t = run.env[i]
        mode = d.choice(("sum", "sum", "grad", "plain" if t.dim() == 0 or d.chance(0.2) else "sum"))
        gradient = None
        if mode == "grad":
            rng = np.random.default_rng(d.integer(0, 2 ** 31))
            gradient = Lit(rng.standard_normal(tuple(t.shape)).astype(str(t.dtype).split(".")[1]))
        program.backward = Backward(i, mode, gradient)
    return program


@st.composite
def programs(draw):
    return generate(HypothesisDraw(draw))

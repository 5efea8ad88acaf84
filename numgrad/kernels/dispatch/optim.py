"""In-place optimizer updates as generated kernels: one loop per optimizer per dtype, each element updated in
one pass over the parameter, its gradient and its state. The arithmetic follows torch's single-tensor
implementations op by op (each torch op rounds to the parameter dtype; so does each line here)."""
import numpy as np

from ..._core.shapes import check_inplace as inplace, iterator_shape as broadcast
from ..cpu import optim as cpu_optim
from . import contiguous
from .lazy_cuda import cuda
from .optim_extra import EXTRA_BODIES, EXTRA_SHAPES

# Scalars arrive as Python floats (float64) and are cast once to the parameter dtype, as torch casts a
# Scalar argument to the tensor's type; `lerp` picks torch's formula by the weight.
BODIES = {
    "sgd": ("p, g, buf, neg_lr, weight_decay, momentum, one_minus_dampening, nesterov, maximize, first", """
    neg_lr, weight_decay = T(neg_lr), T(weight_decay)
    momentum, one_minus_dampening = T(momentum), T(one_minus_dampening)
    for i in range(start, stop):
        gi = -g[i] if maximize else g[i]
        if weight_decay != 0:
            gi = gi + weight_decay * p[i]
        if momentum != 0:
            if first:
                b = gi
            else:
                b = buf[i] * momentum
                b = b + one_minus_dampening * gi
            buf[i] = b
            gi = gi + momentum * b if nesterov else b
        p[i] = p[i] + neg_lr * gi
"""),
    "adam": ("p, g, m, v, vmax, neg_step_size, beta1_weight, beta2, one_minus_beta2, bias_correction2_sqrt, eps, "
             "weight_decay, decay_factor, amsgrad, maximize", """
    neg_step_size, w1, beta2, one_minus_beta2 = T(neg_step_size), T(beta1_weight), T(beta2), T(one_minus_beta2)
    bias_correction2_sqrt, eps, weight_decay, decay_factor = T(bias_correction2_sqrt), T(eps), T(weight_decay), T(decay_factor)
    w1_small = abs(w1) < T(0.5)
    for i in range(start, stop):
        gi = -g[i] if maximize else g[i]
        pi = p[i]
        if decay_factor != 1:  # AdamW: decoupled decay of the parameter itself
            pi = pi * decay_factor
        if weight_decay != 0:
            gi = gi + weight_decay * pi
        mi = m[i]
        mi = mi + w1 * (gi - mi) if w1_small else gi - (gi - mi) * (T(1) - w1)
        m[i] = mi
        vi = v[i] * beta2
        vi = vi + one_minus_beta2 * gi * gi
        v[i] = vi
        if amsgrad:
            vi = max(vmax[i], vi)
            vmax[i] = vi
        denom = math.sqrt(vi) / bias_correction2_sqrt + eps
        p[i] = pi + neg_step_size * mi / denom
"""),
    "rmsprop": ("p, g, sq, gavg, buf, neg_lr, alpha, one_minus_alpha, eps, weight_decay, momentum, centered, "
                "maximize", """
    neg_lr, alpha, w, eps = T(neg_lr), T(alpha), T(one_minus_alpha), T(eps)
    weight_decay, momentum = T(weight_decay), T(momentum)
    w_small = abs(w) < T(0.5)
    for i in range(start, stop):
        gi = -g[i] if maximize else g[i]
        if weight_decay != 0:
            gi = gi + weight_decay * p[i]
        s = sq[i] * alpha
        s = s + w * gi * gi
        sq[i] = s
        if centered:
            a = gavg[i]
            a = a + w * (gi - a) if w_small else gi - (gi - a) * (T(1) - w)
            gavg[i] = a
            avg = math.sqrt(s + T(-1) * a * a)
        else:
            avg = math.sqrt(s)
        avg = avg + eps
        if momentum > 0:
            b = buf[i] * momentum
            b = b + gi / avg
            buf[i] = b
            p[i] = p[i] + neg_lr * b
        else:
            p[i] = p[i] + neg_lr * gi / avg
"""),
}


# The usual cases (no maximize, weight decay or amsgrad; SGD past its first momentum step) as kernels of their
# own: loops without branches, which LLVM vectorises, doing the same operations as the general loops above (a
# decay factor of 1 multiplies exactly). Apart, each kernel compiles only when a step needs it: Adam's first
# call compiled both bodies in one function (0.58 s; the usual one alone 0.25 s, and 0.13 s once each of
# lerp's formulas got a kernel of its own: a step's beta1 picks the same one every time).
def _usual_sgd(dtype, neg_lr, weight_decay, momentum, one_minus_dampening, nesterov, maximize, first):
    if maximize or weight_decay != 0 or nesterov or (momentum != 0 and first):
        return None
    return "sgd_usual" if momentum != 0 else "sgd_plain"


def _usual_adam(dtype, neg_step_size, beta1_weight, beta2, one_minus_beta2, bias_correction2_sqrt, eps,
                weight_decay, decay_factor, amsgrad, maximize):
    if maximize or amsgrad or weight_decay != 0:
        return None
    # torch's lerp picks its formula by the weight in the parameter's dtype, as the general loop does
    return "adam_usual" if abs(dtype.type(beta1_weight)) < 0.5 else "adam_usual_high_weight"


USUAL = {"sgd": _usual_sgd, "adam": _usual_adam}
BODIES["sgd_usual"] = (BODIES["sgd"][0], """
    neg_lr, momentum, one_minus_dampening = T(neg_lr), T(momentum), T(one_minus_dampening)
    for i in range(start, stop):
        b = buf[i] * momentum
        b = b + one_minus_dampening * g[i]
        buf[i] = b
        p[i] = p[i] + neg_lr * b
""")
BODIES["sgd_plain"] = (BODIES["sgd"][0], """
    neg_lr = T(neg_lr)
    for i in range(start, stop):
        p[i] = p[i] + neg_lr * g[i]
""")
# Adam's usual loop, once with each of lerp's formulas (torch's, chosen by the weight)
_ADAM_USUAL = """
    neg_step_size, w1, beta2, one_minus_beta2 = T(neg_step_size), T(beta1_weight), T(beta2), T(one_minus_beta2)
    bias_correction2_sqrt, eps, decay_factor = T(bias_correction2_sqrt), T(eps), T(decay_factor)
    for i in range(start, stop):
        gi, pi, mi = g[i], p[i] * decay_factor, m[i]
        mi = {lerp}
        m[i] = mi
        vi = v[i] * beta2
        vi = vi + one_minus_beta2 * gi * gi
        v[i] = vi
        p[i] = pi + neg_step_size * mi / (math.sqrt(vi) / bias_correction2_sqrt + eps)
"""
BODIES["adam_usual"] = (BODIES["adam"][0], _ADAM_USUAL.format(lerp="mi + w1 * (gi - mi)"))
BODIES["adam_usual_high_weight"] = (BODIES["adam"][0], _ADAM_USUAL.format(lerp="gi - (gi - mi) * (T(1) - w1)"))

# torch's single-tensor step as shape arithmetic, op by op in torch's order (torch/optim/*.py): `broadcast` for
# an op that makes a new tensor (grad.add(param)), `inplace` for one that writes its first operand (buf.add_,
# exp_avg.lerp_, addcmul_, addcdiv_). Run only when a shape differs, it raises torch's error where torch
# raises it, so a state that no longer matches its parameter never reaches a kernel.
def _sgd_shapes(p, g, buf, neg_lr, weight_decay, momentum, one_minus_dampening, nesterov, maximize, first):
    if weight_decay != 0:
        g = broadcast(g, p)  # grad.add(param, alpha=weight_decay)
    if momentum != 0:
        if first:
            buf = g  # grad.clone()
        else:
            inplace(buf, g)  # buf.mul_(momentum).add_(grad, alpha=1 - dampening)
        g = broadcast(g, buf) if nesterov else buf
    inplace(p, g)  # param.add_(grad, alpha=-lr)


def _adam_shapes(p, g, m, v, vmax, neg_step_size, beta1_weight, beta2, one_minus_beta2, bias_correction2_sqrt, eps,
                 weight_decay, decay_factor, amsgrad, maximize):
    if weight_decay != 0:
        g = broadcast(g, p)
    inplace(m, g)  # exp_avg.lerp_(grad, 1 - beta1)
    inplace(v, g, g)  # exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
    if amsgrad:
        v = inplace(vmax, v)  # torch.maximum(max_exp_avg_sq, exp_avg_sq, out=max_exp_avg_sq)
    inplace(p, m, v)  # param.addcdiv_(exp_avg, denom, value=-step_size)


def _rmsprop_shapes(p, g, sq, gavg, buf, neg_lr, alpha, one_minus_alpha, eps, weight_decay, momentum, centered,
                    maximize):
    if weight_decay != 0:
        g = broadcast(g, p)
    inplace(sq, g, g)  # square_avg.mul_(alpha).addcmul_(grad, grad, value=1 - alpha)
    avg = sq
    if centered:
        inplace(gavg, g)  # grad_avg.lerp_(grad, 1 - alpha)
        avg = broadcast(sq, gavg, gavg)  # square_avg.addcmul(grad_avg, grad_avg, value=-1)
    if momentum > 0:
        inplace(buf, g, avg)  # buf.mul_(momentum).addcdiv_(grad, avg)
        inplace(p, buf)  # param.add_(buf, alpha=-lr)
    else:
        inplace(p, g, avg)  # param.addcdiv_(grad, avg, value=-lr)


BODIES.update(EXTRA_BODIES)
TORCH_SHAPES = {"sgd": _sgd_shapes, "adam": _adam_shapes, "rmsprop": _rmsprop_shapes, **EXTRA_SHAPES}
# how many of a kernel's parameters are arrays (the parameter, its gradient, its state); scalars follow
N_ARRAYS = {name: next(i for i, a in enumerate(params.split(", ")) if a.startswith("neg_"))
            for name, (params, _) in BODIES.items()}


def check_shapes(name, p, args):
    """Every array the kernel indexes by the parameter's length has the parameter's shape, or torch's
    error for the first op of its step that would see the difference."""
    shape = p.shape
    k = N_ARRAYS[name] - 1
    for a in args[:k]:
        if a is not None and a.shape != shape:
            break
    else:
        return
    shapes = [p.shape] + [None if a is None else tuple(a.shape) for a in args[:k]]
    TORCH_SHAPES[name](*shapes, *args[k:])
    raise RuntimeError(f"{name}: optimizer state of shape {[list(s) for s in shapes[2:] if s is not None]} does not "
                       f"match its parameter's shape {list(shape)}")


def run(name, p, *args):
    """Runs optimizer kernel `name` in place on parameter array `p`: `args` are its gradient and state arrays
    (None for a state the flags leave unused), then the scalars, in BODIES' order. Shapes are checked
    first (torch's errors); the kernel then sees flat arrays, split over the threads when large. GPU
    arrays are updated in place on the GPU."""
    check_shapes(name, p, args)
    k = N_ARRAYS[name] - 1
    scalars = args[k:]
    usual = USUAL.get(name)
    kernel = (usual(p.dtype, *scalars) if usual is not None else None) or name
    # one pass: flat views, and the arrays written through a contiguous copy (written back below; this runs
    # once per parameter per step, so it is kept to one flags test per array)
    copied, flats = [], []
    for i, a in enumerate((p, *args[:k])):
        if a is None:
            flats.append(flats[0][:0])
        elif a.flags.c_contiguous:
            flats.append(a.reshape(-1))
        else:
            flats.append(contiguous(a).reshape(-1))
            if i != 1:  # the gradient is only read
                copied.append((a, flats[-1]))
    if p.__class__ is not np.ndarray:
        cuda().optim.run(BODIES[kernel], kernel, *flats, *scalars)
    else:
        cpu_optim.run(BODIES[kernel], kernel, *flats, *scalars)
    for a, f in copied:
        a[...] = f.reshape(a.shape)


CHUNK = cpu_optim.CHUNK  # how many parameters one call of a many-parameter kernel takes
PARALLEL_MIN = cpu_optim.PARALLEL_MIN  # a parameter this large is updated alone, split over the threads


def many(name, operands, scalars):
    """Runs optimizer kernel `name` once over many host parameters (torch's foreach/fused step): `operands` are,
    for each array the kernel takes (parameters, gradients, each state), a tuple of flat C-contiguous arrays of
    one float dtype, each of its parameter's length, the tuples padded to a multiple of cpu_optim.CHUNK with
    empty arrays (a state the flags leave unused: empty arrays throughout). The caller checked the shapes."""
    dtype = operands[0][0].dtype
    usual = USUAL.get(name)
    kernel = (usual(dtype, *scalars) if usual is not None else None) or name
    cpu_optim.run_many(BODIES[kernel], kernel, dtype, operands, scalars)


def norms(flats):
    """The 2-norms of host arrays `flats` (flat, of one float dtype) as an array of that dtype: each the square root
    of its dot product with itself in BLAS (sdot/ddot: accumulated in the dtype, as torch's norm kernel, and
    vectorised: a Numba loop over float64 partial sums in a fixed order ran 17x slower, 590 against 35 us for an
    MLP's 663k gradients, LLVM leaving it scalar)."""
    # (an array of one element: its norm is its abs for torch, whose square might overflow or underflow)
    return np.array([np.sqrt(np.dot(f, f)) if f.size != 1 else abs(f[0]) for f in flats], flats[0].dtype)

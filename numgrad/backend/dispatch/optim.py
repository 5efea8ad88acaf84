"""In-place optimizer updates as generated kernels: one loop per optimizer per dtype, each element updated in
one pass over the parameter, its gradient and its state. The arithmetic follows torch's single-tensor
implementations op by op (each torch op rounds to the parameter dtype; so does each line here)."""
import numpy as np

from ..cpu import optim as cpu_optim

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


def run(name, p, *args):
    """Runs optimizer kernel `name` over flat contiguous arrays (the parameter first, then gradient and
    state buffers), then the scalars; large parameters are split over the threads. GPU arrays are
    updated in place on the GPU."""
    if p.__class__ is not np.ndarray:
        from ..cuda import optim as cuda_optim  # numba.cuda: only once a GPU array exists
        cuda_optim.run(BODIES[name], name, p, *args)
        return
    cpu_optim.run(BODIES[name], name, p, *args)

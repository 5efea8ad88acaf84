"""The update bodies of Adadelta, Adagrad, Adamax, NAdam and RAdam (torch's single-tensor steps, op by op, each
rounding to the parameter's dtype) and their shape arithmetic, joined to optim.py's tables."""
from ..._core.shapes import check_inplace as inplace, iterator_shape as broadcast

# Each body starts its scalars with a `neg_` name (optim.py counts the arrays before it). `lerp` is torch's
# formula chosen by the weight, as in Adam's body.
_DECAY = """
        gi = -g[i] if maximize else g[i]
        pi = p[i]
        if decay_factor != 1:  # decoupled decay of the parameter itself
            pi = pi * decay_factor
        if weight_decay != 0:
            gi = gi + weight_decay * pi
"""
_MOMENTS = """
        mi = m[i]
        mi = mi + w1 * (gi - mi) if w1_small else gi - (gi - mi) * (T(1) - w1)
        m[i] = mi
        vi = v[i] * beta2
        vi = vi + one_minus_beta2 * gi * gi
        v[i] = vi
"""
EXTRA_BODIES = {
    "adadelta": ("p, g, sq, acc, neg_lr, rho, one_minus_rho, eps, weight_decay, maximize", """
    neg_lr, rho, one_minus_rho, eps, weight_decay = T(neg_lr), T(rho), T(one_minus_rho), T(eps), T(weight_decay)
    for i in range(start, stop):
        gi = -g[i] if maximize else g[i]
        if weight_decay != 0:
            gi = gi + weight_decay * p[i]
        s = sq[i] * rho
        s = s + one_minus_rho * gi * gi
        sq[i] = s
        std = math.sqrt(s + eps)
        delta = math.sqrt(acc[i] + eps)
        delta = delta / std
        delta = delta * gi
        a = acc[i] * rho
        acc[i] = a + one_minus_rho * delta * delta
        p[i] = p[i] + neg_lr * delta
"""),
    "adagrad": ("p, g, total, neg_clr, eps, weight_decay, maximize", """
    neg_clr, eps, weight_decay = T(neg_clr), T(eps), T(weight_decay)
    for i in range(start, stop):
        gi = -g[i] if maximize else g[i]
        if weight_decay != 0:
            gi = gi + weight_decay * p[i]
        s = total[i] + T(1) * gi * gi
        total[i] = s
        p[i] = p[i] + neg_clr * gi / (math.sqrt(s) + eps)
"""),
    "adamax": ("p, g, m, u, neg_clr, beta1_weight, beta2, eps, weight_decay, maximize", """
    neg_clr, w1, beta2, eps, weight_decay = T(neg_clr), T(beta1_weight), T(beta2), T(eps), T(weight_decay)
    w1_small = abs(w1) < T(0.5)
    for i in range(start, stop):
        gi = -g[i] if maximize else g[i]
        if weight_decay != 0:
            gi = gi + weight_decay * p[i]
        mi = m[i]
        mi = mi + w1 * (gi - mi) if w1_small else gi - (gi - mi) * (T(1) - w1)
        m[i] = mi
        a = u[i] * beta2
        b = abs(gi) + eps
        ui = a if a > b or a != a else b  # torch.maximum: NaN wins
        u[i] = ui
        p[i] = p[i] + neg_clr * mi / ui
"""),
    "nadam": ("p, g, m, v, neg_grad_weight, exp_avg_weight, beta1_weight, beta2, one_minus_beta2, bias_correction2, "
              "eps, weight_decay, decay_factor, maximize", """
    grad_weight, exp_avg_weight = T(neg_grad_weight), T(exp_avg_weight)
    w1, beta2, one_minus_beta2, bias_correction2 = T(beta1_weight), T(beta2), T(one_minus_beta2), T(bias_correction2)
    eps, weight_decay, decay_factor = T(eps), T(weight_decay), T(decay_factor)
    w1_small = abs(w1) < T(0.5)
    for i in range(start, stop):""" + _DECAY + _MOMENTS + """
        denom = math.sqrt(vi / bias_correction2) + eps
        pi = pi + grad_weight * gi / denom
        p[i] = pi + exp_avg_weight * mi / denom
"""),
    "radam": ("p, g, m, v, neg_one, beta1_weight, beta2, one_minus_beta2, bias_correction1, lr, "
              "bias_correction2_sqrt, rect, eps, weight_decay, decay_factor, rectified, maximize", """
    w1, beta2, one_minus_beta2, bias_correction1, lr = T(beta1_weight), T(beta2), T(one_minus_beta2), \\
        T(bias_correction1), T(lr)
    bias_correction2_sqrt, rect, eps = T(bias_correction2_sqrt), T(rect), T(eps)
    weight_decay, decay_factor = T(weight_decay), T(decay_factor)
    w1_small = abs(w1) < T(0.5)
    for i in range(start, stop):""" + _DECAY + _MOMENTS + """
        update = mi / bias_correction1
        update = update * lr
        if rectified:  # times (reciprocal(sqrt(v) + eps) * sqrt(bias_correction2)), then the rectification
            adaptive = T(1) / (math.sqrt(vi) + eps)
            update = update * (adaptive * bias_correction2_sqrt)
            update = update * rect
        p[i] = pi - update
"""),
}


# torch's steps as shape arithmetic (see optim.py's TORCH_SHAPES): torch's error for a state that no longer
# matches its parameter, at the op that first sees it
def _adadelta_shapes(p, g, sq, acc, *scalars):
    g = broadcast(g, p) if scalars[4] != 0 else g
    inplace(sq, g, g)  # square_avg.mul_(rho).addcmul_(grad, grad, value=1 - rho)
    delta = broadcast(acc, sq, g)  # acc_delta.add(eps).sqrt_().div_(std).mul_(grad)
    inplace(acc, delta, delta)
    inplace(p, delta)


def _adagrad_shapes(p, g, total, neg_clr, eps, weight_decay, maximize):
    g = broadcast(g, p) if weight_decay != 0 else g
    inplace(total, g, g)  # state_sum.addcmul_(grad, grad, value=1)
    inplace(p, g, total)  # param.addcdiv_(grad, std, value=-clr)


def _adamax_shapes(p, g, m, u, neg_clr, beta1_weight, beta2, eps, weight_decay, maximize):
    g = broadcast(g, p) if weight_decay != 0 else g
    inplace(m, g)  # exp_avg.lerp_(grad, 1 - beta1)
    inplace(u, g)  # torch.maximum(exp_inf.mul_(beta2), grad.abs().add_(eps), out=exp_inf)
    inplace(p, m, u)  # param.addcdiv_(exp_avg, exp_inf, value=-clr)


def _adam_like_shapes(p, g, m, v, weight_decay):
    g = broadcast(g, p) if weight_decay != 0 else g
    inplace(m, g)  # exp_avg.lerp_(grad, 1 - beta1)
    inplace(v, g, g)  # exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
    inplace(p, g, v)  # param.addcdiv_(grad, denom, ...)
    inplace(p, m, v)  # param.addcdiv_(exp_avg, denom, ...) / param.add_(update)


EXTRA_SHAPES = {
    "adadelta": _adadelta_shapes, "adagrad": _adagrad_shapes, "adamax": _adamax_shapes,
    "nadam": lambda p, g, m, v, *s: _adam_like_shapes(p, g, m, v, s[7]),
    "radam": lambda p, g, m, v, *s: _adam_like_shapes(p, g, m, v, s[9]),
}

"""Optimizer steps from given arrays in torch or numgrad: the runner the optimizer oracle tests share."""


def optimizer_steps(lib, cls, kw, init, grads, between=None, groups=None, one_at_a_time=False):
    """Steps of optimizer `cls` (with options `kw`) over parameters made from the arrays `init`, step k's gradients
    from `grads[k]` (None: no gradient). `groups` splits the parameters into groups by index lists; `between(lib,
    k, params, opt)` runs before step k; `one_at_a_time` makes numgrad step each parameter alone (no group kernel).
    Returns the parameters' final arrays and the optimizer."""
    params = [lib.tensor(a.copy(), requires_grad=True) for a in init]
    spec = params if groups is None else [{"params": [params[i] for i in g]} for g in groups]
    opt = getattr(lib.optim, cls)(spec, **kw)
    if one_at_a_time:
        opt._group_keys = lambda group: None
    for k, gs in enumerate(grads):
        for p, g in zip(params, gs):
            p.grad = None if g is None else lib.tensor(g.copy())
        if between is not None:
            between(lib, k, params, opt)
        opt.step()
    return [p.detach().numpy().copy() for p in params], opt

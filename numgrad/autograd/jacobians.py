"""torch.autograd.functional's jacobian, hessian, vjp, jvp, hvp and vhp (same checks, messages and results).
`vectorize=True` is accepted and computes the same values by the loop over basis vectors (numgrad has no vmap
batching rules to vectorize with)."""
from .._core.grad_mode import enable_grad, is_grad_enabled, set_grad_enabled
from ..ops import creation, join
from ..tensor_base import TensorBase
from . import forward_ad, gradients

__all__ = ["vjp", "jvp", "jacobian", "hessian", "hvp", "vhp"]


def _as_tuple(inp, arg_name, fn_name):
    is_tuple = isinstance(inp, tuple)
    inp = inp if is_tuple else (inp,)
    for i, el in enumerate(inp):
        if not isinstance(el, TensorBase):
            where = f"value at index {i}" if is_tuple else f"given {arg_name}"
            raise TypeError(f"The {arg_name} given to {fn_name} must be either a Tensor or a tuple of Tensors but the "
                            f"{where} has type {type(el)}.")
    return is_tuple, inp


def _unpacked(res, to_unpack):
    if isinstance(to_unpack, tuple):
        if not to_unpack[1]:
            res = tuple(el[0] for el in res)
        return res if to_unpack[0] else res[0]
    return res if to_unpack else res[0]


def _prepared(inputs, create_graph, need_graph):
    return tuple(x.view(x.shape) if create_graph and x.requires_grad else x.detach().requires_grad_(need_graph)
                 for x in inputs)


def _finished(values, create_graph):
    if isinstance(values[0], TensorBase):
        return values if create_graph else tuple(v.detach() for v in values)
    return tuple(_finished(v, create_graph) for v in values)


def _validate_v(v, other, is_other_tuple):
    if len(other) != len(v):
        if is_other_tuple:
            raise RuntimeError(f"v is a tuple of invalid length: should be {len(other)} but got {len(v)}.")
        raise RuntimeError("The given v should contain a single Tensor.")
    for idx, (el_v, el_other) in enumerate(zip(v, other)):
        if el_v.size() != el_other.size():
            prepend = f"Entry {idx} in " if is_other_tuple else ""
            raise RuntimeError(f"{prepend}v has invalid size: should be {el_other.size()} but got {el_v.size()}.")


_NO_GRAD = {
    "hessian": "The hessian of the user-provided function with respect to input {} is independent of the input. This "
               "is not allowed in strict mode. You should ensure that your function is thrice differentiable and "
               "that the hessian depends on the inputs.",
    "jacobian": "While computing the hessian, found that the jacobian of the user-provided function with respect to "
                "input {} is independent of the input. This is not allowed in strict mode. You should ensure that "
                "your function is twice differentiable and that the jacobian depends on the inputs (this would be "
                "violated by a linear function for example).",
    "grad_inputs": "The gradient with respect to input {} is independent of the inputs of the user-provided function. "
                   "This is not allowed in strict mode.",
    "outputs": "Output {} of the user-provided function does not require gradients. The outputs must be computed in a "
               "differentiable manner from the input when running in strict mode.",
}


def _check_requires_grad(values, kind, strict):
    if not strict:
        return
    for i, v in enumerate(values):
        if v is None:
            raise RuntimeError(f"The output of the user-provided function is independent of input {i}. This is not "
                               "allowed in strict mode.")
        if not v.requires_grad:
            raise RuntimeError(_NO_GRAD[kind].format(i))


def _grad(outputs, inputs, grad_outputs=None, create_graph=False, retain_graph=None):
    grad_outputs = grad_outputs if grad_outputs is not None else (None,) * len(outputs)
    pairs = [(o, g) for o, g in zip(outputs, grad_outputs) if o is not None and o.requires_grad]
    if not pairs:
        return (None,) * len(inputs)
    return gradients.grad([o for o, _ in pairs], inputs, [g for _, g in pairs], allow_unused=True,
                           create_graph=create_graph, retain_graph=retain_graph)


_INDEPENDENT = {
    "back": "The output of the user-provided function is independent of input {}. This is not allowed in strict mode.",
    "back_trick": "The gradient with respect to the input is independent of entry {} in the grad_outputs when using "
                  "the double backward trick to compute forward mode gradients. This is not allowed in strict mode.",
    "double_back": "The jacobian of the user-provided function is independent of input {}. This is not allowed in "
                   "strict mode.",
    "double_back_trick": "The hessian of the user-provided function is independent of entry {} in the grad_jacobian. "
                         "This is not allowed in strict mode as it prevents from using the double backward trick to "
                         "replace forward mode AD.",
}


def _fill_in_zeros(grads, refs, strict, create_graph, stage):
    res = []
    for i, g in enumerate(grads):
        if g is None:
            if strict:
                raise RuntimeError(_INDEPENDENT[stage].format(i))
            g = creation.zeros_like(refs[i])
        elif strict and create_graph and not g.requires_grad:
            which = "hessian" if "double" in stage else "jacobian"
            raise RuntimeError(f"The {which} of the user-provided function is independent of input {i}. This is not "
                               "allowed in strict mode when create_graph=True.")
        res.append(g)
    return tuple(res)


def _setup(func, inputs, v, create_graph, strict, name, v_of_outputs):
    """Prepared inputs, outputs, v checked against the outputs (vjp) or the inputs (the others)."""
    is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", name)
    inputs = _prepared(inputs, create_graph, True)
    if v is not None:
        v = _prepared(_as_tuple(v, "v", name)[1], create_graph, False)
    outputs = func(*inputs)
    is_outputs_tuple, outputs = _as_tuple(outputs, "outputs of the user-provided function", name)
    _check_requires_grad(outputs, "outputs", strict)
    other, other_tuple = (outputs, is_outputs_tuple) if v_of_outputs else (inputs, is_inputs_tuple)
    if v is not None:
        _validate_v(v, other, other_tuple)
    elif len(other) != 1 or other[0].nelement() != 1:
        raise RuntimeError("The vector v can only be None if the user-provided function returns a single Tensor with a "
                           "single element." if v_of_outputs else "The vector v can only be None if the input to the "
                           "user-provided function is a single Tensor with a single element.")
    return is_inputs_tuple, inputs, v, is_outputs_tuple, outputs


def vjp(func, inputs, v=None, create_graph=False, strict=False):
    with enable_grad():
        is_inputs_tuple, inputs, v, is_outputs_tuple, outputs = _setup(func, inputs, v, create_graph, strict, "vjp",
                                                                        True)
    with set_grad_enabled(True if create_graph else is_grad_enabled()):
        found = _fill_in_zeros(_grad(outputs, inputs, v, create_graph), inputs, strict, create_graph, "back")
    return (_unpacked(_finished(outputs, create_graph), is_outputs_tuple),
            _unpacked(_finished(found, create_graph), is_inputs_tuple))


def jvp(func, inputs, v=None, create_graph=False, strict=False):
    """By the double backward trick, as torch: J v = d/du <J^T u, v>."""
    with enable_grad():
        is_inputs_tuple, inputs, v, is_outputs_tuple, outputs = _setup(func, inputs, v, create_graph, strict, "jvp",
                                                                        False)
        grad_outputs = tuple(creation.zeros_like(out, requires_grad=True) for out in outputs)
        grad_inputs = _grad(outputs, inputs, grad_outputs, create_graph=True)
        _check_requires_grad(grad_inputs, "grad_inputs", strict)
    with set_grad_enabled(True if create_graph else is_grad_enabled()):
        found = _fill_in_zeros(_grad(grad_inputs, grad_outputs, v, create_graph), outputs, strict, create_graph,
                               "back_trick")
    return (_unpacked(_finished(outputs, create_graph), is_outputs_tuple),
            _unpacked(_finished(found, create_graph), is_outputs_tuple))


def _single_output(outputs, is_outputs_tuple, name):
    if is_outputs_tuple or not isinstance(outputs[0], TensorBase):
        raise RuntimeError(f"The function given to {name} should return a single Tensor")
    if outputs[0].nelement() != 1:
        raise RuntimeError(f"The Tensor returned by the function given to {name} should contain a single element")


def vhp(func, inputs, v=None, create_graph=False, strict=False):
    with enable_grad():
        is_inputs_tuple, inputs, v, is_outputs_tuple, outputs = _setup(func, inputs, v, create_graph, strict, "vhp",
                                                                        False)
        _single_output(outputs, is_outputs_tuple, "vhp")
        jac = _grad(outputs, inputs, create_graph=True)
        _check_requires_grad(jac, "jacobian", strict)
    with set_grad_enabled(True if create_graph else is_grad_enabled()):
        found = _fill_in_zeros(_grad(jac, inputs, v, create_graph), inputs, strict, create_graph, "double_back")
    return (_unpacked(_finished(outputs, create_graph), is_outputs_tuple),
            _unpacked(_finished(found, create_graph), is_inputs_tuple))


def hvp(func, inputs, v=None, create_graph=False, strict=False):
    with enable_grad():
        is_inputs_tuple, inputs, v, is_outputs_tuple, outputs = _setup(func, inputs, v, create_graph, strict, "hvp",
                                                                        False)
        _single_output(outputs, is_outputs_tuple, "hvp")
        jac = _grad(outputs, inputs, create_graph=True)
        _check_requires_grad(jac, "jacobian", strict)
        grad_jac = tuple(creation.zeros_like(x, requires_grad=True) for x in inputs)
        double_back = _grad(jac, inputs, grad_jac, create_graph=True)
        _check_requires_grad(jac, "hessian", strict)
    with set_grad_enabled(True if create_graph else is_grad_enabled()):
        found = _fill_in_zeros(_grad(double_back, grad_jac, v, create_graph), inputs, strict, create_graph,
                               "double_back_trick")
    return (_unpacked(_finished(outputs, create_graph), is_outputs_tuple),
            _unpacked(_finished(found, create_graph), is_inputs_tuple))


def _forward_jacobian(func, inputs, strict, vectorize):
    """The Jacobian by forward AD, one basis tangent per input element (what torch vmaps over)."""
    if strict:
        raise RuntimeError("torch.autograd.functional.jacobian: `strict=True` and `strategy=\"forward-mode\"` are not "
                           "supported together (yet). Please either set `strict=False` or `strategy=\"reverse-mode\"`.")
    is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jacobian")
    if not vectorize:
        raise NotImplementedError("Computing Jacobian using forward-AD or forward-over-reverse Hessian isonly "
                                  "implemented for `vectorize=True`.")
    columns, is_outputs_tuple, outputs = [], False, None
    for j, x in enumerate(inputs):
        for k in range(x.nelement()):
            with forward_ad.dual_level():
                duals = []
                for m, y in enumerate(inputs):
                    tangent = creation.zeros_like(y)
                    if m == j:
                        tangent.view(-1)[k] = 1
                    duals.append(forward_ad.make_dual(y, tangent))
                is_outputs_tuple, outs = _as_tuple(func(*duals), "outputs", "jacobian")
                unpacked = [forward_ad.unpack_dual(o) for o in outs]
                outputs = [p for p, _ in unpacked]
                columns.append((j, [t if t is not None else creation.zeros_like(p) for p, t in unpacked]))
    if outputs is None:
        is_outputs_tuple, outputs = _as_tuple(func(*inputs), "outputs", "jacobian")
    # (lists, as torch's forward-mode result)
    jac = [[_columns_joined([c[i] for j2, c in columns if j2 == j], out, x) for j, x in enumerate(inputs)]
           for i, out in enumerate(outputs)]
    return _unpacked(jac, (is_outputs_tuple, is_inputs_tuple))


def _columns_joined(cols, out, x):
    if not cols:
        return creation.zeros((*out.shape, *x.shape), dtype=out.dtype)
    return join.stack(cols, -1).reshape(*out.shape, *x.shape)


def jacobian(func, inputs, create_graph=False, strict=False, vectorize=False, strategy="reverse-mode"):
    if strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError('Expected strategy to be either "forward-mode" or "reverse-mode". Hint: If your function '
                             'has more outputs than inputs, "forward-mode" tends to be more performant. Otherwise, '
                             'prefer to use "reverse-mode".')
    if strategy == "forward-mode":
        if create_graph:
            raise NotImplementedError("torch.autograd.functional.jacobian: `create_graph=True` and "
                                      "`strategy=\"forward-mode\"` are not supported together (yet). Please either "
                                      "set `create_graph=False` or `strategy=\"reverse-mode\"`.")
        return _forward_jacobian(func, inputs, strict, vectorize)
    with enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jacobian")
        inputs = _prepared(inputs, create_graph, True)
        is_outputs_tuple, outputs = _as_tuple(func(*inputs), "outputs of the user-provided function", "jacobian")
        _check_requires_grad(outputs, "outputs", strict)
        if vectorize and strict:
            raise RuntimeError("torch.autograd.functional.jacobian: `strict=True` and `vectorized=True` are not "
                               "supported together. Please either set `strict=False` or `vectorize=False`.")
        jac = []
        for i, out in enumerate(outputs):
            rows = [[] for _ in inputs]
            flat = out.reshape(-1)
            for k in range(out.nelement()):
                found = _grad((flat[k],), inputs, retain_graph=True, create_graph=create_graph)
                for j, (g, x) in enumerate(zip(found, inputs)):
                    if g is None:
                        if strict:
                            raise RuntimeError(f"Output {i} of the user-provided function is independent of input "
                                               f"{j}. This is not allowed in strict mode.")
                        g = creation.zeros_like(x)
                    elif strict and create_graph and not g.requires_grad:
                        raise RuntimeError(f"The jacobian of the user-provided function is independent of input {i}. "
                                           "This is not allowed in strict mode when create_graph=True.")
                    rows[j].append(g)
            jac.append(tuple(join.stack(r, 0).view(*out.shape, *x.shape) if r else
                             creation.zeros((*out.shape, *x.shape), dtype=x.dtype) for r, x in zip(rows, inputs)))
        return _unpacked(_finished(tuple(jac), create_graph), (is_outputs_tuple, is_inputs_tuple))


def hessian(func, inputs, create_graph=False, strict=False, vectorize=False, outer_jacobian_strategy="reverse-mode"):
    is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "hessian")
    if outer_jacobian_strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError('Expected strategy to be either "forward-mode" or "reverse-mode".')

    def single_output(*inp):
        out = func(*inp)
        is_out_tuple, outs = _as_tuple(out, "outputs of the user-provided function", "hessian")
        _check_requires_grad(outs, "outputs", strict)
        _single_output(outs, is_out_tuple, "hessian")
        return out.squeeze()

    def jac_func(*inp):
        if outer_jacobian_strategy == "forward-mode":
            inp = tuple(t.requires_grad_(True) for t in inp)
        jac = jacobian(single_output, inp, create_graph=True)
        _check_requires_grad(jac, "jacobian", strict)
        return jac
    res = jacobian(jac_func, inputs, create_graph=create_graph, strict=strict, vectorize=vectorize,
                   strategy=outer_jacobian_strategy)
    return _unpacked(res, (is_inputs_tuple, is_inputs_tuple))

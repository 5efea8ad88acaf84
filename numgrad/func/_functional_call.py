"""torch.func.functional_call (a module run with given tensors in place of its parameters and buffers) and
stack_module_state (the stacked parameters of an ensemble, for vmap)."""
from ..ops import join
from ..tensor_base import TensorBase


def _owner(module, name):
    *path, attr = name.split(".")
    for part in path:
        module = getattr(module, part)
    return module, attr


def _swap(module, name, value):
    """Puts `value` where `name` is (a parameter's or a buffer's table, or a plain attribute); returns how to undo."""
    owner, attr = _owner(module, name)
    for table in (owner._parameters, owner._buffers):
        if attr in table:
            old = table[attr]
            table[attr] = value
            return lambda: table.__setitem__(attr, old)
    missing = object()
    old = owner.__dict__.get(attr, missing)
    object.__setattr__(owner, attr, value)
    return lambda: object.__setattr__(owner, attr, old) if old is not missing else object.__delattr__(owner, attr)


def _tied_names(module):
    """Groups of names that refer to one tensor (tied weights), as named_parameters/buffers list them."""
    groups = {}
    for name, t in [*module.named_parameters(remove_duplicate=False), *module.named_buffers(remove_duplicate=False)]:
        groups.setdefault(id(t), []).append(name)
    return [names for names in groups.values() if len(names) > 1]


def functional_call(module, parameter_and_buffer_dicts, args=None, kwargs=None, *, tie_weights=True, strict=False):
    dicts = parameter_and_buffer_dicts if isinstance(parameter_and_buffer_dicts, (tuple, list)) else \
        (parameter_and_buffer_dicts,)
    values = {}
    for d in dicts:
        repeated = [k for k in d if k in values]
        if repeated:
            raise ValueError(f"{repeated} appeared in multiple dictionaries; behavior of functional call is ambiguous")
        values.update(d)
    if tie_weights:
        for names in _tied_names(module):
            given = [n for n in names if n in values]
            if len({id(values[n]) for n in given}) > 1:
                raise ValueError(f"functional_call got multiple values for keys {sorted(given)}, which are tied. "
                                 "Consider using tie_weights=False")
            if given:
                values.update({n: values[given[0]] for n in names})
    if strict:
        expected = [n for n, _ in module.named_parameters(remove_duplicate=False)] + \
            [n for n, _ in module.named_buffers(remove_duplicate=False)]
        unexpected = [k for k in values if k not in expected]
        missing = [k for k in expected if k not in values]
        errors = ([f"Unexpected key(s): {', '.join(map(repr, unexpected))}."] if unexpected else []) + \
            ([f"Missing key(s): {', '.join(map(repr, missing))}."] if missing else [])
        if errors:
            raise RuntimeError(f"Error(s) in reparametrizing for {type(module).__name__}:\n\t" + "\n\t".join(errors))
    for name, value in values.items():
        if not isinstance(value, TensorBase):
            raise TypeError(f"functional_call expects tensors, got {type(value).__name__} for {name!r}")
    undo = []
    try:
        for name, value in values.items():
            undo.append(_swap(module, name, value))
        if args is None:
            args = ()
        elif not isinstance(args, tuple):
            args = (args,)
        return module(*args, **(kwargs or {}))
    finally:
        for restore in reversed(undo):
            restore()


def _stacked_leaf(tensors, name):
    flags = {t.requires_grad for t in tensors}
    if len(flags) > 1:
        raise RuntimeError(f"Expected {name} from each model to have the same .requires_grad")
    result = join.stack(list(tensors))
    return result.detach().requires_grad_() if flags == {True} else result


def stack_module_state(models):
    """(params, buffers): each model's parameters and buffers stacked along a new first dimension, by name; the
    stacked parameters are new leaves (optimizable, unrelated to the models' own)."""
    if len(models) == 0:
        raise RuntimeError("stack_module_state: Expected at least one model, got 0.")
    if len({m.training for m in models}) > 1:
        raise RuntimeError("stack_module_state: Expected all models to have the same training/eval mode.")
    if any(type(m) is not type(models[0]) for m in models):
        raise RuntimeError("stack_module_state: Expected all models to be of the same class.")
    all_params = [dict(m.named_parameters()) for m in models]
    all_buffers = [dict(m.named_buffers()) for m in models]
    params = {k: _stacked_leaf([p[k] for p in all_params], k) for k in all_params[0]}
    buffers = {k: _stacked_leaf([b[k] for b in all_buffers], k) for k in all_buffers[0]}
    return params, buffers

"""torch.func's grad, grad_and_value, vjp, jvp, linearize, jacrev, jacfwd, hessian: autograd.grad and forward AD."""
import functools
import math

from .._core.grad_mode import enable_grad
from .._core.state import STATE
from ..autograd import forward_ad
from ..autograd.gradients import grad as autograd_grad
from ..ops import creation, join
from ..tensor_base import TensorBase
from ._pytree import flatten, unflatten


def _checked(x):
    if not isinstance(x, TensorBase):
        raise ValueError(f"Thing passed to transform API must be Tensor, got {type(x)}")
    return x


def _traced(x):
    """x as an input to differentiate with respect to: an alias keeping its graph (and tangent) when it already
    requires grad (an outer transform's input), else a fresh leaf carrying x's tangent, if any."""
    if x.requires_grad:
        return x.view(x.shape)
    tangent = x._fw_grad
    y = x.detach().requires_grad_()
    return forward_ad.make_dual(y, tangent) if tangent is not None else y


def _outer_graph(leaves):
    """Whether results must stay differentiable: an input carries an outer graph, or forward AD is active."""
    return STATE.forward_ad is not None or any(x.requires_grad for x in leaves)


def _argnums_check(argnums, args):
    for n in (argnums if isinstance(argnums, tuple) else (argnums,)):
        if not isinstance(n, int):
            raise RuntimeError(f"argnums must be int or Tuple[int, ...], got: {type(argnums)}")
        if not -len(args) <= n < len(args):
            raise RuntimeError(f"Got argnum={n}, but only {len(args)} positional inputs")


def _split_args(args, argnums):
    """(the differentiated arguments as a tree, a function putting replacements back into args)."""
    _argnums_check(argnums, args)
    nums = argnums if isinstance(argnums, tuple) else (argnums,)
    nums = tuple(n % len(args) for n in nums)

    def rebuilt(values):
        full = list(args)
        for n, v in zip(nums, values if isinstance(argnums, tuple) else (values,)):
            full[n] = v
        return tuple(full)
    chosen = tuple(args[n] for n in nums) if isinstance(argnums, tuple) else args[nums[0]]
    return chosen, rebuilt


def _gradients(outputs, inputs, cotangents, create_graph):
    """autograd.grad with zeros for inputs the outputs do not use (torch.func's convention)."""
    pairs = [(o, c) for o, c in zip(outputs, cotangents) if o.requires_grad]
    if not pairs:
        return [creation.zeros_like(x) for x in inputs]
    found = autograd_grad([o for o, _ in pairs], inputs, [c for _, c in pairs], retain_graph=True,
                          create_graph=create_graph, allow_unused=True, materialize_grads=True)
    return list(found) if create_graph else [g.detach() for g in found]


def grad_and_value(func, argnums=0, has_aux=False):
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        chosen, rebuilt = _split_args(args, argnums)
        leaves, spec = flatten(chosen)
        outer = _outer_graph([_checked(x) for x in leaves])
        with enable_grad():
            traced = [_traced(x) for x in leaves]
            output = func(*rebuilt(unflatten(traced, spec)), **kwargs)
            aux = None
            if has_aux:
                if not (isinstance(output, tuple) and len(output) == 2):
                    raise RuntimeError("grad_and_value(f)(*args): output of function f should be a tuple: "
                                       "(output, aux) if has_aux is True")
                output, aux = output
            if not isinstance(output, TensorBase):
                raise RuntimeError(f"grad_and_value(f)(*args): Expected f(*args) to return a Tensor, got "
                                   f"{type(output)}")
            if output.dim() != 0:
                raise RuntimeError("grad_and_value(f)(*args): Expected f(*args) to return a scalar Tensor, got tensor "
                                   f"with {output.dim()} dims. Maybe you wanted to use the vjp or jacrev APIs instead?")
            grads = _gradients([output], traced, [None], outer)
        grads = unflatten(grads, spec)
        if not outer:
            output = output.detach()
        return (grads, (output, aux)) if has_aux else (grads, output)
    return wrapper


def grad(func, argnums=0, has_aux=False):
    inner = grad_and_value(func, argnums, has_aux)

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        grads, value = inner(*args, **kwargs)
        return (grads, value[1]) if has_aux else grads
    return wrapper


def vjp(func, *primals, has_aux=False):
    """(func(*primals), vjp_fn[, aux]): vjp_fn(cotangents) gives the gradients w.r.t. each primal."""
    leaves, spec = flatten(primals)
    outer = _outer_graph([_checked(x) for x in leaves])
    with enable_grad():
        traced = [_traced(x) for x in leaves]
        output = func(*unflatten(traced, spec))
    aux = None
    if has_aux:
        if not (isinstance(output, tuple) and len(output) == 2):
            raise RuntimeError("vjp(f, *primals): output of function f should be a tuple: (output, aux) if has_aux is "
                               "True")
        output, aux = output
    out_leaves, out_spec = flatten(output)
    for o in out_leaves:
        if not isinstance(o, TensorBase):
            raise RuntimeError(f"vjp(f, *primals): Expected f to be a function that has non-empty output of Tensors, "
                               f"but got an output of type {type(o)}")

    def vjp_fn(cotangents):
        given, given_spec = flatten(cotangents)
        if len(given) != len(out_leaves):
            raise RuntimeError("Expected pytree structure of cotangents to be the same as pytree structure of outputs "
                               "to the function.")
        for o, c in zip(out_leaves, given):
            if tuple(o.shape) != tuple(c.shape):
                raise RuntimeError(f"Mismatch in shape: grad_output[0] has a shape of {c.shape} and output[0] has a "
                                   f"shape of {o.shape}.")
        with enable_grad():
            grads = _gradients(out_leaves, traced, given, outer or STATE.forward_ad is not None)
        return unflatten(grads, spec)
    shown = output if outer else unflatten([o.detach() for o in out_leaves], out_spec)
    return (shown, vjp_fn, aux) if has_aux else (shown, vjp_fn)


def jvp(func, primals, tangents, *, strict=False, has_aux=False):
    """(func(*primals), the directional derivative along `tangents`[, aux]), by forward AD."""
    if not isinstance(primals, tuple):
        raise RuntimeError("jvp(f, primals, tangents): Expected primals to be a tuple. E.g. it should be valid to call "
                           "f(*primals).")
    if not isinstance(tangents, tuple):
        raise RuntimeError("jvp(f, primals, tangents): Expected tangents to be a tuple. E.g. it should be valid to "
                           "call f(*primals).")
    p_leaves, spec = flatten(primals)
    t_leaves, _ = flatten(tangents)
    if len(p_leaves) != len(t_leaves):
        raise RuntimeError("jvp(f, primals, tangents): Expected primals and tangents to have the same python "
                           f"structure. For example, if primals is a tuple of 3 tensors, tangents also must be. Got "
                           f"primals with structure {spec} and tangents with structure {flatten(tangents)[1]}")
    with forward_ad.dual_level():
        duals = [forward_ad.make_dual(_checked(p), _checked(t)) for p, t in zip(p_leaves, t_leaves)]
        output = func(*unflatten(duals, spec))
        aux = None
        if has_aux:
            output, aux = output
        out_leaves, out_spec = flatten(output)
        primal_out, tangent_out = [], []
        for o in out_leaves:
            if not isinstance(o, TensorBase):
                raise RuntimeError(f"jvp(f, primals, tangents): Expected f(*primals) to return only tensors, got "
                                   f"unsupported type {type(o)}")
            p, t = forward_ad.unpack_dual(o)
            primal_out.append(p)
            tangent_out.append(t if t is not None else creation.zeros_like(o))
    if not _outer_graph([*p_leaves, *t_leaves]):  # (checked after the level: it is active inside)
        primal_out, tangent_out = [p.detach() for p in primal_out], [t.detach() for t in tangent_out]
    result = (unflatten(primal_out, out_spec), unflatten(tangent_out, out_spec))
    return result + (aux,) if has_aux else result


def linearize(func, *primals):
    """(func(*primals), jvp_fn): jvp_fn(*tangents) is the jvp at `primals` (recomputed per call: numgrad keeps no
    linearized graph, so each call costs one forward in forward mode)."""
    output = func(*primals)
    out_leaves, out_spec = flatten(output)
    shown = unflatten([o.detach() for o in out_leaves], out_spec)

    def jvp_fn(*tangents):
        p_leaves, t_leaves = flatten(primals)[0], flatten(tangents)[0]
        if len(t_leaves) != len(p_leaves):
            raise RuntimeError(f"Expected the tangents {flatten(tangents)[1]} to have the same argspec as the primals "
                               f"{flatten(primals)[1]}")
        for i, (p, tg) in enumerate(zip(p_leaves, t_leaves)):
            if tg.shape != p.shape:
                raise RuntimeError(f"tangent:{i} with shape {tg.shape} in flattened pytree doesn't match the shape "
                                   f"{p.shape} of the corresponding primal.")
            if tg.dtype != p.dtype:
                raise RuntimeError(f"tangent:{i} with dtype {tg.dtype} in flattened pytree doesn't match the dtype "
                                   f"{p.dtype} of the corresponding primal.")
        return jvp(func, tuple(primals), tuple(tangents))[1]
    return shown, jvp_fn


def _numel(t):
    return math.prod(t.shape)


def _basis(like, k):
    """The k-th standard basis tensor of `like`'s shape and dtype."""
    e = creation.zeros_like(like)
    e.view(-1)[k] = 1
    return e


def jacrev(func, argnums=0, *, has_aux=False, chunk_size=None, _preallocate_and_copy=False):
    """The Jacobian by reverse mode: one vjp per output element."""
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        chosen, rebuilt = _split_args(args, argnums)
        flat, spec = flatten(chosen)
        result = vjp(lambda *xs: func(*rebuilt(unflatten(xs, spec)), **kwargs), *flat, has_aux=has_aux)
        output, vjp_fn = result[0], result[1]
        out_leaves, out_spec = flatten(output)
        per_output = []
        for i, o in enumerate(out_leaves):
            rows = []
            for k in range(_numel(o)):
                cot = [_basis(o2, k) if j == i else creation.zeros_like(o2) for j, o2 in enumerate(out_leaves)]
                rows.append(vjp_fn(unflatten(cot, out_spec)))
            per_input = []
            for n, x in enumerate(flat):
                stacked = join.stack([r[n] for r in rows]) if rows else creation.zeros((0, *x.shape), dtype=x.dtype)
                per_input.append(stacked.reshape(*o.shape, *x.shape))
            per_output.append(unflatten(per_input, spec))
        jac = unflatten(per_output, out_spec)
        return (jac, result[2]) if has_aux else jac
    return wrapper


def jacfwd(func, argnums=0, has_aux=False, *, randomness="error"):
    """The Jacobian by forward mode: one jvp per input element."""
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        chosen, rebuilt = _split_args(args, argnums)
        flat, spec = flatten(chosen)
        call = lambda *xs: func(*rebuilt(unflatten(xs, spec)), **kwargs)  # noqa: E731
        columns, output, aux = [], None, None
        for n, x in enumerate(flat):
            cols = []
            for k in range(_numel(_checked(x))):
                tangents = tuple(_basis(x2, k) if m == n else creation.zeros_like(x2) for m, x2 in enumerate(flat))
                found = jvp(call, tuple(flat), tangents, has_aux=has_aux)
                output, tangent_out = found[0], found[1]
                aux = found[2] if has_aux else None
                cols.append(flatten(tangent_out)[0])
            columns.append(cols)
        if output is None:  # no input element: the output's shape from one call
            output = call(*flat)
            output, aux = output if has_aux else (output, None)
        out_leaves, out_spec = flatten(output)
        per_output = []
        for i, o in enumerate(out_leaves):
            per_input = []
            for x, cols in zip(flat, columns):
                stacked = join.stack([c[i] for c in cols], -1) if cols else creation.zeros((*o.shape, 0), dtype=o.dtype)
                per_input.append(stacked.reshape(*o.shape, *x.shape))
            per_output.append(unflatten(per_input, spec))
        jac = unflatten(per_output, out_spec)
        return (jac, aux) if has_aux else jac
    return wrapper


def hessian(func, argnums=0):
    """Forward over reverse, as torch.func: jacfwd(jacrev(func))."""
    return jacfwd(jacrev(func, argnums), argnums)

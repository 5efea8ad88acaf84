"""The benchmark's small workloads as the users of other Python autograds write them: MyGrad (tensors and
.backward()), HIPS autograd (grad() of a function, a functional update) and jax.jit (a jitted value_and_grad
step). Each peer runs in a process of its own (bench/_worker.py) on the same NumPy inputs as torch's, and does
only the workloads it can express (SUPPORTED); the others show "-" in its column."""
import importlib
import importlib.util

import numpy as np

# No import of numgrad, torch or a peer here: the workers load this file by path, beside workloads.py (passed
# in as `wl`), and import the one peer they time.

PEERS = {"mygrad": "mygrad", "autograd": "autograd", "jax.jit": "jax"}  # variant -> the module it needs
CHAINS = ("chain 3 (tiny)", "chain 10^4", "chain 10M")
SMALL_MLP = "small MLP step SGD"
SUPPORTED = {peer: (*CHAINS, SMALL_MLP) for peer in PEERS}


def installed(peer):
    """Whether `peer`'s module is installed: a real package, not a namespace package a folder of the same name
    makes on sys.path (the tests' `autograd/` folder while pytest runs)."""
    spec = importlib.util.find_spec(PEERS[peer])
    return spec is not None and spec.origin is not None


def build(peer, wl, name, rng):
    """(step, observe) for workload `name` in `peer`: step() runs one timed step; observe(out) returns what the
    correctness check compares, named as workloads.observe names torch's."""
    lib = importlib.import_module(PEERS[peer])
    maker = _BUILDERS[peer]["mlp" if name == SMALL_MLP else "chain"]
    return maker(lib, wl, wl.WORKLOADS[name], rng)


def _mlp_observe(value, weights, grads, params):
    seen = {"value": np.asarray(value)}
    for (name, _), g, p in zip(weights, grads, params):
        seen[f"grad {name}"] = np.asarray(g)
        seen[f"param {name}"] = np.asarray(p)
    return seen


# ---- MyGrad: tensors, .backward(), an update of each tensor's array ------------------------------------
def _mygrad_chain(mg, wl, w, rng):
    x = mg.tensor(w.inputs(rng)[0])

    def step():
        y = x * x
        z = (y + 1) * y  # (MyGrad makes the 1 an int64 array: the result is float64, as its users get it)
        s = z.sum()
        s.backward()
        return s
    return step, lambda s: {"value": np.asarray(s.data), "grad 0": x.grad}


def _mygrad_mlp(mg, wl, w, rng):
    relu = importlib.import_module("mygrad.nnet.activations").relu
    softmax_crossentropy = importlib.import_module("mygrad.nnet.losses").softmax_crossentropy
    x, y, weights = wl.small_mlp_arrays(rng)
    w1, b1, w2, b2 = params = [mg.tensor(a) for _, a in weights]
    lr = wl.SMALL_MLP["lr"]

    def step():
        loss = softmax_crossentropy(relu(x @ w1.T + b1) @ w2.T + b2, y)
        loss.backward()
        for p in params:
            p.data -= lr * p.grad
        return loss
    return step, lambda loss: _mlp_observe(loss.data, weights, [p.grad for p in params], [p.data for p in params])


# ---- HIPS autograd: grad() of a function of the parameters ------------------------------------------------
def _autograd_chain(ag, wl, w, rng):
    anp = importlib.import_module("autograd.numpy")
    x = w.inputs(rng)[0]

    def f(x):
        y = x * x
        z = (y + 1) * y
        return anp.sum(z)
    df = ag.grad(f)

    def step():
        return df(x)
    return step, lambda g: {"value": np.asarray(f(x)), "grad 0": g}


def _logsumexp(anp):
    try:
        return importlib.import_module("autograd.scipy.special").logsumexp
    except ImportError:  # (autograd's scipy wrappers need SciPy)
        return lambda a, axis: anp.log(anp.sum(anp.exp(a - anp.max(a, axis, keepdims=True)), axis)) + \
            anp.max(a, axis)


def _autograd_mlp(ag, wl, w, rng):
    anp = importlib.import_module("autograd.numpy")
    logsumexp = _logsumexp(anp)
    x, y, weights = wl.small_mlp_arrays(rng)
    lr, rows = wl.SMALL_MLP["lr"], np.arange(len(y))

    def loss(params):
        w1, b1, w2, b2 = params
        logits = anp.dot(anp.maximum(anp.dot(x, w1.T) + b1, 0.0), w2.T) + b2
        return -anp.mean(logits[rows, y] - logsumexp(logits, axis=1))
    dloss = ag.grad(loss)
    params = [a for _, a in weights]
    state = {"params": params, "first": (loss(params), params)}

    def step():
        grads = dloss(state["params"])
        state["params"] = [p - lr * g for p, g in zip(state["params"], grads)]
        return grads

    def observe(grads):
        return _mlp_observe(state["first"][0], weights, grads, state["params"])
    return step, observe


# ---- jax.jit: a jitted value_and_grad step, waited for ----------------------------------------------------
def _jax_chain(jax, wl, w, rng):
    x = jax.numpy.asarray(w.inputs(rng)[0])

    def f(x):
        y = x * x
        z = (y + 1) * y
        return z.sum()
    value_and_grad = jax.jit(jax.value_and_grad(f))

    def step():
        return jax.block_until_ready(value_and_grad(x))
    return step, lambda out: {"value": np.asarray(out[0]), "grad 0": np.asarray(out[1])}


def _jax_mlp(jax, wl, w, rng):
    jnp = jax.numpy
    x, y, weights = wl.small_mlp_arrays(rng)
    x, y, lr = jnp.asarray(x), jnp.asarray(y.astype(np.int32)), wl.SMALL_MLP["lr"]

    def loss(params, x, y):
        w1, b1, w2, b2 = params
        logits = jax.nn.relu(x @ w1.T + b1) @ w2.T + b2
        return -jnp.mean(jnp.take_along_axis(jax.nn.log_softmax(logits), y[:, None], axis=1))

    @jax.jit
    def update(params, x, y):
        value, grads = jax.value_and_grad(loss)(params, x, y)
        return value, grads, [p - lr * g for p, g in zip(params, grads)]
    state = {"params": [jnp.asarray(a) for _, a in weights]}

    def step():
        value, grads, state["params"] = jax.block_until_ready(update(state["params"], x, y))
        return value, grads
    return step, lambda out: _mlp_observe(out[0], weights, out[1], state["params"])


_BUILDERS = {"mygrad": {"chain": _mygrad_chain, "mlp": _mygrad_mlp},
             "autograd": {"chain": _autograd_chain, "mlp": _autograd_mlp},
             "jax.jit": {"chain": _jax_chain, "mlp": _jax_mlp}}

"""The benchmark's workloads, each written once for any library with torch's API (torch or numgrad)."""
import math
import typing

import numpy as np

# No import of numgrad or torch here: the timing workers load this file by path, so that a torch worker
# never imports numgrad (nor a numgrad worker torch), and the library arrives as the `lib` argument.


# ---- elementwise and reduction workloads: forward + backward of a sum ---------------------------------
def chain(lib, x):
    y = x * x
    z = (y + 1) * y
    s = z.sum()
    s.backward()
    return s


def gelu_tanh(lib, x):
    g = 0.5 * x * (1 + lib.tanh(0.79788456 * (x + 0.044715 * x ** 3)))
    s = g.sum()
    s.backward()
    return s


def reductions(lib, x):
    s = (x.sum(1) ** 2).mean() + x.max()
    s.backward()
    return s


def softmax(lib, x, w):
    s = (lib.softmax(x, -1) * w).sum()
    s.backward()
    return s


# ---- training steps: modules, a loss and an optimizer, written as torch users write them ---------------
def train_step(lib, model, opt, x, y):
    """One optimizer step of a classifier: the model's logits against integer labels."""
    opt.zero_grad()
    loss = lib.nn.functional.cross_entropy(model(x), y)
    loss.backward()
    opt.step()
    return loss


def lm_step(lib, model, opt, idx, pos, mask, targets):
    """One optimizer step of a language model: next-token cross-entropy over every position."""
    opt.zero_grad()
    logits = model(idx, pos, mask)
    loss = lib.nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))
    loss.backward()
    opt.step()
    return loss


def initial_value(name, shape, rng):
    """A parameter's starting values, drawn from `rng` (float32): matrices and kernels uniform within torch's
    default bound 1/sqrt(fan_in), biases small, 1-d scales (layer norm) near one."""
    if len(shape) >= 2:
        bound = 1 / math.sqrt(int(np.prod(shape[1:])))
        values = rng.uniform(-bound, bound, shape)
    elif name.endswith("bias"):
        values = rng.uniform(-0.1, 0.1, shape)
    else:
        values = 1 + rng.uniform(-0.1, 0.1, shape)
    return values.astype(np.float32)


def _load_weights(lib, model, rng):
    """Draws every parameter from `rng` in registration order (the same in every library) and copies it in,
    so that all libraries start from identical weights (initial_value)."""
    with lib.no_grad():
        for name, p in model.named_parameters():
            p.copy_(lib.tensor(initial_value(name, tuple(p.shape), rng)))
    return model


def _mlp(lib):
    nn = lib.nn
    return nn.Sequential(nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(), nn.Linear(512, 10))


def _mlp_build(optimizer):
    def build(lib, rng):
        x = lib.tensor(rng.standard_normal((256, 784)).astype(np.float32))
        y = lib.tensor(rng.integers(0, 10, 256).astype(np.int64))
        model = _load_weights(lib, _mlp(lib), rng)
        opt = lib.optim.SGD(model.parameters(), lr=0.01, momentum=0.9) if optimizer == "SGD" else \
            lib.optim.Adam(model.parameters(), lr=1e-3)
        return [model, opt, x, y]
    return build


def _mlp_gemm_floor(rng):
    """The MLP step's eight GEMMs alone, in NumPy float32 on preallocated outputs: the floor that no
    library's step can beat on this machine's BLAS. Counted for a 784-512-512-10 MLP, batch 256, weights
    stored as Linear's (out, in):
      forward, 3:  h1 = x @ W1^T, h2 = h1 @ W2^T, logits = h2 @ W3^T
      backward, 5: dW3 = g3^T @ h2, dW2 = g2^T @ h1, dW1 = g1^T @ x (one per layer),
                   dh2 = g3 @ W3, dh1 = g2 @ W2 (one per layer but the first: x needs no gradient).
    Bias, ReLU, cross-entropy and the optimizer update are left out: they are memory-bound and small."""
    f = np.float32
    x = rng.standard_normal((256, 784)).astype(f)
    w1, w2, w3 = (rng.standard_normal(s).astype(f) for s in ((512, 784), (512, 512), (10, 512)))
    h1, h2, g1, g2 = (np.empty((256, 512), f) for _ in range(4))
    logits, g3 = np.empty((256, 10), f), rng.standard_normal((256, 10)).astype(f)
    dw1, dw2, dw3 = np.empty_like(w1), np.empty_like(w2), np.empty_like(w3)

    def gemms():
        np.matmul(x, w1.T, out=h1)
        np.matmul(h1, w2.T, out=h2)
        np.matmul(h2, w3.T, out=logits)
        np.matmul(g3.T, h2, out=dw3)
        np.matmul(g3, w3, out=g2)
        np.matmul(g2.T, h1, out=dw2)
        np.matmul(g2, w2, out=g1)
        np.matmul(g1.T, x, out=dw1)
    return gemms


# the small MLP of the small workloads: batch 32, 64-128-10, cross-entropy, plain SGD (a tutorial's loop)
SMALL_MLP = {"batch": 32, "sizes": (64, 128, 10), "lr": 0.01}


def small_mlp_arrays(rng):
    """The small MLP step's inputs as NumPy arrays: (x, labels, [(parameter name, values)] in torch's order for
    nn.Sequential(Linear, ReLU, Linear)), for libraries without torch's modules (bench/peers.py)."""
    c = SMALL_MLP
    x = rng.standard_normal((c["batch"], c["sizes"][0])).astype(np.float32)
    y = rng.integers(0, c["sizes"][-1], c["batch"]).astype(np.int64)
    (a, b), (_, d) = zip(c["sizes"][:-1], c["sizes"][1:])
    shapes = [("0.weight", (b, a)), ("0.bias", (b,)), ("2.weight", (d, b)), ("2.bias", (d,))]
    return x, y, [(name, initial_value(name, shape, rng)) for name, shape in shapes]


def _small_mlp_build(lib, rng):
    nn, c = lib.nn, SMALL_MLP
    x, y, weights = small_mlp_arrays(rng)
    model = nn.Sequential(nn.Linear(*c["sizes"][:2]), nn.ReLU(), nn.Linear(*c["sizes"][1:]))
    with lib.no_grad():
        for (name, p), (_, values) in zip(model.named_parameters(), weights):
            p.copy_(lib.tensor(values))
    return [model, lib.optim.SGD(model.parameters(), lr=c["lr"]), lib.tensor(x), lib.tensor(y)]


def _cnn_build(lib, rng):
    nn = lib.nn
    # 1x28x28 -> conv 3x3 -> 8x26x26 -> pool 2 -> 8x13x13 -> conv 3x3 -> 16x11x11 -> 1936 -> 10
    model = nn.Sequential(nn.Conv2d(1, 8, 3), nn.ReLU(), nn.MaxPool2d(2), nn.Conv2d(8, 16, 3), nn.ReLU(),
                          nn.Flatten(), nn.Linear(16 * 11 * 11, 10))
    x = lib.tensor(rng.standard_normal((32, 1, 28, 28)).astype(np.float32))
    y = lib.tensor(rng.integers(0, 10, 32).astype(np.int64))
    model = _load_weights(lib, model, rng)
    return [model, lib.optim.SGD(model.parameters(), lr=0.01, momentum=0.9), x, y]


# a GPT-style model: token and position embeddings, one pre-norm block (causal self-attention, GELU MLP)
GPT = {"vocab": 128, "batch": 8, "seq": 64, "d": 64, "heads": 2}


def _gpt_class(lib):
    nn, F = lib.nn, lib.nn.functional

    class GPTBlock(nn.Module):
        def __init__(self, vocab, seq, d, heads):
            super().__init__()
            self.heads = heads
            self.tok, self.pos = nn.Embedding(vocab, d), nn.Embedding(seq, d)
            self.ln1, self.ln2, self.ln_f = nn.LayerNorm(d), nn.LayerNorm(d), nn.LayerNorm(d)
            self.qkv, self.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
            self.fc, self.out = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)
            self.head = nn.Linear(d, vocab)

        def forward(self, idx, pos, mask):
            b, t = idx.shape
            x = self.tok(idx) + self.pos(pos)
            q, k, v = self.qkv(self.ln1(x)).split(x.shape[-1], dim=-1)
            # (b, t, d) -> (b, heads, t, d / heads)
            q, k, v = (z.reshape(b, t, self.heads, -1).transpose(1, 2) for z in (q, k, v))
            att = (q @ k.transpose(-2, -1)) * (1 / math.sqrt(q.shape[-1]))
            att = F.softmax(att.masked_fill(mask, float("-inf")), dim=-1)
            x = x + self.proj((att @ v).transpose(1, 2).reshape(b, t, -1))
            x = x + self.out(F.gelu(self.fc(self.ln2(x))))
            return self.head(self.ln_f(x))
    return GPTBlock


def _gpt_build(lib, rng):
    c = GPT
    idx = rng.integers(0, c["vocab"], (c["batch"], c["seq"] + 1)).astype(np.int64)
    # the causal mask is built once in NumPy and passed in (True above the diagonal: masked), as many
    # models keep it in a buffer; numgrad has no tril/triu to build it in the step
    mask = lib.tensor(np.triu(np.ones((c["seq"], c["seq"]), bool), 1))
    model = _load_weights(lib, _gpt_class(lib)(c["vocab"], c["seq"], c["d"], c["heads"]), rng)
    opt = lib.optim.AdamW(model.parameters(), lr=1e-3)
    return [model, opt, lib.tensor(idx[:, :-1].copy()), lib.tensor(np.arange(c["seq"], dtype=np.int64)), mask,
            lib.tensor(idx[:, 1:].copy())]


class Workload(typing.NamedTuple):
    fn: typing.Callable  # fn(lib, *inputs): one step, returns the loss
    inputs: typing.Callable  # rng -> numpy arrays (the float32 ones after the first `plain` require grad)
    plain: int  # how many leading inputs need no gradient
    reps: int
    quick_reps: int
    build: typing.Optional[typing.Callable] = None  # (lib, rng) -> the inputs, when they hold modules
    floor: typing.Optional[typing.Callable] = None  # rng -> a NumPy-only function: the step's GEMM floor


def _built(fn, build, reps, quick_reps, floor=None):
    return Workload(fn, None, 0, reps, quick_reps, build, floor)


WORKLOADS = {
    "chain 10M": Workload(chain, lambda r: [r.standard_normal(10_000_000).astype(np.float32)], 0, 10, 3),
    # torch eager takes a quarter of a second a step here: fewer reps keep the default run within minutes
    "gelu-tanh 10M": Workload(gelu_tanh, lambda r: [r.standard_normal(10_000_000).astype(np.float32)], 0, 6, 3),
    "chain 3 (tiny)": Workload(chain, lambda r: [r.standard_normal(3).astype(np.float32)], 0, 2000, 300),
    "chain 10^4": Workload(chain, lambda r: [r.standard_normal(10_000).astype(np.float32)], 0, 2000, 300),
    "reductions 4096x4096": Workload(reductions, lambda r: [r.standard_normal((4096, 4096)).astype(np.float32)],
                                     0, 10, 3),
    "softmax 4096x1024": Workload(softmax, lambda r: [r.standard_normal((4096, 1024)).astype(np.float32),
                                                      r.standard_normal((4096, 1024)).astype(np.float32)], 0, 12, 5),
    "small MLP step SGD": _built(train_step, _small_mlp_build, 500, 100),  # batch 32, 64-128-10, plain SGD
    "MLP step SGD-momentum": _built(train_step, _mlp_build("SGD"), 20, 10, _mlp_gemm_floor),
    "MLP step Adam": _built(train_step, _mlp_build("Adam"), 20, 10, _mlp_gemm_floor),
    "convnet step 32x28x28": _built(train_step, _cnn_build, 20, 10),
    "GPT block step 8x64": _built(lm_step, _gpt_build, 20, 10),
}


def make_inputs(lib, workload, seed=0):
    rng = np.random.default_rng(seed)
    if workload.build is not None:
        return workload.build(lib, rng)
    arrays = workload.inputs(rng)
    return [lib.tensor(a) if i < workload.plain or a.dtype != np.float32 else lib.tensor(a, requires_grad=True)
            for i, a in enumerate(arrays)]


def run_step(lib, workload, inputs, fn=None):
    """One step of `workload` (or of `fn`, its compiled form) on `inputs`: the gradients of the tensor inputs
    are cleared first, as the modules' optimizer does inside the step."""
    for t in inputs:
        if getattr(t, "requires_grad", False):
            t.grad = None
    return (fn or workload.fn)(lib, *inputs)


def observe(out, inputs):
    """What the correctness check compares after one step, as {name: array}: the loss, the gradient of
    each input tensor, and for each module every parameter's gradient and its value after the step (copies in
    the tensors' own dtype: relative_error widens them, and the 10M workloads' files stay half the size)."""
    def array(t):
        return np.array(t.detach().cpu().numpy())
    seen = {"value": array(out)}
    for i, t in enumerate(inputs):
        if getattr(t, "requires_grad", False):
            seen[f"grad {i}"] = array(t.grad)
        elif hasattr(t, "named_parameters"):
            for name, p in t.named_parameters():
                if p.grad is not None:
                    seen[f"grad {name}"] = array(p.grad)
                seen[f"param {name}"] = array(p)
    return seen


def relative_error(ours, reference):
    """max |a - b| / max(|b|, tiny) for one tensor: an error that means the same for a sum of 10M and for
    a gradient of 1e-3 (inf when shapes differ or a value is not finite where torch's is)."""
    a, b = np.asarray(ours, np.float64), np.asarray(reference, np.float64)
    if a.shape != b.shape:
        return math.inf
    if a.size == 0:
        return 0.0
    with np.errstate(invalid="ignore"):  # inf - inf: matched below
        diff = np.abs(a - b)
    same_nonfinite = (a == b) | (np.isnan(a) & np.isnan(b))  # inf == inf; torch's own nan matched
    diff = np.where(same_nonfinite, 0.0, diff)
    if not np.all(np.isfinite(diff)):
        return math.inf
    scale = np.max(np.abs(np.where(np.isfinite(b), b, 0.0)))
    return float(np.max(diff) / max(scale, np.finfo(np.float32).tiny))

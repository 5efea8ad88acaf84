"""A nanoGPT-style character-level GPT, written for PyTorch and run with `import numgrad as torch`: it trains on
a few of Shakespeare's sonnets (bundled, no download), shows a progress bar, plots its loss and samples text.

    python examples/char_gpt.py                  # numgrad
    python examples/char_gpt.py --torch          # the same script on PyTorch: the same loss curve

Both libraries start from the same weights (drawn with NumPy) and see the same batches, so their loss curves
agree to float32 rounding; the sampled text differs (each library has its own random stream).
"""
import argparse
import json
import math
import os
import sys

import numpy as np

if "--torch" in sys.argv:
    import torch
else:
    import numgrad as torch
nn, F = torch.nn, torch.nn.functional

TEXT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "sonnets.txt")


class CausalSelfAttention(nn.Module):
    def __init__(self, n_embd, n_head, block_size, dropout):
        super().__init__()
        self.c_attn = nn.Linear(n_embd, 3 * n_embd)
        self.c_proj = nn.Linear(n_embd, n_embd)
        self.attn_dropout, self.resid_dropout = nn.Dropout(dropout), nn.Dropout(dropout)
        self.n_head, self.n_embd, self.dropout = n_head, n_embd, dropout
        self.flash = hasattr(torch.nn.functional, "scaled_dot_product_attention")
        if not self.flash:
            self.register_buffer("bias", torch.tril(torch.ones(block_size, block_size))
                                 .view(1, 1, block_size, block_size))

    def forward(self, x):
        B, T, C = x.size()
        q, k, v = self.c_attn(x).split(self.n_embd, dim=2)
        k = k.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        q = q.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        v = v.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        if self.flash:
            y = F.scaled_dot_product_attention(q, k, v, attn_mask=None,
                                               dropout_p=self.dropout if self.training else 0, is_causal=True)
        else:
            att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
            att = att.masked_fill(self.bias[:, :, :T, :T] == 0, float("-inf"))
            att = self.attn_dropout(F.softmax(att, dim=-1))
            y = att @ v
        y = y.transpose(1, 2).contiguous().view(B, T, C)
        return self.resid_dropout(self.c_proj(y))


class Block(nn.Module):
    def __init__(self, n_embd, n_head, block_size, dropout):
        super().__init__()
        self.ln_1, self.ln_2 = nn.LayerNorm(n_embd), nn.LayerNorm(n_embd)
        self.attn = CausalSelfAttention(n_embd, n_head, block_size, dropout)
        self.mlp = nn.Sequential(nn.Linear(n_embd, 4 * n_embd), nn.GELU(), nn.Linear(4 * n_embd, n_embd),
                                 nn.Dropout(dropout))

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


class GPT(nn.Module):
    def __init__(self, vocab_size, block_size=64, n_layer=2, n_head=4, n_embd=64, dropout=0.0):
        super().__init__()
        self.block_size = block_size
        self.transformer = nn.ModuleDict(dict(
            wte=nn.Embedding(vocab_size, n_embd), wpe=nn.Embedding(block_size, n_embd), drop=nn.Dropout(dropout),
            h=nn.ModuleList([Block(n_embd, n_head, block_size, dropout) for _ in range(n_layer)]),
            ln_f=nn.LayerNorm(n_embd)))
        self.lm_head = nn.Linear(n_embd, vocab_size, bias=False)
        self.transformer.wte.weight = self.lm_head.weight  # weight tying

    def forward(self, idx, targets=None):
        b, t = idx.size()
        pos = torch.arange(0, t, dtype=torch.long)
        x = self.transformer.drop(self.transformer.wte(idx) + self.transformer.wpe(pos))
        for block in self.transformer.h:
            x = block(x)
        logits = self.lm_head(self.transformer.ln_f(x))
        if targets is None:
            return logits, None
        return logits, F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1))

    @torch.no_grad()
    def generate(self, idx, max_new_tokens, temperature=1.0, top_k=None):
        for _ in range(max_new_tokens):
            idx_cond = idx if idx.size(1) <= self.block_size else idx[:, -self.block_size:]
            logits, _ = self(idx_cond)
            logits = logits[:, -1, :] / temperature
            if top_k is not None:
                v, _ = torch.topk(logits, min(top_k, logits.size(-1)))
                logits[logits < v[:, [-1]]] = -float("Inf")
            probs = F.softmax(logits, dim=-1)
            idx = torch.cat((idx, torch.multinomial(probs, num_samples=1)), dim=1)
        return idx


def initialise(model, n_layer, seed):
    """nanoGPT's initialisation (normal(0, 0.02), residual projections scaled by 1/sqrt(2 n_layer), zero biases,
    unit LayerNorm scales) drawn with NumPy, so that both libraries start from the same numbers."""
    rng = np.random.default_rng(seed)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name.endswith("bias"):
                values = np.zeros(tuple(p.shape))
            elif p.dim() == 1:  # a LayerNorm's scale
                values = np.ones(tuple(p.shape))
            else:
                std = 0.02 / math.sqrt(2 * n_layer) if name.endswith("c_proj.weight") else 0.02
                values = rng.normal(0.0, std, tuple(p.shape))
            p.copy_(torch.tensor(values.astype(np.float32)))


def train(steps=300, batch_size=16, block_size=64, n_layer=2, n_head=4, n_embd=64, lr=1e-3, seed=0,
          progress=True):
    """Returns (per-step losses, the model, the character table)."""
    from tqdm import tqdm
    text = open(TEXT, encoding="utf-8").read()
    chars = sorted(set(text))
    data = np.array([chars.index(c) for c in text], dtype=np.int64)
    model = GPT(len(chars), block_size, n_layer, n_head, n_embd)
    initialise(model, n_layer, seed)
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.1, betas=(0.9, 0.95))
    rng, losses = np.random.default_rng(seed + 1), []
    bar = tqdm(range(steps), desc=torch.__name__, disable=not progress)
    for _ in bar:
        starts = rng.integers(0, len(data) - block_size - 1, batch_size)
        x = torch.tensor(np.stack([data[s:s + block_size] for s in starts]))
        y = torch.tensor(np.stack([data[s + 1:s + 1 + block_size] for s in starts]))
        _, loss = model(x, y)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        losses.append(loss.item())
        bar.set_postfix(loss=f"{losses[-1]:.3f}")
    return losses, model, chars


def plot(losses, path, title):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(7, 4))
    ax.plot(losses, linewidth=1)
    ax.set(xlabel="step", ylabel="cross-entropy loss", title=title)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--torch", action="store_true", help="run on PyTorch instead of numgrad")
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--layers", type=int, default=2)
    parser.add_argument("--sample", type=int, default=200, help="characters to sample after training")
    parser.add_argument("--plot", default=None, help="loss-curve PNG (default: char_gpt_loss_<library>.png)")
    parser.add_argument("--losses", default=None, help="also write the per-step losses to this JSON file")
    parser.add_argument("--no-progress", action="store_true")
    args = parser.parse_args(argv)
    if args.torch:
        torch.set_num_threads(2)
    torch.manual_seed(0)
    losses, model, chars = train(args.steps, n_layer=args.layers, progress=not args.no_progress)
    path = args.plot or f"char_gpt_loss_{torch.__name__}.png"
    plot(losses, path, f"char-level GPT on sonnets ({torch.__name__})")
    if args.losses:
        with open(args.losses, "w") as f:
            json.dump(losses, f)
    model.eval()
    start = torch.tensor([[chars.index("\n")]])
    sample = "".join(chars[i] for i in model.generate(start, args.sample, top_k=10)[0].tolist())
    print(f"{torch.__name__}: final loss {losses[-1]:.4f}, loss curve in {path}\n--- sample ---{sample}")
    return losses


if __name__ == "__main__":
    main()

"""Trains an MLP on scikit-learn's digits with numgrad (or torch, with --torch): the same initial weights
and batch order in both, a tqdm progress bar, a PNG of the loss curve, and the test accuracy.

    python examples/digits_mlp.py                 # numgrad
    python examples/digits_mlp.py --torch         # the same script on torch: the same loss curve
"""
import argparse
import json

import numpy as np

HIDDEN = (128, 64)


def load_digits_split(seed=0):
    """Digits scaled to [0, 1], split 75/25 with a fixed seed (the data ships with scikit-learn)."""
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split
    x, y = load_digits(return_X_y=True)
    x = (x / 16.0).astype(np.float32)
    return train_test_split(x, y.astype(np.int64), test_size=0.25, random_state=seed, stratify=y)


def initial_state(sizes, seed=0):
    """Weights drawn with numpy from torch's Linear initialisation, U(-1/sqrt(fan_in), 1/sqrt(fan_in)),
    keyed as a torch Sequential's state_dict, so that both libraries start from the same numbers."""
    rng = np.random.default_rng(seed)
    state = {}
    for i, (fan_in, fan_out) in enumerate(zip(sizes[:-1], sizes[1:])):
        bound = 1 / np.sqrt(fan_in)
        state[f"{2 * i}.weight"] = rng.uniform(-bound, bound, (fan_out, fan_in)).astype(np.float32)
        state[f"{2 * i}.bias"] = rng.uniform(-bound, bound, fan_out).astype(np.float32)
    return state


def build(lib, sizes):
    layers = []
    for i, (fan_in, fan_out) in enumerate(zip(sizes[:-1], sizes[1:])):
        layers.append(lib.nn.Linear(fan_in, fan_out))
        if i < len(sizes) - 2:
            layers.append(lib.nn.ReLU())
    return lib.nn.Sequential(*layers)


def train(lib, epochs=30, batch_size=64, lr=0.05, seed=0, progress=True):
    """Returns (per-step training losses, test accuracy)."""
    from tqdm import tqdm
    x_train, x_test, y_train, y_test = load_digits_split(seed)
    sizes = (x_train.shape[1], *HIDDEN, 10)
    model = build(lib, sizes)
    model.load_state_dict({k: lib.tensor(v) for k, v in initial_state(sizes, seed).items()})
    optimizer = lib.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    scheduler = lib.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=epochs)
    order = np.random.default_rng(seed)
    losses = []
    bar = tqdm(range(epochs), desc=lib.__name__, disable=not progress)
    for _ in bar:
        model.train()
        perm = order.permutation(len(x_train))
        for start in range(0, len(perm), batch_size):
            idx = perm[start:start + batch_size]
            loss = lib.nn.functional.cross_entropy(model(lib.tensor(x_train[idx])), lib.tensor(y_train[idx]))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
        scheduler.step()
        bar.set_postfix(loss=f"{np.mean(losses[-len(range(0, len(perm), batch_size)):]):.4f}")
    model.eval()
    with lib.no_grad():
        predicted = model(lib.tensor(x_test)).argmax(1).numpy()
    return losses, float((predicted == y_test).mean())


def plot(losses, path, title):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(7, 4))
    ax.plot(losses, linewidth=1)
    ax.set(xlabel="step", ylabel="cross-entropy loss", yscale="log", title=title)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--torch", action="store_true", help="run on torch instead of numgrad")
    parser.add_argument("--epochs", type=int, default=30)
    parser.add_argument("--plot", default=None, help="loss-curve PNG (default: digits_loss_<library>.png)")
    parser.add_argument("--losses", default=None, help="also write the per-step losses to this JSON file")
    parser.add_argument("--no-progress", action="store_true")
    args = parser.parse_args(argv)
    if args.torch:
        import torch as lib
        lib.set_num_threads(2)
    else:
        import numgrad as lib
    losses, accuracy = train(lib, epochs=args.epochs, progress=not args.no_progress)
    path = args.plot or f"digits_loss_{lib.__name__}.png"
    plot(losses, path, f"MLP on digits ({lib.__name__})")
    if args.losses:
        with open(args.losses, "w") as f:
            json.dump(losses, f)
    print(f"{lib.__name__}: final loss {losses[-1]:.4f}, test accuracy {accuracy:.2%}, loss curve in {path}")
    return accuracy


if __name__ == "__main__":
    main()

"""The differential fuzz of numgrad.compile against eager numgrad (compiled.py): the fuzzer's programs as
functions, called three times compiled and eager under five call patterns (same inputs, fresh inputs, new values,
accumulating .grad, views made in the call); errors, every variable, every .grad and every leaf compared bit for bit.

- CI profile (this file, in the suite): CI_PROGRAMS seeded programs (and the prefixes of those that raise). A
  mismatch that is not a KNOWN item (compiled.py) fails it, with the program's source.
- Long profile: `NUMGRAD_COMPILE_FUZZ_PROGRAMS=N [NUMGRAD_COMPILE_FUZZ_SEED=S] python -m pytest
  tests/oracle/fuzz/test_compiled_fuzz.py -k long -s -n 0 -p no:randomly` runs N programs and prints the counts:
  programs, how many replayed, how many ran eager and why (with the numgrad function that broke the graph),
  known items, mismatches; it prints the first program of each new mismatch class and fails if there is one.

Each KNOWN item has a regression test below, marked xfail(strict=True): when its fix lands the test passes, which
fails the run (XPASS): then delete the marker and the item's entry in compiled.KNOWN."""
import os

import numpy as np
import pytest
from oracle.fuzz.compiled import KNOWN, check, programs, run_profile, summary
from oracle.fuzz.program import render

import numgrad

# 150 programs and the prefixes of those that raise (about 210 in all, about 50 of them replay): on two shared
# cores about 5 s with a warm kernel cache, 50 s from an empty one
CI_PROGRAMS = 150
CI_SEED = 7
LONG = int(os.environ.get("NUMGRAD_COMPILE_FUZZ_PROGRAMS", "0"))
SEED = int(os.environ.get("NUMGRAD_COMPILE_FUZZ_SEED", "0"))


def test_compiled_fuzz_ci():
    failures, replayed = [], 0
    for label, program, fused in programs(CI_PROGRAMS, CI_SEED):
        result = check(program, fused=fused)
        replayed += result.coverage["same"] == "replayed"
        if result.new:
            failures.append(f"{label} (fused {fused}):\n" + "\n".join(str(m) for m in result.new[:6]) + "\n"
                            + render(program, "numgrad"))
    assert not failures, f"{len(failures)} programs differ compiled and eager:\n\n" + "\n\n".join(failures[:5])
    assert replayed >= CI_PROGRAMS // 10, f"only {replayed} programs replayed: the fuzz no longer exercises replay"


@pytest.mark.skipif(not LONG, reason="the long profile runs when NUMGRAD_COMPILE_FUZZ_PROGRAMS is set")
def test_compiled_fuzz_long():
    import sys
    counts, _ = run_profile(LONG, SEED, out=sys.stdout)
    print("\n" + summary(counts))
    assert not [k for k in counts if k.startswith("MISMATCH")], [k for k in counts if k.startswith("MISMATCH")]


# ---- the classes this fuzz found, one minimal program each (each was a KNOWN item until its fix) -------------------------------------------------------------

def _twice(fn, make):
    """fn compiled and eager, each on fresh arguments from make(): [(arguments, error type name or None)]."""
    out = []
    for compiled in (True, False):
        args = make()
        f = numgrad.compile(fn) if compiled else fn
        try:
            f(*args)
            err = None
        except Exception as exc:  # noqa: BLE001 - the error is what gets compared
            err = type(exc).__name__
        out.append((args, err))
    return out


@pytest.mark.parametrize("then", ["raises", "breaks"])
def test_known_argument_inplace_lost(then):
    def fn(x):
        x.mul_(2)
        if then == "raises":
            x.select(0, 5)  # IndexError
        else:
            x.sum().item()  # a value read into Python: the graph breaks
        return []
    (c, ce), (e, ee) = _twice(fn, lambda: [numgrad.tensor([1.0, 2.0])])
    assert ce == ee
    np.testing.assert_array_equal(c[0].numpy(), e[0].numpy())  # eager: [2, 4]; compiled: [1, 2]


def test_known_argument_autograd_lost():
    def fn(x, w):
        x.add_(w)
        return []
    (c, _), (e, _) = _twice(fn, lambda: [numgrad.tensor([1.0, 2.0]), numgrad.tensor([1.0, 1.0], requires_grad=True)])
    np.testing.assert_array_equal(c[0].detach().numpy(), e[0].detach().numpy())
    assert (c[0].requires_grad, c[0].is_leaf) == (e[0].requires_grad, e[0].is_leaf)  # eager (True, False)


def test_known_argument_requires_grad_lost():
    def fn(x):
        x.requires_grad_()
        x.sum().backward()
        return []
    grads = []
    for f in (numgrad.compile(fn), fn):
        x = numgrad.tensor([1.0, 2.0])
        f(x)
        grads.append((x.requires_grad, None if x.grad is None else x.grad.numpy().tolist()))
    assert grads[0] == grads[1]  # compiled (False, None), eager (True, [1.0, 1.0])


@pytest.mark.parametrize("index", ["x[::2]", "x[1:]", "x[0]", "x[None]", "x[()]", "x.select(0, 1)", "x.narrow(0, 1, 2)",
                                   "x.view(2, 2).min(1)[0]", "x.view(2, 2).max(0)[0]"])
def test_known_scatter_backward(index):
    def fn(x):
        y = eval(index)
        (y if y.dim() == 0 else y.sum()).backward()  # (a 0-d sum runs eager: no replay)
        return []
    grads = []
    for f in (numgrad.compile(fn), fn):
        x = numgrad.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
        for _ in range(3):
            x.grad = None
            f(x)
        grads.append(x.grad.numpy().copy())
    np.testing.assert_array_equal(*grads)  # the replays give zeros


@pytest.mark.parametrize("index", [(), Ellipsis, slice(None), 0])
def test_known_setitem_tensor_lost(index):
    def fn(x):
        y = x * 0
        y[index] = x[index]
        return [y.detach()]
    compiled = numgrad.compile(fn)
    for i in range(3):
        x = numgrad.tensor([1.5 + i])
        np.testing.assert_array_equal(compiled(x)[0].numpy(), fn(x)[0].numpy())  # the replays give [0.0]


@pytest.mark.parametrize("view", ["expand", "t"])
def test_known_outside_view_backward(view):
    def fn(v):
        v.sum().backward()
        return []
    grads = []
    for f in (numgrad.compile(fn), fn):
        x = numgrad.tensor(np.ones((4, 1)), requires_grad=True)
        v = x.expand(4, 3) if view == "expand" else x.t()
        for _ in range(3):
            with numgrad.no_grad():
                x.mul_(1)  # any in-place write to the leaf between the calls
            x.grad = None
            f(v)
        grads.append(x.grad.numpy().copy())
    np.testing.assert_array_equal(*grads)  # the replays give zeros


def test_known_argument_version():
    def fn(x):
        return [x._version + 0.0]
    x = numgrad.tensor([1.0, 2.0])
    x.add_(1)
    x.add_(1)
    assert numgrad.compile(fn)(x) == fn(x)  # compiled [0.0], eager [2.0]


def test_known_value_preserving_unrecorded_write():
    """The gradient of a strided view was written into its zeros by NumPy, unrecorded; at the trace it was all
    zeros (relu of non-positive values), so the checksum saw no change and replays kept zeros (seed 5)."""
    numgrad.set_fusion(False)
    try:
        leaf = numgrad.tensor([-1.0, 0.1, 0.0, 0.2], requires_grad=True)
        view = leaf[::2]

        def fn(v):
            v.relu().sum().backward()
            return []
        compiled = numgrad.compile(fn)
        for values in ([-1.0, 0.1, 0.0, 0.2], [-1.0, 0.1, 0.5, 0.2], [0.3, 0.1, -0.5, 0.2]):
            grads = []
            for f in (compiled, fn):
                with numgrad.no_grad():
                    leaf.copy_(numgrad.tensor(values))
                leaf.grad = None
                f(view)
                grads.append(leaf.grad.numpy().tolist())
            assert grads[0] == grads[1]
        assert compiled.variants[0].hits == 2
    finally:
        numgrad.set_fusion(True)

"""The differential fuzz test (issue 13): random straight-line programs over numgrad's ops, run in torch and in
numgrad with fusion on and off; errors (type, first line), values, dtypes, shapes, requires_grad and grads compared.

Programs (generator.py, ops.py, ops_index.py, inputs.py): 1-3 inputs of float32/float64/int64/bool, shapes with
0- and 1-sized dims and 0-d, broadcasting partners, non-contiguous views (transpose, step slice, expand, permute),
requires_grad on some floating inputs; then 1-8 steps: every published op-table entry, the Python operators with
tensors and scalars, reductions, shape and view ops, indexing, in-place ops, and (ops_extra.py) products, scatter,
index_put, rounding, new_*/*_like, aliases, retain_grad/detach_/requires_grad_ and steps under grad-mode contexts,
and (ops_nn.py) torch's top-level nn ops (padding, 1-d pooling, conv1d, conv_transpose1d, pixel shuffles); then
often a backward (retained grads are compared too).

- CI profile (this file, in the suite): FUZZ_CI_PROGRAMS (800) Hypothesis-drawn programs, derandomized (the suite's
  profile), shrunk on failure. Under 3 minutes from an empty kernel cache on two cores.
- Long profile: `NUMGRAD_FUZZ_PROGRAMS=N [NUMGRAD_FUZZ_SEED=S] python -m pytest tests/oracle/fuzz/test_fuzz.py -k long
  -s -n 0 -p no:randomly` runs N programs from seeded Random draws, goes on after failures, shrinks and prints the
  first program of each failure class, and prints the counts (programs run, exceptions matched, values compared,
  failures by class). It fails if any failure is not a known item (known.py).

Every failure class found becomes a named test in test_regressions.py (the extra family's: test_extra_regressions.py). Items being fixed elsewhere are recognized
by known.py and counted apart; delete an entry there when its fix lands."""
import os

import pytest
from hypothesis import given, settings

from oracle.fuzz.generator import programs
from oracle.fuzz.known import known_issue
from oracle.fuzz.profile import run_profile, summary
from oracle.fuzz.program import render
from oracle.fuzz.runner import check_program

# measured on two shared cores: about 1 min 20 s from an empty kernel cache with the extra family (1 min 7 s without
# it), 7 s with a warm one
FUZZ_CI_PROGRAMS = 800
LONG = int(os.environ.get("NUMGRAD_FUZZ_PROGRAMS", "0"))
SEED = int(os.environ.get("NUMGRAD_FUZZ_SEED", "0"))


@settings(max_examples=FUZZ_CI_PROGRAMS)
@given(programs())
def test_fuzz_ci(program):
    ref, fails = check_program(program)
    new = [f for f in fails if known_issue(program, ref, f) is None]
    assert not new, "\n".join(f"{f.kind} at step {f.step} [{f.mode}]: {f.detail}" for f in new) + \
        "\n" + render(program)


@pytest.mark.skipif(not LONG, reason="the long profile runs when NUMGRAD_FUZZ_PROGRAMS is set")
def test_fuzz_long():
    counts = run_profile(LONG, SEED)
    print("\n" + summary(counts))
    assert not [k for k in counts if k.startswith("FAIL")], summary(counts)

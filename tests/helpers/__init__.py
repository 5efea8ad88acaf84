"""Helpers shared by the tests (importable as `helpers` because tests/ is on sys.path, see pyproject.toml):

- compare_core: what the torch comparisons share: run-independent text (addresses, torch's C++ locations),
  fixed random inputs, tensor fields, values within tolerance, warnings recorded as torch and Python show them.
- autograd_compare: run one function on torch and on numgrad, compare the described results and warnings.
- seed_harness: run each seed-document example on torch and on numgrad, compare the recorded events.
- op_compare: values, grad_fn names, gradients and errors of ops; central-difference gradient checks.
- nn_compare: twin modules (torch's initial weights), outputs, gradients and parameters compared.
"""
import pathlib

REPO = pathlib.Path(__file__).resolve().parents[2]  # the repository root (tests/helpers/ -> tests/ -> root)

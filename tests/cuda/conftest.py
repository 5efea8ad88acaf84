"""CUDA tests: only under Numba's simulator (run as `NUMBA_ENABLE_CUDASIM=1 python -m pytest tests/cuda`)."""
import os

import pytest

if os.environ.get("NUMBA_ENABLE_CUDASIM", "0") in ("", "0"):
    raise pytest.UsageError("tests/cuda needs NUMBA_ENABLE_CUDASIM=1 (set before numba is imported)")

import sys  # noqa: E402

# tests/ on sys.path (pyproject.toml does the same): the CUDA tests use tests/helpers, and the op-table
# cases and calls of tests/oracle/ops/test_ops_table.py
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

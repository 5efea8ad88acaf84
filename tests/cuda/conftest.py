"""CUDA tests: under Numba's simulator (`NUMBA_ENABLE_CUDASIM=1 python -m pytest tests/cuda`), or on a real
GPU when asked for (`NUMGRAD_CUDA_DEVICE=1 python -m pytest tests/cuda`)."""
import os

import pytest

if os.environ.get("NUMBA_ENABLE_CUDASIM", "0") in ("", "0") and not os.environ.get("NUMGRAD_CUDA_DEVICE"):
    raise pytest.UsageError("tests/cuda needs NUMBA_ENABLE_CUDASIM=1 (set before numba is imported), "
                            "or NUMGRAD_CUDA_DEVICE=1 on a machine with a GPU")

import sys  # noqa: E402

# tests/ on sys.path (pyproject.toml does the same): the CUDA tests use tests/helpers, and the op-table
# cases and calls of tests/oracle/ops/test_ops_table.py
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

"""Kernel generation: op-table expressions become Numba source, compiled per target."""

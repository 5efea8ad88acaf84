"""Tensor-level operations: check arguments, compute result metadata, record the node, compute through lazy/dispatch."""

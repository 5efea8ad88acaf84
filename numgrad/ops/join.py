"""Joining and splitting: cat, stack, split, chunk, unbind, with backward."""
__all__ = []

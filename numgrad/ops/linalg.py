"""Products through BLAS (numpy): matmul, mm, bmm, mv, dot, outer, with backward."""
__all__ = []

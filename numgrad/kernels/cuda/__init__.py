"""The CUDA target: grid-stride kernels, device arrays, block reductions, matmul, indexing (numba-cuda)."""

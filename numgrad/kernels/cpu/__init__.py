"""The CPU target: Numba njit kernels over index ranges, the thread pool and the buffer pool."""

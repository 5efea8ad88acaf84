"""Kernels: the IR and its lowering, source loading, the device choice (dispatch/), one folder per target."""

"""torch.backends.cpu: the vector instruction set of this CPU, which Numba compiles numgrad's kernels for."""
from llvmlite import binding

__all__ = ["get_cpu_capability"]


def get_cpu_capability():
    """torch's names: "AVX512" (AVX-512 F, BW, VL and DQ), "AVX2", or "DEFAULT", from LLVM's host features."""
    features = binding.get_host_cpu_features()
    if all(features.get(f, False) for f in ("avx512f", "avx512bw", "avx512vl", "avx512dq")):
        return "AVX512"
    if features.get("avx2", False):
        return "AVX2"
    return "DEFAULT"

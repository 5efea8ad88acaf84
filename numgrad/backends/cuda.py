"""torch.backends.cuda: matmul's precision switches (cuBLAS's, in torch) and whether numgrad has a CUDA target."""
from ..kernels.cuda import runtime as cuda_runtime
from . import _flags

__all__ = ["is_built", "matmul"]


def is_built():
    """Whether numgrad can run on CUDA here (Numba's CUDA target and a driver or the simulator)."""
    return cuda_runtime.is_available()


class cuBLASModule:
    """torch.backends.cuda.matmul: allow_tf32 (float32 matmuls in TF32 on a GPU; the same switch as
    set_float32_matmul_precision), allow_fp16/bf16_reduced_precision_reduction."""

    def __getattr__(self, name):
        if name == "allow_tf32":
            return _flags.FLAGS["float32_matmul_precision"] != "highest"
        if name == "allow_fp16_reduced_precision_reduction":
            return _flags.FLAGS["fp16_reduction"]
        if name == "allow_bf16_reduced_precision_reduction":
            return _flags.FLAGS["bf16_reduction"]
        raise AttributeError(f"Unknown attribute {name}")

    def __setattr__(self, name, value):
        if name == "allow_tf32":
            if not isinstance(value, bool):
                raise RuntimeError(f"set_allow_tf32_cublas expects a bool, but got {type(value).__name__}")
            _flags.FLAGS["float32_matmul_precision"] = "high" if value else "highest"
        elif name == "allow_fp16_reduced_precision_reduction":
            _flags.set_reduction("fp16_reduction", value, name)
        elif name == "allow_bf16_reduced_precision_reduction":
            _flags.set_reduction("bf16_reduction", value, name)
        else:
            raise AttributeError(f"Unknown attribute {name}")


matmul = cuBLASModule()

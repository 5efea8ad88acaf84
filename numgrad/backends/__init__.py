"""numgrad.backends: torch.backends's switches (cuda.matmul, cudnn, mps, cpu) as settable process-wide flags."""
from . import cpu, cuda, cudnn, mps

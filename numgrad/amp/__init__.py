"""numgrad.amp: torch.amp's automatic mixed precision, autocast (CPU op lists) and GradScaler."""
from .autocast_mode import autocast, get_autocast_dtype, is_autocast_available, is_autocast_enabled
from .grad_scaler import GradScaler

__all__ = ["autocast", "GradScaler", "get_autocast_dtype", "is_autocast_available", "is_autocast_enabled"]

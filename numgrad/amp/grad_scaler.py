"""GradScaler: torch.amp's loss scaling (scale, unscale_, step, update); disabled with torch's warning on 'cuda'
where there is no GPU."""
import math
import warnings

import numpy as np

from .._core import dtypes
from ..kernels.cuda.runtime import is_available as cuda_available
from ..ops import creation

_READY, _UNSCALED, _STEPPED = 0, 1, 2


class GradScaler:
    __module__ = "torch.amp.grad_scaler"

    def __init__(self, device="cuda", init_scale=2.0 ** 16, growth_factor=2.0, backoff_factor=0.5,
                 growth_interval=2000, enabled=True):
        self._device = device
        self._enabled = enabled
        if device == "cuda" and enabled and not cuda_available():
            warnings.warn("torch.cuda.amp.GradScaler is enabled, but CUDA is not available.  Disabling.",
                          stacklevel=2)
            self._enabled = False
        if self._enabled:
            if growth_factor <= 1.0:
                raise AssertionError("The growth factor must be > 1.0.")
            if backoff_factor >= 1.0:
                raise AssertionError("The backoff factor must be < 1.0.")
            self._scale_value, self._growth_factor, self._backoff_factor = float(init_scale), growth_factor, \
                backoff_factor
            self._growth_interval, self._growth_tracker = growth_interval, 0
            self._stages = {}  # id(optimizer) -> (stage, found_inf)

    def is_enabled(self):
        return self._enabled

    def _scale_tensor(self):
        return creation.full((), self._scale_value, dtype=dtypes.float32)

    def scale(self, outputs):
        """outputs (a tensor, or tensors in lists and tuples) times the scale."""
        if not self._enabled:
            return outputs
        if isinstance(outputs, (list, tuple)):
            return type(outputs)(self.scale(o) for o in outputs)
        return outputs * self._scale_tensor()

    def unscale_(self, optimizer):
        """Divides the optimizer's gradients by the scale, in place, and notes whether any is inf or NaN."""
        if not self._enabled:
            return
        stage, _ = self._stages.get(id(optimizer), (_READY, False))
        if stage == _UNSCALED:
            raise RuntimeError("unscale_() has already been called on this optimizer since the last update().")
        if stage == _STEPPED:
            raise RuntimeError("unscale_() is being called after step().")
        inv_scale = float(np.float32(1.0) / np.float32(self._scale_value))
        found_inf = False
        for group in optimizer.param_groups:
            for p in group["params"]:
                g = p.grad
                if g is None:
                    continue
                if g.dtype is dtypes.float16:
                    raise ValueError("Attempting to unscale FP16 gradients.")
                g.mul_(inv_scale)
                found_inf = found_inf or not np.isfinite(np.asarray(g._data, np.float64)).all()
        self._stages[id(optimizer)] = (_UNSCALED, found_inf)

    def step(self, optimizer, *args, **kwargs):
        """optimizer.step(...) unless the unscaled gradients hold an inf or NaN (then the step is skipped)."""
        if not self._enabled:
            return optimizer.step(*args, **kwargs)
        if "closure" in kwargs:
            raise RuntimeError("Closure use is not currently supported if GradScaler is enabled.")
        stage, _ = self._stages.get(id(optimizer), (_READY, False))
        if stage == _STEPPED:
            raise RuntimeError("step() has already been called since the last update().")
        if stage == _READY:
            self.unscale_(optimizer)
        _, found_inf = self._stages[id(optimizer)]
        result = None if found_inf else optimizer.step(*args, **kwargs)
        self._stages[id(optimizer)] = (_STEPPED, found_inf)
        return result

    def update(self, new_scale=None):
        """Backs the scale off after a step that found inf or NaN, grows it after growth_interval clean ones."""
        if not self._enabled:
            return
        if new_scale is not None:
            self._scale_value = float(new_scale)
        else:
            if not self._stages:
                raise AssertionError("No inf checks were recorded prior to update.")
            if any(found for _, found in self._stages.values()):
                self._scale_value = float(np.float32(self._scale_value * self._backoff_factor))
                self._growth_tracker = 0
            else:
                self._growth_tracker += 1
                if self._growth_tracker == self._growth_interval:
                    grown = float(np.float32(self._scale_value * self._growth_factor))
                    if math.isfinite(grown):
                        self._scale_value = grown
                    self._growth_tracker = 0
        self._stages = {}

    def get_scale(self):
        return self._scale_value if self._enabled else 1.0

    def get_growth_factor(self):
        return self._growth_factor

    def get_backoff_factor(self):
        return self._backoff_factor

    def get_growth_interval(self):
        return self._growth_interval

    def state_dict(self):
        if not self._enabled:
            return {}
        return {"scale": self.get_scale(), "growth_factor": self._growth_factor, "backoff_factor": self._backoff_factor,
                "growth_interval": self._growth_interval, "_growth_tracker": self._growth_tracker}

    def load_state_dict(self, state_dict):
        if not self._enabled:
            return
        if len(state_dict) == 0:
            raise RuntimeError("The source state dict is empty, possibly because it was saved from a disabled "
                               "instance of GradScaler.")
        self._scale_value, self._growth_factor = float(state_dict["scale"]), state_dict["growth_factor"]
        self._backoff_factor, self._growth_interval = state_dict["backoff_factor"], state_dict["growth_interval"]
        self._growth_tracker = state_dict["_growth_tracker"]

"""Testing helpers for users porting from torch: assert_close, gradcheck, gradgradcheck, compare_with_torch,
and for whole models compare_modules and compare_training."""
from .compare import (Difference, GradcheckError, TorchComparison, assert_close, compare_with_torch,
                      default_tolerances, gradcheck, gradgradcheck)
from .models import TrainingComparison, compare_modules, compare_training, copy_state_from_torch

__all__ = ["Difference", "GradcheckError", "TorchComparison", "TrainingComparison", "assert_close", "compare_modules",
           "compare_training", "compare_with_torch", "copy_state_from_torch", "default_tolerances", "gradcheck",
           "gradgradcheck"]

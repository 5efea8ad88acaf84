"""Autograd: nodes, the backward engine, custom Functions, grad modes, hooks and the functional API."""
from . import anomaly_mode, forward_ad, graph
from .anomaly_mode import detect_anomaly, set_detect_anomaly
from .function import Function, FunctionCtx, once_differentiable
from .functional import backward, grad
from .variable import Variable
from .._core.grad_mode import (enable_grad, inference_mode, is_grad_enabled, is_inference_mode_enabled, no_grad,
                               set_grad_enabled)

__all__ = ["Function", "FunctionCtx", "once_differentiable", "backward", "grad", "graph", "forward_ad", "Variable",
           "no_grad", "enable_grad", "set_grad_enabled", "inference_mode", "is_grad_enabled",
           "is_inference_mode_enabled", "detect_anomaly", "set_detect_anomaly"]

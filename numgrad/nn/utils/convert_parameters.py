"""torch.nn.utils.convert_parameters: parameters to one flat vector and back."""
from ...ops.join import cat
from ...tensor_base import TensorBase

__all__ = ["parameters_to_vector", "vector_to_parameters"]


def _check_param_device(param, old_param_device):
    """The device index shared by the parameters so far (-1: the CPU); torch refuses a mix."""
    device = param.get_device() if param.device.type == "cuda" else -1
    if old_param_device is not None and device != old_param_device:
        raise TypeError("Found two parameters on different devices, this is currently not supported.")
    return device


def parameters_to_vector(parameters):
    """The parameters flattened and concatenated (differentiable, as torch's)."""
    param_device = None
    vec = []
    for param in parameters:
        param_device = _check_param_device(param, param_device)
        vec.append(param.view(-1))
    return cat(vec)


def vector_to_parameters(vec, parameters):
    """Sets each parameter's .data to its slice of `vec`, in order."""
    if not isinstance(vec, TensorBase):
        module = type(vec).__module__
        name = type(vec).__qualname__ if module in ("", "builtins") else f"{module}.{type(vec).__qualname__}"
        raise TypeError(f"expected torch.Tensor, but got: {name}")
    param_device = None
    pointer = 0
    for param in parameters:
        param_device = _check_param_device(param, param_device)
        num_param = param.numel()
        param.data = vec[pointer:pointer + num_param].view(param.shape).data
        pointer += num_param

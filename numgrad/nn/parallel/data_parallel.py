"""DataParallel: torch's single-process multi-GPU wrapper. numgrad drives at most one device per process, so
it runs the module as it is (as torch's does with one device or none), keeping `.module` and its state
dict's "module." prefix."""
from ..module import Module


class DataParallel(Module):
    def __init__(self, module, device_ids=None, output_device=None, dim=0):
        super().__init__()
        self.module, self.device_ids, self.output_device, self.dim = module, device_ids, output_device, dim

    def forward(self, *inputs, **kwargs):
        return self.module(*inputs, **kwargs)

"""Adadelta, Adagrad, Adamax, NAdam and RAdam on the GPU (Numba's simulator): an MLP's steps match the CPU's and
copy nothing to the host."""
import numpy as np
import pytest

import numgrad


def _count_host_copies(monkeypatch):
    from numba.cuda.simulator.cudadrv.devicearray import FakeCUDAArray
    counter = {"n": 0}
    original = FakeCUDAArray.copy_to_host

    def counting(self, *args, **kwargs):
        counter["n"] += 1
        return original(self, *args, **kwargs)
    monkeypatch.setattr(FakeCUDAArray, "copy_to_host", counting)
    return counter


@pytest.mark.parametrize("name,kwargs", [("Adadelta", dict(weight_decay=0.1)),
                                         ("Adagrad", dict(lr=0.05, lr_decay=0.1)),
                                         ("Adamax", dict(lr=0.01)), ("NAdam", dict(lr=0.01, weight_decay=0.1)),
                                         ("RAdam", dict(lr=0.01, betas=(0.9, 0.9)))])
def test_mlp_steps_match_the_cpu_and_stay_on_the_gpu(monkeypatch, name, kwargs):
    def make():
        numgrad.manual_seed(0)
        return numgrad.nn.Sequential(numgrad.nn.Linear(6, 8), numgrad.nn.Tanh(), numgrad.nn.Linear(8, 3))
    cpu_model, gpu_model = make(), make().cuda()
    x, t = numgrad.randn(5, 6), numgrad.randn(5, 3)
    xg, tg = x.cuda(), t.cuda()
    make_optimizer = getattr(numgrad.optim, name)
    cpu_opt, gpu_opt = make_optimizer(cpu_model.parameters(), **kwargs), make_optimizer(gpu_model.parameters(),
                                                                                       **kwargs)
    counter = _count_host_copies(monkeypatch)
    for _ in range(8):
        for model, opt, xx, tt in ((cpu_model, cpu_opt, x, t), (gpu_model, gpu_opt, xg, tg)):
            opt.zero_grad()
            numgrad.nn.functional.mse_loss(model(xx), tt).backward()
            opt.step()
    assert counter["n"] == 0, "the GPU step copied to the host"
    monkeypatch.undo()
    for pc, pg in zip(cpu_model.parameters(), gpu_model.parameters()):
        assert pg.is_cuda
        np.testing.assert_allclose(pg.detach().cpu().numpy(), pc.detach().numpy(), rtol=1e-5, atol=1e-6)

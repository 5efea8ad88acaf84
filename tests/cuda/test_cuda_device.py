"""Device semantics on the GPU (Numba's simulator): factories, moves, printing, errors, modules and
optimizers, interop, and proof that a forward and backward pass copies nothing back to the host."""
import gc

import numpy as np
import pytest

import numgrad
from numgrad.kernels.cuda import array


def test_factories_moves_and_printing():
    x = numgrad.ones(2, 2, requires_grad=True, device="cuda")
    assert x.device == numgrad.device("cuda:0") and x.is_cuda and x.get_device() == 0
    assert repr(x) == "tensor([[1., 1.],\n        [1., 1.]], device='cuda:0', requires_grad=True)"
    y = x + 2
    assert repr(y) == "tensor([[3., 3.],\n        [3., 3.]], device='cuda:0', grad_fn=<AddBackward0>)"
    d = numgrad.arange(3, device="cuda", dtype=numgrad.float64)
    assert repr(d) == "tensor([0., 1., 2.], device='cuda:0', dtype=torch.float64)"
    assert repr(numgrad.zeros(0, device="cuda")) == "tensor([], device='cuda:0')"
    assert numgrad.cuda.is_available() and numgrad.cuda.device_count() == 1
    for make in (lambda: x.cuda(), lambda: x.to("cuda:0"), lambda: x.to(numgrad.device("cuda"))):
        assert make() is x  # already there: no copy, as torch
    back = y.cpu()
    assert back.device == numgrad.device("cpu") and type(back.grad_fn).__name__ == "ToCopyBackward0"
    back.sum().backward()
    assert x.grad.is_cuda and x.grad.tolist() == [[1.0, 1.0], [1.0, 1.0]]
    z = numgrad.tensor([1.5, 2.5]).to("cuda", numgrad.float64)
    assert z.dtype == numgrad.float64 and z.is_cuda and z.tolist() == [1.5, 2.5]
    assert numgrad.zeros_like(z).is_cuda and numgrad.ones_like(z).device == z.device
    assert numgrad.randn(3, device="cuda").is_cuda and numgrad.rand(2, 2, device="cuda").is_cuda
    assert (x * 3).sum().item() == 12.0 and bool((x > 0).all() if hasattr(x, "all") else True)


def test_device_errors_are_torchs():
    a, b = numgrad.ones(2, device="cuda"), numgrad.ones(2)
    with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device, but found at least "
                                           "two devices, cuda:0 and cpu!"):
        a + b
    with pytest.raises(RuntimeError, match="same device"):
        numgrad.ones(2, 2, device="cuda") @ numgrad.ones(2, 2)
    assert (a + numgrad.tensor(2.0)).is_cuda  # a 0-d CPU tensor is a scalar, as in torch
    with pytest.raises(TypeError, match="can't convert cuda:0 device type tensor to numpy. Use Tensor.cpu()"):
        a.numpy()
    with pytest.raises(RuntimeError, match="Expected one of cpu, cuda"):
        numgrad.ones(2, device="tpu")
    with pytest.raises(RuntimeError, match="invalid device ordinal"):
        numgrad.ones(2, device="cuda:3")


def _count_host_copies(monkeypatch):
    """Counts every device-to-host copy the simulator makes, whoever asks for it."""
    from numba.cuda.simulator.cudadrv.devicearray import FakeCUDAArray
    counter = {"n": 0}
    original = FakeCUDAArray.copy_to_host

    def counting(self, *args, **kwargs):
        counter["n"] += 1
        return original(self, *args, **kwargs)
    monkeypatch.setattr(FakeCUDAArray, "copy_to_host", counting)
    return counter


def test_chain_forward_and_backward_copy_nothing_to_the_host(monkeypatch):
    x = numgrad.randn(64, device="cuda", requires_grad=True)
    w = numgrad.randn(64, device="cuda", requires_grad=True)
    counter = _count_host_copies(monkeypatch)
    before = array.TRANSFERS["to_host"]
    for fusion in (True, False):
        with numgrad.fusion(fusion):
            y = ((x * w + 1).tanh() * x.sigmoid() - (x * 0.5).exp()).sum()
            y.backward()
    assert counter["n"] == 0 and array.TRANSFERS["to_host"] == before
    assert x.grad.is_cuda and w.grad.is_cuda


@pytest.mark.parametrize("make_optimizer", [lambda p: numgrad.optim.SGD(p, lr=0.1, momentum=0.9),
                                            lambda p: numgrad.optim.Adam(p, lr=0.01),
                                            lambda p: numgrad.optim.AdamW(p, lr=0.01),
                                            lambda p: numgrad.optim.RMSprop(p, lr=0.01, centered=True)],
                         ids=["sgd", "adam", "adamw", "rmsprop"])
def test_mlp_steps_match_the_cpu_and_stay_on_the_gpu(monkeypatch, make_optimizer):
    def make():
        numgrad.manual_seed(0)
        return numgrad.nn.Sequential(numgrad.nn.Linear(6, 8), numgrad.nn.ReLU(), numgrad.nn.Linear(8, 3))
    cpu_model, gpu_model = make(), make().cuda()
    assert all(p.is_cuda for p in gpu_model.parameters())
    x, t = numgrad.randn(5, 6), numgrad.randn(5, 3)
    xg, tg = x.cuda(), t.cuda()
    cpu_opt, gpu_opt = make_optimizer(cpu_model.parameters()), make_optimizer(gpu_model.parameters())
    counter = _count_host_copies(monkeypatch)
    for _ in range(3):
        for model, opt, xx, tt in ((cpu_model, cpu_opt, x, t), (gpu_model, gpu_opt, xg, tg)):
            opt.zero_grad()
            loss = numgrad.nn.functional.mse_loss(model(xx), tt)
            loss.backward()
            opt.step()
    assert counter["n"] == 0, "the GPU step copied to the host"
    monkeypatch.undo()
    for pc, pg in zip(cpu_model.parameters(), gpu_model.parameters()):
        assert pg.is_cuda and pg.grad.is_cuda
        np.testing.assert_allclose(pg.detach().cpu().numpy(), pc.detach().numpy(), rtol=1e-5, atol=1e-6)


def test_cuda_array_interface_round_trip():
    from numba import cuda
    t = numgrad.arange(6.0, device="cuda").reshape(2, 3)
    desc = t.__cuda_array_interface__
    assert desc["shape"] == (2, 3) and desc["typestr"] == "<f4" and desc["version"] == 3
    with pytest.raises(AttributeError, match="non-CUDA tensor"):
        numgrad.ones(2).__cuda_array_interface__
    with pytest.raises(RuntimeError, match="requires grad"):
        numgrad.ones(2, device="cuda", requires_grad=True).__cuda_array_interface__
    # a Numba device array in, shared without a copy: writes through it show in the tensor
    d = cuda.to_device(np.arange(4, dtype=np.float64))
    wrapped = numgrad.cuda.as_tensor(d)
    assert wrapped.is_cuda and wrapped.dtype == numgrad.float64 and wrapped.tolist() == [0.0, 1.0, 2.0, 3.0]
    d[1:2].copy_to_device(np.array([7.0]))
    assert wrapped.tolist() == [0.0, 7.0, 2.0, 3.0]
    # and a numgrad tensor's interface read back (a transposed view keeps its strides)
    view = numgrad.cuda.as_tensor(t.t())
    assert view.tolist() == [[0.0, 3.0], [1.0, 4.0], [2.0, 5.0]]


def test_state_dict_and_saving_from_the_gpu(tmp_path):
    model = numgrad.nn.Linear(3, 2).cuda()
    path = tmp_path / "m.npz"
    numgrad.save(model.state_dict(), path)
    loaded = numgrad.load(path)
    assert loaded["weight"].is_cuda  # back on the device it was saved from, as torch.load
    assert not numgrad.load(path, map_location="cpu")["weight"].is_cuda
    cpu = numgrad.nn.Linear(3, 2)
    cpu.load_state_dict(loaded)
    np.testing.assert_array_equal(cpu.weight.detach().numpy(), model.weight.detach().cpu().numpy())


def test_load_map_location_to_the_gpu(tmp_path):
    path = tmp_path / "w.npz"
    numgrad.save({"w": numgrad.ones(2)}, path)
    for where in ("cuda", "cuda:0", numgrad.device("cuda", 0), {"cpu": "cuda:0"}, lambda t, location: t.cuda()):
        loaded = numgrad.load(path, map_location=where)["w"]
        assert loaded.is_cuda and loaded.tolist() == [1.0, 1.0]
    count = numgrad.cuda.device_count()
    with pytest.raises(RuntimeError, match=rf"^Attempting to deserialize object on CUDA device {count} but "
                                           rf"torch.cuda.device_count\(\) is {count}. Please use torch.load with "
                                           "map_location to map your storages to an existing device.$"):
        numgrad.load(path, map_location=f"cuda:{count}")


def test_bench_device_cuda_runs_and_reports_the_floor(capsys):
    from numgrad.bench import cuda as bench_cuda
    result = bench_cuda.run(size=256, reps=1)
    assert [r["workload"] for r in result["rows"]] == ["chain 256", "gelu-tanh 256"]
    for row in result["rows"]:
        assert row["numgrad_s"] > 0 and row["floor_s"] > 0 and row["vs_floor"] == row["numgrad_s"] / row["floor_s"]
    out = capsys.readouterr().out
    if bench_cuda._torch_cuda() is None:  # the CPU build of torch (the test extra's): no CUDA to compare with
        assert "torch eager CUDA: n/a" in out and all("torch_s" not in row for row in result["rows"])
    else:  # a machine whose torch has CUDA: each row has torch's time and the ratio
        assert all(row["torch_s"] > 0 for row in result["rows"]) and out.count("torch eager ") == 2


def test_all_any_and_new_factories_on_cuda():
    x = numgrad.tensor([[1.0, 0.0], [2.0, 3.0]], device="cuda")
    for dim in (None, 0, 1):
        for kind in ("all", "any"):
            gpu = getattr(x, kind)() if dim is None else getattr(x, kind)(dim)
            cpu = getattr(x.cpu(), kind)() if dim is None else getattr(x.cpu(), kind)(dim)
            assert gpu.is_cuda and gpu.dtype == numgrad.bool and gpu.tolist() == cpu.tolist()
    empty = numgrad.zeros(0, 2, device="cuda")
    assert empty.all().item() is True and empty.any().item() is False
    for made in (x.new_zeros(3), x.new_ones(2, 2), x.new_full((2,), 5.0), x.new_tensor([1.0])):
        assert made.is_cuda


def test_memory_allocated_counts_numgrads_live_device_arrays():
    gc.collect()
    before = numgrad.cuda.memory_allocated()
    x = numgrad.ones(1000, device="cuda")
    with numgrad.fusion(False):
        y = x * 2
    assert numgrad.cuda.memory_allocated() == before + 2 * 4000
    stats = numgrad.cuda.memory_stats()
    assert set(stats) == {"allocated_bytes.all.current", "reserved_bytes.all.current"}
    assert stats["reserved_bytes.all.current"] >= stats["allocated_bytes.all.current"]
    del x, y
    gc.collect()
    assert numgrad.cuda.memory_allocated() == before
    assert numgrad.cuda.empty_cache() is None
    assert numgrad.cuda.memory_reserved() >= numgrad.cuda.memory_allocated()

"""numgrad.save / numgrad.load: tensors, parameters, module and optimizer state dicts round-trip; corrupt,
foreign or mismatched files fail with a clear RuntimeError."""
import io
import zipfile

import numpy as np
import pytest

import numgrad
from helpers.nn_compare import rand


def roundtrip(obj, tmp_path, name="obj.npz"):
    path = tmp_path / name
    numgrad.save(obj, path)
    return numgrad.load(path)


@pytest.mark.parametrize("value", [
    lambda: numgrad.tensor(rand(3, 4)),
    lambda: numgrad.tensor(rand(2, dtype=np.float64), requires_grad=True),
    lambda: numgrad.tensor([1, 2, 3]),
    lambda: numgrad.tensor([True, False]),
    lambda: numgrad.tensor(2.5),
    lambda: numgrad.zeros(0, 3),
])
def test_tensor_roundtrip(value, tmp_path):
    t = value()
    loaded = roundtrip(t, tmp_path)
    assert type(loaded) is numgrad.Tensor
    assert loaded.dtype == t.dtype and loaded.shape == t.shape and loaded.requires_grad == t.requires_grad
    np.testing.assert_array_equal(loaded.detach().numpy(), t.detach().numpy())


def test_parameter_and_path_without_suffix(tmp_path):
    p = numgrad.nn.Parameter(numgrad.ones(2))
    loaded = roundtrip(p, tmp_path, name="weights.pt")
    assert isinstance(loaded, numgrad.nn.Parameter) and loaded.requires_grad
    assert (tmp_path / "weights.pt").exists()


def test_module_state_dict_roundtrip_restores_outputs(tmp_path):
    def net():
        nn = numgrad.nn
        return nn.Sequential(nn.Linear(4, 5), nn.BatchNorm1d(5), nn.ReLU(), nn.Linear(5, 2))
    model = net()
    model(numgrad.tensor(rand(8, 4)))  # moves the running statistics
    model.eval()
    loaded = roundtrip(model.state_dict(), tmp_path)
    assert list(loaded) == list(model.state_dict())
    assert loaded["1.num_batches_tracked"].dtype == numgrad.int64
    fresh = net().eval()
    fresh.load_state_dict(loaded)
    x = numgrad.tensor(rand(3, 4, seed=1))
    np.testing.assert_array_equal(fresh(x).detach().numpy(), model(x).detach().numpy())


def test_optimizer_state_dict_roundtrip(tmp_path):
    model = numgrad.nn.Linear(3, 2)
    opt = numgrad.optim.Adam(model.parameters(), lr=0.01, betas=(0.8, 0.9))
    model(numgrad.ones(4, 3)).sum().backward()
    opt.step()
    loaded = roundtrip(opt.state_dict(), tmp_path)
    assert loaded["param_groups"][0]["betas"] == (0.8, 0.9)
    assert list(loaded["state"]) == [0, 1]  # integer keys stay integers
    opt2 = numgrad.optim.Adam(numgrad.nn.Linear(3, 2).parameters())
    opt2.load_state_dict(loaded)
    np.testing.assert_array_equal(opt2.state_dict()["state"][0]["exp_avg"].numpy(),
                                  opt.state_dict()["state"][0]["exp_avg"].numpy())


def test_nested_plain_values_roundtrip(tmp_path):
    obj = {"epoch": 3, "loss": 0.25, "name": "run", "flags": [True, None], "shape": (2, 3),
           "weights": {"a": numgrad.ones(2)}}
    loaded = roundtrip(obj, tmp_path)
    assert {k: v for k, v in loaded.items() if k != "weights"} == {k: v for k, v in obj.items() if k != "weights"}
    assert loaded["weights"]["a"].tolist() == [1.0, 1.0]


def test_file_objects(tmp_path):
    buffer = io.BytesIO()
    numgrad.save({"x": numgrad.arange(3)}, buffer)
    buffer.seek(0)
    assert numgrad.load(buffer)["x"].tolist() == [0, 1, 2]


def test_unsupported_objects_are_refused(tmp_path):
    with pytest.raises(TypeError, match="numgrad.save cannot store an object of type object"):
        numgrad.save({"x": object()}, tmp_path / "bad.npz")
    with pytest.raises(TypeError, match="dict keys must be str or int"):
        numgrad.save({(1, 2): numgrad.ones(1)}, tmp_path / "bad.npz")


def test_corrupt_file(tmp_path):
    path = tmp_path / "model.npz"
    numgrad.save({"w": numgrad.ones(100)}, path)
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(RuntimeError, match="cannot read .* as a numgrad file"):
        numgrad.load(path)
    path.write_bytes(b"not an archive at all")
    with pytest.raises(RuntimeError, match="cannot read .* as a numgrad file"):
        numgrad.load(path)
    with pytest.raises(FileNotFoundError, match="No such file or directory"):  # as torch.load
        numgrad.load(tmp_path / "missing.npz")


def test_foreign_npz_and_mismatched_index(tmp_path):
    path = tmp_path / "plain.npz"
    np.savez(path, w=np.ones(3))
    with pytest.raises(RuntimeError, match="not a numgrad file"):
        numgrad.load(path)
    # an index that names an array the archive does not hold
    good = tmp_path / "good.npz"
    numgrad.save({"w": numgrad.ones(3)}, good)
    broken = tmp_path / "broken.npz"
    with zipfile.ZipFile(good) as src, zipfile.ZipFile(broken, "w") as dst:
        for item in src.infolist():
            if item.filename != "s0.npy":
                dst.writestr(item, src.read(item.filename))
    with pytest.raises(RuntimeError, match=r"object\['w'\]: the file has no array 's0'"):
        numgrad.load(broken)


def test_shape_mismatch_on_load_state_dict_is_torch_message(tmp_path):
    path = tmp_path / "w.npz"
    numgrad.save(numgrad.nn.Linear(3, 2).state_dict(), path)
    with pytest.raises(RuntimeError, match=r"size mismatch for weight: copying a param with shape "
                                           r"torch.Size\(\[2, 3\]\) from checkpoint, the shape in current model is "
                                           r"torch.Size\(\[4, 3\]\)"):
        numgrad.nn.Linear(3, 4).load_state_dict(numgrad.load(path))

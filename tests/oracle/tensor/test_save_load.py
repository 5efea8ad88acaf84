"""numgrad.load against torch.load: the same exception type and message for a missing path, a directory, a file
object that cannot seek, a truncated archive and each form of map_location; the same values where both load.
(tests/unit/serialization/test_load_faults.py has the faults torch has no equivalent for.)"""
import io

import numpy as np
import pytest
import torch

import numgrad

VALUES = np.arange(6, dtype=np.float32).reshape(2, 3)


@pytest.fixture
def files(tmp_path):
    """The same tensor saved by each library: {library: path}."""
    paths = {torch: tmp_path / "t.pt", numgrad: tmp_path / "t.npz"}
    torch.save({"w": torch.tensor(VALUES), "step": 3}, paths[torch])
    numgrad.save({"w": numgrad.tensor(VALUES), "step": 3}, paths[numgrad])
    return paths


def outcome(load):
    """("ok", plain values) or (exception type, message)."""
    try:
        loaded = load()
    except Exception as exc:  # noqa: BLE001 - the type is what is compared
        return type(exc), str(exc)
    return "ok", {k: (v.tolist(), str(v.dtype), type(v).__name__) if hasattr(v, "tolist") else v
                  for k, v in loaded.items()}


def same_outcome(ours, theirs):
    assert ours == theirs


# map_location forms, each as it is written for a library
MAP_LOCATIONS = {
    "cpu": lambda L: "cpu",
    "gpu": lambda L: "gpu",
    "CPU": lambda L: "CPU",
    "empty": lambda L: "",
    "cuda": lambda L: "cuda",
    "cuda:0": lambda L: "cuda:0",
    "cuda:1": lambda L: "cuda:1",
    "cuda:x": lambda L: "cuda:x",
    "cuda1": lambda L: "cuda1",
    "cuda:-1": lambda L: "cuda:-1",
    "cuda:00": lambda L: "cuda:00",
    "cpu:0": lambda L: "cpu:0",
    "mps": lambda L: "mps",
    "mps:0": lambda L: "mps:0",
    **{name: (lambda name: lambda L: name)(name) for name in [
        "xpu", "xpu:0", "xpu:x", "xpu1", "xpux", "hpu", "hpu:x", "privateuseone:0", "privateuseonex", "mtia", "mtia:0",
        "mtia:x", "mtiax"]},
    "bytes": lambda L: b"cpu",
    "int": lambda L: 5,
    "list": lambda L: ["cpu"],
    "device cpu": lambda L: L.device("cpu"),
    "device cuda": lambda L: L.device("cuda"),
    "device cuda:0": lambda L: L.device("cuda", 0),
    "dict cpu": lambda L: {"cpu": "cpu"},
    "dict other tag": lambda L: {"cuda:0": "gpu"},
    "dict gpu": lambda L: {"cpu": "gpu"},
    "dict cuda": lambda L: {"cpu": "cuda"},
    "dict device": lambda L: {"cpu": L.device("cpu")},
    "dict int": lambda L: {"cpu": 5},
    "dict None": lambda L: {"cpu": None},
    "dict bytes": lambda L: {"cpu": b"cpu"},
    "callable None": lambda L: (lambda storage, location: None),
    "callable same": lambda L: (lambda storage, location: storage),
    "callable raises": lambda L: (lambda storage, location: 1 / 0),
}


@pytest.mark.skipif(torch.cuda.is_available() or numgrad.cuda.is_available(),
                    reason="the errors of a machine without a GPU")
@pytest.mark.parametrize("form", list(MAP_LOCATIONS))
def test_map_location_as_torch(form, files):
    theirs = outcome(lambda: torch.load(files[torch], map_location=MAP_LOCATIONS[form](torch)))
    ours = outcome(lambda: numgrad.load(files[numgrad], map_location=MAP_LOCATIONS[form](numgrad)))
    if theirs[0] == "ok":
        theirs[1]["w"] = (VALUES.tolist(), "torch.float32", "Tensor")
    same_outcome(ours, theirs)


def test_a_missing_path_as_torch(tmp_path):
    for f in (tmp_path / "missing", str(tmp_path / "missing")):
        same_outcome(outcome(lambda: numgrad.load(f)), outcome(lambda: torch.load(f)))
        assert outcome(lambda: numgrad.load(f))[0] is FileNotFoundError


def test_a_directory_as_torch(tmp_path):
    same_outcome(outcome(lambda: numgrad.load(tmp_path)), outcome(lambda: torch.load(tmp_path)))
    assert outcome(lambda: numgrad.load(tmp_path))[0] is IsADirectoryError


class Unseekable(io.RawIOBase):
    def readable(self):
        return True

    def readinto(self, b):
        return 0


@pytest.mark.parametrize("f", [Unseekable, lambda: 5, lambda: None])
def test_file_objects_that_cannot_seek_as_torch(f):
    same_outcome(outcome(lambda: numgrad.load(f())), outcome(lambda: torch.load(f())))


def test_a_truncated_archive_starts_as_torchs_error(files, tmp_path):
    for library, path in files.items():
        data = path.read_bytes()
        path.write_bytes(data[:len(data) // 2])
    with pytest.raises(RuntimeError) as theirs:
        torch.load(files[torch])
    with pytest.raises(RuntimeError) as ours:
        numgrad.load(files[numgrad])
    start = "PytorchStreamReader failed reading zip archive: failed finding central directory."
    assert str(theirs.value).startswith(start) and str(ours.value).startswith(start)


def test_file_objects_as_torch(files):
    for library, path in files.items():
        buffer = io.BytesIO(path.read_bytes())
        assert library.load(buffer)["w"].tolist() == VALUES.tolist()

"""Tensors that share memory when saved share it again when loaded, as in torch (tied weights stay tied,
a view and its base stay one storage, one tensor saved twice loads as one object); dicts come back as the
kind they were; version-1 files still load; a crafted storage entry cannot reach outside its array."""
import collections
import io
import json
import zipfile

import numpy as np
import pytest
import torch

import numgrad


def round_trip(lib, obj):
    buf = io.BytesIO()
    lib.save(obj, buf)
    buf.seek(0)
    return lib.load(buf)


def _tied(lib):
    emb = lib.nn.Embedding(4, 3)
    head = lib.nn.Linear(3, 4, bias=False)
    head.weight = emb.weight
    sd = round_trip(lib, {"emb": emb.state_dict(), "head": head.state_dict()})
    with lib.no_grad():
        sd["emb"]["weight"].mul_(0).add_(7)
    return sd["head"]["weight"].sum().item()


def _view_and_base(lib):
    x = lib.arange(6.0)
    d = round_trip(lib, {"base": x, "view": x.view(2, 3)[:, 1], "tail": x[3:]})
    d["base"].add_(100)
    return d["view"].tolist(), d["tail"].tolist(), d["view"].stride()


def _same_object(lib):
    x = lib.ones(2, requires_grad=True)
    got = round_trip(lib, [x, (x, 1)])
    return got[0] is got[1][0], got[0].requires_grad


def _expanded(lib):
    t = round_trip(lib, lib.ones(1, 3).expand(2, 3))
    return t.tolist(), t.stride()


def _dict_kinds(lib):
    got = round_trip(lib, {"plain": {"a": 1}, "ordered": collections.OrderedDict(b=2)})
    return type(got).__name__, type(got["plain"]).__name__, type(got["ordered"]).__name__


@pytest.mark.parametrize("case", [_tied, _view_and_base, _same_object, _expanded, _dict_kinds])
def test_sharing_and_identity_as_torch(case):
    assert case(numgrad) == case(torch)


def test_a_state_dict_loads_as_an_ordered_dict_and_a_module_keeps_its_ties():
    model = numgrad.nn.Sequential(numgrad.nn.Linear(3, 3), numgrad.nn.Linear(3, 3))
    model[1].weight = model[0].weight
    sd = round_trip(numgrad, model.state_dict())
    assert isinstance(sd, collections.OrderedDict)
    assert sd["0.weight"].data_ptr() == sd["1.weight"].data_ptr()


def _rewrite_index(buf, change):
    """The archive in `buf` with its index changed by change(meta) (arrays kept)."""
    out = io.BytesIO()
    with zipfile.ZipFile(buf) as src, zipfile.ZipFile(out, "w") as dst:
        for item in src.infolist():
            data = src.read(item.filename)
            if item.filename == "__numgrad__.npy":
                meta = json.loads(str(np.load(io.BytesIO(data))[()]))
                change(meta)
                arr = io.BytesIO()
                np.save(arr, np.array(json.dumps(meta)))
                data = arr.getvalue()
            dst.writestr(item, data)
    out.seek(0)
    return out


def _saved(obj):
    buf = io.BytesIO()
    numgrad.save(obj, buf)
    buf.seek(0)
    return buf


@pytest.mark.parametrize("field, value, match", [
    ("offset", 4, "reaches past the 6 elements of its storage"),
    ("offset", -1, "negative offset, size or stride"),
    ("stride", [4, 1], "reaches past"),
    ("stride", [-1, 1], "negative offset, size or stride"),
    ("shape", [3, 3], "reaches past"),
    ("shape", [2], "has the wrong type"),
    ("offset", 1.5, "has the wrong type"),
    ("stride", ["1", 1], "has the wrong type"),
    ("storage", 5, "has the wrong type"),
    ("storage", "s9", "the file has no array 's9'"),
])
def test_a_crafted_storage_entry_cannot_reach_outside_its_array(field, value, match):
    def change(meta):
        meta["object"][field] = value
    broken = _rewrite_index(_saved(numgrad.arange(6.0).view(2, 3)), change)
    with pytest.raises(RuntimeError, match=match):
        numgrad.load(broken)


def test_an_empty_tensor_in_a_storage_and_a_zero_stride():
    got = round_trip(numgrad, {"e": numgrad.zeros(0, 3), "z": numgrad.tensor(5.0).expand(4)})
    assert tuple(got["e"].shape) == (0, 3) and got["z"].tolist() == [5.0] * 4


def test_version_1_files_still_load():
    buf = io.BytesIO()
    meta = {"format": "numgrad", "version": 1, "object": {"dict": [["w", {"tensor": "t0", "dtype": "float32",
                                                                          "requires_grad": True,
                                                                          "parameter": True}]]}}
    np.savez(buf, t0=np.arange(3, dtype=np.float32), __numgrad__=np.array(json.dumps(meta)))
    buf.seek(0)
    got = numgrad.load(buf)
    assert isinstance(got["w"], numgrad.nn.Parameter) and got["w"].tolist() == [0.0, 1.0, 2.0]

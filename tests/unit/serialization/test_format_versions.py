"""numgrad.load of a file declaring a format version it does not read (a later numgrad's, a made-up one, two at
once) or holding fields no version it reads has: a RuntimeError naming the version found and the versions
read, never a loaded object (the index's object was None in these files, which load returned)."""
import io
import json
import pickle
import re

import numpy as np
import pytest
import torch

import numgrad
from numgrad.serialization import READABLE_VERSIONS, VERSION

READS = ", ".join(map(str, READABLE_VERSIONS))


def _file(index_text):
    buffer = io.BytesIO()
    np.savez(buffer, __numgrad__=np.array(index_text))
    buffer.seek(0)
    return buffer


def _index(**fields):
    return json.dumps({"format": "numgrad", **fields})


@pytest.mark.parametrize("version", [VERSION + 1, 99, 2 ** 40, -1, 0, "2", 2.0, None, [2], {"major": 2}])
@pytest.mark.parametrize("obj", [None, 1.5, {"list": []}])
def test_an_unknown_version_raises_naming_it_and_the_versions_read(version, obj):
    with pytest.raises(RuntimeError, match=re.escape(f"file format version {version!r} is not supported (this "
                                                     f"numgrad reads versions {READS})")):
        numgrad.load(_file(_index(version=version, object=obj)))


def test_a_version_declared_twice_raises_naming_both():
    text = '{"format": "numgrad", "version": 99, "version": 2, "object": null}'  # json would keep the last
    with pytest.raises(RuntimeError, match=re.escape(f"the file declares format versions 99, 2 (this numgrad reads "
                                                     f"versions {READS}); it was not written by numgrad.save")):
        numgrad.load(_file(text))


def test_a_later_formats_fields_under_a_known_version_raise():
    with pytest.raises(RuntimeError, match=re.escape(f"the file's index holds ['minimum_reader'], which no format "
                                                     f"version 2 file holds (this numgrad reads versions {READS})")):
        numgrad.load(_file(_index(version=2, object=None, minimum_reader=3)))


@pytest.mark.parametrize("text, key", [
    ('{"format": "numgrad", "format": "numgrad", "version": 2, "object": null}', "format"),
    ('{"format": "numgrad", "version": 2, "object": null, "object": 1}', "object"),
    ('{"format": "numgrad", "version": 2, "object": {"list": [], "list": [1]}}', "list"),
])
def test_a_key_repeated_anywhere_in_the_index_raises(text, key):
    with pytest.raises(RuntimeError, match=re.escape(f"repeats the key {key!r} in one entry")):
        numgrad.load(_file(text))


def test_files_of_every_version_read_still_load():
    for version in READABLE_VERSIONS:
        assert numgrad.load(_file(_index(version=version, object=None))) is None
        assert numgrad.load(_file(_index(version=version, object={"dict": [["a", 1]]}))) == {"a": 1}
    buffer = io.BytesIO()
    numgrad.save({"w": numgrad.ones(2), "none": None}, buffer)
    buffer.seek(0)
    loaded = numgrad.load(buffer)
    assert loaded["w"].tolist() == [1.0, 1.0] and loaded["none"] is None


def _torch_file(obj, **kwargs):
    buffer = io.BytesIO()
    torch.save(obj, buffer, **kwargs)
    buffer.seek(0)
    return buffer


@pytest.mark.parametrize("make", [
    lambda: _torch_file(None), lambda: _torch_file({"w": torch.ones(2)}),
    lambda: _torch_file(None, _use_new_zipfile_serialization=False), lambda: io.BytesIO(pickle.dumps(None)),
    lambda: io.BytesIO(b""),
], ids=["torch None", "torch state dict", "torch legacy", "pickle", "empty"])
def test_files_numgrad_did_not_write_raise_not_load_as_none(make):
    """As torch.load refuses a file it did not write (numgrad's, here) with an error, never an object."""
    with pytest.raises(RuntimeError, match="numgrad"):
        numgrad.load(make())
    buffer = io.BytesIO()
    numgrad.save(None, buffer)
    buffer.seek(0)
    with pytest.raises(RuntimeError):  # torch's for a file it did not write
        torch.load(buffer)

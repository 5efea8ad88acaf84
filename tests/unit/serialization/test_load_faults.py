"""numgrad.load on files it should not trust: truncated or bit-flipped copies of a saved file, foreign files,
crafted archives whose headers declare more than they hold (zip bombs), indexes with the wrong types or nested
too deeply, files crafted to run code, missing paths, directories and map_location. Each load raises
RuntimeError (FileNotFoundError, IsADirectoryError, torch's types for map_location) or gives back exactly the
values saved; never another exception, never a large allocation, never code from the file."""
import collections
import io
import json
import pickle
import resource
import struct
import tracemalloc
import zipfile
import zlib

import numpy as np
import pytest

import numgrad

ENTRY = {"tensor": "t0", "dtype": "float32", "requires_grad": False, "parameter": False}
MiB = 1 << 20


def sample():
    return {"w": numgrad.tensor(np.arange(12, dtype=np.float32).reshape(3, 4) / 7, requires_grad=True),
            "b": numgrad.tensor([1, -2, 3]),
            "mask": numgrad.tensor([True, False]),
            "p": numgrad.nn.Parameter(numgrad.tensor([0.5, 1.5], dtype=numgrad.float64)),
            "meta": {"epoch": 3, 7: "seven", "shape": (2, 3), "none": None, "lr": [0.1]}}


def assert_same(loaded, saved):
    """`loaded` is `saved`: the same containers, keys, plain values, tensor classes, dtypes and values."""
    if isinstance(saved, numgrad.Tensor):
        assert type(loaded) is type(saved)
        assert loaded.dtype == saved.dtype and loaded.shape == saved.shape
        assert loaded.requires_grad == saved.requires_grad
        np.testing.assert_array_equal(loaded.detach().numpy(), saved.detach().numpy())
    elif isinstance(saved, dict):
        assert isinstance(loaded, dict) and list(loaded) == list(saved)
        for key in saved:
            assert_same(loaded[key], saved[key])
    elif isinstance(saved, (list, tuple)):
        assert type(loaded) is type(saved) and len(loaded) == len(saved)
        for a, b in zip(loaded, saved):
            assert_same(a, b)
    else:
        assert type(loaded) is type(saved) and loaded == saved


def saved_bytes(obj):
    buffer = io.BytesIO()
    numgrad.save(obj, buffer)
    return buffer.getvalue()


def npy(descr, shape, data=b"", fortran=False, version=(1, 0), header=None):
    """The bytes of an npy member, header written by hand (so it can say anything)."""
    if header is None:
        header = f"{{'descr': {descr!r}, 'fortran_order': {fortran}, 'shape': {shape!r}, }}"
    body = header.encode("latin1")
    start = 10 if version == (1, 0) else 12
    body += b" " * (-(start + len(body) + 1) % 64) + b"\n"
    length = struct.pack("<H", len(body)) if version == (1, 0) else struct.pack("<I", len(body))
    return b"\x93NUMPY" + bytes(version) + length + body + data


def npy_of(array):
    buffer = io.BytesIO()
    np.lib.format.write_array(buffer, array, allow_pickle=True)
    return buffer.getvalue()


def archive(obj=ENTRY, members=None, meta=None, index=None, compression=zipfile.ZIP_STORED):
    """The bytes of an npz: the index (the numgrad meta of `obj`, or `meta`, or the raw JSON text `index`,
    or an array given as members["__numgrad__.npy"]) and the npy `members`."""
    members = dict(members or {})
    if "__numgrad__.npy" not in members:
        if index is None:
            index = json.dumps(meta if meta is not None else {"format": "numgrad", "version": 1, "object": obj})
        members = {"__numgrad__.npy": npy_of(np.array(index)), **members}
    return zip_of(members, compression)


def zip_of(members, compression=zipfile.ZIP_STORED):
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression) as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    return buffer.getvalue()


def load_bytes(data, **kwargs):
    return numgrad.load(io.BytesIO(data), **kwargs)


F32 = np.arange(6, dtype=np.float32)


# ---- truncations and bit flips of a real file ----------------------------------------------------------------

def loads_exactly_or_refuses(data, saved, bound=MiB):
    """Loads `data`: a RuntimeError, or exactly `saved`; never another exception; never `bound` bytes more
    memory than before (tracemalloc sees numpy's array allocations too)."""
    tracemalloc.reset_peak()
    before = tracemalloc.get_traced_memory()[0]
    try:
        loaded = load_bytes(data)
    except RuntimeError:
        loaded = None
    assert tracemalloc.get_traced_memory()[1] - before < bound
    if loaded is not None:
        assert_same(loaded, saved)
    return loaded is not None


@pytest.fixture
def traced():
    tracemalloc.start()
    yield
    tracemalloc.stop()


def test_truncated_at_every_offset(traced):
    saved = sample()
    data = saved_bytes(saved)
    assert_same(load_bytes(data), saved)
    results = [loads_exactly_or_refuses(data[:n], saved) for n in range(len(data))]
    assert not any(results)  # a zip archive needs its end record: every truncation is refused


def test_truncated_file_on_disk_is_runtime_error_with_torchs_start(tmp_path):
    data = saved_bytes(sample())
    path = tmp_path / "cut.npz"
    for n in (0, 1, 4, 30, len(data) // 2, len(data) - 1):
        path.write_bytes(data[:n])
        with pytest.raises(RuntimeError, match=r"^PytorchStreamReader failed reading zip archive: failed finding "
                                               r"central directory. numgrad.load: cannot read '.*cut.npz' as a "
                                               r"numgrad file"):
            numgrad.load(path)


@pytest.mark.parametrize("mask", ["one bit", 0xFF])
def test_a_flipped_byte_at_every_offset(mask, traced):
    saved = sample()
    data = saved_bytes(saved)
    loaded = 0
    for i in range(len(data)):
        flipped = bytearray(data)
        flipped[i] ^= 1 << (i % 8) if mask == "one bit" else mask
        loaded += loads_exactly_or_refuses(bytes(flipped), saved)
    # the CRC-32 of each member catches every flip in the data; flips in fields zipfile ignores still load
    assert 0 < loaded < len(data) // 2


def test_random_bytes_after_a_zip_start(traced):
    rng = np.random.default_rng(0)
    saved = sample()
    data = saved_bytes(saved)
    for _ in range(200):
        i = int(rng.integers(len(data)))
        junk = rng.integers(0, 256, int(rng.integers(1, 64)), dtype=np.uint8).tobytes()
        loads_exactly_or_refuses(data[:i] + junk + data[i + len(junk):], saved)


# ---- files that are not numgrad's ----------------------------------------------------------------------------

FOREIGN = {
    "empty": b"",
    "text": b"weights: [1, 2, 3]\n",
    "random": np.random.default_rng(1).integers(0, 256, 4096, dtype=np.uint8).tobytes(),
    "zip magic only": b"PK\x03\x04" + bytes(100),
    "gzip": b"\x1f\x8b\x08\x00" + bytes(60),
    "npy": npy_of(F32),
    "pickle": pickle.dumps({"w": [1.0, 2.0]}),
}


FOREIGN["plain npz"] = io.BytesIO()
np.savez(FOREIGN["plain npz"], w=F32)
FOREIGN["plain npz"] = FOREIGN["plain npz"].getvalue()
FOREIGN["torch-like zip"] = zip_of({"archive/data.pkl": pickle.dumps({"w": 1}), "archive/version": b"3\n"})


@pytest.mark.parametrize("name", list(FOREIGN))
def test_foreign_files_are_runtime_errors(name, tmp_path):
    path = tmp_path / "foreign.bin"
    path.write_bytes(FOREIGN[name])
    with pytest.raises(RuntimeError, match="numgrad"):
        numgrad.load(path)
    with pytest.raises(RuntimeError, match="numgrad"):
        load_bytes(FOREIGN[name])


def test_a_plain_npz_says_it_has_no_index():
    with pytest.raises(RuntimeError, match="not a numgrad file \\(an npz archive without the '__numgrad__' index\\)"):
        load_bytes(FOREIGN["plain npz"])


# ---- crafted sizes: nothing is allocated beyond what the file holds -------------------------------------------

def peak_growth(fn):
    """(peak bytes traced during fn(), growth of the process's peak RSS in bytes)"""
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    tracemalloc.start()
    try:
        fn()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    return peak, (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - rss) * 1024


def test_a_1mb_file_declaring_1_1gb_is_refused_before_allocating(tmp_path):
    """The issue's case: a 1 MB file whose npy header declares 1.1 GB (np.load would allocate the 1.1 GB
    array first and then fill it from the 1 MB it has)."""
    path = tmp_path / "bomb.npz"
    path.write_bytes(archive(members={"t0.npy": npy("<f4", (275_000_000,), bytes(MiB))}))
    assert MiB < path.stat().st_size < 1.01 * MiB

    def load():
        with pytest.raises(RuntimeError, match=r"member 't0.npy' declares shape \(275000000,\) of float32 "
                                               r"\(1100000000 bytes\), but holds 1048576 bytes of data"):
            numgrad.load(path)
    peak, rss = peak_growth(load)
    assert peak < 2 * MiB and rss < 64 * MiB


@pytest.mark.parametrize("shape, data, match", [
    ((3, 4), F32.tobytes(), r"declares shape \(3, 4\) of float32 \(48 bytes\), but holds 24 bytes"),
    ((2,), F32.tobytes(), r"declares shape \(2,\) of float32 \(8 bytes\), but holds 24 bytes"),
    ((2 ** 40, 2 ** 40), F32.tobytes(), r"declares shape \(1099511627776, 1099511627776\)"),
    ((-1,), F32.tobytes(), r"declares a negative size in shape \(-1,\)"),
    ((-2, -3), F32.tobytes(), r"declares a negative size"),
    ((0, 2 ** 62), b"", r"cannot read"),
])
def test_header_shapes_must_match_the_member(shape, data, match):
    with pytest.raises(RuntimeError, match=match):
        load_bytes(archive(members={"t0.npy": npy("<f4", shape, data)}))


def _patch_central_sizes(data, member, compressed, uncompressed):
    """`data` with the central-directory sizes of `member` replaced (the file holds what it held)."""
    at = data.index(b"PK\x01\x02")  # a central-directory header: sizes at 20 and 24, name length at 28
    while data[at + 46:at + 46 + struct.unpack("<H", data[at + 28:at + 30])[0]] != member.encode():
        at = data.index(b"PK\x01\x02", at + 4)
    return data[:at + 20] + struct.pack("<II", compressed, uncompressed) + data[at + 28:]


@pytest.mark.parametrize("compressed, uncompressed", [(1_100_000_000, 1_100_000_000), (0xFFFFFFFF, 0xFFFFFFFF),
                                                      (200, 1_100_000_000), (1_100_000_000, 200)])
def test_declared_member_sizes_beyond_the_file_are_refused(compressed, uncompressed):
    data = _patch_central_sizes(archive(members={"t0.npy": npy_of(F32)}), "t0.npy", compressed, uncompressed)

    def load():
        with pytest.raises(RuntimeError, match=r"member '(t0|__numgrad__).npy' declares \d+ bytes \(\d+ stored\), "
                                               r"more than the file holds|cannot read|PytorchStreamReader"):
            load_bytes(data)
    peak, _ = peak_growth(load)
    assert peak < MiB


def overlapping_archive():
    """An archive whose member t1.npy lies inside the data of member t0.npy (an int64 array): a stored
    "overlapping files" zip bomb, where n members would make each byte be read n times."""
    inner = npy_of(np.arange(16384, dtype=np.float32))  # 64 KiB, most of the file
    info = zipfile.ZipInfo("t1.npy")
    info.CRC, info.file_size, info.compress_size = zlib.crc32(inner), len(inner), len(inner)
    local = info.FileHeader()
    payload = local + inner
    payload += bytes(-len(payload) % 8)
    outer = npy("<i8", (len(payload) // 8,), payload)
    buffer = io.BytesIO()
    obj = {"list": [dict(ENTRY, dtype="int64"), dict(ENTRY, tensor="t1")]}
    with zipfile.ZipFile(buffer, "w") as zf:
        zf.writestr("__numgrad__.npy", npy_of(np.array(json.dumps(meta(obj)))))
        start = buffer.tell()
        zf.writestr("t0.npy", outer)
        info.header_offset = start + 30 + len("t0.npy") + len(outer) - len(payload)
        zf.filelist.append(info)
        zf.NameToInfo[info.filename] = info
    return buffer.getvalue()


def test_overlapping_members_are_refused():
    data = overlapping_archive()
    with zipfile.ZipFile(io.BytesIO(data)) as zf:  # zipfile itself reads both, the second inside the first
        assert np.load(io.BytesIO(zf.read("t1.npy"))).tolist() == list(range(16384))
        assert sum(len(zf.read(name)) for name in zf.namelist()) > len(data)
    with pytest.raises(RuntimeError, match=r"member 't1.npy' declares \d+ bytes \(\d+ stored\), more than the "
                                           r"file holds \(\d+ bytes left unread\)"):
        load_bytes(data)


def test_a_deflated_zip_bomb_is_refused_unread():
    zeros = npy("<f4", (4 * MiB,), bytes(16 * MiB))
    data = archive(members={"t0.npy": zeros}, compression=zipfile.ZIP_DEFLATED)
    assert len(data) < 64 * 1024  # 16 MiB of zeros deflate to a few KiB
    del zeros

    def load():
        with pytest.raises(RuntimeError, match=r"member '__numgrad__.npy' is compressed \(method 8\); numgrad files "
                                               r"are uncompressed archives"):
            load_bytes(data)
    peak, _ = peak_growth(load)
    assert peak < MiB


def test_a_compressed_tensor_member_is_refused():
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as zf:
        zf.writestr("__numgrad__.npy", npy_of(np.array(json.dumps({"format": "numgrad", "version": 1,
                                                                    "object": ENTRY}))))
        zf.writestr("t0.npy", npy_of(F32), compress_type=zipfile.ZIP_DEFLATED)
    with pytest.raises(RuntimeError, match="member 't0.npy' is compressed"):
        load_bytes(buffer.getvalue())


@pytest.mark.parametrize("member, match", [
    (npy("<f8", (6,), F32.tobytes()), r"member 't0.npy' holds float64, but the index says float32"),
    (npy(">f4", (6,), F32.tobytes()), r"holds >f4, but the index says float32"),
    (npy("<i4", (6,), F32.tobytes()), r"holds int32, but the index says float32"),
    (npy("|O", (6,), F32.tobytes()), r"holds object, but the index says float32"),
    (npy([("a", "<f4")], (6,), F32.tobytes()), r"holds \[\('a', '<f4'\)\], but the index says float32"),
    (npy("<f4", (6,), F32.tobytes(), version=(3, 0)), r"npy format version 3.0"),
    (npy("<f4", (6,), F32.tobytes(), version=(9, 9)), r"npy format version 9.9"),
    (npy("<f4", (6,), F32.tobytes(), header="[1, 2]"), r"cannot read .*Header is not a dictionary"),
    (npy("<f4", (6,), F32.tobytes(), header="{'descr': '<f4'}"), r"cannot read .*correct keys"),
    (npy("<f4", (6,), F32.tobytes(), header="{" * 5000), r"cannot read"),
    (npy("<f4", (6,), F32.tobytes(), header="{'descr': '<f4', 'fortran_order': 1, 'shape': (6,)}"),
     r"cannot read .*fortran_order"),
    (npy("<f4", (6,), F32.tobytes(), header="{'descr': '<f4', 'fortran_order': False, 'shape': (6.0,)}"),
     r"cannot read .*shape is not valid"),
    (npy("<f4", (6,), F32.tobytes(), header="x" * 20000, version=(2, 0)), r"cannot read .*Header info length"),
    (b"\x93NUMPY\x01\x00\xff\xff{'descr'", r"cannot read"),
    (b"\x93NUMPY\x02\x00\xff\xff\xff\x7f", r"cannot read"),
    (b"\x93NUMPY", r"cannot read"),
    (b"not an npy member", r"cannot read .*magic string"),
    (b"", r"cannot read"),
])
def test_npy_headers_are_checked_before_reading(member, match):
    with pytest.raises(RuntimeError, match=match):
        load_bytes(archive(members={"t0.npy": member}))


def test_bool_bytes_other_than_0_and_1_are_refused():
    entry = dict(ENTRY, dtype="bool")
    assert load_bytes(archive(entry, {"t0.npy": npy("|b1", (3,), b"\x01\x00\x01")})).tolist() == [True, False, True]
    with pytest.raises(RuntimeError, match="holds bool values other than 0 and 1"):
        load_bytes(archive(entry, {"t0.npy": npy("|b1", (3,), b"\x01\x02\x01")}))


def test_fortran_order_and_an_archive_after_other_bytes_load():
    values = np.asfortranarray(np.arange(6.0).reshape(2, 3))
    data = archive(dict(ENTRY, dtype="float64"), {"t0.npy": npy_of(values)})
    assert load_bytes(data).tolist() == values.tolist()
    buffer = io.BytesIO(b"a prefix" + data)
    buffer.seek(8)
    assert numgrad.load(buffer).tolist() == values.tolist()


def test_entries_naming_one_array_read_it_once():
    obj = {"list": [ENTRY] * 1000}
    loaded = load_bytes(archive(obj, {"t0.npy": npy_of(F32)}))
    assert len(loaded) == 1000 and all(t.tolist() == F32.tolist() for t in loaded)


# ---- the index -----------------------------------------------------------------------------------------------

def meta(obj, **fields):
    return {"format": "numgrad", "version": 1, "object": obj, **fields}


@pytest.mark.parametrize("index, match", [
    ([1, 2], r"not a numgrad file \(its index does not say format 'numgrad'\)"),
    ('"numgrad"', r"not a numgrad file"),
    (None, r"not a numgrad file"),
    ({"format": "torch", "version": 1, "object": None}, r"not a numgrad file"),
    ({"format": ["numgrad"], "version": 1, "object": None}, r"not a numgrad file"),
    ({"format": "numgrad", "version": 3, "object": None}, r"file format version 3 is not supported"),
    ({"format": "numgrad", "version": 0, "object": None}, r"file format version 0 is not supported"),
    ({"format": "numgrad", "version": "1", "object": None}, r"file format version '1' is not supported"),
    ({"format": "numgrad", "version": True, "object": None}, r"file format version True is not supported"),
    ({"format": "numgrad", "version": 1.0, "object": None}, r"file format version 1.0 is not supported"),
    ({"format": "numgrad", "object": None}, r"file format version None is not supported"),
    ({"format": "numgrad", "version": 1}, r"the file's index has no 'object'"),
    (meta([1, 2]), r"object: the index holds a list where it should hold a tensor"),
    (meta({}), r"object: the index holds a dict where"),
    (meta({"foo": 1}), r"object: unknown entry \['foo'\]"),
    (meta({"dict": [], "list": []}), r"unknown entry \['dict', 'list'\]"),
    (meta({"dict": 5}), r"the index's dict holds a int, not a list"),
    (meta({"list": {"a": 1}}), r"the index's list holds a dict, not a list"),
    (meta({"tuple": None}), r"the index's tuple holds a null, not a list"),
    (meta({"dict": [[1]]}), r"a dict item in the index is not a \[str or int key, value\] pair"),
    (meta({"dict": [[[1], 2]]}), r"not a \[str or int key, value\] pair"),
    (meta({"dict": [[1.5, 2]]}), r"not a \[str or int key, value\] pair"),
    (meta({"dict": [[None, 2]]}), r"not a \[str or int key, value\] pair"),
    (meta({"dict": [5]}), r"not a \[str or int key, value\] pair"),
    (meta({"dict": [["w", [1]]]}), r"object\['w'\]: the index holds a list"),
    (meta(dict(ENTRY, tensor=5)), r"object: a tensor entry in the index has values of the wrong types"),
    (meta(dict(ENTRY, tensor=["t0"])), r"values of the wrong types"),
    (meta(dict(ENTRY, dtype=5)), r"values of the wrong types"),
    (meta(dict(ENTRY, requires_grad="yes")), r"values of the wrong types"),
    (meta(dict(ENTRY, parameter=1)), r"values of the wrong types"),
    (meta(dict(ENTRY, device=0)), r"values of the wrong types"),
    (meta({"tensor": "t0"}), r"a tensor entry in the index has keys \['tensor'\]"),
    (meta(dict(ENTRY, extra=1)), r"a tensor entry in the index has keys"),
    (meta(dict(ENTRY, dtype="complex64")), r"the index names dtype 'complex64', not one of"),
    (meta(dict(ENTRY, dtype="os.system")), r"the index names dtype 'os.system'"),
    (meta(dict(ENTRY, dtype="int64", requires_grad=True)), r"the index says a int64 tensor requires grad"),
    (meta(dict(ENTRY, tensor="t9")), r"object: the file has no array 't9' that its index names"),
    (meta(dict(ENTRY, tensor="../t0")), r"the file has no array '../t0'"),
    # the index member read a second time, as a tensor: its bytes count twice against the file's size
    (meta(dict(ENTRY, tensor="__numgrad__")), r"member '__numgrad__.npy' declares \d+ bytes .* more than the file"),
    (meta(dict(ENTRY, dtype="int64")), r"member 't0.npy' holds float32, but the index says int64"),
    (meta(dict(ENTRY, device="gpu")), r"don't know how to restore data location of torch.storage.UntypedStorage "
                                      r"\(tagged with gpu\)"),
    (meta(dict(ENTRY, device="cuda:x")), r"Invalid device string: 'cuda:x'"),
    ('{"format": "numgrad", "version": 1, "object": ', r"the file's index is not JSON"),
    ('{"format": "numgrad", "version": 1, "object": ' + "9" * 5000 + "}", r"the file's index is not JSON"),
    ("", r"the file's index is not JSON"),
    ('{"format": "numgrad", "version": 1, "object": ' + '{"list": [' * 5000 + "]}" * 5000 + "}",
     r"the file's index nests too deeply"),
    ('[' * 100000 + ']' * 100000, r"the file's index nests too deeply"),
    (meta(json.loads('{"list": [' * 101 + "]}" * 101)), r"the index nests more than 100 levels deep"),
])
def test_indexes_with_the_wrong_types_are_runtime_errors(index, match):
    text = index if isinstance(index, str) else json.dumps(index)
    with pytest.raises(RuntimeError, match=match):
        load_bytes(archive(members={"t0.npy": npy_of(F32)}, index=text))


@pytest.mark.parametrize("member, match", [
    (npy_of(np.array(["a", "b"])), r"member '__numgrad__.npy' is <U1 of shape \(2,\), not the index's one string"),
    (npy_of(np.array(5)), r"is int64 of shape \(\), not the index's one string"),
    (npy_of(np.array(b"{}")), r"is \|S2 of shape"),
    (npy("<U2", (), "\U0010ffff".encode("utf-32-le") + b"\xff\xff\xff\xff"), r"^numgrad.load: "),
])
def test_an_index_member_that_is_not_one_string(member, match):
    with pytest.raises(RuntimeError, match=match):
        load_bytes(archive(members={"__numgrad__.npy": member}))


def test_nesting_save_writes_load_reads(tmp_path):
    deep = inner = []
    for _ in range(99):
        inner.append([])
        inner = inner[0]
    inner.append(numgrad.ones(1))
    assert_same(load_bytes(saved_bytes(deep)), deep)
    inner[0] = [1]
    with pytest.raises(ValueError, match="nests dicts, lists and tuples more than 100 levels deep"):
        numgrad.save(deep, tmp_path / "deep.npz")


# ---- loading never runs code from the file -------------------------------------------------------------------

class Payload:
    """Unpickling this creates the file `marker`."""

    def __init__(self, marker):
        self.marker = str(marker)

    def __reduce__(self):
        return open, (self.marker, "w")


def object_member(marker):
    return npy_of(np.array([Payload(marker), 1], dtype=object))


def test_the_payload_is_live(tmp_path):
    pickle.loads(pickle.dumps(Payload(tmp_path / "ran"))).close()
    assert (tmp_path / "ran").exists()


def code_files(marker):
    return {
        "object array tensor member": archive(members={"t0.npy": object_member(marker)}),
        "object array index member": archive(members={"__numgrad__.npy": object_member(marker)}),
        "object dtype in the index": archive(dict(ENTRY, dtype="object"), {"t0.npy": object_member(marker)}),
        "pickle file": pickle.dumps(Payload(marker)),
        "pickle in a torch-like zip": zip_of({"archive/data.pkl": pickle.dumps(Payload(marker))}),
        "pickle beside the index": archive({"list": [ENTRY, dict(ENTRY, tensor="t1")]}, {
            "t0.npy": npy_of(F32), "data.pkl": pickle.dumps(Payload(marker)), "t1.npy": pickle.dumps(Payload(marker))}),
        "npy header calling code": archive(members={"t0.npy": npy("<f4", (6,), F32.tobytes(), header=(
            f"{{'descr': __import__('builtins').open({str(marker)!r}, 'w') and '<f4', 'fortran_order': False, "
            "'shape': (6,), }"))}),
        "dotted dtype": archive(dict(ENTRY, dtype="builtins.open"), {"t0.npy": npy_of(F32)}),
        "dotted entry": archive({"callable": "builtins.open", "args": [str(marker), "w"]}),
        "reduce entry": archive({"__reduce__": ["builtins.open", [str(marker), "w"]]}),
        "dotted device": archive(dict(ENTRY, device="builtins.open"), {"t0.npy": npy_of(F32)}),
        "dotted tensor name": archive(dict(ENTRY, tensor="builtins.open"), {"t0.npy": npy_of(F32)}),
    }


@pytest.mark.parametrize("name", list(code_files("marker")))
def test_loading_runs_no_code_from_the_file(name, tmp_path):
    marker = tmp_path / "ran"
    path = tmp_path / "crafted.npz"
    path.write_bytes(code_files(marker)[name])
    for weights_only in (True, False):
        with pytest.raises(RuntimeError):
            numgrad.load(path, weights_only=weights_only)
        assert not marker.exists()


def test_plain_values_that_look_like_code_stay_strings():
    obj = {"dict": [["__reduce__", {"list": ["builtins.open", "os.system"]}], ["__class__", "numgrad.Tensor"]]}
    loaded = load_bytes(archive(obj))
    assert loaded == collections.OrderedDict(__reduce__=["builtins.open", "os.system"], __class__="numgrad.Tensor")


# ---- paths and file objects ----------------------------------------------------------------------------------

def test_a_missing_path_is_file_not_found(tmp_path):
    missing = tmp_path / "missing.npz"
    for f in (missing, str(missing)):
        with pytest.raises(FileNotFoundError) as info:
            numgrad.load(f)
        assert str(info.value) == f"[Errno 2] No such file or directory: '{missing}'"


def test_a_directory_is_is_a_directory_error(tmp_path):
    with pytest.raises(IsADirectoryError) as info:
        numgrad.load(tmp_path)
    assert str(info.value) == f"[Errno 21] Is a directory: '{tmp_path}'"


class Unseekable(io.RawIOBase):
    def __init__(self, data):
        self.data = io.BytesIO(data)

    def readable(self):
        return True

    def readinto(self, b):
        return self.data.readinto(b)


def test_file_objects_must_be_seekable_as_torch_says():
    with pytest.raises(io.UnsupportedOperation, match=r"^seek. You can only torch.load from a file that is "
                                                      r"seekable. Please pre-load the data into a buffer like "
                                                      r"io.BytesIO and try to load from it instead.$"):
        numgrad.load(Unseekable(saved_bytes(numgrad.ones(2))))
    with pytest.raises(AttributeError, match=r"^'int' object has no attribute 'seek'. You can only torch.load"):
        numgrad.load(5)


def test_file_objects_round_trip(tmp_path):
    saved = sample()
    assert_same(load_bytes(saved_bytes(saved)), saved)
    with open(tmp_path / "f.npz", "wb") as fh:
        numgrad.save(saved, fh)
    with open(tmp_path / "f.npz", "rb") as fh:
        assert_same(numgrad.load(fh), saved)


# ---- map_location (tests/oracle/tensor/test_save_load.py compares these with torch) --------------------------

def test_map_location_cpu_forms():
    saved = sample()
    data = saved_bytes(saved)
    seen = []

    def spy(t, location):
        seen.append((type(t), location))

    for where in ("cpu", numgrad.device("cpu"), {"cpu": "cpu"}, {"cuda:0": "cpu"}, lambda t, loc: t, spy):
        assert_same(load_bytes(data, map_location=where), saved)
    assert seen == [(numgrad.Tensor, "cpu")] * 4


def test_map_location_is_checked_per_tensor_as_torch_does():
    data = saved_bytes(numgrad.ones(2))
    with pytest.raises(RuntimeError, match=r"^don't know how to restore data location of "
                                           r"torch.storage.UntypedStorage \(tagged with gpu\)$"):
        load_bytes(data, map_location="gpu")
    with pytest.raises(RuntimeError, match=r"tagged with gpu\)$"):
        load_bytes(data, map_location={"cpu": "gpu"})
    with pytest.raises(TypeError, match=r"^'int' object is not callable$"):
        load_bytes(data, map_location=5)
    with pytest.raises(TypeError, match="cannot use a string pattern on a bytes-like object"):
        load_bytes(data, map_location=b"cpu")
    with pytest.raises(TypeError, match="map_location returned 3 for a float32 tensor of shape \\(2,\\)"):
        load_bytes(data, map_location=lambda t, loc: 3)
    # a file without tensors never asks
    assert load_bytes(saved_bytes({"a": 1}), map_location="gpu") == {"a": 1}


@pytest.mark.skipif(numgrad.cuda.is_available(), reason="the error of a machine without a GPU")
@pytest.mark.parametrize("where", ["cuda", "cuda:0", numgrad.device("cuda"), {"cpu": "cuda:0"}])
def test_map_location_to_cuda_without_a_gpu(where):
    with pytest.raises(RuntimeError, match=r"^Attempting to deserialize object on a CUDA device but "
                                           r"torch.cuda.is_available\(\) is False"):
        load_bytes(saved_bytes(numgrad.ones(2)), map_location=where)

"""The `b2nd` command on files written by python-blosc2 (the reference C-Blosc2 3.3.5).

- `info --json` reports what python-blosc2 says of the same file;
- `cat --format npy` loads with numpy.load, equal to the same region read by python-blosc2;
- `convert` output opens in python-blosc2 with the same data and metadata;
- `verify` and `recover` on damaged and truncated copies.

The binary is B2ND_BIN (set by scripts/test.sh), else target/release/b2nd.
"""
import json
import os
import pathlib
import subprocess

import blosc2
import numpy as np
import pytest

from conftest import ROOT


def _bin() -> pathlib.Path:
    target = os.environ.get("CARGO_TARGET_DIR", str(ROOT / "target"))
    path = pathlib.Path(os.environ.get("B2ND_BIN", pathlib.Path(target, "release", "b2nd")))
    if not path.is_file():
        pytest.fail(f"b2nd binary not found at {path}: run cargo build --release")
    return path


def b2nd(*args):
    return subprocess.run([str(_bin()), *map(str, args)], capture_output=True, timeout=120)


def ok_json(*args):
    r = b2nd(*args)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def filter_names(cparams):
    return [f.name.lower() for f in cparams.filters if f != blosc2.Filter.NOFILTER]


@pytest.fixture
def array3d(tmp_path):
    data = np.arange(24 * 30 * 5, dtype="<f8").reshape(24, 30, 5) / 7
    urlpath = tmp_path / "a.b2nd"
    arr = blosc2.asarray(
        data,
        urlpath=str(urlpath),
        mode="w",
        chunks=(10, 12, 5),
        blocks=(5, 6, 5),
        cparams={"codec": blosc2.Codec.LZ4, "clevel": 7},
        meta={"user": [1, 2, 3]},
    )
    arr.vlmeta["note"] = "written by python-blosc2"
    return urlpath, data


def test_info_json_matches_python_blosc2(array3d):
    urlpath, _ = array3d
    arr = blosc2.open(str(urlpath))
    v = ok_json("info", "--json", urlpath)
    assert v["kind"] == "array"
    assert v["storage"] == "contiguous"
    assert v["nchunks"] == arr.schunk.nchunks
    assert v["nbytes"] == arr.schunk.nbytes
    assert v["cbytes"] == arr.schunk.cbytes
    assert v["typesize"] == arr.schunk.typesize
    assert v["codec"] == arr.cparams.codec.name.lower() == "lz4"
    assert v["clevel"] == arr.cparams.clevel == 7
    assert v["filters"] == filter_names(arr.cparams)
    assert v["shape"] == list(arr.shape)
    assert v["chunkshape"] == list(arr.chunks)
    assert v["blockshape"] == list(arr.blocks)
    assert v["dtype"] == arr.dtype.str
    assert [m["name"] for m in v["metalayers"]] == list(arr.schunk.meta.keys())
    assert [m["name"] for m in v["vlmetalayers"]] == list(arr.vlmeta.getall().keys())

    v = ok_json("info", "--json", "--chunks", urlpath)
    assert len(v["chunks"]) == arr.schunk.nchunks
    for c in v["chunks"]:
        assert c["cbytes"] == len(arr.schunk.get_chunk(c["n"]))


def test_info_json_of_a_sparse_schunk(tmp_path):
    urlpath = tmp_path / "s.b2frame"
    data = np.arange(25_000, dtype="<i4")
    sc = blosc2.SChunk(
        chunksize=40_000,
        data=data.tobytes(),
        urlpath=str(urlpath),
        mode="w",
        contiguous=False,
        cparams={"typesize": 4, "codec": blosc2.Codec.ZLIB, "clevel": 2},
    )
    sc.vlmeta["k"] = b"v"
    v = ok_json("info", "--json", urlpath)
    assert v["kind"] == "schunk"
    assert v["storage"] == "sparse"
    assert (v["nchunks"], v["nbytes"], v["cbytes"]) == (sc.nchunks, sc.nbytes, sc.cbytes)
    assert v["typesize"] == 4
    assert v["codec"] == "zlib"
    assert v["clevel"] == 2
    assert [m["name"] for m in v["vlmetalayers"]] == ["k"]
    assert "shape" not in v


@pytest.mark.parametrize(
    "dtype",
    ["<f8", "<i2", ">i4", "|b1", "<u8", [("a", "<i4"), ("b", "<f8")]],
    ids=["f8", "i2", "be-i4", "bool", "u8", "struct"],
)
def test_cat_npy_loads_with_numpy(tmp_path, dtype):
    dt = np.dtype(dtype)
    raw = np.arange(17 * 13 * dt.itemsize, dtype=np.uint8) * 37 % 251
    data = raw.view(dt).reshape(17, 13) if dt.names else raw.view(dt).reshape(17, -1)[:, :13]
    data = np.ascontiguousarray(data)
    urlpath = tmp_path / "a.b2nd"
    arr = blosc2.asarray(data, urlpath=str(urlpath), mode="w", chunks=(5, 4), blocks=(2, 3))
    out = tmp_path / "r.npy"
    r = b2nd("cat", urlpath, "--slice", "2:16,3:11", "-o", out)
    assert r.returncode == 0, r.stderr
    got = np.load(out)
    assert got.dtype == arr.dtype
    assert got.shape == (14, 8)
    np.testing.assert_array_equal(got, arr[2:16, 3:11])
    # The whole array, to stdout, the default format.
    r = b2nd("cat", urlpath)
    whole = tmp_path / "w.npy"
    whole.write_bytes(r.stdout)
    np.testing.assert_array_equal(np.load(whole), arr[...])


def test_cat_csv_and_raw(array3d, tmp_path):
    urlpath, data = array3d
    r = b2nd("cat", urlpath, "--slice", "1:3,4:6,0:5", "--format", "csv")
    assert r.returncode == 0, r.stderr
    rows = [list(map(float, line.split(","))) for line in r.stdout.decode().splitlines()]
    np.testing.assert_array_equal(np.array(rows), data[1:3, 4:6, :].reshape(-1, 5))
    r = b2nd("cat", urlpath, "--slice", "0:24,29:30,2:3", "--format", "raw")
    assert r.stdout == data[:, 29:30, 2:3].tobytes()


def test_cat_out_of_range_fails_cleanly(array3d, tmp_path):
    urlpath, _ = array3d
    out = tmp_path / "o.npy"
    r = b2nd("cat", urlpath, "--slice", "0:25", "-o", out)
    assert r.returncode == 2
    assert len(r.stderr.decode().strip().splitlines()) == 1
    assert not out.exists()


def test_convert_opens_in_python_blosc2(array3d, tmp_path):
    urlpath, data = array3d
    out = tmp_path / "c.b2nd"
    r = b2nd("convert", urlpath, out, "--codec", "zstd", "--clevel", "3", "--filter", "delta,bitshuffle")
    assert r.returncode == 0, r.stderr
    c = blosc2.open(str(out))
    np.testing.assert_array_equal(c[...], data)
    assert c.cparams.codec == blosc2.Codec.ZSTD
    assert c.cparams.clevel == 3
    assert filter_names(c.cparams) == ["delta", "bitshuffle"]
    assert c.schunk.meta["user"] == [1, 2, 3]
    assert c.vlmeta["note"] == "written by python-blosc2"

    out = tmp_path / "c.dir"
    r = b2nd("convert", urlpath, out, "--sparse", "--chunks", "8,8,5", "--blocks", "4,4,5")
    assert r.returncode == 0, r.stderr
    c = blosc2.open(str(out))
    assert c.chunks == (8, 8, 5) and c.blocks == (4, 4, 5)
    np.testing.assert_array_equal(c[...], data)
    assert c.schunk.meta["user"] == [1, 2, 3]
    assert c.vlmeta["note"] == "written by python-blosc2"


def test_convert_schunk_keeps_data(tmp_path):
    urlpath = tmp_path / "s.b2frame"
    data = np.arange(30_000, dtype="<i8")
    sc = blosc2.SChunk(chunksize=64_000, data=data.tobytes(), urlpath=str(urlpath), mode="w",
                       cparams={"typesize": 8})
    sc.vlmeta["k"] = [1, "two"]
    out = tmp_path / "c.b2frame"
    r = b2nd("convert", urlpath, out, "--codec", "blosclz", "--nthreads", "2")
    assert r.returncode == 0, r.stderr
    c = blosc2.open(str(out))
    assert c[:] == data.tobytes()
    assert c.vlmeta["k"] == [1, "two"]
    assert c.cparams.codec == blosc2.Codec.BLOSCLZ
    r = b2nd("convert", urlpath, tmp_path / "x", "--codec", "nope")
    assert r.returncode == 2 and not (tmp_path / "x").exists()


def _chunk_slices(arr, n):
    """The region of chunk `n` (C order over the chunk grid)."""
    grid = [-(-s // c) for s, c in zip(arr.shape, arr.chunks)]
    coords = np.unravel_index(n, grid)
    return tuple(slice(i * c, min((i + 1) * c, s)) for i, c, s in zip(coords, arr.chunks, arr.shape))


def test_verify_and_recover_a_damaged_frame(tmp_path):
    rng = np.random.default_rng(3)
    data = rng.integers(0, 1 << 20, size=(120, 50), dtype="<i4")
    urlpath = tmp_path / "a.b2nd"
    arr = blosc2.asarray(data, urlpath=str(urlpath), mode="w", chunks=(10, 50), blocks=(5, 25))
    r = b2nd("verify", urlpath)
    assert r.returncode == 0, r.stdout
    raw = urlpath.read_bytes()
    chunks = [arr.schunk.get_chunk(i) for i in range(arr.schunk.nchunks)]
    spans = [(raw.find(c), len(c)) for c in chunks]
    assert all(p > 0 for p, _ in spans)

    # One damaged chunk: verify names it; recover loses only it.
    bad = bytearray(raw)
    p, _ = spans[4]
    bad[p + 32:p + 48] = b"\xff" * 16
    bad_path = tmp_path / "bad.b2nd"
    bad_path.write_bytes(bytes(bad))
    r = b2nd("verify", bad_path)
    assert r.returncode == 1
    lines = [l for l in r.stdout.decode().splitlines() if l.startswith("chunk ")]
    assert len(lines) == 1 and lines[0].startswith("chunk 4: ")
    out = tmp_path / "rb.b2nd"
    r = b2nd("recover", bad_path, out)
    assert r.returncode == 1
    assert "chunk 4: lost" in r.stdout.decode()
    rec = blosc2.open(str(out))
    for n in range(len(chunks)):
        region = _chunk_slices(arr, n)
        if n == 4:
            assert (rec[region] == 0).all()
        else:
            np.testing.assert_array_equal(rec[region], data[region])

    # Cut at 70%: every chunk wholly before the cut comes back.
    cut = len(raw) * 7 // 10
    cut_path = tmp_path / "cut.b2nd"
    cut_path.write_bytes(raw[:cut])
    assert b2nd("verify", cut_path).returncode == 2
    out = tmp_path / "rc.b2nd"
    r = b2nd("recover", cut_path, out)
    assert r.returncode == 1, r.stderr
    report = r.stdout.decode()
    rec = blosc2.open(str(out))
    assert rec.shape == arr.shape and rec.chunks == arr.chunks and rec.dtype == arr.dtype
    whole = [n for n, (p, l) in enumerate(spans) if p + l <= cut]
    assert len(whole) >= len(chunks) // 2
    for n in range(len(chunks)):
        region = _chunk_slices(arr, n)
        if n in whole:
            np.testing.assert_array_equal(rec[region], data[region])
            assert rec.schunk.get_chunk(n) == chunks[n]
        else:
            assert (rec[region] == 0).all()
            assert f"chunk {n}: lost" in report
    assert b2nd("verify", out).returncode == 0


def test_bad_inputs_exit_2(tmp_path):
    garbage = tmp_path / "g"
    garbage.write_bytes(os.urandom(3000))
    (tmp_path / "d").mkdir()
    for path in (garbage, tmp_path / "d", tmp_path / "missing"):
        for cmd in (["info"], ["info", "--json"], ["verify"], ["cat"]):
            r = b2nd(*cmd, path)
            assert r.returncode == 2, (cmd, path)
            assert len(r.stderr.decode().strip().splitlines()) == 1
            assert b"panicked" not in r.stderr
        r = b2nd("recover", path, tmp_path / "out")
        assert r.returncode == 2 and not (tmp_path / "out").exists()

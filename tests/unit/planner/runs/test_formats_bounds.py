"""planner/runs/formats.py against hostile capture files (issue 36, items 1, 2, 3, 7): every value the
pickle opcode reader builds is bounded in depth and parts, every shape in count and size before it is
multiplied, every zipfile failure is the file's one-line reason, every read is bounded in time per file
and in all, and a file swapped since the scan is never read. The hostile files are built here from
their bytes (pickle opcodes written one by one, zip records patched), small; where the code before
issue 36 crashed or hung, the read runs in a subprocess under a timeout, so this suite cannot die of it.
"""
from __future__ import annotations

import io
import json
import os
import shutil
import struct
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import pytest

from planner.runs import calibration as rc
from planner.runs import formats as rf
from planner.runs import rundir

RUNS = Path(__file__).resolve().parents[3] / "fixtures" / "runs"
ROOT = Path(__file__).resolve().parents[4]
CKPT0 = RUNS / "specforge" / "rows_0-2000" / "data_0.ckpt"


# ---------------------------------------------------------------- building hostile files
def _u(text: str) -> bytes:
    """BINUNICODE: 'X', a 4-byte little-endian length, the UTF-8 bytes."""
    raw = text.encode()
    return b"X" + struct.pack("<I", len(raw)) + raw


def _ckpt(pkl: bytes, storages: dict[str, bytes] | None = None) -> bytes:
    """A torch.save-like archive: archive/data.pkl and archive/data/<key> (stored, as torch writes)."""
    b = io.BytesIO()
    with zipfile.ZipFile(b, "w") as z:
        z.writestr("archive/data.pkl", pkl)
        for key, data in (storages or {}).items():
            z.writestr(f"archive/data/{key}", data)
    return b.getvalue()


def _tensor_pkl(shape_ops: bytes, name: str = "input_ids") -> bytes:
    """{name: _rebuild_tensor_v2(('storage', LongStorage, '0', 'cpu', 7), 0, <shape_ops>, (), False,
    OrderedDict())} written opcode by opcode (protocol 2, as torch.save's data.pkl)."""
    pid = b"(" + _u("storage") + b"ctorch\nLongStorage\n" + _u("0") + _u("cpu") + b"K\x07tQ"
    hooks = b"ccollections\nOrderedDict\n)R"
    args = b"(" + pid + b"K\x00" + shape_ops + b")\x89" + hooks + b"t"
    return b"\x80\x02}(" + _u(name) + b"ctorch._utils\n_rebuild_tensor_v2\n" + args + b"Ru."


def _shape_ops(entries: list[bytes]) -> bytes:
    return b"(" + b"".join(entries) + b"t"


def _k(n: int) -> bytes:                 # BININT1
    return b"K" + bytes([n])


def _safetensors(shape, offsets=(0, 0), dtype="I64") -> bytes:
    """One `token_ids` tensor's header, then offsets[1] bytes of data (none when that is past 1 MB)."""
    header = json.dumps({"token_ids": {"dtype": dtype, "shape": shape, "data_offsets": list(offsets)}}).encode()
    return struct.pack("<Q", len(header)) + header + b"\0" * (offsets[1] if offsets[1] < 2 ** 20 else 0)


def _write(tmp_path: Path, name: str, data: bytes) -> Path:
    p = tmp_path / name
    p.write_bytes(data)
    return p


def test_the_opcode_builder_writes_what_the_reader_reads(tmp_path):
    # the builder above is right: a [7] LongStorage tensor over a 56-byte storage (7 x 8) reads as 7
    # tokens, 56 bytes of data; a [7, 2] one over it is larger than its storage (7 x 2 x 8 = 112 > 56)
    info = rf.read_file(_write(tmp_path, "a.ckpt", _ckpt(_tensor_pkl(_shape_ops([_k(7)])), {"0": b"\0" * 56})))
    assert (info.tokens, info.rows, info.data_bytes, info.tensors[0].shape) == (7, 1, 56, (7,))
    with pytest.raises(rf.FormatError, match=r"\[7, 2\] is larger than its storage"):
        rf.read_file(_write(tmp_path, "b.ckpt", _ckpt(_tensor_pkl(_shape_ops([_k(7), _k(2)])), {"0": b"\0" * 56})))


# ---------------------------------------------------------------- crashes and hangs: in a subprocess
def _deep_key() -> bytes:
    # issue 36's file: {(((...(),),),): None}, a tuple nested 900,000 deep as a key (900 KB of TUPLE1);
    # hashing it overflowed the C stack (exit 139)
    return _ckpt(b"\x80\x02})" + b"\x85" * 900_000 + b"Ns.")


def _doubling_key() -> bytes:
    # a variant: T = (); 100 times T = (T, T) through the memo (LONG_BINPUT i, LONG_BINGET i, TUPLE2):
    # 300 bytes of opcodes, a key of 2^100 parts, whose hash never ends
    body = b"".join(b"r" + struct.pack("<I", i) + b"j" + struct.pack("<I", i) + b"\x86" for i in range(100))
    return _ckpt(b"\x80\x02})" + body + b"Ns.")


def _huge_shape_safetensors() -> bytes:
    # issue 36's file: a shape of 1,000 integers of 4,000 digits and a trailing 0 (4 MB): math.prod
    # ran for over 110 s, and the 0 made the file pass as valid
    return _safetensors([int("9" * 4000)] * 1000 + [0])


def _huge_shape_under_the_header_bound() -> bytes:
    # a variant under the 1 MB header bound: 200 integers of 4,000 digits (800 KB) and a trailing 0
    return _safetensors([int("9" * 4000)] * 200 + [0])


_READ = ("import sys; from planner.runs import formats as rf\n"
         "try:\n    rf.read_file(sys.argv[1]); print('read')\n"
         "except rf.FormatError as exc:\n    print('FormatError:', exc)\n")


@pytest.mark.parametrize("name, build, reason", [
    ("deep.ckpt", _deep_key, "its data.pkl nests values over 32 deep"),
    ("doubling.ckpt", _doubling_key, "its data.pkl builds a value of over 1,000,000 parts"),
    ("shape.safetensors", _huge_shape_safetensors, "its header claims 4,002,0"),
    ("shape2.safetensors", _huge_shape_under_the_header_bound, "holds an integer of 4,000 digits, over 20"),
])
def test_a_file_that_crashed_or_hung_the_reader_is_one_line(tmp_path, name, build, reason):
    path = _write(tmp_path, name, build())
    t0 = time.monotonic()
    try:
        out = subprocess.run([sys.executable, "-c", _READ, str(path)], cwd=ROOT, capture_output=True, text=True,
                             timeout=60)
    except subprocess.TimeoutExpired:
        pytest.fail(f"{name}: reading it ran past 60 s")
    assert out.returncode == 0, (out.returncode, out.stderr[-500:])
    assert out.stdout.startswith("FormatError: ") and reason in out.stdout, out.stdout
    assert time.monotonic() - t0 < 30


# ---------------------------------------------------------------- shapes: count and size before arithmetic
def test_numel_checks_count_and_size_and_overflows_as_safetensors_does():
    # 2^32 x (2^32 - 1) = 2^64 - 2^32 <= 2^64 - 1: a count; 2^32 x 2^32 = 2^64 passes it, refused
    # before the trailing 0 is reached (safetensors' try_fold of checked_mul)
    assert rf.numel([2 ** 32, 2 ** 32 - 1], "t") == 2 ** 64 - 2 ** 32
    with pytest.raises(rf.FormatError, match="t: its shape's element count passes 18,446,744,073,709,551,615"):
        rf.numel([2 ** 32, 2 ** 32, 0], "t")
    assert rf.numel([0, 2 ** 64 - 1], "t") == 0                    # a 0 first: no overflow on the way
    assert rf.numel([1] * 64, "t") == 1
    with pytest.raises(rf.FormatError, match="t has a shape of 65 dimensions, over 64"):
        rf.numel([1] * 65, "t")
    for bad in ([2 ** 64], [-1], [True], [1.0], "12"):
        with pytest.raises(rf.FormatError, match="t has a shape"):
            rf.numel(bad, "t")


@pytest.mark.parametrize("shape, reason", [
    ([2 ** 32, 2 ** 32, 0], "element count passes 18,446,744,073,709,551,615"),    # was read: 0 elements
    ([1] * 65 + [0], "a shape of 66 dimensions, over 64"),
    ([10 ** 20, 0], "an integer of 21 digits, over 20"),      # 10^20 has 21 digits: never parsed
    ([10 ** 20 - 1, 0], "not a size from 0 to 18,446,744,073,709,551,615"),    # 20 nines > 2^64 - 1 (20 digits)
])
def test_safetensors_shapes_that_passed_as_empty_are_refused(tmp_path, shape, reason):
    path = _write(tmp_path, "hs_0.safetensors", _safetensors(shape))
    with pytest.raises(rf.FormatError, match=reason):
        rf.read_file(path)


def test_a_header_integer_is_refused_before_it_is_parsed(tmp_path):
    # 21 digits: 10^20 (> 2^64 - 1, which has 20) never reaches int(), in a shape or an offset;
    # 20 digits parse, and 10^19 - 0 bytes are not the 8 of one I64
    with pytest.raises(rf.FormatError, match="an integer of 21 digits, over 20"):
        rf.read_file(_write(tmp_path, "a.safetensors", _safetensors([10 ** 20, 0])))
    with pytest.raises(rf.FormatError, match="an integer of 21 digits, over 20"):
        rf.read_file(_write(tmp_path, "b.safetensors", _safetensors([1], (0, 10 ** 20))))
    with pytest.raises(rf.FormatError, match=r"I64 \[1\] does not fill offsets 0..10000000000000000000"):
        rf.read_file(_write(tmp_path, "c.safetensors", _safetensors([1], (0, 10 ** 19))))


def _long1(nbytes: int) -> bytes:       # LONG1 of nbytes: 0xff..ff7f, 2^(8 nbytes - 1) - 1
    return b"\x8a" + bytes([nbytes]) + b"\xff" * (nbytes - 1) + b"\x7f"


@pytest.mark.parametrize("entries, reason", [
    # 100 integers of 255 bytes (2^2039 - 1: 2,039 bits) and a 0: was read as a tensor of 0 elements
    ([_long1(255)] * 100 + [_k(0)], "an integer of 2,039 bits, over 64"),
    # protocol 0's LONG of 4,000 nines: 10^4000 - 1 has 13,288 bits
    ([b"L" + b"9" * 4000 + b"L\n", _k(0)], "an integer of 13,288 bits, over 64"),
    # LONG4 of 100,000 bytes: 2^799,999 - 1
    ([b"\x8b" + struct.pack("<i", 100_000) + b"\xff" * 99_999 + b"\x7f", _k(0)], "an integer of 799,999 bits, over 64"),
    # 9 bytes: 2^71 - 1 passes int64 and uint64
    ([_long1(9), _k(0)], "an integer of 71 bits, over 64"),
    ([_k(1)] * 65, "a shape of 65 dimensions, over 64"),
    # 2^63 - 1 is int64's largest: (2^63 - 1) x 2 passes it
    ([b"\x8a\x08" + b"\xff" * 7 + b"\x7f", _k(2)], "element count passes 9,223,372,036,854,775,807"),
])
def test_torch_shapes_are_bounded_before_arithmetic(tmp_path, entries, reason):
    path = _write(tmp_path, "a.ckpt", _ckpt(_tensor_pkl(_shape_ops(entries)), {"0": b"\0" * 56}))
    with pytest.raises(rf.FormatError, match=reason):
        rf.read_file(path)


# ---------------------------------------------------------------- the opcode reader's values
@pytest.mark.parametrize("pkl, reason", [
    # MEMO growth: 100,001 MEMOIZEs (protocol 4, one byte each) of None
    (b"\x80\x04N" + b"\x94" * 100_001 + b"0}.", "memoizes over 100,000 values"),
    # a list appended to itself through the memo: its parts double each time (2^20 > 1,000,000)
    (b"\x80\x02}" + _u("k") + b"]q\x00" + b"h\x00a" * 25 + b"s.", "builds a value of over 1,000,000 parts"),
    # a tuple 33 deep (an empty tuple in 32 TUPLE1s) as a value (the bound is 32: a torch data.pkl nests 4)
    (b"\x80\x02}" + _u("k") + b")" + b"\x85" * 32 + b"s.", "nests values over 32 deep"),
    # a key that is not a plain value: a tuple would be hashed part by part
    (b"\x80\x02}))s.", "a mapping key that is not a plain value"),
    # a persistent id naming collections.OrderedDict as its storage class (a KeyError escaped)
    (b"\x80\x02}(" + _u("input_ids") + b"ctorch._utils\n_rebuild_tensor_v2\n((" + _u("storage")
     + b"ccollections\nOrderedDict\n" + _u("0") + _u("cpu") + b"K\x07tQK\x00(K\x07t)\x89tRu.",
     "a persistent id that is not a torch storage"),
    # TUPLE2 with one value on the stack, SETITEM on a tuple
    (b"\x80\x02N\x86.", r"malformed \(at TUPLE2\)"),
    (b"\x80\x02)NNs.", r"malformed \(at SETITEM\)"),
    (b"\x80\x02}", "before seeing STOP"),
])
def test_values_the_reader_builds_are_bounded(tmp_path, pkl, reason):
    with pytest.raises(rf.FormatError, match=reason):
        rf.read_file(_write(tmp_path, "a.ckpt", _ckpt(pkl)))


def test_a_value_at_the_bounds_is_read(tmp_path):
    # 32 deep (the mapping around 30 TUPLE1s over an empty tuple: 1 + 30 + 1), a 900 KB string: read,
    # no tensor in them
    deep = b"\x80\x02}" + _u("k") + b")" + b"\x85" * 30 + b"s" + _u("s") + _u("x" * 900_000) + b"s."
    t0 = time.monotonic()
    info = rf.read_file(_write(tmp_path, "a.ckpt", _ckpt(deep)))
    assert (info.tensors, info.tokens) == ((), None) and time.monotonic() - t0 < 5


# ---------------------------------------------------------------- malformed zips
def _patch(data: bytes, at: int, new: bytes) -> bytes:
    return data[:at] + new + data[at + len(new):]


def _zip64_directory_at(data: bytes, offset: int) -> bytes:
    """The archive with a ZIP64 end record (APPNOTE 4.3.14, 4.3.15) saying the directory starts at `offset`."""
    end = data.rfind(b"PK\x05\x06")
    _, _, _, n_disk, n_total, size_cd, _, _ = struct.unpack("<4s4H2LH", data[end:end + 22])
    z64 = data.find(b"PK\x06\x06")
    body = data[:z64 if z64 >= 0 else end]
    record = struct.pack("<4sQ2H2L4Q", b"PK\x06\x06", 44, 45, 45, 0, 0, n_disk, n_total, size_cd, offset)
    locator = struct.pack("<4sLQL", b"PK\x06\x07", 0, len(body), 1)
    return body + record + locator + struct.pack("<4s4H2LH", b"PK\x05\x06", 0, 0, 0xFFFF, 0xFFFF, 0xFFFFFFFF,
                                                 0xFFFFFFFF, 0)


def _malformed_zips() -> dict[str, tuple[bytes, str]]:
    base = CKPT0.read_bytes()
    cd = base.find(b"PK\x01\x02")
    return {
        # the central directory's "version needed" (offset 6) at 9.9: zipfile raised NotImplementedError
        "version": (_patch(base, cd + 6, struct.pack("<H", 99)), "NotImplementedError: zip file version 9.9"),
        # the local header's flags (offset 6) say UTF-8 (bit 11) and its name's first byte is 0xff:
        # zip.open raised UnicodeDecodeError
        "utf8": (_patch(_patch(base, 6, struct.pack("<H", 0x808)), 30, b"\xff"), "UnicodeDecodeError"),
        # a directory offset of 2^64 - 1: the entries' offsets go negative past what seek takes (ValueError)
        "offset": (_zip64_directory_at(base, 2 ** 64 - 1), "ValueError: cannot fit 'int'"),
    }


@pytest.mark.parametrize("case", ["version", "utf8", "offset"])
def test_a_malformed_zip_is_its_reason_not_a_traceback(tmp_path, case):
    data, reason = _malformed_zips()[case]
    with pytest.raises(rf.FormatError, match=reason):
        rf.read_file(_write(tmp_path, "data_0.ckpt", data))


def test_a_zip_directory_is_bounded_before_zipfile_reads_it(tmp_path):
    # a ZIP64 end record claiming a 2^63-byte directory: refused from the end record, nothing read past it
    data = CKPT0.read_bytes()
    end = data.rfind(b"PK\x05\x06")
    z64 = data.find(b"PK\x06\x06")
    body = data[:z64 if z64 >= 0 else end]
    record = struct.pack("<4sQ2H2L4Q", b"PK\x06\x06", 44, 45, 45, 0, 0, 9, 9, 2 ** 63, 0)
    locator = struct.pack("<4sLQL", b"PK\x06\x07", 0, len(body), 1)
    forged = body + record + locator + struct.pack("<4s4H2LH", b"PK\x05\x06", 0, 0, 9, 9, 0xFFFFFFFF, 0xFFFFFFFF, 0)
    with pytest.raises(rf.FormatError, match=f"its zip directory claims 9,223,372,036,854,775,808 bytes, over "
                                             f"{len(forged):,}"):
        rf.read_file(_write(tmp_path, "data_0.ckpt", forged))


def _run_with(tmp_path: Path, bad: bytes, name: str = "data_1.ckpt") -> Path:
    """The fixtures' three SpecForge rows, `name` replaced by `bad`, aged past the scan's minute."""
    run = tmp_path / "run"
    shutil.copytree(RUNS / "specforge", run)
    (run / "rows_0-2000" / name).write_bytes(bad)
    old = time.time() - 3600
    for p in run.rglob("*.ckpt"):
        os.utime(p, (old, old))
    return run


def test_calibrate_and_status_count_a_malformed_zip_with_its_reason(tmp_path):
    from planner.export.manifest import load_manifest
    from planner.runs import status as runstatus
    m = load_manifest(str(RUNS / "manifest.yaml"))
    run = _run_with(tmp_path, _malformed_zips()["version"][0])
    c = rc.calibrate(m, str(run), layout="specforge-dflash", gpus=1, elapsed_hours=1.0)
    why = "cannot be read: a malformed zip archive (NotImplementedError: zip file version 9.9)"
    assert c.files_read == 2 and ("rows_0-2000/data_1.ckpt", why) in [tuple(x) for x in c.files_skipped.examples]
    st = runstatus.status(m, str(run), "specforge", 1, verify=True)
    assert st.suspect_examples == [("rows_0-2000/data_1.ckpt", why.removeprefix("cannot be read: "))]


# ---------------------------------------------------------------- time: per file and in all
def test_a_read_stops_at_its_own_bound_and_at_the_callers(tmp_path, monkeypatch):
    # a clock 4 s a look: start 0, the file's bound 10 s; the reader's looks at 4, 8, then 12 >= 10:
    # the file took too long (TooSlow: not measured, not judged). With the caller's deadline at 6
    # (sooner): OutOfTime (the caller stops reading)
    pkl = b"\x80\x02}" + b"N0" * 20_000 + b"."          # 40,001 opcodes: looks every 4,096
    path = _write(tmp_path, "a.ckpt", _ckpt(pkl.replace(b"0", b"N\x94")))
    ticks = iter(range(0, 10_000, 4))
    monkeypatch.setattr(rf, "_clock", lambda: float(next(ticks)))
    with pytest.raises(rf.FormatError, match="its metadata took over 10 s to read") as exc:
        rf.read_file(path)
    assert isinstance(exc.value, rf.TooSlow) and not isinstance(exc.value, rf.OutOfTime)
    ticks = iter(range(0, 10_000, 4))
    with pytest.raises(rf.OutOfTime):
        rf.read_file(path, deadline=6.0)


def test_status_counts_a_file_too_slow_to_read_as_not_verified_not_suspect(tmp_path, monkeypatch, capsys):
    # run_formats' clock 4 s a look; data_1's data.pkl is 40,001 opcodes (a look every 4,096): its own
    # 10 s bound passes on its third look, so it is neither read nor called broken (a stalled
    # filesystem is as slow); data_0 and data_2 read (a look or two each, under 10 s)
    from planner.export.manifest import load_manifest
    from planner.runs import status as runstatus
    run = _run_with(tmp_path, _ckpt(b"\x80\x02}" + b"N\x94" * 20_000 + b"."))
    ticks = iter(range(0, 100_000, 4))
    monkeypatch.setattr(rf, "_clock", lambda: float(next(ticks)))
    st = runstatus.status(load_manifest(str(RUNS / "manifest.yaml")), str(run), "specforge", 1, verify=True)
    assert st.suspect == 0 and st.verify == {"verified": 2, "not_verified": 1, "complete": False, "seconds": 120.0,
                                              "too_slow": 1}
    from planner.cli.main import main as cli_main
    ticks = iter(range(0, 100_000, 4))
    capsys.readouterr()
    assert cli_main(["status", str(run), "--manifest", str(RUNS / "manifest.yaml"), "--format", "specforge",
                     "--verify"]) == 0
    text = capsys.readouterr().out
    assert "  --verify: 1 files took over 10 s each to read: NOT verified (checked by name and size only)" in text
    assert "before its" not in text and "suspect" not in text


def test_calibrate_reads_for_its_bound_in_all_then_measures_by_size(tmp_path, monkeypatch):
    # calibrate's clock 50 s a look, bound 120 s: the deadline is 0 + 120; the looks before the
    # three reads are at 50 and 100 (read), 150 (past: data_2 not read, measured by its size)
    from planner.export.manifest import load_manifest
    run = _run_with(tmp_path, (RUNS / "specforge" / "rows_0-2000" / "data_1.ckpt").read_bytes())
    ticks = iter(range(0, 10_000, 50))
    monkeypatch.setattr(rc, "_clock", lambda: float(next(ticks)))
    c = rc.calibrate(load_manifest(str(RUNS / "manifest.yaml")), str(run), layout="specforge-dflash", gpus=1,
                     elapsed_hours=1.0)
    assert c.files_read == 2 and c.rows_measured == 3
    # tokens 7 + 12 read of the first two (by path); data_2's 20 are not: the plan scales them
    assert any("1 files not read: the reading stopped at its 120 s bound" in n for n in c.notes), c.notes


# ---------------------------------------------------------------- a file swapped between the scan and the read
@pytest.mark.parametrize("swap", ["symlink", "folder", "renamed"])
def test_a_file_swapped_after_the_scan_is_not_read(tmp_path, monkeypatch, swap):
    # outside the run: a copy of data_0 (the same size, so only the type or the inode tells). Swapped
    # in after the scan: data_0 as a symlink to it, the rows folder as a symlink to the folder holding
    # it, or it renamed over data_0 (a regular file, another inode)
    from planner.export.manifest import load_manifest
    run = _run_with(tmp_path, (RUNS / "specforge" / "rows_0-2000" / "data_1.ckpt").read_bytes())
    target = run / "rows_0-2000" / "data_0.ckpt"
    outside = tmp_path / "outside" / "rows_0-2000"
    shutil.copytree(run / "rows_0-2000", outside)
    real_scan = rundir.scan

    def scan_then_swap(*a, **k):
        s = real_scan(*a, **k)
        if swap == "symlink":
            target.unlink()
            os.symlink(outside / "data_0.ckpt", target)
        elif swap == "folder":
            shutil.rmtree(run / "rows_0-2000")
            os.symlink(outside, run / "rows_0-2000")
        else:
            os.replace(outside / "data_0.ckpt", target)
        return s

    monkeypatch.setattr(rc.rundir, "scan", scan_then_swap)
    c = rc.calibrate(load_manifest(str(RUNS / "manifest.yaml")), str(run), layout="specforge-dflash", gpus=1,
                     elapsed_hours=1.0)
    reasons = dict(tuple(x) for x in c.files_skipped.examples)
    want = "it is a symbolic link (not followed)" if swap == "symlink" else "replaced since the scan"
    assert want in reasons.get("rows_0-2000/data_0.ckpt", ""), reasons
    if swap == "folder":            # every file under it is another now: none read
        assert c.files_read == 0 and all("replaced since the scan" in r for r in reasons.values())
    else:                           # read: data_1 and data_2 only (12 + 20 tokens), data_0 not measured
        assert (c.files_read, c.rows_measured, c.tokens_measured) == (2, 2, 12 + 20)

"""Seeded byte mutations of every capture format planner/runs/formats.py reads (issue 36, item 3): the
files of tests/fixtures/runs and the ones the unit tests build, mutated byte by byte, in their
safetensors header's numbers, and inside a torch archive's data.pkl (the archive rebuilt around it,
so its CRC holds and the opcode reader, not zipfile, meets the damage). Bounded: a fixed seed and
count (about 1,500 reads, a few seconds), a 60 s alarm over all. For every file: read_file returns or
raises FormatError (one line), nothing else; no read of the file asks for more than the bounds allow;
no read takes over 2 s.
"""
from __future__ import annotations

import io
import random
import signal
import time
import zipfile
from pathlib import Path

import pytest

from planner.runs import formats as rf
from tests.unit.planner.runs.test_formats_bounds import _ckpt, _k, _safetensors, _shape_ops, _tensor_pkl

RUNS = Path(__file__).resolve().parents[3] / "fixtures" / "runs"
SEED = 36
PER_FILE = 40            # byte mutations of each seed file
PER_PICKLE = 80          # data.pkl mutations of each archive
INTS = (0, 1, 0x7F, 0x80, 0xFF, 0xFFFF, 0xFFFFFFFF, 2 ** 31, 2 ** 63, 2 ** 64 - 1)


def _seeds() -> dict[str, bytes]:
    files = {p.relative_to(RUNS).as_posix(): p.read_bytes() for p in sorted(RUNS.rglob("*"))
             if p.suffix in (".safetensors", ".ckpt", ".pt", ".idx")}
    files["built/tensor.ckpt"] = _ckpt(_tensor_pkl(_shape_ops([_k(7)])), {"0": b"\0" * 56})
    files["built/one.safetensors"] = _safetensors([7], (0, 56))
    b = io.BytesIO()
    with zipfile.ZipFile(b, "w") as z:
        z.writestr("/data.pkl", b"}.")
    files["built/minimal.ckpt"] = b.getvalue()
    return files


def _mutate(rng: random.Random, data: bytes) -> bytes:
    if not data:
        return bytes([rng.randrange(256)])
    at = rng.randrange(len(data))
    kind = rng.randrange(6)
    if kind == 0:                                        # flip one byte
        return data[:at] + bytes([data[at] ^ rng.randrange(1, 256)]) + data[at + 1:]
    if kind == 1:                                        # an integer of 2, 4 or 8 bytes, little-endian
        width = rng.choice((2, 4, 8))
        value = rng.choice(INTS) % (1 << 8 * width)
        return data[:at] + value.to_bytes(width, "little") + data[at + width:]
    if kind == 2:                                        # cut
        return data[:at]
    if kind == 3:                                        # a slice repeated
        end = min(len(data), at + rng.randrange(1, 64))
        return data[:at] + data[at:end] * rng.randrange(2, 50) + data[end:]
    if kind == 4:                                        # a slice dropped
        return data[:at] + data[at + rng.randrange(1, 64):]
    return data[:at] + bytes(rng.randrange(256) for _ in range(rng.randrange(1, 16))) + data[at:]


def _mutate_header_numbers(rng: random.Random, data: bytes) -> bytes:
    """A safetensors file with a number of its JSON header lengthened, negated or zeroed, the
    8-byte length kept right (so the header parses as far as its numbers)."""
    n = int.from_bytes(data[:8], "little")
    header, rest = data[8:8 + n], data[8 + n:]
    digits = [i for i, c in enumerate(header) if 48 <= c <= 57]
    if not digits:
        return data
    at = rng.choice(digits)
    new = rng.choice((b"9" * rng.randrange(1, 40), b"-1", b"0", b"1e400", b"[1]", b"18446744073709551616"))
    header = header[:at] + new + header[at + 1:]
    return len(header).to_bytes(8, "little") + header + rest


def _with_pickle(archive: bytes, pkl: bytes) -> bytes:
    """The archive with its data.pkl replaced (every other entry as it was)."""
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(archive)) as src, zipfile.ZipFile(out, "w") as dst:
        for info in src.infolist():
            dst.writestr(info.filename, pkl if info.filename.endswith("data.pkl") else src.read(info))
    return out.getvalue()


def _cases():
    rng = random.Random(SEED)
    for name, data in _seeds().items():
        suffix = Path(name).suffix
        for _ in range(PER_FILE):
            yield name, suffix, _mutate(rng, data)
        if suffix == ".safetensors":
            for _ in range(PER_FILE // 2):
                yield name + " (header numbers)", suffix, _mutate_header_numbers(rng, data)
        if suffix in (".ckpt", ".pt") and name != "hostile/truncated.ckpt":
            with zipfile.ZipFile(io.BytesIO(data)) as z:
                pkl = z.read(next(n for n in z.namelist() if n.endswith("data.pkl")))
            for _ in range(PER_PICKLE):
                mutated = pkl
                for _ in range(rng.randrange(1, 4)):
                    mutated = _mutate(rng, mutated)
                yield name + " (data.pkl)", suffix, _with_pickle(data, mutated)


class _Metered:
    """The file object read_file reads through, counting what is asked of it."""

    def __init__(self, fh):
        self._fh, self.largest, self.total = fh, 0, 0

    def read(self, n=-1):
        data = self._fh.read(n)
        if n is not None and n >= 0:
            self.largest = max(self.largest, n)
        self.total += len(data)
        return data

    def __getattr__(self, name):
        return getattr(self._fh, name)


def _alarm(signum, frame):
    raise TimeoutError("the fuzz test ran past its 60 s bound")


def test_mutated_capture_files_are_read_or_refused_in_one_line(tmp_path, monkeypatch):
    metered: list[_Metered] = []
    real_open = rf.open_binary

    def open_metered(*a, **k):
        cm = real_open(*a, **k)

        class _Ctx:
            def __enter__(self):
                metered.append(_Metered(cm.__enter__()))
                return metered[-1]

            def __exit__(self, *exc):
                return cm.__exit__(*exc)
        return _Ctx()

    monkeypatch.setattr(rf, "open_binary", open_metered)
    old = signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(60)
    reads, refused, slowest = 0, 0, 0.0
    try:
        for i, (name, suffix, data) in enumerate(_cases()):
            path = tmp_path / f"f{i}{suffix}"
            path.write_bytes(data)
            t0 = time.monotonic()
            try:
                info = rf.read_file(path)
                assert info.size == len(data) and info.data_bytes >= 0 and (info.tokens or 0) >= 0, name
            except rf.FormatError as exc:
                refused += 1
                assert "\n" not in str(exc) and str(exc), (name, str(exc))
            except Exception as exc:          # noqa: BLE001 - the test's point: nothing else escapes
                pytest.fail(f"{name} (mutation {i}): {type(exc).__name__}: {exc}")
            took = time.monotonic() - t0
            slowest = max(slowest, took)
            assert took < 2.0, (name, i, took)
            m = metered[-1]
            # the bounds: no single read asks for more than the file holds or data.pkl's bound, and
            # in all a file is read at most 3 times over, plus the end-record search (64 KiB + 22, twice)
            assert m.largest <= max(len(data), rf.MAX_PICKLE_BYTES + 1), (name, i, m.largest)
            assert m.total <= 3 * len(data) + 2 * (65_536 + 22), (name, i, m.total)
            reads += 1
            path.unlink()
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)
    assert reads > 1000 and 0 < refused < reads, (reads, refused)

"""How fast formats._array_elements finds the elements of a JSON array, on bracket-heavy input and
on ordinary records (and _iter_jsonl on the same records as JSONL, for comparison).

    .venv/bin/python bench/json_scan.py                 # 40 MB nested, 20 MB strings, 200 MB ShareGPT...
    .venv/bin/python bench/json_scan.py --scale 0.1 --json

The inputs are written to a scratch folder under /tmp (removed at the end):
  nested     elements of 10,000 '[' then 10,000 ']' (json.loads refuses each: nested too deeply)
  strings    a top-level array of empty strings: ["","",...] (one element a string)
  in_strings elements that are arrays of 100,000 empty strings each: [["","",...],...]
  pairs      elements that are arrays of 100,000 short bracket runs each: [[[[]],[[]],...],...]
  sharegpt   ordinary ShareGPT records, as a JSON array and as JSONL
Each is timed once (the scan only; nothing is parsed or counted).
"""
from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from planner.catalog import formats  # noqa: E402


def _write(path: Path, head: bytes, element: bytes, total: int, tail: bytes, sep: bytes = b",") -> None:
    """head, then `element` repeated (joined by sep) to about `total` bytes, then tail."""
    per = max(1, min(2**22, total) // (len(element) + 1))
    block = sep.join([element] * per)
    with open(path, "wb") as fh:
        fh.write(head)
        written = 0
        while written < total:
            if written:
                fh.write(sep)
            fh.write(block)
            written += len(block) + len(sep)
        fh.write(tail)


def _records() -> bytes:
    recs = []
    for i in range(200):
        turns = [{"from": ("human", "gpt")[j % 2], "value": f"turn {j} of record {i}: " + "word " * (40 + 7 * (i % 30))}
                 for j in range(2 + 2 * (i % 3))]
        recs.append(json.dumps({"id": i, "conversations": turns}))
    return ",".join(recs).encode()


def _scan(path: Path) -> tuple[float, int]:
    def chunks():
        with open(path, "rb") as fh:
            while chunk := fh.read(formats.ARRAY_CHUNK_BYTES):
                yield chunk
    t0 = time.perf_counter()
    n = sum(1 for _ in formats._array_elements(chunks(), path.name))
    return time.perf_counter() - t0, n


def _jsonl(path: Path) -> tuple[float, int]:
    t0 = time.perf_counter()
    n = sum(1 for _, raw in formats._iter_jsonl(path, None, None, "PATH") if raw is not None)
    return time.perf_counter() - t0, n


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scale", type=float, default=1.0, help="multiply every input's size (default 1)")
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    mb = int(1e6 * a.scale)
    tmp = Path(tempfile.mkdtemp(prefix="planner-json-scan-"))
    out = {}
    try:
        cases = [
            ("nested", 40 * mb, b"[", b"[" * 10_000 + b"]" * 10_000, b"]"),
            ("strings", 20 * mb, b"[", b'""', b"]"),
            ("in_strings", 20 * mb, b"[", b"[" + b",".join([b'""'] * 100_000) + b"]", b"]"),
            ("pairs", 20 * mb, b"[", b"[" + b",".join([b"[[]]"] * 100_000) + b"]", b"]"),
            ("sharegpt", 200 * mb, b"[", _records(), b"]"),
        ]
        for name, size, head, element, tail in cases:
            f = tmp / f"{name}.json"
            _write(f, head, element, size, tail)
            secs, n = _scan(f)
            out[name] = {"mb": round(f.stat().st_size / 1e6, 1), "elements": n, "s": round(secs, 2),
                         "mb_per_s": round(f.stat().st_size / 1e6 / secs, 1)}
            f.unlink()
        f = tmp / "sharegpt.jsonl"
        _write(f, b"", _records().replace(b"},{\"id\"", b"}\n{\"id\""), 200 * mb, b"\n", sep=b"\n")
        secs, n = _jsonl(f)
        out["sharegpt_jsonl"] = {"mb": round(f.stat().st_size / 1e6, 1), "elements": n, "s": round(secs, 2),
                                 "mb_per_s": round(f.stat().st_size / 1e6 / secs, 1)}
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if a.json:
        print(json.dumps(out))
    else:
        for name, r in out.items():
            print(f"{name:15} {r['mb']:8,.1f} MB {r['elements']:>10,} elements {r['s']:7.2f} s "
                  f"{r['mb_per_s']:8,.1f} MB/s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

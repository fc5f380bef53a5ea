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

    .venv/bin/python bench/json_scan.py --libraries [--scale 0.5]

compares the hand-written splitter with the two libraries that could replace it, each in its own
process (peak RSS growth from VmHWM, as tests/unit/planner/catalog/test_formats_json_array.py measures it),
on the hostile inputs the tests use:
  bound      120 MB of 4 KB records, then one element of 17 MiB (over MAX_LINE_BYTES, 16 MiB)
  huge       one element of 200 MB (a single record the size of the file)
  deep       two elements 100,000 brackets deep around "x" (past json.loads' nesting)
  bad        good records around one broken element ({"a": tru}) and one NaN
  sharegpt   200 MB of ordinary records (speed)
  hand    formats._array_elements: the element's bytes, None over the bound
  ijson   ijson.items(fh, "item") (yajl2_c backend), if ijson is importable
  duckdb  read_json_objects(path, format='array'): its default maximum_object_size, and raised to 1 GiB
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


LIBRARY_RUN = r"""
import json, sys, time
def kib(key):
    return int([l.split()[1] for l in open('/proc/self/status') if l.startswith(key)][0])
how, path = sys.argv[1], sys.argv[2]
from planner.catalog import formats
import duckdb
try:
    import ijson
except ImportError:
    ijson = None
before = kib('VmRSS:')
t0 = time.perf_counter()
n = over = 0
try:
    if how == 'hand':
        def chunks():
            with open(path, 'rb') as fh:
                while chunk := fh.read(formats.ARRAY_CHUNK_BYTES):
                    yield chunk
        for _, payload in formats._array_elements(chunks(), path):
            n, over = n + 1, over + (payload is None)
    elif how == 'ijson':
        if ijson is None:
            raise ImportError('ijson is not installed')
        with open(path, 'rb') as fh:
            for _ in ijson.items(fh, 'item'):
                n += 1
    else:
        size = '' if how == 'duckdb' else ', maximum_object_size=1073741824'
        con = duckdb.connect()
        n, over = con.execute(
            f"SELECT count(*), count(*) FILTER (WHERE octet_length(json::BLOB) > {formats.MAX_LINE_BYTES}) "
            f"FROM read_json_objects(?, format='array'{size})", [path]).fetchone()
    outcome = 'ok'
except Exception as e:
    outcome = (type(e).__name__ + ': ' + str(e).splitlines()[0])[:90]
print(json.dumps({"elements": n, "over": over, "s": round(time.perf_counter() - t0, 2),
                  "growth_mb": round((kib('VmHWM:') - before) / 1024), "outcome": outcome}))
"""


def _hostile(tmp: Path, mb: int) -> dict[str, Path]:
    """The hostile inputs of the --libraries table (see the module's docstring)."""
    rec = json.dumps({"conversations": [{"from": "human", "value": "q " * 700},
                                        {"from": "gpt", "value": "a " * 1300}]})
    files = {}
    f = files["bound"] = tmp / "bound.json"
    over = json.dumps({"conversations": [{"from": "gpt", "value": "z" * (17 * 2**20)}]})
    _write(f, b"[", rec.encode(), 120 * mb, b"," + over.encode() + b"]")
    f = files["huge"] = tmp / "huge.json"
    f.write_bytes(b'[{"conversations": [{"from": "gpt", "value": "' + b"z" * (200 * mb) + b'"}]}]')
    deep = b"[" * 100_000 + b"]" * 100_000
    f = files["deep"] = tmp / "deep.json"
    f.write_bytes(b"[" + deep + b', "x", ' + deep + b"]")
    f = files["bad"] = tmp / "bad.json"
    f.write_text("[" + ",".join([rec, '{"a": tru}', rec, '{"a": NaN}', rec]) + "]")
    f = files["sharegpt"] = tmp / "sharegpt.json"
    _write(f, b"[", _records(), 200 * mb, b"]")
    return files


def _cap_memory() -> None:
    """Each library's run gets 4 GiB of address space: one that grows without bound (ijson on deep
    nesting grew until the kernel killed it) fails alone, not the machine."""
    import resource
    resource.setrlimit(resource.RLIMIT_AS, (4 * 2**30, 4 * 2**30))


def libraries(mb: int) -> dict:
    """{input: {method: the run's figures}} for the --libraries table, each run in its own process."""
    import os
    import subprocess
    tmp = Path(tempfile.mkdtemp(prefix="planner-json-libs-"))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
    out: dict = {}
    try:
        for name, f in _hostile(tmp, mb).items():
            out[name] = {"mb": round(f.stat().st_size / 1e6, 1)}
            for how in ("hand", "ijson", "duckdb", "duckdb_1gib"):
                r = subprocess.run([sys.executable, "-c", LIBRARY_RUN, how, str(f)], capture_output=True, text=True,
                                   env=env, timeout=900, preexec_fn=_cap_memory)
                last = (r.stderr.strip().splitlines() or [""])[-1][:80]
                out[name][how] = (json.loads(r.stdout) if r.returncode == 0 else
                                  {"outcome": f"exit {r.returncode} {last}".strip()})
                print(name, how, out[name][how], file=sys.stderr, flush=True)
            f.unlink()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scale", type=float, default=1.0, help="multiply every input's size (default 1)")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--libraries", action="store_true",
                    help="the hand splitter against ijson and DuckDB, on hostile input")
    a = ap.parse_args()
    mb = int(1e6 * a.scale)
    if a.libraries:
        res = libraries(mb)
        if a.json:
            print(json.dumps(res))
            return 0
        print(f"{'input':9} {'MB':>6} {'method':12} {'elements':>9} {'over':>5} {'s':>7} {'RSS+ MB':>8}  outcome")
        for name, row in res.items():
            for how, r in row.items():
                if how != "mb":
                    print(f"{name:9} {row['mb']:6,.1f} {how:12} {r.get('elements', '-'):>9} {r.get('over', '-'):>5} "
                          f"{r.get('s', '-'):>7} {r.get('growth_mb', '-'):>8}  {r['outcome']}")
        return 0
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

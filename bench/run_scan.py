"""The run-directory scan of `planner calibrate` / `watch` on a large folder: how long it takes, and
that its bounds hold.

    .venv/bin/python bench/run_scan.py                  # 1,000,000 empty hs_{i}.safetensors files
    .venv/bin/python bench/run_scan.py --entries 200000 --json

It makes the files in a scratch folder under /tmp (removed at the end), then times
planner.runs.rundir.scan with the default bounds, and once with a bound of a tenth of the entries. The
files are empty and old: every one matches a row and none is read (the scan only lists and stats).
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from planner.presets.layouts import layout_presets  # noqa: E402
from planner.runs import rundir  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--entries", type=int, default=1_000_000)
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    n = a.entries
    tmp = Path(tempfile.mkdtemp(prefix="planner-scan-bench-"))
    try:
        t0 = time.monotonic()
        for i in range(n):
            os.close(os.open(tmp / f"hs_{i}.safetensors", os.O_CREAT | os.O_WRONLY, 0o644))
        made = time.monotonic() - t0
        plan = rundir.RowPlan(ids=("a",), starts=(0,), rows=(n,), local=(False,), files_per_row=(1.0,),
                              bytes_per_file=(1.0,), tokens_per_file=(1.0,), total=n, planned=True)
        names = rundir.SpeculatorsNaming(layout_presets()["speculators"], plan)
        ticks = []
        t0 = time.monotonic()
        full = rundir.scan(tmp, names, now=time.time() + 3600, progress=ticks.append)
        full_s = time.monotonic() - t0
        t0 = time.monotonic()
        bounded = rundir.scan(tmp, names, now=time.time() + 3600, max_entries=n // 10)
        bounded_s = time.monotonic() - t0
        out = {"entries": n, "make_seconds": round(made, 1), "scan_seconds": round(full_s, 2),
               "matched": len(full.found), "progress_calls": len(ticks), "complete": full.complete,
               "bounded_entries": bounded.entries, "bounded_seconds": round(bounded_s, 2),
               "bounded_complete": bounded.complete, "cpus": os.cpu_count()}
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(json.dumps(out, indent=2) if a.json else
          "\n".join(f"{k:>18}: {v}" for k, v in out.items()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""What the page imports before its first metric, and what the rest of the page imports later:
`python -X importtime` in fresh interpreters, the largest cumulative entries of each. Printed, never
asserted.

    .venv/bin/python bench/import_time.py [--top 15]

"first metric": streamlit and drafter_dashboard.page with what main() loads before metrics.headline
(session, state, metrics, mix_editor for its edits). "rest": the modules the page loads after the
metrics (sidebar, compare, budget, io_panel, calibration_panel, report, charts, the verdict, pandas via
the mix editor's table) when the first is already loaded.
"""
from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FIRST = "import streamlit, drafter_dashboard.page, drafter_dashboard.mix_editor"
REST = ("import pandas, planner.decisions.verdict, planner.export.report, drafter_dashboard.sidebar, "
        "drafter_dashboard.compare, "
        "drafter_dashboard.budget, drafter_dashboard.io_panel, drafter_dashboard.calibration_panel, "
        "drafter_dashboard.report")
CHARTS = "import drafter_dashboard.charts, drafter_dashboard.figures"


def importtime(code: str, before: str = "") -> list[tuple[int, int, str]]:
    """(self us, cumulative us, module) of each module `code` imports after `before` ran."""
    prog = f"{before}\nimport sys; sys.stderr.write('--MARK--\\n')\n{code}" if before else code
    err = subprocess.run([sys.executable, "-X", "importtime", "-c", prog], cwd=ROOT, capture_output=True,
                         text=True, check=True).stderr
    if before:
        err = err.split("--MARK--\n", 1)[1]
    rows = []
    for line in err.splitlines():
        if line.startswith("import time:") and "self [us]" not in line:
            own, cum, name = line[len("import time:"):].split("|", 2)
            rows.append((int(own), int(cum), name.rstrip()))
    return rows


def report(title: str, rows: list[tuple[int, int, str]], top: int) -> None:
    total = sum(own for own, _, _ in rows)
    print(f"\n{title}: {total / 1000:,.0f} ms of imports ({len(rows)} modules); largest cumulative:")
    for _own, cum, name in sorted(rows, key=lambda r: -r[1])[:top]:
        print(f"  {cum / 1000:8.1f} ms  {name.strip()}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--top", type=int, default=15)
    a = ap.parse_args()
    report("before the first metric", importtime(FIRST), a.top)
    report("after the metrics (the rest of the first screen)", importtime(REST, FIRST), a.top)
    report("when the Charts or Against-the-article tab opens (plotly's subplots)", importtime(CHARTS,
                                                                                              f"{FIRST}\n{REST}"),
           a.top)


if __name__ == "__main__":
    main()

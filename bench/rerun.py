"""AppTest rerun times of the page: after a scenario change (a new GPU count each time: every cached
figure of the scenario is built again, the verdict's break-evens included) and after a display-only
change (TB/TiB: the same scenario, every cache hit). Printed, never asserted.

    .venv/bin/python bench/rerun.py [ROOT]      # ROOT: a checkout to time (default: this one), e.g. an
                                                # older commit unpacked with `git archive REV | tar -x -C DIR`
"""
from __future__ import annotations

import os
import statistics
import sys
import tempfile
import time
from pathlib import Path


def main(argv: list[str]) -> int:
    root = Path(argv[0] if argv else Path(__file__).resolve().parent.parent).resolve()
    sys.path.insert(0, str(root))
    os.chdir(root)
    os.environ["PLANNER_HOME"] = tempfile.mkdtemp(prefix="planner-rerun-") + "/home"
    from streamlit.testing.v1 import AppTest
    at = AppTest.from_file(str(root / "app.py"), default_timeout=120)
    at.run()
    new, same = [], []
    for i in range(12):
        at.number_input(key="w_ex_gpus").set_value(1 + i)
        t = time.perf_counter()
        at.run()
        new.append((time.perf_counter() - t) * 1000)
    for i in range(12):
        at.radio(key="w_units").set_value("TiB" if i % 2 == 0 else "TB")
        t = time.perf_counter()
        at.run()
        same.append((time.perf_counter() - t) * 1000)
    print(f"{root}: rerun after a scenario change {statistics.median(new):.1f} ms (median of 12), "
          f"after a display-only change {statistics.median(same):.1f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

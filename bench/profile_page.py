"""Where a rerun of the page spends its time: cProfile inside the script thread over N AppTest reruns
after a scenario change (a new extraction GPU count each time), the page's own functions by
cumulative time, and the whole run's wall clock. Printed, never asserted.

    .venv/bin/python bench/profile_page.py [--runs 10] [--top 30] [--key w_ex_gpus]
    .venv/bin/python bench/profile_page.py --sections [--runs 20]   # each part's wall time, unprofiled
    PAGE_ROOT=DIR .venv/bin/python bench/profile_page.py ...       # another checkout (git archive REV | tar -x -C DIR)
"""
from __future__ import annotations

import argparse
import cProfile
import io
import os
import pstats
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(os.environ.get("PAGE_ROOT") or Path(__file__).resolve().parent.parent)   # PAGE_ROOT: another checkout
sys.path.insert(0, str(ROOT))
os.environ.setdefault("PLANNER_HOME", tempfile.mkdtemp(prefix="planner-profile-page-") + "/home")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--top", type=int, default=30)
    ap.add_argument("--key", default="w_ex_gpus", help="the number input changed before each run")
    ap.add_argument("--sections", action="store_true", help="instead of cProfile: the wall time of each of "
                    "the page's parts (unprofiled), and when the headline metrics start, per run")
    ap.add_argument("--callers", default="", help="also print the callers of functions matching this regex")
    a = ap.parse_args()
    from streamlit.runtime.scriptrunner.script_runner import ScriptRunner
    from streamlit.testing.v1 import AppTest

    prof = cProfile.Profile()
    real = ScriptRunner._run_script
    on = {"profile": False}

    def profiled(self, *args, **kw):       # the script runs in its own thread: profile it there
        if not on["profile"]:
            return real(self, *args, **kw)
        prof.enable()
        try:
            return real(self, *args, **kw)
        finally:
            prof.disable()

    ScriptRunner._run_script = profiled
    if a.sections:
        return sections(a, real, ScriptRunner, AppTest)
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.run()
    at.run()
    on["profile"] = True
    walls = []
    for i in range(a.runs):
        at.number_input(key=a.key).set_value(2 + i % 14)
        t = time.perf_counter()
        at.run()
        walls.append((time.perf_counter() - t) * 1000)
    walls.sort()
    print(f"{a.runs} reruns after a change of {a.key}: wall median {walls[len(walls) // 2]:.1f} ms "
          f"(min {walls[0]:.1f}, max {walls[-1]:.1f}); profiled, so slower than bench/run.py's figure")
    out = io.StringIO()
    stats = pstats.Stats(prof, stream=out)
    stats.sort_stats("cumulative").print_stats(r"(app\.py|drafter_dashboard|planner/)", a.top)
    print(out.getvalue())
    out = io.StringIO()
    pstats.Stats(prof, stream=out).sort_stats("tottime").print_stats(a.top)
    print(out.getvalue())
    if a.callers:
        out = io.StringIO()
        pstats.Stats(prof, stream=out).sort_stats("cumulative").print_callers(a.callers)
        print(out.getvalue())


# the page's parts, timed by wrapping them (module attributes, read by app.py when its script runs)
PARTS = ["drafter_dashboard.session:catalog", "drafter_dashboard.state:restore_hidden_widgets",
         "drafter_dashboard.mix_editor:apply_edits", "drafter_dashboard.sidebar:render",
         "drafter_dashboard.state:scenario_from_widgets", "drafter_dashboard.state:remember",
         "planner.decisions.verdict:verdict", "drafter_dashboard.compare:controls",
         "drafter_dashboard.metrics:headline",
         "drafter_dashboard.metrics:nodes_panel", "drafter_dashboard.budget:render",
         "drafter_dashboard.mix_editor:render", "drafter_dashboard.metrics:article_panel",
         "drafter_dashboard.io_panel:import_panel", "drafter_dashboard.io_panel:profile_panel",
         "drafter_dashboard.io_panel:export_panel", "drafter_dashboard.charts:render",
         "drafter_dashboard.compare:view"]


def sections(a, real, ScriptRunner, AppTest) -> None:
    import importlib
    import statistics
    times: dict[str, list[float]] = {}
    clock = {"start": 0.0}

    def wrap(name, fn):
        def timed(*args, **kw):
            t = time.perf_counter()
            if name.endswith("metrics:headline"):
                times.setdefault("(headline starts at)", []).append((t - clock["start"]) * 1000)
            try:
                return fn(*args, **kw)
            finally:
                times.setdefault(name, []).append((time.perf_counter() - t) * 1000)
        return timed

    for part in PARTS:
        mod, attr = part.split(":")
        m = importlib.import_module(mod)
        setattr(m, attr, wrap(part, getattr(m, attr)))

    def whole(self, *args, **kw):
        clock["start"] = t = time.perf_counter()
        cpu = time.thread_time()
        try:
            return real(self, *args, **kw)
        finally:
            times.setdefault("(the whole run)", []).append((time.perf_counter() - t) * 1000)
            times.setdefault("(the whole run, CPU time of the script thread)", []).append(
                (time.thread_time() - cpu) * 1000)

    ScriptRunner._run_script = whole
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.run()
    at.run()
    times.clear()
    for i in range(a.runs):
        at.number_input(key=a.key).set_value(2 + i % 14)
        at.run()
    print(f"{a.runs} reruns after a change of {a.key}, ms per run (median; parts not run count 0):")
    for name, ts in sorted(times.items(), key=lambda kv: -sum(kv[1])):
        print(f"  {name:<50} {sum(ts) / a.runs:8.1f} per run  "
              f"(median of its {len(ts)} calls {statistics.median(ts):.1f})")


if __name__ == "__main__":
    main()

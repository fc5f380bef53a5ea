"""The core's figures alone (issue 23 "a fast core"): plan() and trim, beside their goals.

    .venv/bin/python bench/core.py            # 1000 plans, 10 trims per strategy
    .venv/bin/python bench/core.py --quick    # 200 plans, 3 trims per strategy (what run.py --quick takes)
    .venv/bin/python bench/core.py --quick --cpu   # this process's CPU time instead of wall time
    .venv/bin/python bench/core.py --quick --profile 25   # where plan()'s time goes: cProfile, top 25

plan_ms_median: the default scenario planned again (what a rerun of the same page asks);
plan_varied_ms_median: a scenario that differs on every call; trim_ms_by_strategy: the default mix
trimmed to 20 TB. Medians of wall time (--cpu: of this process's CPU time, which the other load of
a shared machine adds little to); printed, never asserted (shared machines are noisy).
"""
from __future__ import annotations

import argparse
import json
import sys
import time
import types
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import run  # noqa: E402

GOALS = {"plan_ms_median": 0.5, "plan_varied_ms_median": 0.5, "trim_ms_median": 25}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--cpu", action="store_true", help="time by this process's CPU time, not wall time")
    ap.add_argument("--profile", type=int, metavar="N", help="print the N entries of most cumulative time of a "
                    "cProfile of the plan figures (the default, the varied and the 10M plans), then stop")
    a = ap.parse_args()
    if a.profile:
        import cProfile
        import pstats
        prof, plan = cProfile.Profile(), run.plan
        run.plan = lambda *args, **kw: prof.runcall(plan, *args, **kw)     # the plans alone, not their set-up
        run.bench_plan(200 if a.quick else 1000)
        pstats.Stats(prof).sort_stats("cumulative").print_stats(r"planner[/\\]", a.profile)
        return
    if a.cpu:
        run.time = types.SimpleNamespace(perf_counter=time.process_time)
    res = {**run.bench_plan(200 if a.quick else 1000), **run.bench_trim(3 if a.quick else 10)}
    if a.json:
        print(json.dumps(res))
        return
    for k, v in res.items():
        goal = f"   (goal <= {GOALS[k]}: {'ok' if v <= GOALS[k] else 'MISSED'})" if k in GOALS else ""
        print(f"{k:>24}: {v}{goal}")


if __name__ == "__main__":
    main()

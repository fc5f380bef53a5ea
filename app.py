"""drafter data planner: the dashboard. Thin: the page is drafter_dashboard/page.py (imported once per
server process, so a rerun does not parse and compile it again), widgets in drafter_dashboard/, every
number from planner.plan()."""
import os
import time

_RUN_STARTED = time.perf_counter()

from drafter_dashboard import page  # noqa: E402

page.run()

if os.environ.get("PLANNER_TIMING_LOG"):   # the load benchmark reads server-side run times from here
    with open(os.environ["PLANNER_TIMING_LOG"], "a") as fh:
        fh.write(f"{(time.perf_counter() - _RUN_STARTED) * 1000:.1f}\n")

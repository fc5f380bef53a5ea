"""The undo store's memory (drafter_dashboard/history.py, issue 36 item 5): what a scenario with N uploaded
runs takes while a session holds it, and what 500 steps of such scenarios leave in the store.

    .venv/bin/python bench/history_memory.py [--runs 1000] [--steps 500]

Ten sessions of steps/10 steps each; every step is a scenario built as the page builds one (validated
from plain values: its own objects), differing from the others in the extraction GPU count, all with
the same runs. Memory by tracemalloc; the store's own count is history.total_bytes().
"""
from __future__ import annotations

import argparse
import gc
import os
import random
import sys
import tempfile
import tracemalloc
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("PLANNER_HOME", tempfile.mkdtemp(prefix="planner-history-"))

from drafter_dashboard import history  # noqa: E402
from planner import default_scenario  # noqa: E402
from planner.scenario import Scenario  # noqa: E402


def runs(n: int) -> list[dict]:
    rnd = random.Random(0)
    return [{"drafter": "dflash", "target": "qwen3-8b", "family": rnd.choice(["general", "code", "tool"]),
             "training_tokens": rnd.randrange(10**6, 10**10), "epochs": rnd.choice([1, 2, 3]),
             "eval_engine": "vllm", "tau": round(rnd.uniform(1.5, 6.0), 3)} for _ in range(n)]


def scenario(points: list[dict], gpus: int) -> Scenario:
    d = default_scenario().model_dump()
    d["quality"]["points"] = points
    d["extraction_gpus"] = gpus
    return Scenario.model_validate(d)


def traced(make) -> tuple[int, object]:
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        kept = make()
        gc.collect()
        return tracemalloc.get_traced_memory()[0] - before, kept
    finally:
        tracemalloc.stop()


def main(n_runs: int, steps: int) -> None:
    pts = runs(n_runs)
    history.save(history.new_id(), [scenario(pts, 999)], [])     # imports and first-use caches, before
    history._store.clear()
    history._blobs.clear()
    history._total = 0
    one, _ = traced(lambda: [scenario(pts, 1 + i) for i in range(10)])
    print(f"a scenario with {n_runs:,} runs, held by a session: {one / 10 / 2**20:.2f} MiB "
          f"({steps:,} held as they are: {one / 10 * steps / 2**20:,.0f} MiB)")

    def fill():
        per = steps // 10
        for k in range(10):
            history.save(history.new_id(), [scenario(pts, 1 + per * k + i) for i in range(per)], [])
    held, _ = traced(fill)
    print(f"{steps:,} steps in the store: counted {history.total_bytes() / 2**20:.2f} MiB, "
          f"tracemalloc {held / 2**20:.2f} MiB, {len(history._blobs):,} parts kept; bound "
          f"{history.MAX_BYTES / 2**20:.0f} MiB in all, {history.MAX_HISTORY_BYTES / 2**20:.0f} MiB a history")


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=1000)
    ap.add_argument("--steps", type=int, default=500)
    a = ap.parse_args()
    if not 0 <= a.runs <= 1000 or not 10 <= a.steps <= 5000:
        sys.exit("history_memory.py: --runs is 0-1000 (a scenario's most), --steps 10-5000")
    main(a.runs, a.steps)

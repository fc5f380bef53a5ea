"""Load: N concurrent browser sessions editing different scenarios against one server.

    .venv/bin/python bench/load.py [--sessions 10] [--seconds 60] [--json]

Each session sets its own extraction GPU counts (session i uses i+9 and i+31) and waits until the
page shows exactly the figure plan() gives for that count. A figure that belongs to another
session's count, a timeout or a page exception is an error. Prints updates, errors and the
client-side update latency (p50, p95).
"""
from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("PLANNER_HOME", tempfile.mkdtemp(prefix="planner-load-"))

from planner import default_scenario, plan  # noqa: E402
from tests.browser_util import CHROMIUM, CHROMIUM_ARGS, streamlit_server  # noqa: E402


def expected(n: int) -> str:
    return f"{plan(default_scenario().with_changes(extraction_gpus=n)).extraction.wall_hours / 24:,.2f} days"


async def session(browser, url: str, i: int, until: float, counts: list[int], owner: dict, stats: dict):
    try:
        await _session(browser, url, i, until, counts, owner, stats)
    except Exception as exc:  # a session that breaks is an error of the run, not a crash of the benchmark
        stats["errors"].append(f"session {i}: {type(exc).__name__}: {str(exc).splitlines()[0][:200]}")


async def _session(browser, url: str, i: int, until: float, counts: list[int], owner: dict, stats: dict):
    await asyncio.sleep(0.5 * i)   # sessions arrive one after another, not in one instant
    page = await browser.new_page(viewport={"width": 1400, "height": 1000})
    await page.goto(url)
    await page.get_by_text("Offline: store, train ($)").wait_for(timeout=120_000)
    field = page.get_by_label("count", exact=True).first
    await field.wait_for(state="visible", timeout=120_000)
    value = page.locator('[data-testid="stMetric"]', has_text="Extraction (days)").first.locator(
        '[data-testid="stMetricValue"]')
    k = 0
    prev = await value.inner_text()
    while time.monotonic() < until:
        n = counts[k % 2]
        k += 1
        want = expected(n)
        await field.fill(str(n))
        t = time.perf_counter()
        await field.press("Enter")
        while True:
            now = await value.inner_text()
            if now == want:
                stats["latency_ms"].append((time.perf_counter() - t) * 1000)
                stats["updates"] += 1
                prev = now
                break
            if now != prev and now in owner and owner[now] != i:
                stats["errors"].append(f"session {i} showed {now!r}, session {owner[now]}'s figure")
                break
            if time.perf_counter() - t > 60:
                stats["errors"].append(f"session {i}: {want!r} did not appear within 60 s (shows {now!r})")
                break
            await asyncio.sleep(0.02)
        if await page.locator('[data-testid="stException"]').count():
            stats["errors"].append(f"session {i}: exception on the page")
    await page.close()


async def run(sessions: int, seconds: float) -> dict:
    from playwright.async_api import async_playwright
    home = Path(os.environ["PLANNER_HOME"])
    home.mkdir(parents=True, exist_ok=True)
    stats = {"updates": 0, "errors": [], "latency_ms": []}
    timing = home / "run_times.txt"
    timing.unlink(missing_ok=True)
    os.environ["PLANNER_TIMING_LOG"] = str(timing)
    with streamlit_server(home) as (url, proc):
        async with async_playwright() as pw:
            browser = await pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
            # counts 9..(9+sessions) and 31..: none is the default 8, none is shared between sessions
            counts = {i: [i + 9, i + 31] for i in range(sessions)}
            owner = {expected(n): i for i, c in counts.items() for n in c}
            until = time.monotonic() + seconds
            await asyncio.gather(*(session(browser, url, i, until, counts[i], owner, stats)
                                   for i in range(sessions)))
            await browser.close()
    lat = sorted(stats["latency_ms"])
    runs = sorted(float(x) for x in timing.read_text().split()) if timing.exists() else []
    return {"sessions": sessions, "seconds": seconds, "updates": stats["updates"], "errors": len(stats["errors"]),
            "error_examples": stats["errors"][:5],
            "update_ms_p50": round(statistics.median(lat), 1) if lat else None,
            "update_ms_p95": round(lat[int(0.95 * (len(lat) - 1))], 1) if lat else None,
            "server_runs": len(runs),
            "server_rerun_ms_p50": round(statistics.median(runs), 1) if runs else None,
            "server_rerun_ms_p95": round(runs[int(0.95 * (len(runs) - 1))], 1) if runs else None}


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--sessions", type=int, default=10)
    ap.add_argument("--seconds", type=float, default=60)
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    res = asyncio.run(run(a.sessions, a.seconds))
    print(json.dumps(res) if a.json else "\n".join(f"{k:>16}: {v}" for k, v in res.items()))

"""Load: N concurrent browser sessions against one dashboard server (issue 36). Not a test of the suite.

    .venv/bin/python bench/load.py [--sessions 20] [--seconds 120] [--baseline-seconds 60] [--json]

One server (`streamlit run app.py` on 127.0.0.1, started as tests/browser_util.py starts it), one Debian
chromium (headless, tests/browser_util.py CHROMIUM_ARGS), a browser context of its own per session.
First one session alone for --baseline-seconds (the single-session figures), then N sessions at once for
--seconds, each in a bounded loop of three steps (a step under way when the time is up finishes, within
its 120 s bound):
  edit    openorca's rows typed in the mix table (session i: 1,000 + 7i, then 2,000 + 7i, in turn), Enter;
          the figure shown must be plan()'s Samples for that mix;
  trim    Budget tab, Storage 10 TB, Trim, Apply the proposed mix (Samples changes), then Undo (Samples
          must be the edit's figure again: the undo store is used under load);
  export  Export tab, the Manifest (YAML) downloaded; its openorca rows must be the session's own.
Each change is timed from the committing key press or click to the painted new Samples figure, by the
page's own clock (tests/browser_util.py ARM_TIMING_JS). An error is an exception Streamlit shows
(stException), a console error or an uncaught page error, a wrong figure, or a step over its bound.
The server's RSS (/proc/PID/status) is sampled every 0.5 s: before (idle, after start), the peak, and
after the sessions end: at once, after Streamlit's server.disconnectedSessionTTL (120 s, when it may
let a closed session's state go) and after one more visit (its session cache expires entries only
when it is touched). 127.0.0.1 only; nothing is downloaded.
"""
from __future__ import annotations

import argparse
import asyncio
import functools
import json
import os
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("PLANNER_HOME", tempfile.mkdtemp(prefix="planner-load-"))

from planner import default_scenario, plan  # noqa: E402
from planner.catalog.stats import get_catalog  # noqa: E402
from planner.export.manifest import parse_manifest  # noqa: E402
from planner.phases.mix_storage import resolved_mix  # noqa: E402
from tests.browser_util import ARM_TIMING_JS, CHROMIUM, CHROMIUM_ARGS, streamlit_server  # noqa: E402

STEP_S = 120          # the most one step may take
TTL_S = 120           # streamlit's server.disconnectedSessionTTL default (streamlit/config.py)
COMPONENT = "openorca"


@functools.lru_cache(maxsize=256)     # each session uses two values: plan() once each, not in every loop
def expected_samples(rows: int) -> str:
    """Samples as the page shows it for the default scenario with openorca's rows set to `rows`."""
    s = default_scenario()
    mix = [m.model_dump() | ({"rows": rows} if m.id == COMPONENT else {}) for m in resolved_mix(s, get_catalog())]
    return f"{plan(s.with_changes(mix=mix)).samples:,.0f}"


class Rss:
    """The server's resident set, sampled every 0.5 s in a thread (bytes; peak since the last mark)."""

    def __init__(self, pid: int):
        self.pid, self.peak, self.stop = pid, 0, threading.Event()
        threading.Thread(target=self._run, daemon=True).start()

    def now(self) -> int:
        with open(f"/proc/{self.pid}/status") as f:
            return next(int(line.split()[1]) * 1024 for line in f if line.startswith("VmRSS:"))

    def cpu_s(self) -> float:
        """The server's CPU time so far (user + system, /proc/PID/stat fields 14 and 15)."""
        with open(f"/proc/{self.pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def _run(self):
        while not self.stop.wait(0.5):
            try:
                self.peak = max(self.peak, self.now())
            except (OSError, StopIteration):
                return


class Record:
    def __init__(self):
        self.errors: list[str] = []
        self.ms: dict[str, list[float]] = {"edit": [], "apply": [], "undo": [], "first figure": []}
        self.steps = {"edit": 0, "trim": 0, "export": 0}

    def error(self, i: int, what: str) -> None:
        self.errors.append(f"session {i}: {' '.join(str(what).split())[:240]}")


async def metric(page, label: str = "Samples") -> str:
    return await page.locator('[data-testid="stMetric"]', has_text=label).first.locator(
        '[data-testid="stMetricValue"]').inner_text()


async def idle(page) -> None:
    await page.locator('[data-testid="stApp"][data-test-script-state="notRunning"]').wait_for(
        state="attached", timeout=STEP_S * 1000)


async def tab(page, name: str) -> None:
    await idle(page)
    await page.get_by_role("tab", name=name).click()
    await page.wait_for_timeout(200)
    await idle(page)


async def timed(page, act) -> tuple[float, str]:
    """ms from the committing event of `act` (an awaitable's factory) to the painted new Samples."""
    old = await metric(page)
    await page.evaluate(ARM_TIMING_JS, ["Samples", old])
    await act()
    t0 = time.monotonic()
    while time.monotonic() - t0 < STEP_S:
        t = await page.evaluate("window.__change")
        if t and t["start"] is not None and t["painted"] is not None:
            await idle(page)
            return t["painted"] - t["start"], await metric(page)
        await asyncio.sleep(0.05)
    raise TimeoutError(f"Samples stayed {old!r} for {STEP_S} s")


async def edit(page, i: int, rows: int, rec: Record) -> str:
    field = page.get_by_label(f"rows of {COMPONENT}", exact=True)
    await field.fill(str(rows))
    ms, shown = await timed(page, lambda: field.press("Enter"))
    rec.ms["edit"].append(ms)
    if shown != (want := expected_samples(rows)):
        rec.error(i, f"edit to {rows:,} rows shows Samples {shown!r}, plan() gives {want!r}")
    rec.steps["edit"] += 1
    return shown


async def trim(page, i: int, before: str, rec: Record) -> None:
    """Trim to 10 TB, apply, undo: back to `before`."""
    await tab(page, "Budget")
    field = page.get_by_label("Storage (TB)", exact=True)
    await field.fill("10")
    await field.press("Enter")
    await idle(page)
    await page.get_by_role("button", name="Trim", exact=True).click()
    apply = page.get_by_role("button", name="Apply the proposed mix")
    await apply.wait_for(timeout=STEP_S * 1000)
    ms, _ = await timed(page, apply.click)
    rec.ms["apply"].append(ms)
    ms, shown = await timed(page, page.get_by_role("button", name="Undo").click)
    rec.ms["undo"].append(ms)
    if shown != before:
        rec.error(i, f"undo after a trim shows Samples {shown!r}, not {before!r}")
    rec.steps["trim"] += 1


async def export(page, i: int, rows: int, rec: Record) -> None:
    await tab(page, "Export / import / profile")
    async with page.expect_download(timeout=STEP_S * 1000) as dl:
        await page.get_by_role("button", name="Manifest (YAML)").click()
    path = await (await dl.value).path()
    mix = parse_manifest(Path(path).read_bytes()[:2**20], "manifest.yaml").scenario.mix or []
    got = next((m.rows for m in mix if m.id == COMPONENT), None)
    if got != rows:
        rec.error(i, f"the manifest has {got!r} rows of {COMPONENT}, the session set {rows:,}")
    rec.steps["export"] += 1
    await tab(page, "Mix")


async def session(browser, url: str, i: int, until: float, rec: Record) -> None:
    ctx = await browser.new_context(viewport={"width": 1400, "height": 1000}, accept_downloads=True)
    try:
        page = await ctx.new_page()
        page.on("console", lambda m: m.type == "error" and rec.error(i, f"console error: {m.text}"))
        page.on("pageerror", lambda e: rec.error(i, f"page error: {e}"))
        t0 = time.monotonic()
        await page.goto(url, timeout=STEP_S * 1000)
        await page.get_by_label(f"rows of {COMPONENT}", exact=True).wait_for(timeout=STEP_S * 1000)
        rec.ms["first figure"].append((time.monotonic() - t0) * 1000)
        await idle(page)
        k = 0
        while time.monotonic() < until:
            rows = (1000 if k % 2 == 0 else 2000) + 7 * i
            k += 1
            shown = await edit(page, i, rows, rec)
            if time.monotonic() < until:
                await trim(page, i, shown, rec)
            if time.monotonic() < until:
                await export(page, i, rows, rec)
            if await page.locator('[data-testid="stException"]').count():
                rec.error(i, "an exception is shown on the page: "
                          + (await page.locator('[data-testid="stException"]').first.inner_text())[:200])
    except Exception as exc:      # a session that breaks is an error of the run, not a crash of the benchmark
        rec.error(i, f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}")
    finally:
        await ctx.close()


async def phase(browser, url: str, sessions: int, seconds: float) -> Record:
    rec = Record()
    until = time.monotonic() + seconds

    async def arrive(i):
        await asyncio.sleep(0.25 * i)          # sessions arrive one after another, not in one instant
        await session(browser, url, i, until, rec)
    await asyncio.gather(*(arrive(i) for i in range(sessions)))
    return rec


def pct(values: list[float], q: float) -> float | None:
    v = sorted(values)
    return round(v[round(q * (len(v) - 1))], 1) if v else None


def summary(rec: Record) -> dict:
    out = {"steps": dict(rec.steps), "errors": len(rec.errors), "error_examples": rec.errors[:8]}
    for kind, ms in rec.ms.items():
        out[f"{kind} ms p50/p95 (n)"] = [pct(ms, 0.5), pct(ms, 0.95), len(ms)]
    edits = rec.ms["edit"] + rec.ms["apply"] + rec.ms["undo"]
    out["change ms p50/p95 (n)"] = [pct(edits, 0.5), pct(edits, 0.95), len(edits)]
    return out


def busy_s() -> float:
    """CPU time this machine has spent busy, every process (/proc/stat: all but idle and iowait)."""
    with open("/proc/stat") as f:
        ticks = [int(x) for x in f.readline().split()[1:8]]
    return (sum(ticks) - ticks[3] - ticks[4]) / os.sysconf("SC_CLK_TCK")


def run_times(log: Path, start: int) -> list[float]:
    """The server's full runs of the page since byte `start` of app.py's PLANNER_TIMING_LOG (ms each)."""
    if not log.exists():
        return []
    with open(log, "rb") as f:
        f.seek(start)
        return [float(x) for x in f.read(2**22).split()]


async def measured(rss: Rss, log: Path, running) -> dict:
    """The phase's summary, with the server's own run times (the page's script, from app.py), the cores
    the server kept busy and those the whole machine did (the browsers, and anything else running: the
    machine's load is part of the figures)."""
    cpu, busy, t0 = rss.cpu_s(), busy_s(), time.monotonic()
    start = log.stat().st_size if log.exists() else 0
    out = summary(await running)
    took = time.monotonic() - t0
    runs = run_times(log, start)
    out["server run ms p50/p95 (n)"] = [pct(runs, 0.5), pct(runs, 0.95), len(runs)]
    out["server cpu, cores"] = round((rss.cpu_s() - cpu) / took, 2)
    out["machine busy, cores"] = f"{(busy_s() - busy) / took:.2f} of {os.cpu_count()}"
    return out


async def visit(browser, url: str) -> None:
    ctx = await browser.new_context()
    page = await ctx.new_page()
    await page.goto(url, timeout=STEP_S * 1000)
    await page.get_by_label(f"rows of {COMPONENT}", exact=True).wait_for(timeout=STEP_S * 1000)
    await ctx.close()


async def run(sessions: int, seconds: float, baseline_s: float) -> dict:
    from playwright.async_api import async_playwright
    home = Path(os.environ["PLANNER_HOME"])
    home.mkdir(parents=True, exist_ok=True)
    mib = lambda b: round(b / 2**20, 1)  # noqa: E731
    res = {"sessions": sessions, "seconds": seconds, "baseline_seconds": baseline_s}
    log = home.parent / f"{home.name}-runs.log"
    log.unlink(missing_ok=True)
    with streamlit_server(home, env={"PLANNER_TIMING_LOG": str(log)}) as (url, proc):
        rss = Rss(proc.pid)
        await asyncio.sleep(2)
        res["rss_mib_before"] = mib(rss.now())
        async with async_playwright() as pw:
            browser = await pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
            res["single"] = await measured(rss, log, phase(browser, url, 1, baseline_s))
            res["rss_mib_after_single"] = mib(rss.now())
            rss.peak = 0
            res["load"] = await measured(rss, log, phase(browser, url, sessions, seconds))
            res["rss_mib_peak"] = mib(rss.peak)
            res["rss_mib_at_end"] = mib(rss.now())
            await asyncio.sleep(TTL_S + 10)
            res[f"rss_mib_{TTL_S + 10}s_after"] = mib(rss.now())
            await visit(browser, url)
            await asyncio.sleep(5)
            res["rss_mib_after_one_more_visit"] = mib(rss.now())
            await browser.close()
        rss.stop.set()
    return res


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--sessions", type=int, default=20)
    ap.add_argument("--seconds", type=float, default=120)
    ap.add_argument("--baseline-seconds", type=float, default=60)
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    if not 1 <= a.sessions <= 100 or not 0 < a.seconds <= 3600 or not 0 < a.baseline_seconds <= 3600:
        sys.exit("load.py: --sessions is 1-100, --seconds and --baseline-seconds 0-3600")
    res = asyncio.run(run(a.sessions, a.seconds, a.baseline_seconds))
    print(json.dumps(res) if a.json else "\n".join(f"{k:>28}: {v}" for k, v in res.items()))

"""First run: clone to first number, as a new user gets it (issue 35 item 13).

    .venv/bin/python bench/first_run.py [--commit HEAD] [--keep]

Clones this repository's `--commit` into a fresh /tmp folder (no .venv), runs
`python3 scripts/run.py --port P` there and loads the page in Debian's chromium until the first
metric shows a value. Prints each `[setup ...]` line of run.py with the seconds since the clone
began, then the seconds to the server's health check and to the first number. pip's cache is whatever
this machine holds (warm after any earlier install): say so with the figure.
"""
from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.browser_util import free_port, launch  # noqa: E402


def _echo(proc: subprocess.Popen, t0: float) -> None:
    for line in proc.stdout:
        if line.startswith("[setup"):
            print(f"{time.monotonic() - t0:6.1f} s  {line.rstrip()}", flush=True)


def _wait_health(url: str, proc: subprocess.Popen, until: float) -> None:
    while time.monotonic() < until and proc.poll() is None:
        try:
            with urllib.request.urlopen(url + "/_stcore/health", timeout=2) as r:
                if r.status == 200:
                    return
        except OSError:
            time.sleep(0.2)
    raise SystemExit("first_run: the server did not answer (see the output above)")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--commit", default="HEAD")
    ap.add_argument("--keep", action="store_true", help="keep the clone")
    args = ap.parse_args()
    from playwright.sync_api import sync_playwright
    work = Path(tempfile.mkdtemp(prefix="first-run-"))
    port = free_port()
    t0 = time.monotonic()
    subprocess.run(["git", "clone", "-q", str(ROOT), str(work / "repo")], check=True)
    subprocess.run(["git", "-C", str(work / "repo"), "checkout", "-q", args.commit], check=True)
    env = dict(os.environ, PLANNER_HOME=str(work / "home"))
    proc = subprocess.Popen(["python3", "scripts/run.py", "--port", str(port)],
                            cwd=work / "repo", env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True)
    threading.Thread(target=_echo, args=(proc, t0), daemon=True).start()
    url = f"http://127.0.0.1:{port}"
    try:
        _wait_health(url, proc, t0 + 600)
        print(f"{time.monotonic() - t0:6.1f} s  server up", flush=True)
        with sync_playwright() as pw:
            browser = launch(pw)
            page = browser.new_page(viewport={"width": 1440, "height": 900})
            page.goto(url)
            page.locator('[data-testid="stMetricValue"]').first.wait_for(timeout=300_000)
            print(f"{time.monotonic() - t0:6.1f} s  first number: "
                  f"{page.locator('[data-testid=stMetricValue]').first.inner_text()!r}", flush=True)
            browser.close()
    finally:
        proc.terminate()
        proc.wait(20)
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()

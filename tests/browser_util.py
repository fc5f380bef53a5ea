"""A real Streamlit server on a free port and Debian's chromium driven by Playwright."""
from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-quic"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def streamlit_server(home: Path, timeout: float = 60, app: Path = ROOT / "app.py", env: dict | None = None):
    """`app`: the script to serve (bench/run.py also serves bench/trivial_page.py); `env`: more
    environment variables for the server (PLANNER_TIMING_LOG, say)."""
    port = free_port()
    env = dict(os.environ, **(env or {}), PLANNER_HOME=str(home))
    log = open(home.parent / f"streamlit-{port}.log", "w")
    proc = subprocess.Popen([sys.executable, "-m", "streamlit", "run", str(app),
                             "--server.port", str(port), "--server.address", "127.0.0.1",
                             "--server.headless", "true", "--browser.gatherUsageStats", "false"],
                            cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.time() + timeout
        while True:
            try:
                with urllib.request.urlopen(url + "/_stcore/health", timeout=2) as r:
                    if r.status == 200:
                        break
            except OSError:
                pass
            if proc.poll() is not None or time.time() > deadline:
                raise RuntimeError(f"streamlit did not start: {(home.parent / f'streamlit-{port}.log').read_text()}")
            time.sleep(0.2)
        yield url, proc
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()


# Every element of a metric (its label, value and their text boxes) and every select: a box whose text is
# wider than the box is cut (ellipsis or clipped). A label's text box is the markdown container inside
# stMetricLabel, where Streamlit puts its "..." (not the <p>, which is inline and always measures 0).
CUT_JS = """() => {
  const cut = [];
  const visible = el => el.offsetParent !== null && el.clientWidth > 0;
  for (const el of document.querySelectorAll('[data-testid="stMetricValue"], [data-testid="stMetricValue"] *, '
                                             + '[data-testid="stMetricLabel"], [data-testid="stMetricLabel"] *'))
    if (visible(el) && el.scrollWidth > el.clientWidth + 1)
      cut.push(`metric "${el.closest('[data-testid="stMetric"]').innerText.split('\\n')[0]}": `
               + `${el.scrollWidth} > ${el.clientWidth}`);
  for (const el of document.querySelectorAll('[data-testid="stSelectbox"] input'))
    if (visible(el) && el.scrollWidth > el.clientWidth + 1) cut.push(`select "${el.value}"`);
  return cut;
}"""


def launch(pw):
    return pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)


def metric_text(page, label: str) -> str:
    return page.locator('[data-testid="stMetric"]', has_text=label).first.locator(
        '[data-testid="stMetricValue"]').inner_text()


def table_input(page, cid: str, column: str):
    """The mix table's input (drafter_dashboard/mix_table.js) of component `cid` in the column headed
    `column` (include, rows, conversations, % of full, selection): each is labelled "<column> of <id>"."""
    return page.get_by_label(f"{column} of {cid}", exact=True)


def edit_rows(page, row: int, value: str, attempts: int = 4, commit: bool = True, x: int = 120, right: int = 2):
    """Select the id cell of `row` in a data editor (the mix's spreadsheet view, or bench's trivial page), move to the
    rows column, open its editor, type, commit (`commit=False`: returns the editor with the value typed, for the caller
    to press Enter). The grid is a canvas: on a loaded machine a click can land before it takes the focus, so a try
    whose editor does not open is escaped and made again. `x`: the id column's offset in the grid; `right`:
    the columns from it to the rows column (bench/trivial_editor_page.py's grid has others)."""
    wait_idle(page)
    grid = page.locator('[data-testid="stDataFrame"]').first
    grid.wait_for()
    editor = page.locator("#portal input, #portal textarea").first
    for attempt in range(attempts):
        grid.scroll_into_view_if_needed()
        page.wait_for_timeout(300 + 400 * attempt)
        box = grid.bounding_box()          # viewport coordinates, as the mouse clicks
        at_x, at_y = box["x"] + x, box["y"] + 36 + 17 + 35 * row
        page.mouse.click(at_x, at_y)       # one click selects the id cell (a second would open its read-only view)
        page.wait_for_timeout(200)
        for _ in range(right):
            page.keyboard.press("ArrowRight")
        page.keyboard.press("Enter")
        try:
            editor.wait_for(timeout=8_000)
            break
        except Exception:                  # playwright's TimeoutError: try again
            page.keyboard.press("Escape")
    else:
        raise AssertionError(f"the mix editor's rows cell of row {row} did not open after {attempts} tries")
    editor.fill(value)
    if commit:
        editor.press("Enter")
    return editor


def wait_idle(page, timeout: float = 60) -> None:
    """Until the script run has finished (Streamlit marks the app root `data-test-script-state`):
    a click while the page still runs acts on the widgets of the run before."""
    page.locator('[data-testid="stApp"][data-test-script-state="notRunning"]').wait_for(
        state="attached", timeout=timeout * 1000)


def open_tab(page, name: str) -> None:
    """Click a tab and let the run it starts finish (the Charts and Compare tabs run when opened)."""
    page.get_by_role("tab", name=name).click()
    page.wait_for_timeout(200)
    wait_idle(page)


# In-page timing of one change (bench/run.py): armed after the change is prepared (a value typed, an
# editor opened) and before it is committed, it records the page's own clock at the committing key press
# or pointer press (captured before the page's handlers see it), at the mutation that gives the metric
# `label` a text other than `old`, and at the next animation frame after it (when that text is painted).
# No harness round trip is in the figure; the harness still polls, only to know when to read it.
ARM_TIMING_JS = """([label, old]) => {
  const t = window.__change = {start: null, text: null, painted: null};
  const start = () => { if (t.start === null) t.start = performance.now(); };
  window.addEventListener('keydown', e => { if (e.key === 'Enter') start(); }, {capture: true, once: true});
  window.addEventListener('pointerdown', start, {capture: true, once: true});
  const value = () => {
    for (const m of document.querySelectorAll('[data-testid="stMetric"]'))
      if (m.querySelector('[data-testid="stMetricLabel"]')?.innerText.includes(label))
        return m.querySelector('[data-testid="stMetricValue"]')?.innerText;
  };
  const seen = new MutationObserver(() => {
    const now = value();
    if (t.start === null || now === undefined || now === old) return;
    t.text = performance.now();
    seen.disconnect();
    requestAnimationFrame(() => { t.painted = performance.now(); });
  });
  seen.observe(document.body, {subtree: true, childList: true, characterData: true});
}"""


def arm_timing(page, label: str, old: str) -> None:
    page.evaluate(ARM_TIMING_JS, [label, old])


def read_timing(page, timeout: float = 10) -> float:
    """ms from the committing event to the painted frame with the metric's new text (see ARM_TIMING_JS)."""
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < timeout:
        t = page.evaluate("window.__change")
        if t and t["start"] is not None and t["painted"] is not None:
            return t["painted"] - t["start"]
        time.sleep(0.01)
    raise AssertionError(f"no timed change within {timeout} s: {page.evaluate('window.__change')}")


def open_section(page, name: str) -> None:
    """Open a collapsed sidebar section (built only while open: its controls appear after the run)."""
    wait_idle(page)
    page.locator('[data-testid="stSidebar"]').get_by_text(name, exact=True).click()
    page.wait_for_timeout(200)
    wait_idle(page)


def wait_for_change(page, label: str, old: str, timeout: float = 20) -> tuple[str, float]:
    """The metric's new text and how long it took; the run that changed it is then let finish."""
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < timeout:
        now = metric_text(page, label)
        if now != old:
            took = time.perf_counter() - t0
            wait_idle(page)
            return now, took
        time.sleep(0.01)
    raise AssertionError(f"{label} stayed {old!r} for {timeout} s")


def download(page, button: str, attempts: int = 3):
    """Click a download button once the page is idle and return the Download; a click that still
    raced a run is clicked again (the user would click again too)."""
    last = None
    for _ in range(attempts):
        wait_idle(page)
        try:
            with page.expect_download(timeout=20_000) as dl:
                page.get_by_role("button", name=button).click()
            return dl.value
        except Exception as exc:   # playwright's TimeoutError
            last = exc
    raise AssertionError(f"no download from {button!r} after {attempts} clicks: {last}")


def screenshot(page, path: Path) -> None:
    """The README's picture of the page as it is (only when asked: it is a tracked file)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(path), full_page=False)


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """A dashboard server of the module's own, with a fresh PLANNER_HOME."""
    home = tmp_path_factory.mktemp("browser") / "home"
    home.mkdir()
    with streamlit_server(home) as (url, _proc):
        yield url


@pytest.fixture(scope="module")
def browser():
    """Debian's chromium driven by Playwright (import it only once chromium is known to exist)."""
    from playwright.sync_api import sync_playwright
    with sync_playwright() as pw:
        b = launch(pw)
        yield b
        b.close()


def require_chromium() -> None:
    """Skip the calling test module without Debian's chromium; fail under CI, where .ci/run installs it."""
    if not Path(CHROMIUM).exists():
        if os.environ.get("CI"):
            raise RuntimeError(f"{CHROMIUM} is missing under CI: .ci/run must install Debian's chromium")
        pytest.skip(f"{CHROMIUM} not installed (apt-get install chromium); browser tests skipped",
                    allow_module_level=True)

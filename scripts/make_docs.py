"""Regenerate docs/dashboard.png (the README's screenshot): starts the dashboard on a free port with
a fresh PLANNER_HOME, opens it in Debian's chromium (Playwright) and saves the page as shown; and
docs/quality.png, the quality estimate's curves and published points (drafter_dashboard.figures.quality_curves).

    .venv/bin/python scripts/make_docs.py [--out docs/dashboard.png] [--quality-out docs/quality.png]

The test suite never writes this file unless PLANNER_SCREENSHOT=1 is set."""
from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.browser_util import CHROMIUM, launch, screenshot, streamlit_server  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=ROOT / "docs" / "dashboard.png")
    ap.add_argument("--quality-out", type=Path, default=ROOT / "docs" / "quality.png")
    args = ap.parse_args(argv)
    if not Path(CHROMIUM).exists():
        print(f"make_docs: error: {CHROMIUM} is missing (apt-get install chromium)", file=sys.stderr)
        return 2
    from playwright.sync_api import sync_playwright
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp) / "home"
        home.mkdir()
        with streamlit_server(home) as (url, _proc), sync_playwright() as pw:
            browser = launch(pw)
            page = browser.new_page(viewport={"width": 1500, "height": 1300})
            page.goto(url)
            page.get_by_text("Offline: store, train ($)").wait_for(timeout=60_000)
            page.wait_for_timeout(1000)
            screenshot(page, args.out)
            quality_png(browser, Path(tmp), args.quality_out)
            browser.close()
    print(f"wrote {args.out} and {args.quality_out}")
    return 0


def quality_png(browser, tmp: Path, out: Path) -> None:
    """The quality curves as docs/model.md shows them, with the default mix marked."""
    from drafter_dashboard import figures
    from planner import default_scenario, plan
    p = plan(default_scenario())
    q = p.quality
    fig = figures.quality_curves([(f"default mix, DFlash 3 epochs: {q.effective_tokens / 1e6:,.0f}M tokens "
                                   "(in the reference's 6-epoch equivalents)", q.effective_tokens)])
    fig.update_layout(width=1100, height=520)
    html = tmp / "quality.html"
    html.write_text(fig.to_html(include_plotlyjs=True, full_html=True), encoding="utf-8")
    page = browser.new_page(viewport={"width": 1120, "height": 540})
    page.goto(html.as_uri())
    page.locator(".js-plotly-plot .main-svg").first.wait_for(timeout=30_000)
    page.wait_for_timeout(500)
    screenshot(page, out)
    page.close()


if __name__ == "__main__":
    sys.exit(main())

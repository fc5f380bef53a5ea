"""The dashboard in a real browser (Debian's chromium through Playwright): what only a browser
shows. With PLANNER_SCREENSHOT=1 it also takes the README's screenshot (docs/dashboard.png; or run
scripts/make_docs.py); by default the tracked file is never written."""
import os

import pytest
import yaml

from tests.browser_util import (  # noqa: F401
    ROOT,
    browser,
    download,
    metric_text,
    open_tab,
    require_chromium,
    screenshot,
    server,
    table_input,
    wait_for_change,
    wait_idle,
)

pytestmark = pytest.mark.browser
require_chromium()


def test_dashboard_end_to_end(server, browser, tmp_path):
    page = browser.new_page(viewport={"width": 1500, "height": 1300}, accept_downloads=True)
    page.goto(server)
    page.get_by_text("Offline: store, train ($)").wait_for(timeout=60_000)
    # headline metrics
    assert metric_text(page, "Samples") == "913,760"   # 913,786 in batches of 32
    storage = metric_text(page, "Storage (TB)")
    assert float(storage) > 30          # the unit is in the label: 82.11 TB on the default SpecForge layout
    # change OpenOrca's rows in the mix table and see storage change
    if os.environ.get("PLANNER_SCREENSHOT") == "1":
        page.wait_for_timeout(1000)
        screenshot(page, ROOT / "docs" / "dashboard.png")
    wait_idle(page)
    cell = table_input(page, "openorca", "rows")
    cell.fill("1000")
    cell.press("Enter")
    new_storage, _ = wait_for_change(page, "Storage (TB)", storage)
    assert float(new_storage.split()[0]) < float(storage.split()[0])
    assert metric_text(page, "Samples") == f"{(913_786 - 250_430 + 1000) // 32 * 32:,}"
    # download the manifest and parse it
    open_tab(page, "Export / import / profile")
    path = tmp_path / "manifest.yaml"
    download(page, "Manifest (YAML)").save_as(path)
    m = yaml.safe_load(path.read_text())
    from planner.export.manifest import SCHEMA_VERSION
    assert m["schema_version"] == SCHEMA_VERSION
    rows = {c["id"]: c["rows_selected"] for c in m["components"]}
    assert rows["openorca"] == 1000 and rows["hermes_fc"] == 11_578
    assert m["predicted"]["storage_bytes_compressed"] / 1e12 == pytest.approx(float(new_storage.split()[0]), abs=0.01)
    # the page carries its scenario in the URL: opening it restores the edit
    link = page.url
    from planner.export.versions import CURRENT
    assert f"?s=v{CURRENT}." in link
    other = browser.new_page()
    other.goto(link)
    other.get_by_text("Offline: store, train ($)").wait_for(timeout=60_000)
    assert metric_text(other, "Samples") == f"{(913_786 - 250_430 + 1000) // 32 * 32:,}"
    other.close()
    # a rendered Plotly chart (the Charts tab runs when opened): an SVG with bars in it
    open_tab(page, "Charts")
    page.locator(".js-plotly-plot .main-svg").first.wait_for(timeout=30_000)
    assert page.locator(".js-plotly-plot .bars path").count() >= 5
    page.close()


def test_no_traceback_on_a_bad_link(server, browser):
    page = browser.new_page()
    page.goto(server + "/?s=v1.not-a-scenario")
    page.get_by_text("could not be used").wait_for(timeout=60_000)
    assert metric_text(page, "Samples") == "913,760"   # 913,786 in batches of 32
    assert page.locator('[data-testid="stException"]').count() == 0
    page.close()

"""Issue 20 in a real browser (Debian's chromium through Playwright), one server for the module:
nothing cut at 1024, 1280 and 1600 px; the verdict changes where the storage price crosses its
break-even; Undo after Apply in a fresh session restores the mix, and again after a reload."""
import pytest

from tests.browser_util import (  # noqa: F401
    CUT_JS,
    browser,
    metric_text,
    open_tab,
    require_chromium,
    server,
    wait_for_change,
    wait_idle,
)

pytestmark = pytest.mark.browser
require_chromium()

READY = "Offline: store, train ($)"
CUT = CUT_JS


def _open(browser, url, width=1280, height=900):
    page = browser.new_page(viewport={"width": width, "height": height})
    page.goto(url)
    page.get_by_text(READY).wait_for(timeout=60_000)
    wait_idle(page)
    return page


def _verdict(page) -> str:
    """The verdict's sentence as read (the page escapes markdown with a zero-width space after ':')."""
    box = page.locator('[data-testid="stAlert"]', has_text="cheapest").first
    return box.locator('[data-testid="stMarkdownContainer"]').inner_text().replace("\u200b", "")


def test_every_metric_and_label_is_whole_at_1024_1280_and_1600_px(server, browser):
    page = _open(browser, server, 1024)
    for width in (1024, 1280, 1600):      # one page, resized: the same run's elements at each width
        page.set_viewport_size({"width": width, "height": 900})
        try:   # the page's style arrives with the run: give the layout a moment to settle, then judge it
            page.wait_for_function(f"({CUT})().length === 0", timeout=5_000)
        except Exception:   # playwright's TimeoutError: the assertion below names what stays cut
            pass
        assert page.evaluate(CUT) == [], width
        # every headline figure is there, each value whole ("913,760" was "913,..." at 1024)
        assert metric_text(page, "Samples") == "913,760"
        assert page.locator('[data-testid="stMetric"]').count() >= 15
        # the verdict is at the top, above the metrics
        top = page.locator('[data-testid="stAlert"]', has_text="is cheapest").first.bounding_box()
        assert top["y"] < page.locator('[data-testid="stMetric"]').first.bounding_box()["y"]
    page.close()


def test_the_verdict_changes_where_the_storage_price_crosses_its_break_even(server, browser):
    # with 100 TB disks offline runs (issue 35: the default's 82 TB on a 30.72 TB disk leave it out of the
    # verdict) on the nodes' own disks (no rent); rent on the stored TB for the days held puts online first
    # past planner.decisions.verdict's break-even for the page's scenario (read, not hard-coded: it moves with the
    # model): 10% below keeps offline first, 10% above puts online first (a tie inside the bands both times)
    from planner import default_scenario, plan
    from planner.decisions.verdict import verdict
    be = verdict(plan(default_scenario().with_changes(disk_capacity_tb=100.0))).breakeven["storage_usd_per_tb_month"]
    page = _open(browser, server)
    assert _verdict(page).startswith("Offline cannot run as configured")
    sidebar = page.locator('[data-testid="stSidebar"]')
    sidebar.get_by_text("Disks and compression", exact=True).click()
    wait_idle(page)
    disk = sidebar.get_by_role("spinbutton", name="Disk TB per node (blank = no check)")
    disk.fill("100")
    disk.press("Enter")
    page.wait_for_function("() => !document.body.innerText.includes('Offline cannot run')", timeout=60_000)
    wait_idle(page)
    assert _verdict(page).startswith("Offline and online tie"), _verdict(page)
    sidebar.get_by_text("Prices", exact=True).click()
    wait_idle(page)                      # the section is built by a run: type only once that run is done
    price = sidebar.get_by_label("$/TB-month (blank = preset's)")
    price.wait_for()
    for value, first in ((f"{be * 0.9:.2f}", "Offline and online"), (f"{be * 1.1:.2f}", "Online and offline")):
        old = metric_text(page, READY)
        price.fill(value)
        price.press("Enter")
        wait_for_change(page, READY, old)
        assert _verdict(page).startswith(f"{first} tie"), (value, _verdict(page))
    page.close()


def test_undo_after_apply_in_a_fresh_session_restores_the_mix_and_survives_a_reload(server, browser):
    page = _open(browser, server)
    samples = metric_text(page, "Samples")
    open_tab(page, "Budget")
    page.get_by_label("Storage (TB)", exact=True).fill("10")
    page.get_by_label("Storage (TB)", exact=True).press("Enter")
    wait_idle(page)
    page.get_by_role("button", name="Trim", exact=True).click()
    page.get_by_role("button", name="Apply the proposed mix").click()
    trimmed, _ = wait_for_change(page, "Samples", samples)
    undo = page.get_by_role("button", name="Undo")
    assert undo.is_enabled()
    undo.click()
    assert wait_for_change(page, "Samples", trimmed)[0] == samples
    # a reload is a new session: the link's history key brings the undo and redo back
    page.reload()
    page.get_by_text(READY).wait_for(timeout=60_000)
    wait_idle(page)
    assert metric_text(page, "Samples") == samples
    page.get_by_role("button", name="Redo").click()
    assert wait_for_change(page, "Samples", samples)[0] == trimmed
    page.close()

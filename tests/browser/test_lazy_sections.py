"""Issue 23 in a real browser (Debian's chromium through Playwright): the collapsed sidebar sections
are built only while open, yet a control that is not built keeps the link's value through a change of
one that is, and the headline metrics still follow that change."""
from urllib.parse import parse_qs, urlparse

import pytest

from planner import default_scenario
from planner.export.share import decode, encode
from planner.scenario import Costs, Transfer
from tests.browser_util import browser, metric_text, require_chromium, server, wait_for_change, wait_idle  # noqa: F401

pytestmark = pytest.mark.browser
require_chromium()


def test_a_closed_section_keeps_its_values_in_the_link(server, browser):
    s = default_scenario()
    s = s.with_changes(transfer=Transfer(method="link", link_gbps=25.0, efficiency=0.35),
                       training=s.training.model_copy(update={"epochs": 7.0}),
                       costs=Costs(storage_usd_per_tb_month=12.0))
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    page.goto(f"{server}/?s={encode(s)}")
    page.get_by_text("Extraction (days)").first.wait_for(timeout=60_000)
    wait_idle(page)
    sidebar = page.locator('[data-testid="stSidebar"]')
    # Training is closed: its epochs field is not on the page
    assert sidebar.get_by_label("Epochs").count() == 0
    old = metric_text(page, "Extraction (days)")
    gpus = sidebar.get_by_label("count", exact=True).first   # the extraction GPU count, in an open section
    gpus.fill("16")
    gpus.press("Enter")
    wait_for_change(page, "Extraction (days)", old)      # the headline follows the built control
    page.wait_for_function("() => new URLSearchParams(location.search).get('s') !== null")
    now = decode(parse_qs(urlparse(page.url).query)["s"][0])
    assert now.extraction_gpus == 16
    assert (now.training.epochs, now.transfer.link_gbps, now.costs.storage_usd_per_tb_month) == (7.0, 25.0, 12.0)
    # opened, the section shows the kept value
    sidebar.get_by_text("Training", exact=True).click()
    sidebar.get_by_label("Epochs").wait_for(timeout=20_000)
    assert float(sidebar.get_by_label("Epochs").input_value()) == 7.0
    page.close()


def test_the_findings_list_stays_open_when_its_counts_change(server, browser):
    """The Findings list draws its items only while its toggle is on; its label carries the counts, and
    a change that moves them (64 GPUs clear the default's blocking disk finding) must not close it, as
    a keyed expander whose label changed would (Streamlit 1.67 gives it a new identity)."""
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    page.goto(server)
    page.get_by_text("Extraction (days)").first.wait_for(timeout=60_000)
    wait_idle(page)
    toggle = page.locator('[data-testid="stCheckbox"]', has_text="Findings:")
    assert page.get_by_text("Costs time or money", exact=True).count() == 0      # off: no item drawn
    label = toggle.inner_text()
    toggle.click()
    page.get_by_text("Costs time or money", exact=True).wait_for(timeout=30_000)
    field = page.locator('[data-testid="stSidebar"]').get_by_label("count", exact=True).first
    old = metric_text(page, "Extraction (days)")
    field.fill("64")
    field.press("Enter")
    wait_for_change(page, "Extraction (days)", old)
    wait_idle(page)
    now = toggle.inner_text()
    assert now != label and "blocking" not in now                 # the counts in its label moved
    assert toggle.locator("input").is_checked()
    assert page.get_by_text("Costs time or money", exact=True).count() == 1  # and its items are still drawn
    page.close()

"""Issue 23 in a real browser (Debian's chromium through Playwright): the Budget and Export tabs are
fragments (drafter_dashboard/page.py). A widget inside one reruns that tab alone, not the page; a
change made there that moves the scenario (Apply a trim) still reruns the page and moves the headline
metrics. And the share link and the downloaded manifest carry every control's value, those of the
sidebar sections that are closed (never built) included."""
from urllib.parse import parse_qs, urlparse

import pytest

from planner import default_scenario
from planner.export.manifest import parse_manifest
from planner.export.share import decode, encode
from planner.scenario import Costs, Transfer
from tests.browser_util import (  # noqa: F401
    browser,
    download,
    launch,
    metric_text,
    open_tab,
    require_chromium,
    streamlit_server,
    wait_for_change,
    wait_idle,
)

pytestmark = pytest.mark.browser
require_chromium()


@pytest.fixture(scope="module")
def counted_server(tmp_path_factory):
    """A server whose app.py logs one line per full run of the page (a fragment's rerun logs none)."""
    home = tmp_path_factory.mktemp("fragments") / "home"
    home.mkdir()
    runs = home.parent / "runs.log"
    with streamlit_server(home, env={"PLANNER_TIMING_LOG": str(runs)}) as (url, _proc):
        yield url, runs


def _full_runs(runs) -> int:
    return len(runs.read_text().splitlines()) if runs.exists() else 0


def _link(page):
    return decode(parse_qs(urlparse(page.url).query)["s"][0])


def test_a_fragment_reruns_alone_and_apply_still_moves_the_metrics_and_every_control_is_kept(counted_server,
                                                                                            browser):
    url, runs = counted_server
    s = default_scenario()
    # a value off its default in each closed sidebar section (Transfer, Training, Nodes and placement,
    # Serving, Prices): none of these controls is built while its section is closed
    s = s.with_changes(transfer=Transfer(method="link", link_gbps=25.0, efficiency=0.35),
                       training=s.training.model_copy(update={"epochs": 7.0}),
                       costs=Costs(storage_usd_per_tb_month=12.0), node_network_gbps=200.0,
                       quality=s.quality.model_copy(update={"serving_batch": 4.0}))
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    page.goto(f"{url}/?s={encode(s)}")
    page.get_by_text("Extraction (days)").first.wait_for(timeout=60_000)
    wait_idle(page)
    sidebar = page.locator('[data-testid="stSidebar"]')
    assert sidebar.get_by_label("Epochs").count() == 0           # Training is closed: not built
    open_tab(page, "Budget")
    # a budget figure is the Budget fragment's own widget: the page does not run again
    before = _full_runs(runs)
    field = page.get_by_label("Storage (TB)", exact=True)
    field.fill("20")
    field.press("Enter")
    page.get_by_role("button", name="Trim", exact=True).wait_for()
    page.wait_for_timeout(300)
    wait_idle(page)
    assert _full_runs(runs) == before, "a widget inside the Budget fragment reran the whole page"
    # Trim (in the fragment), then Apply: the page runs again and the headline follows
    samples = metric_text(page, "Samples")
    page.get_by_role("button", name="Trim", exact=True).click()
    page.get_by_role("button", name="Apply the proposed mix").click()
    wait_for_change(page, "Samples", samples)
    assert _full_runs(runs) > before
    # the default mix as SpecForge pads it is about 82 TB; the proportional trim fits it under 20 TB
    assert float(metric_text(page, "Storage (TB").replace(",", "")) <= 20.0
    # the link: the trimmed mix, and every other control's value as the link set it, the closed
    # sections' included (the whole scenario but the mix is compared)
    page.wait_for_function("() => new URLSearchParams(location.search).get('s') !== null")
    now = _link(page)
    assert now.mix is not None and now.mix != s.mix
    assert now.model_dump(exclude={"mix"}) == s.model_dump(exclude={"mix"})
    # the manifest, downloaded from the Export fragment, carries the same scenario as the link
    open_tab(page, "Export / import / profile")
    text = download(page, "Manifest (YAML)").path().read_bytes()
    m = parse_manifest(text, "manifest.yaml")
    assert m.scenario.model_dump(exclude={"mix"}) == s.model_dump(exclude={"mix"})
    assert [(i.id, i.rows, i.include) for i in m.scenario.mix] == [(i.id, i.rows, i.include) for i in now.mix]
    page.close()

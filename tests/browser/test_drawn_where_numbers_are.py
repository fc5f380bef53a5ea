"""Issue 35 in a real browser (Debian's chromium through Playwright), one page load: the tabs within the
first screen at 1440 x 900; nothing cut at 1024, 1440 and 1920 px (measured: a box whose content is wider
than the box, a chart title past its chart, the tab strip scrolling); each waterfall bar drawn at the
height of the plan's figure, read back from the SVG through the chart's own axis; bar labels apart; the
quality frontier's points each at its own storage."""
import pytest

from tests.browser_util import CUT_JS, browser, open_tab, require_chromium, server, wait_idle  # noqa: F401

pytestmark = pytest.mark.browser
require_chromium()

READY = "Offline: store, train ($)"

# what is cut in the main column: a box whose content is wider than it (a table cell, an input, a label
# ending in "..."), the tab strip scrolling sideways, a chart title wider than its chart
OVERFLOW_JS = """() => {
  const cut = [];
  const main = document.querySelector('[data-testid="stMain"]');
  const visible = el => el.offsetParent !== null && el.clientWidth > 0;
  // a cell, an input, the tab strip, or any box that clips or scrolls what it holds (a label's ellipsis);
  // a box 2 px wide or less is a screen reader's hidden text, not a view
  for (const el of main.querySelectorAll('*')) {
    if (!visible(el) || el.clientWidth <= 2 || el.scrollWidth <= el.clientWidth + 1) continue;
    const clips = ['auto', 'scroll', 'hidden', 'clip'].includes(getComputedStyle(el).overflowX);
    if (clips || el.matches('td, th, input, [role="tablist"]'))
      cut.push(`${el.getAttribute('data-testid') || el.tagName.toLowerCase()} "${(el.innerText || el.value || '')
        .slice(0, 40)}": ${el.scrollWidth} > ${el.clientWidth}`);
  }
  for (const plot of main.querySelectorAll('.js-plotly-plot')) {
    const width = plot.getBoundingClientRect().width, left = plot.getBoundingClientRect().left;
    for (const t of plot.querySelectorAll('.gtitle')) {
      const r = t.getBoundingClientRect();
      if (r.width && (r.left < left - 1 || r.right > left + width + 1)) cut.push(`chart title "${t.textContent}"`);
    }
  }
  return cut;
}"""

# each bar of each waterfall: the data values at its drawn top and bottom, read back through the
# chart's own y axis (plotly's p2l: pixel in the plot area -> value), and each shown label's box
BARS_JS = """() => [...document.querySelectorAll('[data-testid="stMain"] .js-plotly-plot')].map(gd => {
  const ya = gd._fullLayout.yaxis;
  const bars = [...gd.querySelectorAll('g.trace.bars g.point path')].map(p => {
    const b = p.getBBox();
    return [ya.p2l(b.y + b.height), ya.p2l(b.y)];
  });
  const labels = [...gd.querySelectorAll('g.trace.bars text.bartext')].filter(t => t.textContent)
    .map(t => { const r = t.getBoundingClientRect(); return [t.textContent, r.left, r.right, r.top, r.bottom]; });
  return {title: gd._fullLayout.title.text, bars, labels, range: ya.range};
})"""

# each point of the quality frontier: its drawn x, read back through the x axis (the point's translate)
POINTS_JS = """() => { const gd = [...document.querySelectorAll('[data-testid="stMain"] .js-plotly-plot')].pop();
  const xa = gd._fullLayout.xaxis;
  return [...gd.querySelectorAll('g.trace.scatter')].map((g, i) => {
    const p = g.querySelector('g.points path.point');
    const m = /translate\\(([-\\d.e]+),/.exec(p.getAttribute('transform'));
    return [gd.data[i].name, xa.p2l(parseFloat(m[1]))];
  });
}"""


def _settled(page, js: str) -> list:
    """The measure once the layout has settled (the page's style arrives with the run)."""
    try:
        page.wait_for_function(f"({js})().length === 0", timeout=5_000)
    except Exception:    # playwright's TimeoutError: the caller's assertion names what stays cut
        pass
    return page.evaluate(js)


def _overlap(a, b) -> bool:
    return a[1] < b[2] - 1 and b[1] < a[2] - 1 and a[3] < b[4] - 1 and b[3] < a[4] - 1


def test_tabs_on_the_first_screen_nothing_cut_and_charts_drawn_where_their_numbers_are(server, browser):
    from planner import default_scenario, plan
    from planner.export.report import article_hours_steps, article_steps
    p = plan(default_scenario())
    expected = {"Storage": [x.storage_bytes / 1e12 for x in article_steps(p)],
                "Extraction": [x.hours for x in article_hours_steps(p)]}
    page = browser.new_page(viewport={"width": 1440, "height": 900})
    page.goto(server)
    page.get_by_text(READY).wait_for(timeout=60_000)
    wait_idle(page)
    # the tab strip is on the first screen (it started 1.3 screens down)
    strip = page.get_by_role("tablist").first.bounding_box()
    assert strip["y"] + strip["height"] <= 900, strip

    for width in (1024, 1920, 1440):      # the first screen and the Mix tab's table
        page.set_viewport_size({"width": width, "height": 900})
        assert _settled(page, OVERFLOW_JS) == [], width

    open_tab(page, "Against the article")
    page.locator(".js-plotly-plot g.trace.bars").nth(1).wait_for(timeout=30_000)
    for width in (1024, 1440, 1920):
        page.set_viewport_size({"width": width, "height": 900})
        page.wait_for_timeout(400)         # plotly redraws at the new width
        assert _settled(page, OVERFLOW_JS) == [], width
        assert page.evaluate(CUT_JS) == [], width
        charts = page.evaluate(BARS_JS)
        assert len(charts) == 2
        for chart in charts:
            values = expected["Storage" if "Storage" in chart["title"] else "Extraction"]
            # the first bar from 0 to the article's figure; step i from the figure before it to its own;
            # the closing total ("this plan") from 0 to the plan's (issue 35: drawn at 9.96 h, labelled 31.9)
            spans = [(0, values[0])] + list(zip(values, values[1:], strict=False)) + [(0, values[-1])]
            assert len(chart["bars"]) == len(spans), chart["title"]
            pixel = (chart["range"][1] - chart["range"][0]) / 200      # about a pixel of this axis
            for (low, high), (drawn_low, drawn_high) in zip(spans, chart["bars"], strict=False):
                assert sorted([drawn_low, drawn_high]) == pytest.approx(sorted([low, high]), abs=pixel), chart["title"]
            labels = chart["labels"]
            assert not [(a[0], b[0]) for i, a in enumerate(labels) for b in labels[i + 1:] if _overlap(a, b)], width

    # the quality frontier: this mix and the full mix are the same mix here, each drawn at 82.11 TB
    # (the full mix was drawn at 83.10 TB, moved 1.2% aside in data units)
    open_tab(page, "Charts")
    page.get_by_role("radio", name="Quality frontier").click()
    page.wait_for_timeout(300)
    wait_idle(page)
    page.locator(".js-plotly-plot g.trace.scatter").nth(1).wait_for(timeout=30_000)
    for width in (1024, 1920, 1440):
        page.set_viewport_size({"width": width, "height": 900})
        page.wait_for_timeout(400)
        assert _settled(page, OVERFLOW_JS) == [], width
    points = dict(page.evaluate(POINTS_JS))     # the frontier: the right of the tab's two charts
    tb = p.storage_bytes_compressed / 1e12
    assert points["this mix"] == pytest.approx(tb, rel=2e-3) and points["full mix"] == pytest.approx(tb, rel=2e-3)
    # the sensitivity's swing labels (the other labelled bars) stay apart at the narrowest width
    page.set_viewport_size({"width": 1024, "height": 900})
    page.get_by_role("radio", name="Sensitivity").click()
    page.wait_for_timeout(300)
    wait_idle(page)
    page.locator(".js-plotly-plot text.bartext").first.wait_for(timeout=30_000)
    labels = [lb for chart in page.evaluate(BARS_JS) for lb in chart["labels"]]
    assert len(labels) >= 4 and not [(a[0], b[0]) for i, a in enumerate(labels) for b in labels[i + 1:]
                                     if _overlap(a, b)]
    page.close()

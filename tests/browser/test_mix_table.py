"""The mix table (drafter_dashboard/mix_table.js) in a real browser (issue 23): native inputs that send
an edit the moment it is committed. What only a browser shows: the script's inputs, focus kept across
the run an edit starts, two quick edits both arriving, a refused value put back, sorting, and the
spreadsheet view (st.data_editor) still editing the same mix.

Default mix: openorca 250,430 rows, sharegpt 120,000, agentic 15,000; 913,786 rows in all. SpecForge
captures batches of 32 and drops the last partial one: Samples = floor(rows / 32) x 32."""
import pytest

from tests.browser_util import (  # noqa: F401
    browser,
    edit_rows,
    metric_text,
    open_tab,
    require_chromium,
    server,
    table_input,
    wait_for_change,
    wait_idle,
)

pytestmark = pytest.mark.browser
require_chromium()


def batches(rows: int) -> str:
    return f"{rows // 32 * 32:,}"


def _page(browser, server):
    page = browser.new_page(viewport={"width": 1500, "height": 1300})
    page.goto(server)
    table_input(page, "openorca", "rows").wait_for(timeout=60_000)
    wait_idle(page)
    return page


def _focused(page) -> str:
    """The aria-label of the element focused inside the table's shadow root ('' when none)."""
    return page.evaluate("""() => { let a = document.activeElement;
        while (a && a.shadowRoot && a.shadowRoot.activeElement) a = a.shadowRoot.activeElement;
        return a && a.getAttribute('aria-label') || ''; }""")


def test_an_edit_answers_keeps_the_focus_and_updates_its_row(server, browser):
    page = _page(browser, server)
    assert metric_text(page, "Samples") == "913,760"
    rows = table_input(page, "openorca", "rows")
    assert rows.input_value() == "250,430"                 # grouped, as every number on the page
    rows.fill("1000")
    rows.press("Enter")
    # 913,786 - 250,430 + 1,000 = 664,356
    assert wait_for_change(page, "Samples", "913,760")[0] == batches(664_356) == "664,352"
    wait_idle(page)
    assert _focused(page) == "rows of openorca"            # the run the edit started left the focus there
    assert rows.input_value() == "1,000"
    assert table_input(page, "openorca", "% of full").input_value() == "0.4"   # 1,000 / 250,430
    # a tick: agentic dropped, its row shown dropped; 664,356 - 15,000 = 649,356
    table_input(page, "agentic", "include").uncheck()
    assert wait_for_change(page, "Samples", "664,352")[0] == batches(649_356)
    assert "dropped" in page.locator('tr[data-id="agentic"]').get_attribute("class")
    # a cell typed in and typed back to what it was sends nothing, and still shows the runs that follow
    pct = table_input(page, "openorca", "% of full")
    pct.click()
    page.keyboard.type("5")
    page.keyboard.press("Backspace")
    page.keyboard.press("Tab")
    rows.fill("500")
    rows.press("Enter")
    assert wait_for_change(page, "Samples", batches(649_356))[0] == batches(649_356 - 500)
    wait_idle(page)
    assert pct.input_value() == "0.2"                       # 500 / 250,430 = 0.1997 %, to two places
    rows.fill("1000")
    rows.press("Enter")
    assert wait_for_change(page, "Samples", batches(649_356 - 500))[0] == batches(649_356)
    wait_idle(page)
    # Escape puts back a value typed and not committed
    rows.fill("777")
    rows.press("Escape")
    assert rows.input_value() == "1,000"
    # a number typed grouped is read as the number; a stray comma is refused by name, not guessed at
    rows.fill("2,000")
    rows.press("Enter")
    assert wait_for_change(page, "Samples", batches(649_356))[0] == batches(649_356 + 1000)
    rows.fill("2,00")
    rows.press("Enter")
    page.get_by_text("rows for openorca = '2,00' is not allowed").wait_for(timeout=20_000)
    # nor are Python's own "1_000" and Arabic-Indic digits, which the input does not take (issue 36)
    for typed in ("1_000", "\u0661\u0660\u0660\u0660"):
        rows.fill(typed)
        rows.press("Enter")
        page.get_by_text(f"rows for openorca = {typed!r} is not allowed").wait_for(timeout=20_000)
    page.close()


def test_two_quick_edits_both_arrive(server, browser):
    """The second edit is committed while the first one's run is under way: the table sends every edit
    not yet acknowledged with each new one, so neither is lost."""
    page = _page(browser, server)
    a, b = table_input(page, "openorca", "rows"), table_input(page, "sharegpt", "rows")
    a.fill("1000")
    a.press("Tab")                                         # commits, as leaving a cell does
    b.fill("500")
    b.press("Enter")
    # 913,786 - 250,430 + 1,000 - 120,000 + 500 = 544,856 -> 544,832
    want = batches(544_856)
    page.wait_for_function("""([want]) => [...document.querySelectorAll('[data-testid="stMetric"]')]
        .some(m => m.innerText.startsWith('Samples') && m.innerText.includes(want))""", arg=[want], timeout=20_000)
    wait_idle(page)
    assert (a.input_value(), b.input_value()) == ("1,000", "500")
    page.close()


def test_two_edits_in_one_task_both_arrive(server, browser):
    """The worst case of two quick edits: both committed in one task of the page, so the second trigger
    is set before the first has left. Streamlit keeps one value per trigger event, so only an edit
    carried again in the second message arrives (a script sending only its newest edit loses the first)."""
    page = _page(browser, server)
    page.locator("table.mix").evaluate("""t => {
        for (const [id, v] of [["openorca", "1000"], ["sharegpt", "500"]]) {
            const input = t.querySelector(`tr[data-id="${id}"] input[data-column="rows"]`);
            input.value = v;
            input.dispatchEvent(new Event("change"));
        } }""")
    want = batches(544_856)          # 913,786 - 250,430 + 1,000 - 120,000 + 500 = 544,856 -> 544,832
    page.wait_for_function("""([want]) => [...document.querySelectorAll('[data-testid="stMetric"]')]
        .some(m => m.innerText.startsWith('Samples') && m.innerText.includes(want))""", arg=[want], timeout=20_000)
    page.close()


def test_arrows_move_between_rows_and_a_pasted_column_fills_down(server, browser):
    page = _page(browser, server)
    rows = table_input(page, "openorca", "rows")
    rows.click()
    rows.fill("1000")
    rows.press("ArrowDown")                       # leaves the cell: commits it, and goes down a row
    assert _focused(page) == "rows of sharegpt"
    # 913,786 - 250,430 + 1,000 = 664,356 -> 664,352
    assert wait_for_change(page, "Samples", "913,760")[0] == batches(664_356)
    wait_idle(page)
    page.keyboard.press("ArrowUp")
    assert _focused(page) == "rows of openorca"
    # three lines pasted (from a spreadsheet: tab-separated, the first cell used) into openorca's rows
    # fill openorca, sharegpt and ultrachat: 664,356 - 1,000 - 120,000 - 207,865 + 500 + 600 + 700
    # = 337,291 -> 337,280
    rows.evaluate("""(input, text) => { const dt = new DataTransfer(); dt.setData("text/plain", text);
        input.dispatchEvent(new ClipboardEvent("paste", {clipboardData: dt, bubbles: true, cancelable: true})); }""",
                  "500\tx\n600\n700\n")
    assert wait_for_change(page, "Samples", batches(664_356))[0] == batches(337_291) == "337,280"
    wait_idle(page)
    assert [table_input(page, c, "rows").input_value() for c in ("openorca", "sharegpt", "ultrachat")] == \
        ["500", "600", "700"]
    page.close()


def test_a_refused_value_is_named_and_put_back(server, browser):
    page = _page(browser, server)
    rows = table_input(page, "sharegpt", "rows")
    rows.fill("240000")                                    # 120,000 exist
    rows.press("Enter")
    page.get_by_text("stores its hidden states twice").wait_for(timeout=20_000)
    wait_idle(page)
    assert rows.input_value() == "120,000" and metric_text(page, "Samples") == "913,760"
    page.close()


def test_sorting_a_column_and_editing_the_sorted_table(server, browser):
    page = _page(browser, server)
    ids = lambda: page.locator("table.mix tbody tr").evaluate_all("rs => rs.map(r => r.dataset.id)")  # noqa: E731
    assert ids()[0] == "openorca"
    page.locator("table.mix th", has_text="available").locator("button").click()
    page.locator('table.mix th[aria-sort="ascending"]').wait_for()
    # hermes_fc has the fewest available rows (11,578), openorca the most (4,200,000)
    assert ids()[0] == "hermes_fc" and ids()[-1] == "openorca"
    page.locator("table.mix th", has_text="available").locator("button").click()
    page.locator('table.mix th[aria-sort="descending"]').wait_for()
    assert ids()[0] == "openorca"
    # an edit that moves its row keeps the focus where it was: sorted by rows, openorca (250,430, the
    # most) goes from the top to the bottom when it gets 100 rows, and its cell keeps the focus
    page.locator("table.mix th", has_text="rows").first.locator("button").click()   # ascending: hermes first
    page.locator("table.mix th", has_text="rows").first.locator("button").click()   # descending
    assert ids()[0] == "openorca"
    rows = table_input(page, "openorca", "rows")
    rows.fill("100")
    rows.press("Enter")
    for _ in range(100):
        if ids()[-1] == "openorca":
            break
        page.wait_for_timeout(100)
    assert ids()[-1] == "openorca" and _focused(page) == "rows of openorca"
    # an edit names its component, not its place: the sorted table edits the right row
    table_input(page, "hermes_fc", "selection").select_option("shortest")
    wait_idle(page)
    page.wait_for_timeout(300)
    assert table_input(page, "hermes_fc", "selection").input_value() == "shortest"
    assert ids()[-1] == "openorca"                         # the order survives the run
    # a component added after the header was made: a click on the header sorts the new rows too (the
    # header's handler reads the newest rows, not those of the run that made it)
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    pick = page.locator('[data-testid="stMultiSelect"]', has_text="Add components")
    pick.click()
    page.keyboard.type("gsm8k")
    page.keyboard.press("Enter")
    page.keyboard.press("Escape")
    wait_idle(page)
    page.get_by_role("button", name="Add", exact=True).click()
    table_input(page, "gsm8k", "rows").wait_for(timeout=20_000)
    wait_idle(page)
    available = page.locator("table.mix th", has_text="available").locator("button")
    available.click()
    page.locator('table.mix th[aria-sort="ascending"]').wait_for()
    available.click()
    page.locator('table.mix th[aria-sort="descending"]').wait_for()
    # gsm8k has 7,473 rows available, the fewest; openorca the most (4,200,000)
    assert ids()[0] == "openorca" and ids()[-1] == "gsm8k" and not errors, (ids(), errors)
    page.close()


def test_the_spreadsheet_view_edits_the_same_mix(server, browser):
    page = _page(browser, server)
    page.get_by_text("Spreadsheet view").click()
    page.locator("table.mix").wait_for(state="detached", timeout=20_000)
    edit_rows(page, 0, "2000")
    # 913,786 - 250,430 + 2,000 = 665,356 -> 665,344
    assert wait_for_change(page, "Samples", "913,760")[0] == batches(665_356)
    page.get_by_text("Spreadsheet view").click()
    table_input(page, "openorca", "rows").wait_for()
    assert table_input(page, "openorca", "rows").input_value() == "2,000"
    page.close()

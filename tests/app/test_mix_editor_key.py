"""Issue 23: the mix editor's spreadsheet view keeps its key while the mix is edited in it, so the browser updates the
grid in place instead of building a new one for every edit. Its state then holds every edit made in it (as a
browser sends them: all of them, each time); each run applies what is new. The editor is replaced by a
fresh one whenever its edits would not show the mix as it is: a refused value, or a % the table rounds.

Default mix (datasets_meta): row 0 is OpenOrca, 250,430 rows; row 6 the agentic traces, 15,000 rows;
913,786 rows in all. SpecForge captures batches of 32 and drops the last partial one."""
import pytest

from drafter_dashboard.mix_editor import SPREADSHEET
from tests.app.test_wiring import at, metric, plain  # noqa: F401 (the fixture)


@pytest.fixture(autouse=True)
def _spreadsheet(at):
    """These tests edit the spreadsheet view (st.data_editor); tests/app/test_mix_table.py the table."""
    at.toggle(key=SPREADSHEET).set_value(True).run()
    assert at.data_editor


def in_batches(rows: int) -> int:
    return rows // 32 * 32


def _state(at, edited: dict) -> str:
    """Set the current editor's state as a browser sends it (every edit made in it); returns its key."""
    key = f"mix_editor_{at.session_state['mix_version']}"
    at.session_state[key] = {"edited_rows": edited, "added_rows": [], "deleted_rows": []}
    at.run()
    assert not at.exception, at.exception
    return key


def _key(at) -> str:
    return f"mix_editor_{at.session_state['mix_version']}"


def test_successive_edits_in_one_editor_keep_its_key(at):
    key = _state(at, {0: {"rows": 100_000}})
    # 913,786 - 250,430 + 100,000 = 763,356 rows -> 763,328 in whole batches of 32
    assert metric(at, "Samples") == in_batches(763_356) == 763_328
    assert _key(at) == key
    key2 = _state(at, {0: {"rows": 100_000}, 6: {"include": False}})     # the first edit is still in it
    assert key2 == key
    # 763,356 - 15,000 = 748,356 -> 748,352
    assert metric(at, "Samples") == in_batches(748_356) == 748_352
    # a change elsewhere reruns the page with the same editor state: nothing is applied again
    at.number_input(key="w_ex_gpus").set_value(16).run()
    assert metric(at, "Samples") == 748_352 and _key(at) == key
    rows = at.data_editor[0].value.set_index("id")
    assert rows.loc["openorca", "rows"] == 100_000 and not rows.iloc[6]["include"]


def test_a_refused_value_gets_a_fresh_editor_that_shows_the_mix(at):
    key = _state(at, {0: {"rows": -5}})
    assert any("rows for openorca" in plain(e.value) for e in at.error)
    assert metric(at, "Samples") == in_batches(913_786) == 913_760
    assert _key(at) != key                                        # the -5 is not left on the grid
    assert at.data_editor[0].value.set_index("id").loc["openorca", "rows"] == 250_430


def test_rows_typed_after_a_percent_show_the_percent_they_make(at):
    key = _state(at, {0: {"pct": 50.0}})          # 50% of 250,430 = 125,215 rows; the table's % is 50.0
    assert _key(at) == key
    assert at.data_editor[0].value.set_index("id").loc["openorca", "rows"] == 125_215
    # rows typed next: 25,043 = 10.0% of 250,430; the 50.0 the grid holds would contradict them
    _state(at, {0: {"pct": 50.0, "rows": 25_043}})
    assert _key(at) != key
    row = at.data_editor[0].value.set_index("id").loc["openorca"]
    assert (row["rows"], row["pct"]) == (25_043, 10.0)
    # 913,786 - 250,430 + 25,043 = 688,399 -> 688,384
    assert metric(at, "Samples") == in_batches(688_399) == 688_384


def test_a_percent_typed_after_rows_in_the_same_row_is_applied(at):
    """The browser sends every edit made in the editor each time: rows typed first stay in its state
    beside a % typed next, and a row's rows win over its % when both are new. Only the % is new the
    second time (APPLIED), so it is the one applied."""
    _state(at, {0: {"rows": 100_000}})
    assert metric(at, "Samples") == 763_328
    _state(at, {0: {"rows": 100_000, "pct": 10.0}})
    # 10% of OpenOrca's 250,430 rows = 25,043; 913,786 - 250,430 + 25,043 = 688,399 -> 688,384
    assert at.data_editor[0].value.set_index("id").loc["openorca", "rows"] == 25_043
    assert metric(at, "Samples") == 688_384



@pytest.mark.parametrize("edited, named", [
    ({"abc": {"rows": 5}}, "the editor's edits could not be read"),      # not a row number
    ({0: "junk"}, "the editor's edits could not be read"),                # not a dict of cells
    ({-1: {"rows": 5}}, "the editor's edits could not be read"),          # would be the last row
    ({0: {"include": "x\n`rm -rf /`"}}, "include for openorca"),          # a string is not a tick
    ({0: {"selection": "**bold**\n# h"}}, "selection for openorca"),
])
def test_a_crafted_edit_is_one_line_and_changes_nothing(at, edited, named):
    """A browser sends row numbers and cells; a crafted websocket message may send anything. It is one
    sentence naming what is wrong, the mix stays (913,786 -> 913,760 in whole batches of 32), the editor
    is replaced by a fresh one, and the page goes on answering."""
    key = _state(at, edited)
    errors = [plain(e.value).replace("\u200b", "") for e in at.error if named in plain(e.value)]
    assert len(errors) == 1 and errors[0].startswith("mix:")
    assert metric(at, "Samples") == 913_760 and _key(at) != key
    at.number_input(key="w_ex_gpus").set_value(9).run()
    assert not at.exception and metric(at, "Samples") == 913_760

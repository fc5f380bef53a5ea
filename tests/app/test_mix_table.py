"""Issue 23: the mix table (drafter_dashboard/mix_table.js), the default view of the mix. Streamlit's data
editor holds a cell's edit 150 ms before sending it, so no page built on it answers a cell within 250 ms;
the table sends an edit the moment it is committed. These tests send its messages through Streamlit's
own trigger deserialiser and callback dispatch (tests/app/mix_table_util.py); the browser tests
(tests/browser/test_mix_table.py) send them from the real inputs.

Default mix (datasets_meta), in the table's order: openorca 250,430 rows (of 4,200,000 available),
sharegpt 120,000, ultrachat 207,865, evol_codealpaca 111,272, magicoder_oss 75,197, code_alpaca 20,022,
agentic 15,000, glaive_fc 60,000, qwen35_fc 42,422, hermes_fc 11,578: 913,786 rows. SpecForge captures
batches of 32 and drops the last partial one, so Samples is floor(rows / 32) x 32."""
import pytest

from drafter_dashboard.mix_editor import HELP, MAX_SEQ_STEP, MAX_TABLE_EDITS, SPREADSHEET
from tests.app.mix_table_util import edit, mix_frame, send, table, table_data, table_rows
from tests.app.test_wiring import at, in_batches, metric, open_tab, plain  # noqa: F401 (the fixture)


def errors(at, named: str = "mix:") -> list[str]:
    return [plain(e.value).replace("\u200b", "") for e in at.error if named in plain(e.value).replace("\u200b", "")]


def test_the_table_is_the_default_view_and_is_given_the_mix(at):
    assert table(at) is not None and not at.data_editor
    rows = table_rows(at)
    assert list(rows)[:3] == ["openorca", "sharegpt", "ultrachat"]
    assert sum(r["rows"] for r in rows.values()) == 913_786
    o = rows["openorca"]
    # 250,430 of the 4,200,000 rows OpenOrca has; the % is of the component's count in the mix: 100.0
    assert (o["rows"], o["pct"], o["include"], o["selection"]) == (250_430, 100.0, True, "uniform")
    data = table_data(at)
    keys = [c["key"] for c in data["columns"]]
    assert keys[:6] == ["include", "id", "family", "rows", "pct", "selection"]
    # the shown text is the number the spreadsheet formats: available 4,200,000 with separators
    assert o["cells"][keys.index("available")] == "4,200,000"
    # one help text per editable column, the spreadsheet's too
    assert {c["key"]: c["help"] for c in data["columns"] if c["key"] in HELP} == HELP
    assert data["ack"] == 0


def test_a_rows_edit_moves_the_headline_in_one_message(at):
    edit(at, "openorca", "rows", "1000")
    # 913,786 - 250,430 + 1,000 = 664,356 -> 664,352 in whole batches of 32
    assert metric(at, "Samples") == in_batches(664_356) == 664_352
    assert table_rows(at)["openorca"]["rows"] == 1000
    # 1,000 of the 250,430 the mix had: 0.4 %, rounded to two places
    assert table_rows(at)["openorca"]["pct"] == round(100 * 1000 / 250_430, 2) == 0.4
    assert table_data(at)["ack"] > 0 and not errors(at)


def test_a_percent_an_include_and_a_selection(at):
    edit(at, "openorca", "pct", "50")                  # 50 % of 250,430 = 125,215
    assert metric(at, "Samples") == in_batches(913_786 - 125_215) == 788_544
    edit(at, "agentic", "include", False)              # 788,571 - 15,000 = 773,571 -> 773,568
    assert metric(at, "Samples") == in_batches(773_571) == 773_568
    edit(at, "ultrachat", "rows", "100000")            # 773,571 - 207,865 + 100,000 = 665,706 -> 665,696
    assert metric(at, "Samples") == in_batches(665_706) == 665_696
    tokens = metric(at, "Stored tokens")
    edit(at, "ultrachat", "selection", "shortest")     # the 100,000 shortest rows: fewer tokens, same count
    assert metric(at, "Stored tokens") < tokens and metric(at, "Samples") == 665_696
    rows = table_rows(at)
    assert (rows["agentic"]["include"], rows["ultrachat"]["selection"]) == (False, "shortest")


def _e(cid, column, value, seq):
    return {"id": cid, "column": column, "value": value, "seq": seq}


def test_an_edit_sent_again_with_a_later_one_is_applied_once(at):
    """The table sends every edit it has not seen acknowledged with each new one, each with its own seq;
    an edit at or below the acknowledged seq was applied already and is skipped."""
    ack = table_data(at)["ack"]
    a = _e("openorca", "rows", "100000", ack + 1)
    send(at, {"seq": ack + 1, "edits": [a]})
    send(at, {"seq": ack + 2, "edits": [a, _e("agentic", "include", False, ack + 2)]})
    # 913,786 - 250,430 + 100,000 - 15,000 = 748,356 -> 748,352
    assert metric(at, "Samples") == in_batches(748_356) == 748_352
    assert table_data(at)["ack"] == ack + 2
    # a message already acknowledged changes nothing (a later edit is not undone by a replay)
    edit(at, "openorca", "rows", "5000")
    send(at, {"seq": ack + 1, "edits": [a]})
    assert table_rows(at)["openorca"]["rows"] == 5000


def test_an_edit_carried_again_does_not_land_over_an_undo(at):
    """Edit A is applied and acknowledged; Undo takes it back; the browser, which has not yet seen the
    acknowledgement, sends B with A again: A is skipped (its seq is acknowledged), B applies."""
    ack = table_data(at)["ack"]
    a = _e("openorca", "rows", "1000", ack + 1)
    send(at, {"seq": ack + 1, "edits": [a]})
    assert table_rows(at)["openorca"]["rows"] == 1000
    at.button(key="w_undo").click().run()
    assert table_rows(at)["openorca"]["rows"] == 250_430
    send(at, {"seq": ack + 2, "edits": [a, _e("agentic", "include", False, ack + 2)]})
    assert table_rows(at)["openorca"]["rows"] == 250_430
    assert metric(at, "Samples") == in_batches(913_786 - 15_000) == 898_784


def test_a_refused_value_changes_nothing_and_names_the_cell(at):
    edit(at, "openorca", "rows", "-5")
    assert [e for e in errors(at) if "rows for openorca" in e and "-5" in e]
    assert metric(at, "Samples") == 913_760 and table_rows(at)["openorca"]["rows"] == 250_430
    edit(at, "sharegpt", "rows", "240000")             # 120,000 exist
    assert [e for e in errors(at) if "stores its hidden states twice" in e]
    # the refusal is acknowledged, so the table drops it and shows the mix as it is
    assert table_rows(at)["sharegpt"]["rows"] == 120_000


def test_one_refused_edit_does_not_stop_the_others(at):
    ack = table_data(at)["ack"]
    send(at, {"seq": ack + 1, "edits": [_e("openorca", "rows", "abc", ack + 1), _e("agentic", "include", False,
                                                                                   ack + 1),
                                        _e("nope", "rows", 1, ack + 1)]})
    found = errors(at)
    assert len(found) == 1 and "rows for openorca" in found[0] and "(and 1 more refused)" in found[0]
    assert metric(at, "Samples") == in_batches(913_786 - 15_000) == 898_784


E = {"id": "openorca", "column": "rows", "value": 5, "seq": 9}


@pytest.mark.parametrize("message", [
    "junk",                                                       # not a dict
    {"seq": True, "edits": [E]},                                  # a boolean is not a seq
    {"seq": -1, "edits": [E]},
    {"seq": "9", "edits": [E]},
    {"seq": 9, "edits": []},
    {"seq": 9, "edits": {"id": "openorca"}},
    {"seq": 9, "edits": [E] * (MAX_TABLE_EDITS + 1)},
    {"seq": 9, "edits": [{**E, "column": "available"}]},          # a shown column
    {"seq": 9, "edits": [{k: v for k, v in E.items() if k != "value"}]},
    {"seq": 9, "edits": [{k: v for k, v in E.items() if k != "seq"}]},
    {"seq": 9, "edits": [{**E, "seq": 10}]},                      # an edit newer than its message
    {"seq": 9, "edits": [{**E, "id": ["openorca"]}]},
    {"seq": 9, "edits": ["x"]},
    # a seq far above the acknowledged one would end the table's counting: a JavaScript number is
    # exact to 2^53 - 1, and every later edit would be "applied already"
    {"seq": 2**53, "edits": [{**E, "seq": 2**53}]},
    {"seq": 10**30, "edits": [{**E, "seq": 10**30}]},
    {"seq": MAX_SEQ_STEP + 1, "edits": [{**E, "seq": MAX_SEQ_STEP + 1}]},
])
def test_a_crafted_message_is_one_line_and_changes_nothing(at, message):
    """A browser sends {seq, edits} of the editable columns; a crafted websocket message may send
    anything. It is one sentence, the mix stays (913,786 -> 913,760 in whole batches of 32), and the
    page goes on answering."""
    send(at, message)
    assert not at.exception
    found = errors(at, "could not be read")
    assert len(found) == 1 and found[0].startswith("mix:"), [plain(e.value) for e in at.error]
    assert metric(at, "Samples") == 913_760
    at.number_input(key="w_ex_gpus").set_value(9).run()
    assert not at.exception and metric(at, "Samples") == 913_760


@pytest.mark.parametrize("column, value, named", [
    ("include", "x\n`rm -rf /`", "include for openorca"),      # a string is not a tick
    ("selection", "**bold**\n# h", "selection for openorca"),
    ("rows", "12.5", "rows for openorca"),                       # not a whole number
    ("pct", "nan", "% of full for openorca"),
    ("rows", 10**400, "rows for openorca"),                      # too large for a float
    ("pct", 10**400, "% of full for openorca"),
    ("pct", "1e308", "% of full for openorca"),                  # rows beyond any count
    ("pct", "inf", "% of full for openorca"),
    ("rows", True, "rows for openorca"),                         # a tick is not a count
    ("pct", [5], "% of full for openorca"),
    ("rows", "9" * 5000, "rows for openorca"),                   # quoted cut short, not 5,000 characters
])
def test_a_hostile_value_is_one_line_naming_the_cell(at, column, value, named):
    edit(at, "openorca", column, value)
    assert not at.exception
    found = errors(at, named)
    assert len(found) == 1 and "\n" not in found[0] and len(found[0]) < 300, found
    assert metric(at, "Samples") == 913_760


def test_a_deeply_nested_value_is_one_generic_line_and_the_next_run_recovers(at):
    """Streamlit copies a trigger value (deepcopy) before the page sees it: 500 nested lists raise
    RecursionError inside Streamlit. The page's guard makes it one line without a traceback; the trigger
    is gone on the next run, which answers as before."""
    value = []
    for _ in range(500):
        value = [value]
    send(at, {"seq": 1, "edits": [_e("openorca", "rows", value, 1)]})
    texts = [plain(e.value) for e in at.error] + [str(x.value) for x in at.exception]
    assert not any("Traceback" in t or 'File "' in t for t in texts)
    at.number_input(key="w_ex_gpus").set_value(9).run()
    assert not at.exception and metric(at, "Samples") == 913_760 and table(at) is not None


def test_the_spreadsheet_shows_what_the_table_changed(at):
    edit(at, "openorca", "rows", "1000")
    at.toggle(key=SPREADSHEET).set_value(True).run()
    assert table(at) is None and at.data_editor
    sheet = at.data_editor[0].value.set_index("id")
    assert sheet.loc["openorca", "rows"] == 1000
    at.toggle(key=SPREADSHEET).set_value(False).run()
    assert mix_frame(at).set_index("id").loc["openorca", "rows"] == 1000


def test_the_rows_column_is_named_for_the_unit(at):
    at.radio(key="w_unit").set_value("turn").run()
    label = {c["key"]: c["label"] for c in table_data(at)["columns"]}["rows"]
    assert label == "conversations"


def test_the_table_keeps_its_acknowledgement_across_tabs(at):
    edit(at, "openorca", "rows", "1000")
    ack = table_data(at)["ack"]
    open_tab(at, "Charts")
    assert table(at) is None
    open_tab(at, "Mix")
    # a remounted table counts on from the last acknowledged edit, so its next edit is not a replay
    assert table_data(at)["ack"] == ack and table_rows(at)["openorca"]["rows"] == 1000

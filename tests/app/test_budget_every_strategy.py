"""Issue 35 item 4, the Budget tab (AppTest wiring): every row of "every strategy" can be applied, each
says what it changes beyond rows (the cap strategy's sequence cap and what it cuts of each family), no
cell is a raw None or a note starting "; ", and rows the acceptance band cannot tell apart are marked."""
from planner import default_scenario
from planner.decisions.trim import Budget, trim
from tests.app.test_wiring import at, open_tab, plain  # noqa: F401 (the fixture)


def _every(app):
    return next(df.value for df in app.dataframe if "beyond rows" in df.value.columns)


def test_every_strategy_row_says_what_it_changes_and_each_can_be_applied(at):
    open_tab(at, "Budget")
    at.number_input(key="w_b_storage").set_value(20.0).run()
    at.button(key="w_b_trim").click().run()
    assert not at.exception
    table = _every(at)
    # no cell is empty (a raw None) nor a note starting '; '; the numbers stay numbers
    assert not table.isna().any().any()
    assert not any(str(c).startswith("; ") for c in table.to_numpy().ravel())
    rows = {r["strategy"]: r for r in table.to_dict("records")}
    assert isinstance(rows["cap"]["acceptance length"], float)
    # protect without anything to protect: not a row of blanks, a line with its reason
    assert "protect" not in rows
    assert any("Not run: protect: nothing to protect selected." in plain(c.value).replace("\u200b", "")
               for c in at.caption)
    # the cap strategy's cap, read from planner.decisions.trim (2,048 -> 430 tokens for 20 TB when this was written)
    cap = trim(default_scenario(), Budget(storage_tb=20), "cap")
    assert rows["cap"]["beyond rows"].startswith(f"cuts the sequence cap from 2,048 to {cap.max_seq_len_after:,} "
                                                 "tokens: the agentic family loses")
    assert rows["proportional"]["beyond rows"] == "rows only"
    # the quality strategy's note: what it gives up, without a leading '; '
    assert rows["quality"]["note"].startswith("the quality strategy leaves")
    # each estimate lies inside the others' bands (about 1.1-4.9): none is told apart, and the page says so
    assert rows["proportional"]["not distinguishable from"] == "value, cap, quality"
    assert any("does not tell them apart" in plain(c.value) for c in at.caption)
    # Apply on a row that is not the dropdown's (proportional): the cap strategy's mix and cap
    at.button(key="w_b_apply_cap").click().run()
    assert not at.exception
    assert at.session_state["w_cap"] == cap.max_seq_len_after
    assert any("Applied the cap strategy's mix" in plain(s.value) for s in at.success)

"""Your own runs in the dashboard (Export / import / profile, "Your own runs"): a CSV of measured drafter
runs refits the quality estimate, as `estimate --quality-points FILE` does (both parse it with
planner/scenario/quality_csv.py). The runs become part of the scenario: one undo step, carried by the link.

The file used: two DFlash runs of the general family, tau 2.1 after 2M training tokens and 2.6 after
20M, as vLLM measures them."""
import pytest

from planner import default_scenario, plan
from planner.export.share import decode
from planner.scenario.quality_csv import QUALITY_POINT_COLUMNS
from tests.app.test_wiring import at, metric, open_tab, plain  # noqa: F401 (the fixture)

HEADER = ",".join(QUALITY_POINT_COLUMNS)
RUNS = (f"{HEADER}\ndflash,qwen3-8b,general,2000000,1,vllm,2.1\n"
        "dflash,qwen3-8b,general,20000000,1,vllm,2.6\n")
TAU = "Acceptance length"


def _upload(at, text, name="runs.csv"):
    open_tab(at, "Export / import / profile")
    data = text if isinstance(text, bytes) else text.encode()
    at.file_uploader(key="w_runs_file").set_value((name, data, "text/csv")).run()
    assert not at.exception, at.exception


def _points(at):
    return decode(at.query_params["s"]).quality.points


def _errors(at):
    return [plain(e.value).replace("\u200b", "") for e in at.error if "Runs not used" in plain(e.value)]


def test_runs_refit_the_estimate_and_ride_in_the_link_and_undo(at):
    before = metric(at, TAU)
    _upload(at, RUNS)
    # the page shows the planner's own figure for the default scenario with these two runs
    points = [{"drafter": "dflash", "target": "qwen3-8b", "family": "general", "training_tokens": 2_000_000,
               "epochs": 1, "eval_engine": "vllm", "tau": 2.1},
              {"drafter": "dflash", "target": "qwen3-8b", "family": "general", "training_tokens": 20_000_000,
               "epochs": 1, "eval_engine": "vllm", "tau": 2.6}]
    want = plan(default_scenario().with_changes(
        quality={**default_scenario().quality.model_dump(), "points": points})).quality.acceptance_length
    assert metric(at, TAU) == pytest.approx(want, abs=0.006) and metric(at, TAU) != before
    assert [p.tau for p in _points(at)] == [2.1, 2.6]
    assert any("holds 2 of your runs" in plain(c.value) for c in at.caption)
    # a sidebar change keeps them (they have no control of their own)
    at.number_input(key="w_ex_gpus").set_value(16).run()
    assert [p.tau for p in _points(at)] == [2.1, 2.6]
    # forgetting them is one step; undo brings them back
    open_tab(at, "Export / import / profile")
    at.button(key="w_runs_clear").click().run()
    assert _points(at) is None and metric(at, TAU) == pytest.approx(before, abs=0.006)
    at.button(key="w_undo").click().run()
    assert [p.tau for p in _points(at)] == [2.1, 2.6]


@pytest.mark.parametrize("text, named", [
    ("drafter,target\ndflash,x\n", "the header must be " + HEADER),
    (f"{HEADER}\ndflash,qwen3-8b,general,2000000,1,vllm,abc\n", "line 2: tau"),
    (f"{HEADER}\ndflash,qwen3-8b,general,2000000,1,vllm\n", "line 2 has 6 columns, the header 7"),
    (f"{HEADER}\nnot-a-kind,qwen3-8b,general,2000000,1,vllm,2.1\n", "line 2: drafter"),
    (f"{HEADER}\n", "holds no rows after its header"),
    (b"\xff\xfe\x00garbage", "is not UTF-8 text"),
    (f"{HEADER}\n" + "dflash,qwen3-8b,general,2000000,1,vllm,2.1\n" * 1001, "more than 1000 rows"),
])
def test_a_bad_file_is_one_line_and_changes_nothing(at, text, named):
    before = metric(at, TAU)
    _upload(at, text)
    found = _errors(at)
    assert len(found) == 1 and named in found[0] and "\n" not in found[0], [plain(e.value) for e in at.error]
    assert _points(at) is None and metric(at, TAU) == before


def test_a_file_name_with_markdown_is_shown_as_text(at):
    _upload(at, "drafter\n", name="[x](https://example.invalid)`$(id)`.csv")
    found = [e.value for e in at.error if "Runs not used" in e.value]
    assert len(found) == 1
    # escaped for markdown: the brackets and backticks are literal, never a link or code
    assert "\\[x\\]" in found[0] and "\\`" in found[0]


def test_the_undo_steps_keep_one_copy_of_your_runs(at):
    """Each run builds its scenario with objects of its own; a step on the undo stack takes the runs of
    the step before it when they are equal (drafter_dashboard/history.py shared), so 50 steps hold one
    copy of 1,000 runs, not 50 (issue 36)."""
    _upload(at, RUNS)
    for n in (16, 24, 32):
        at.number_input(key="w_ex_gpus").set_value(n).run()
    steps = at.session_state["_undo"]
    assert len(steps) == 4 and steps[0].quality.points is None          # the default, before the upload
    assert [p.tau for p in steps[1].quality.points] == [2.1, 2.6]
    assert steps[1].quality.points is steps[2].quality.points is steps[3].quality.points

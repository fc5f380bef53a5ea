"""The text report (planner/export/report.py text_report, what `planner estimate` prints) and the headline
table (planner/decisions/headlines.py): every headline figure is on the report's line for it, the same figure
(the report writes its own labels and hours where the table has days, so it reads the plan's fields;
this test keeps the two reading the same ones)."""
from __future__ import annotations

import pytest

from planner import plan
from planner.decisions.headlines import HEADLINES
from planner.export.report import text_report
from planner.scenario import default_scenario
from planner.units import bytes_to, fmt_hours, fmt_usd

# headline -> (the label of the report's line, the text of the figure on it from the headline's value v)
# in TB; GPU-days and days are shown in hours (x 24), as the report gives every phase
ON_THE_REPORT = {
    "samples": ("training rows (files)", lambda v: f"{v:,.0f}"),
    "tokens": ("stored tokens", lambda v: f"{v:,.0f}"),
    "raw_storage": ("storage (raw)", lambda v: f"{bytes_to(v, 'TB'):,.2f} TB"),
    "storage": ("storage (/1.5 compr.)", lambda v: f"{bytes_to(v, 'TB'):,.2f} TB"),
    "storage_per_node": ("nodes", lambda v: f"{bytes_to(v, 'TB'):,.2f} TB per extraction node"),
    "gpu_days": ("extraction", lambda v: f"{v * 24:,.0f} GPU-h"),
    "extraction_days": ("extraction", lambda v: f"{fmt_hours(v * 24)} wall"),
    "gather_hours": ("gather", lambda v: f"{fmt_hours(v)}:"),
    "transfer_hours": ("transfer", lambda v: fmt_hours(v)),
    "train_offline_gpu_days": ("training offline", lambda v: f"{v * 24:,.0f} GPU-h"),
    "train_online_gpu_days": ("training online", lambda v: f"{v * 24:,.0f} GPU-h"),
    "usd": ("cost offline", fmt_usd),
    "usd_online": ("cost online", fmt_usd),
    "usd_disaggregated": ("cost disaggregated", fmt_usd),
    "acceptance_length": ("drafter quality", lambda v: f"acceptance length {v:.2f}"),
    "speedup": ("drafter quality", lambda v: f"speedup {v:.2f}x"),
}
# the whole offline wall-clock is the verdict's day training ends on; the online one is not on the report
# (it gives the online training's hours, the regeneration's are the extraction's decode)
NOT_ON_THE_REPORT = {"days", "days_online"}


@pytest.fixture(scope="module")
def reports():
    # 1.5x compression (raw and stored storage differ) on two local extraction nodes (storage per node),
    # the shards sent over a link, then gathered on the training node with no transfer: between the
    # two, every headline has a non-zero figure of its own
    s = default_scenario().with_changes(compression=1.5, extraction_nodes=2, extraction_gpus=16, gpus_per_node=8)
    return [(p, text_report(p)) for p in (plan(s), plan(s.with_changes(transfer={"method": "none"})))]


def test_every_headline_is_on_its_report_line_and_is_the_same_figure(reports):
    # a headline added to planner/decisions/headlines.py must be given its line here, or said to be off the report
    assert set(ON_THE_REPORT) | NOT_ON_THE_REPORT == set(HEADLINES)
    checked = set()
    for p, text in reports:
        for name, (label, shown) in ON_THE_REPORT.items():
            v = HEADLINES[name].get(p)
            lines = [ln for ln in text.splitlines() if ln.startswith(f"  {label:<23}")]
            if not v and not lines:      # a figure of 0 (no gather, no transfer) may have no line
                continue
            assert len(lines) == 1 and shown(v) in lines[0], (name, shown(v), lines)
            if v:
                checked.add(name)
        assert f"training ends on day {HEADLINES['days'].get(p):,.1f}" in " ".join(text.split())
    # each figure non-zero once, so a wrong field cannot match by chance
    assert checked == set(ON_THE_REPORT)

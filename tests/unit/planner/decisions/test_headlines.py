"""The headline table (planner/decisions/headlines.py, issue 19): one name, unit, getter and direction per
headline figure; trim's budgets read their figures from it."""
from __future__ import annotations

import pytest

from planner import plan
from planner.decisions.headlines import HEADLINES
from planner.decisions.trim import BUDGET_HEADLINE, Budget, trim
from planner.planning import figures
from planner.scenario import default_scenario


def test_each_budget_reads_its_headline_on_the_plan_and_on_the_figures():
    s = default_scenario()
    p, f = plan(s, band=False), figures(s)
    # by hand from the plan's own fields: GPU-days are GPU-hours / 24, storage the compressed bytes
    expected = {"storage": p.storage_bytes_compressed, "gpu_days": p.extraction.gpu_hours / 24,
                "transfer_hours": p.transfer_hours, "usd": p.cost_usd.total_offline, "days": p.wall_days_offline}
    for name in set(BUDGET_HEADLINE.values()):
        h = HEADLINES[name]
        assert h.get(p) == pytest.approx(expected[name], rel=1e-12) and h.get(f) == h.get(p), name
        assert h.better == "lower"
    assert HEADLINES["acceptance_length"].better == HEADLINES["speedup"].better == "higher"
    assert HEADLINES["samples"].delta_color() == "normal" and HEADLINES["storage"].delta_color() == "inverse"


def test_a_trims_budget_use_is_the_headline_in_the_budgets_unit():
    # a 2 GPU-day extraction budget: the use reported is the trimmed plan's GPU-hours / 24, at most 2
    r = trim(default_scenario(), Budget(gpu_days=2), "proportional")
    use = r.budgets[0]
    p = plan(r.scenario, band=False)
    assert use.name == "gpu_days" and use.used == pytest.approx(p.extraction.gpu_hours / 24, rel=1e-12)
    assert use.used <= 2 and use.share == pytest.approx(use.used / 2, rel=1e-12)


def test_a_difference_is_taken_between_the_figures_as_shown():
    # issue 35: $2,042.90 against $1,956.40 showed +$86 on the headline (86.5 rounded half to even) and
    # 87 in Compare (2,043 - 1,956): both now take the shown figures' difference, 2,043 - 1,956 = 87
    from planner.decisions.headlines import shown_difference
    assert shown_difference("$", 2042.9, 1956.4) == 87
    assert shown_difference("bytes", 82.114, 82.106) == pytest.approx(0.0)    # 82.11 - 82.11: no delta shown
    assert shown_difference("h", 36.46, 36.34) == pytest.approx(0.2)          # 36.5 - 36.3

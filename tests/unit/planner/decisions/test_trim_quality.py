"""The quality trim scores its candidates from their figures and plans only the one it keeps
(issue 23): the score of a step's figures must be, to the bit, what the step's full plan scores
(quality_of), whatever the step changes (rows, the cap) and for another layout, target or harness."""
import pytest

from planner.catalog.stats import get_catalog
from planner.phases.compose import figures
from planner.planning import plan
from planner.scenario import default_scenario
from planner.decisions.trim import Budget, kept_quality_of, quality_of, trim

SCENARIOS = {
    "default": {},
    "eagle3": {"layout": "specforge-eagle3"},          # its reference run's components are in the catalog
    "turn-sglang": {"layout": "speculators", "unit": "turn", "quality": {"eval_engine": "sglang", "temperature": 0.5}},
    "llama-fixed-points": {"model": "llama-3.1-8b", "layout": "eagle1", "regenerate": False},
}


@pytest.mark.parametrize("name", SCENARIOS)
def test_a_steps_score_from_its_figures_is_its_plans(name):
    cat = get_catalog()
    s = default_scenario().with_changes(**SCENARIOS[name])
    full = plan(s, cat, band=False)
    rows = {c.id: c.rows // 3 for c in full.components}                # another mix: a third of every row
    for cap in (None, 1024):                                          # the cap the scenario has, and another
        step = default_scenario().with_changes(**SCENARIOS[name], mix=[{"id": i, "rows": r} for i, r in rows.items()],
                                               **({"max_seq_len": cap} if cap else {}))
        want = quality_of(plan(step, cat, band=False), full.quality.workload)
        got = kept_quality_of(figures(step, cat), full, cat)
        assert got.model_dump_json() == want.model_dump_json(), (name, cap)
    assert kept_quality_of(full, full, cat) == quality_of(full, full.quality.workload)


def test_the_quality_trim_keeps_the_candidate_with_the_most_acceptance():
    # its answer is a full plan of the kept mix, within the budget, and keeps at least what the
    # proportional mix (one of its candidates) keeps; the cap strategy alone may cut below the quality
    # trim's floor of half the cap, so it is no candidate to compare with
    cat = get_catalog()
    s = default_scenario()
    r = trim(s, Budget(storage_tb=20), "quality", catalog=cat)
    p = plan(r.scenario, cat, band=False)
    assert p.storage_bytes_compressed <= 20e12 * (1 + 1e-12)
    assert r.quality_after == quality_of(p, plan(s, cat).quality.workload).acceptance_length
    assert r.quality_after >= trim(s, Budget(storage_tb=20), "proportional", catalog=cat).quality_after


def test_every_strategys_answer_is_a_validated_scenario():
    # the search steps' scenarios hold unvalidated items (planner/decisions/trim.py _StepItem); the answer never does
    from planner.scenario import MixItem, Scenario
    from planner.decisions.trim import STRATEGIES
    cat = get_catalog()
    s = default_scenario()
    for strategy in STRATEGIES:
        kw = {"protect": ["tool"]} if strategy == "protect" else {}
        r = trim(s, Budget(storage_tb=20), strategy, catalog=cat, **kw)
        assert all(type(m) is MixItem for m in r.scenario.mix), strategy
        assert Scenario.model_validate(r.scenario.model_dump()) == r.scenario, strategy


def test_the_quality_strategys_cap_stops_at_half_the_cap_in_force():
    # Model-Optimizer's EAGLE-3 layout caps rows at 3,072 tokens. To fit 10 TB the cap strategy alone
    # cuts the cap far lower (below 1,536). The quality strategy's cap candidate goes no lower than half
    # the cap in force, 3,072 // 2 = 1,536 (a drafter that never saw long rows loses on them, which the
    # quality model does not count), and scales the rows down proportionally from there; that candidate
    # keeps the most expected acceptance here, so the answer is a 1,536-token cap with fewer rows.
    s = default_scenario().with_changes(layout="modelopt-eagle3")
    cat = get_catalog()
    budget = Budget(storage_tb=10)
    by_cap = trim(s, budget, "cap", catalog=cat)
    assert by_cap.max_seq_len_before == 3072
    assert by_cap.max_seq_len_after < 3072 // 2
    r = trim(s, budget, "quality", catalog=cat)
    assert r.max_seq_len_after == 1536
    assert "floor of 1536" in r.note
    assert any(c.after < c.before for c in r.changes)
    assert r.storage_bytes_after <= 10e12

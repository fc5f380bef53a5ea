"""Issue 35: the verdict compares only the ways that run as configured, names what stops a blocked way
and what would let it run (each fix planned and checked), calls a difference inside the figures' bands
a tie with what would decide it, weighs the days beside the dollars and offers the lossless lever where
it changes the answer (planner/decisions/unblock.py, planner/decisions/verdict.py). The default plan's figures by
hand."""
import pytest

from planner import plan
from planner.catalog.stats import get_catalog
from planner.decisions import unblock as U
from planner.decisions.trim import Budget, trim
from planner.decisions.verdict import verdict
from planner.scenario import default_scenario


@pytest.fixture(scope="module")
def default():
    cat = get_catalog()
    p = plan(default_scenario(), cat)
    return p, verdict(p, cat), cat


def test_the_default_verdict_leaves_the_blocked_offline_out(default):
    p, v, _ = default
    # 82.11 TB on one node's 30.72 TB disk: offline cannot run; online and disaggregated store nothing
    assert v.feasible == {"offline": False, "online": True, "disaggregated": True}
    assert v.blocked_by == {"offline": ["disk-capacity"], "online": [], "disaggregated": []}
    # costs.py: online = the regeneration $91.24 (9.961 decode h x 8 GPUs x $1.145) + 402 GPU-h x $4.89
    # = $1,963.49: $2,054.74; disaggregated = the same regeneration + $3,181.57 of streaming: $3,272.81.
    # Offline's $1,956.25 is cheaper than both but cannot run, so online is the answer
    c = p.cost_usd
    assert c.regeneration == pytest.approx(9.961016 * 8 * 1.145, rel=1e-6)
    assert v.cheapest == "online"
    assert v.totals_usd["online"] == pytest.approx(91.2429 + 1963.4941, rel=1e-6)
    # no tie: both totals carry the same regeneration (x the extraction band) and disaggregated streams
    # $1,218.08 more (x the training band, 0.63 to 1.75): it costs more at every corner
    assert c.total_disaggregated - c.training_disaggregated == pytest.approx(c.regeneration, rel=1e-9)
    assert not v.tie and v.tied_with == []
    # the days each way takes: online 9.961 h of decode + its training, 2.51 days; disaggregated 3.16
    assert v.wall_days["online"] == pytest.approx(p.wall_days_online) == pytest.approx(2.506, abs=5e-4)
    assert v.wall_days["disaggregated"] == pytest.approx(3.161, abs=5e-4)


def test_the_default_sentence_names_the_blocker_its_checked_fixes_and_the_lever(default):
    _, v, _ = default
    s = v.sentence
    assert s.startswith("Offline cannot run as configured: storage (82.11 TB) exceeds the 30.72 TB disk of its "
                        "one node. It runs, dropping no row, with a capture batch of 1 on 2 extraction nodes "
                        "(16 GPUs): $917, ending on day 1.9; or with 3 extraction nodes (24 GPUs): $1,956, ending "
                        "on day 3.7; or with the states on a network volume at $60.00 per TB-month: $2,637, "
                        "ending on day 4.6. Of the ways that run, online is cheapest: $2,055 against $3,273 "
                        "disaggregated ($1,218 less); it ends on day 2.5; disaggregated ends on day 3.2.")
    # a capture batch of 1 alone (36.7 TB) does not fit the 30.72 TB disk: never offered as a fix alone
    assert "a capture batch of 1:" not in s
    # the lever: no padding on 2 nodes lets offline run ($916.77) and lowers online to $960.70 (its
    # training reads the unpadded rows too): $43.93 apart, inside the bands: a tie, not a win
    assert v.lever == "a capture batch of 1 on 2 extraction nodes (16 GPUs)"
    assert s.endswith("Lossless lever: a capture batch of 1 on 2 extraction nodes (16 GPUs), dropping no row, lets "
                      "offline run: then offline $917 (ending on day 1.9) and online $961 (ending on day 1.1) tie "
                      "inside the bands.")


def test_every_fix_is_planned_and_checked(default):
    p, _, cat = default
    fixes = {f.label: f for f in U.plan_fixes(p, cat)}
    alone = fixes["a capture batch of 1"]
    # 36.71 TB of unpadded rows still exceed 30.72 TB: it does not clear, and says what remains
    assert alone.stored_bytes / 1e12 == pytest.approx(36.710, abs=1e-3)
    assert not alone.clears() and U.remaining(alone) == ("storage (36.71 TB) exceeds the 30.72 TB disk of its "
                                                         "one node")
    # ceil(36.71 / 30.72) = 2 nodes: 18.36 TB each, cleared
    both = fixes["a capture batch of 1 on 2 extraction nodes (16 GPUs)"]
    assert both.clears() and both.per_node_bytes == pytest.approx(alone.stored_bytes / 2)
    # ceil(82.11 / 30.72) = 3 nodes: 27.37 TB each; the same GPU-hours, so the same $1,956.25
    nodes = fixes["3 extraction nodes (24 GPUs)"]
    assert nodes.clears() and nodes.per_node_bytes / 1e12 == pytest.approx(82.1108 / 3, rel=1e-5)
    assert nodes.totals["offline"] == pytest.approx(p.cost_usd.total_offline, rel=1e-9)
    # a network volume ($60 per TB-month) for the 4.208 days held: 82.1108 x 60 x 4.2079 / 30.4375 = $681.10
    vol = fixes["the states on a network volume at $60.00 per TB-month"]
    assert vol.clears()
    assert vol.totals["offline"] - p.cost_usd.total_offline == pytest.approx(82.1108 * 60 * 4.20793 / 30.4375,
                                                                             rel=1e-4)


def test_a_gap_inside_the_bands_is_a_tie_with_what_decides_it():
    cat = get_catalog()
    p = plan(default_scenario().with_changes(disk_capacity_tb=100), cat)     # offline fits: every way runs
    v = verdict(p, cat)
    b = U.band(p)
    # offline $292.45 x x + $1,663.79 x y (local disks: no rent); online $91.24 x + $1,963.49 y, with x the
    # extraction hours' factor (0.522-1.915) and y the training hours' (1/1.449 = 0.690 to 1/0.618 = 1.618;
    # 1/1.578 = 0.634 to 1/0.573 = 1.745 before issue 33 refitted the band on the per-step EAGLE floor).
    # online - offline = -201.21 x + 299.70 y: +98.49 at (1, 1); at x = 1.915, y = 1: -85.63 < 0, online
    # cheaper; at x = 1, y = 0.690: +5.61 > 0, offline still cheaper (at 0.634 it was -11.28): the
    # extraction rate alone decides it now (both did before)
    assert b.training == pytest.approx((1 / 1.449, 1 / 0.618), rel=1e-9)
    assert U.tied(b, "offline", "online") == "extraction"
    assert v.cheapest == "offline" and v.tie and v.tied_with == ["online"] and v.decided_by == "extraction"
    assert v.sentence.startswith("Offline and online tie: $1,956 against $2,055 online, a gap of $98.49 inside the "
                                 "figures' bands (the extraction hours x0.52-1.92, the training hours x0.69-1.62), "
                                 "and $3,273 disaggregated;")
    # time beside money: online ends on day 2.51, offline on 4.62: 2.1 days sooner
    assert "meanwhile online finishes 2.1 days sooner." in v.sentence


def test_a_trim_proposal_that_still_does_not_fit_says_so():
    # $1,000 offline: the proportional mix at 41.97 TB, still over the 30.72 TB disk (issue 35: 33.6 TB
    # proposed without a word before)
    r = trim(default_scenario(), Budget(usd=1000), "proportional")
    assert r.blocked_by == ["disk-capacity"]
    assert (f"the proposal still cannot run as configured: storage ({r.storage_bytes_after / 1e12:,.2f} TB) exceeds "
            "the 30.72 TB disk of its one node; a storage budget of at most 30.72 TB as well fits it") in r.warnings
    # ... which it does: both budgets together give a proposal that runs
    both = trim(default_scenario(), Budget(usd=1000, storage_tb=30.72), "proportional")
    assert both.blocked_by == [] and both.storage_bytes_after <= 30.72e12
    # a storage budget under the disk clears it
    ok = trim(default_scenario(), Budget(storage_tb=30), "proportional")
    assert ok.blocked_by == [] and not any("cannot run" in w for w in ok.warnings)


def test_a_blocker_of_the_extraction_stops_every_way_and_a_fix_must_clear_them_all():
    cat = get_catalog()
    # llama-3.1-70b's 141 GB of bf16 weights need 2 rtx-pro-6000 (96 GB each): one GPU blocks the
    # extraction, which every way needs (each regenerates the responses there)
    p = plan(default_scenario().with_changes(model="llama-3.1-70b", extraction_gpus=1), cat)
    v = verdict(p, cat)
    assert v.feasible == {"offline": False, "online": False, "disaggregated": False}
    assert v.blocked_by["online"] == v.blocked_by["disaggregated"] == ["tp-raised"]
    assert set(v.blocked_by["offline"]) == {"disk-capacity", "tp-raised"}
    # the ways stopped by the same finding are named together, with the finding's own fix
    assert "Online and disaggregated cannot run as configured: llama-3.1-70b needs tensor parallelism 2" in v.sentence
    assert "No way runs as configured" in v.sentence and v.lever is None
    # a fix is offered only where it clears every blocker of offline: the 2 nodes of 8 GPUs the unpadded
    # bytes need also give the 2 GPUs of tensor parallelism; the padding fix alone (1 GPU) clears neither
    fixes = {f.label: f for f in U.plan_fixes(p, cat)}
    assert fixes["a capture batch of 1 on 2 extraction nodes (16 GPUs)"].clears()
    assert {f.code for f in fixes["a capture batch of 1"].blocked["offline"]} == {"disk-capacity", "tp-raised"}


def test_the_lever_is_offered_only_where_it_changes_the_answer():
    cat = get_catalog()
    # 10 epochs: offline stays blocked and online ($3,008) is the answer; the lever lets offline run on 2
    # nodes and win outside the bands: offered, with the figures of its own plan
    s = default_scenario().with_changes(training={"epochs": 10})
    v = verdict(plan(s, cat), cat)
    assert v.cheapest == "online" and v.lever == "a capture batch of 1 on 2 extraction nodes (16 GPUs)"
    q = plan(s.with_changes(capture_batch_size=1, extraction_gpus=16), cat, band=False)
    assert not [f for f in q.findings if f.severity == "blocks"]
    assert (f"lets offline run: then offline ${q.cost_usd.total_offline:,.0f} "
            f"(ending on day {q.wall_days_offline:.1f}) "
            f"is cheapest, against online ${q.cost_usd.total_online:,.0f}.") in v.sentence
    # 100 TB disks at $10 per TB-month: online and offline tie ($2,055 against $2,070); a capture batch of 1
    # lowers both ($939 offline, $961 online) and they still tie: the answer does not change, no lever
    v = verdict(plan(default_scenario().with_changes(disk_capacity_tb=100, costs={"storage_usd_per_tb_month": 10}),
                     cat), cat)
    assert v.tied_with == ["offline"] and v.lever is None and "Lossless lever" not in v.sentence


def test_a_dearer_way_that_finishes_sooner_says_by_how_much():
    cat = get_catalog()
    # 100 TB disks and 10 epochs: offline $292.45 x + $5,546 y (1,663.79 x 10 / 3 of training), online
    # $91.24 x + $6,545 y: offline - online = 201.21 x - 999.0 y, at its largest (x 1.915, y 0.634)
    # 385.4 - 633.1 < 0: offline is cheaper at every corner, no tie; online ends sooner and says so
    p = plan(default_scenario().with_changes(disk_capacity_tb=100, training={"epochs": 10}), cat)
    v = verdict(p, cat)
    c = p.cost_usd
    assert c.training_offline == pytest.approx(1663.794 * 10 / 3, rel=1e-5)
    assert v.cheapest == "offline" and not v.tie
    on, off = v.wall_days["online"], v.wall_days["offline"]
    assert off - on > 1
    assert (f"online ends on day {on:.1f} ({off - on:.1f} days sooner, for "
            f"${c.total_online - c.total_offline:,.0f} more)") in v.sentence

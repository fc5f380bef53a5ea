"""Issue 23: the verdict's break-evens with few plans. The totals are a + b x in the storage price, the
days held and the extraction GPU price (costs.py multiplies one term by each), so two plans give the
lines and the crossing is solved; epochs and the link are searched by interpolation. Each answer is
checked against the plain bisection the verdict used before (60 plans a side, to 1e-10), written here
as the reference."""
import math

import pytest

from planner import Scenario, plan
from planner.decisions import verdict as V
from planner.phases.compose import Figures, figures
from planner.scenario import Costs, Training, Transfer
from tests.integration.test_storage_rent_and_verdict import small


def _reference(s, inp, p, measured=None):
    """The verdict's old search: the plan at each bound, then bisection (geometric) between x0 and it."""
    if not inp.applies(p):
        return None, None
    lo, hi, x0 = V.span(inp, p)
    here = V.cheapest(p)

    def mode(x):   # the whole figures of the changed scenario, as plan() works them out
        if measured is not None:
            return V._best(V.totals(plan(inp.set(s, x), measured=measured, band=False)))
        return V._best(V.totals(figures(inp.set(s, x))))
    best = None
    for end in (lo, hi):
        if end == x0 or mode(end) in (here, None):
            continue
        a, b = x0, end
        for _ in range(60):
            if abs(b - a) <= 1e-10 * max(abs(a), abs(b)):
                break
            mid = math.sqrt(a * b) if a > 0 and b > 0 else (a + b) / 2
            a, b = (mid, b) if mode(mid) == here else (a, mid)
        x = (a + b) / 2
        d = abs(math.log((x + 1e-12) / (x0 + 1e-12)))
        if best is None or d < best[0]:
            best = (d, x, mode(b))
    return (best[1], best[2]) if best else (None, None)


SCENARIOS = {
    "s3 month": small(costs=Costs(extraction_usd_per_gpu_hour=3.0, training_usd_per_gpu_hour=2.0, storage="s3",
                                  storage_months=1)),
    "s3 timeline": small(costs=Costs(extraction_usd_per_gpu_hour=3.0, training_usd_per_gpu_hour=2.0,
                                     storage="s3")),
    "object store link": small(transfer=Transfer(method="object_store", link_gbps=0.05, efficiency=0.5),
                               training=Training(gpu="h100-sxm", gpus=16, epochs=20, disk="node-raid0")),
    "default s3": Scenario(costs=Costs(storage="s3")),
}


@pytest.mark.parametrize("name", SCENARIOS)
@pytest.mark.parametrize("inp", V.INPUTS, ids=lambda i: i.key)
def test_moved_figures_equal_the_whole_figures(name, inp):
    # _totals_at works out again only the phase its input feeds (Figures.moved, `phase` in INPUTS); the
    # whole figures of the changed scenario must give the same totals to the bit at the bounds, the value
    # now and between. An input declared with the wrong phase (e.g. epochs as "costs": the training hours
    # kept from the base) fails here.
    s = SCENARIOS[name]
    p = plan(s, band=False)
    base = figures(s)
    lo, hi, x0 = V.span(inp, p)
    for x in sorted({lo, hi, x0, (lo + hi) / 2, x0 * 1.7 if x0 * 1.7 <= hi else (x0 + lo) / 2}):
        whole = figures(inp.set(s, x))
        try:
            want = V.totals(whole)
        except Exception as exc:         # a value no plan can be made of: refused alike
            with pytest.raises(type(exc)):
                V.totals(base.moved(inp.set(s, x), inp.phase))
            continue
        assert V.totals(base.moved(inp.set(s, x), inp.phase)) == want, (name, inp.key, x)


def test_a_wrong_phase_is_caught():
    # the check above can fail: epochs declared as feeding the costs alone keeps the base's training hours
    s = SCENARIOS["s3 timeline"]
    base = figures(s)
    changed = s.model_copy(update={"training": s.training.model_copy(update={"epochs": s.training.epochs * 3})})
    assert V.totals(base.moved(changed, "costs")) != V.totals(figures(changed))
    assert V.totals(base.moved(changed, "training")) == V.totals(figures(changed))


@pytest.mark.parametrize("name", SCENARIOS)
def test_each_break_even_matches_the_bisection(name, monkeypatch):
    s = SCENARIOS[name]
    p = plan(s, band=False)
    calls = {"n": 0}
    real = Figures.moved   # what _totals_at builds for each probe (planner/phases/compose.py)

    def counted(*a, **k):
        calls["n"] += 1
        return real(*a, **k)
    monkeypatch.setattr(Figures, "moved", counted)
    base = figures(s)
    flipped = 0
    for inp in V.INPUTS:
        calls["n"] = 0
        x, m = V._crossing(base, inp, p)
        used = calls["n"]
        rx, rm = _reference(s, inp, p)
        assert m == rm, (name, inp.key)
        if rx is None:
            assert x is None, (name, inp.key)
            continue
        flipped += 1
        # the reference stops at 1e-10 relative; the solved line is exact up to rounding
        assert x == pytest.approx(rx, rel=1e-8), (name, inp.key)
        # a line costs one moved figures (the other bound); a search the bound(s) and a few probes
        assert used <= (2 if inp.linear else 12), (name, inp.key, used)
    assert flipped, name                       # each scenario flips on at least one input


def test_the_whole_verdict_takes_a_handful_of_plans(monkeypatch):
    s = SCENARIOS["s3 timeline"]
    p = plan(s)
    n = {"whole": 0, "moved": 0}
    whole, moved = V.figures, Figures.moved   # the verdict's builders of figures (planner/phases/compose.py)
    monkeypatch.setattr(V, "figures", lambda *a, **k: (n.__setitem__("whole", n["whole"] + 1), whole(*a, **k))[1])
    monkeypatch.setattr(Figures, "moved",
                        lambda *a, **k: (n.__setitem__("moved", n["moved"] + 1), moved(*a, **k))[1])
    V.verdict(p)
    # no whole figures: the probes start from the figures the plan was worked out from (Plan.own_figures) and
    # work out only the phase each probe's input feeds
    assert n["whole"] == 0, n
    # before: ~130 plans (60-step bisections); now 1 per line input and a few per searched one
    assert 0 < n["moved"] <= 25, n


def test_states_ready_counts_the_gather():
    # Offline's stored states are usable once captured, gathered to the training nodes and transferred.
    # 4 capture nodes of 8 GPUs, training on 2 other nodes at the same site (no transfer): a gather moves
    # the 82.11 TB (the default mix) from the 4 writers. Its rate is the slowest of the 4 senders' disks,
    # 4 x 2.90 GB/s read (nvme-gen4, planner/presets/hardware.yaml) = 11.6 GB/s; the 4 senders' network
    # (4 x 200 Gb/s tcp x its efficiency: 4 x 12.5 GB/s = 50 GB/s), the 2 receivers' (25 GB/s) and their
    # disks are faster. 82.11e12 B / 11.6e9 B/s = 7,078.5 s = 1.966 h, so the states are ready
    # 1.966 / 24 = 0.0819 days after the capture's wall-clock hours, not at them.
    d = Scenario().model_dump()
    d.update(extraction_nodes=4, extraction_gpus=32, gpus_per_node=8)
    d["training"].update(gpus=16, nodes=2)
    d["transfer"]["method"] = "none"
    p = plan(Scenario.model_validate(d))
    stored = p.storage_bytes_compressed
    assert stored == pytest.approx(82.11e12, rel=1e-3)
    assert p.nodes.gather_bound == "sending disks"
    gather_h = stored / (4 * 2.90e9) / 3600
    assert gather_h == pytest.approx(1.966, abs=1e-3)
    assert p.gather_hours == pytest.approx(gather_h, rel=1e-12)
    assert p.transfer_hours == 0
    v = V.verdict(p)
    assert v.states_ready_days == pytest.approx((p.extraction.wall_hours + gather_h) / 24, rel=1e-12)
    assert v.states_ready_days - p.extraction.wall_hours / 24 == pytest.approx(0.0819, abs=1e-4)


def test_a_calibrated_plans_break_evens_probe_its_calibrated_figures():
    # `estimate --calibration` plans with a run's measured figures; its verdict's probes must move those
    # figures, not the tables'. A run that stored 3x the table's bytes a token (the default layout's
    # hidden states are about 50 KB a token: 150,000 B here) and captured at a tenth of the roofline: at
    # the scenario's own storage price the probe's totals are the plan's own, to the bit. Before the plan kept
    # its figures (Plan.own_figures) the probes re-planned the scenario without the calibration, so the
    # storage price's line ran through uncalibrated totals (a third of the stored bytes).
    from planner.runs import calibration as rc
    s = SCENARIOS["s3 month"]
    p0 = plan(s)
    m = rc.Measured(layout=s.layout, model=s.model, hidden_dtype=p0.hidden_dtype, layers=tuple(p0.layers), rows=3,
                    date="2026-12-06", data_bytes_per_token=150_000.0, overhead_bytes_per_file=0.0,
                    tokens_per_s_per_gpu=p0.extraction.prefill_tokens_per_s_per_gpu / 10)
    p = plan(s, measured=m)
    assert p.storage_bytes > 2 * p0.storage_bytes                 # the calibration moved the plan
    own = p.own_figures()
    assert own is not None and V.totals(own) == V.totals(p)
    inp = next(i for i in V.INPUTS if i.key == "storage_usd_per_tb_month")
    x0 = inp.current(p)
    assert V._totals_at(own.kept(), inp, x0) == V.totals(p)
    # the tables' figures at the same price are another plan's (what the probes once read)
    assert V.totals(figures(inp.set(s, x0))) != V.totals(p)
    # and the verdict's break-evens are the calibrated plans' own, found by bisection on whole calibrated plans
    v = V.verdict(p)
    flipped = 0
    for inp in V.INPUTS:
        rx, rm = _reference(s, inp, p, measured=m)
        assert v.flips_to[inp.key] == rm, inp.key
        if rx is None:
            assert v.breakeven[inp.key] is None, inp.key
        else:
            flipped += 1
            assert v.breakeven[inp.key] == pytest.approx(rx, rel=1e-8), inp.key
    assert flipped, "the calibrated plan flips on no input: pick a scenario that does"

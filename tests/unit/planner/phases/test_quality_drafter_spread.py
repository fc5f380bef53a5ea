"""The drafter-quality term of the acceptance band (issue 34, second round): quality.yaml drafter_spread,
fitted on bench/users_reports.yaml's `fit` sources alone, never on the reports bench/fidelity.py scores.
Every expected number is worked by hand in the comments."""
import math
import sys
from pathlib import Path

import pytest

from planner.phases.quality import quality, quality_presets, reference_tokens

ROOT = Path(__file__).resolve().parents[4]


def _fidelity():
    sys.path.insert(0, str(ROOT / "bench"))
    import fidelity
    return fidelity


def _specforge113(**kw):
    # SpecForge issue #113's setting: EAGLE-3 for Llama-3.1-8B (the reference's own target), SGLang, 3 steps,
    # topk 8, 10 draft tokens, a drafter trained like the reference run, general workload
    ref = quality_presets().drafters["eagle3"].reference
    return quality("eagle3", reference_tokens("eagle3"), epochs=ref.epochs, regenerated=ref.regenerated,
                   workload={"general": 1.0}, engine="sglang", num_speculative_tokens=3, topk=8, num_draft_tokens=10,
                   target="llama-3.1-8b", **kw)


def test_the_band_low_end_by_hand():
    q = _specforge113()
    # the served centre 3.454 (bench/fidelity.py spread_points prints it); drafter_spread 0.666: the low end
    # 1 + (3.454 - 1) x (1 - 0.666) = 1 + 2.454 x 0.334 = 1.8196
    assert quality_presets().drafter_spread.value == 0.666
    assert q.acceptance_length == pytest.approx(3.454, abs=1e-3)
    assert q.acceptance_low == pytest.approx(1 + (3.454 - 1) * 0.334, abs=1e-3)
    # without the term the curve's and the harness's band end higher: the term is what binds here
    assert _specforge113(drafter_spread=0.0).acceptance_low > 2.5
    # the high side is the curve's and harness's alone
    assert q.acceptance_high == _specforge113(drafter_spread=0.0).acceptance_high
    # the acceptance rate's band follows: SGLang (tau - 1) / (n - 1) = 0.8196 / 9 = 0.09107
    assert q.acceptance_rate_low == pytest.approx(0.8196 / 9, abs=2e-4)


def test_your_own_runs_carry_no_drafter_spread():
    from planner.scenario import QualityPoint
    pts = [QualityPoint(drafter="eagle3", target="llama-3.1-8b", family="general", training_tokens=t, epochs=1,
                        eval_engine="paper", tau=tau) for t, tau in ((1e8, 3.0), (4e8, 4.0))]
    assert _specforge113(points=pts).acceptance_low == _specforge113(points=pts, drafter_spread=0.9).acceptance_low


def test_the_term_is_fitted_on_the_fit_sources_only():
    f = _fidelity()
    data = f.users_data()
    pts = f.spread_points(data)
    assert {p["source"] for p in pts} == set(data["split"]["fit"]) == set(quality_presets().drafter_spread.fit_sources)
    # the least q: SpecForge #339's 7-4-16 tree, AL 2.52 against the centre 5.542:
    # (2.52 - 1) / (5.542 - 1) = 1.52 / 4.542 = 0.33466; the term 1 - 0.33466 = 0.66534, shipped rounded up
    least = min(pts, key=lambda p: p["q"])
    assert least["id"] == "specforge339-b1-7-4-16" and least["q"] == pytest.approx(1.52 / 4.542, abs=2e-4)
    assert quality_presets().drafter_spread.value == math.ceil(f.fit_drafter_spread(pts) * 1000) / 1000
    # the DFlash reproduction's q from its measured reference: (4.99 - 1) / (6.05 - 1) = 0.79010
    assert next(p["q"] for p in pts if p["source"] == "SELINY2") == pytest.approx(3.99 / 5.05)
    # no fit source is scored
    assert not {r["source"] for r in f.users_reports()} & set(data["split"]["fit"])


def test_the_split_must_part_the_sources(monkeypatch):
    import copy
    f = _fidelity()
    data = f.users_data()
    bad = copy.deepcopy(data)
    bad["split"]["score"].append("SPECFORGE339")
    monkeypatch.setattr(f.yaml, "safe_load", lambda fh: bad)
    with pytest.raises(ValueError, match="split"):
        f.users_data()

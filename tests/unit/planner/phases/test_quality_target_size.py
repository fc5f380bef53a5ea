"""The target-size term of tau (issue 22; planner/phases/quality.py target_term, quality.yaml target_size):
beta of a series by hand, the kind's beta from its series, the band from every series and its widening
outside the published sizes, the term in quality() and the trim's fast tau, and the fidelity check
that scores the new points with their publication left out."""
import math

import pytest

from planner.phases.quality import quality, reference_tokens, series_beta, target_term, tau_function


def test_beta_of_a_pair_and_of_a_series_by_hand():
    # EAGLE-3 paper Table 1 means: 8B 6.23, 70.6B 5.88: ln(5.88 / 6.23) / ln(70.6 / 8.0)
    # = ln(0.943820) / ln(8.825) = -0.057819 / 2.177591 = -0.026552
    assert series_beta([("a", 8.0, 6.23), ("b", 70.6, 5.88)]) == pytest.approx(-0.026552, abs=2e-6)
    # three points on one power law tau = 2 P^0.1 return 0.1 (least squares through them)
    pts = [(str(p), p, 2 * p ** 0.1) for p in (2.0, 5.0, 40.0)]
    assert series_beta(pts) == pytest.approx(0.1, rel=1e-12)
    # a flat series: 0
    assert series_beta([("a", 7.0, 4.0), ("b", 70.0, 4.0)]) == 0


def test_the_kinds_beta_is_the_mean_of_its_t0_pairs_without_the_left_out():
    # EAGLE-3 without AngelSlim's series: the EAGLE-3 paper's -0.026552 and the DFlash paper's
    # EAGLE-3 4B -> 8.2B pair ln(3.40 / 3.48) / ln(8.2 / 4.0) = -0.023257 / 0.717840 = -0.032399
    # (its T = 1 series is in the band, not the mean): beta = -0.029476; LLaMA-3.1-70B (70.6B) against
    # the 8.0B reference: x exp(-0.029476 x 2.177591) = x exp(-0.064186) = x 0.937830
    tt = target_term("eagle3", "llama-3.1-70b", leave_out=("ANGELSLIM",))
    assert tt.beta == pytest.approx(-0.029476, abs=2e-6)
    assert tt.factor == pytest.approx(0.937830, abs=2e-6)
    # the reference's own target, and no target: no term
    assert target_term("eagle3", "llama-3.1-8b").factor == 1 and target_term("eagle3", None).basis == ""


def test_dflash_at_27b_is_outside_its_one_series_and_widens_both_sides_by_hand():
    # DFlash has one series (Table 1 averages, 4.0B 6.54, 8.2B 6.49): beta = ln(6.49 / 6.54) / ln(2.05)
    # = -0.0076746 / 0.717840 = -0.010691. Qwen3.6-27B (27.78B) / Qwen3-8B (8.2B) = 3.38780, ln 1.220190:
    # factor exp(-0.010691 x 1.220190) = exp(-0.013045) = 0.987040.
    # One series: the band takes every kind's series: lowest Vicuna 7B -> 13B EAGLE-2 ln(4.83 / 4.98) /
    # ln(13 / 7) = -0.030583 / 0.619039 = -0.049404, highest EAGLE-3 at T = 1 ln(5.66 / 4.92) / 2.177591
    # = 0.140116 / 2.177591 = 0.064345: below by 0.038713, above by 0.075036. 27.78B lies past 8.2B:
    # widen 1 + ln(27.78 / 8.2) = 2.220190. Low exp((-0.010691 - 0.038713 x 2.220190) x 1.220190)
    # = exp(-0.117922) = 0.888766; high exp((-0.010691 + 0.075036 x 2.220190) x 1.220190) = exp(0.190231)
    # = 1.209527
    tt = target_term("dflash", "qwen3.6-27b")
    assert tt.beta == pytest.approx(-0.010691, abs=2e-6)
    assert tt.factor == pytest.approx(0.987040, abs=2e-6)
    assert (tt.low, tt.high) == pytest.approx((0.888766, 1.209527), abs=2e-5)
    assert tt.extrapolated and "widens by 2.22 on both sides" in tt.basis
    # inside the published sizes (Qwen3-4B, given its size) no widening
    assert not target_term("dflash", "qwen3-4b", target_params=4.0e9).extrapolated


def test_a_target_of_unknown_size_gets_no_term_and_a_two_sided_band():
    tt = target_term("eagle3", "my-own-model")
    assert tt.factor == 1 and tt.low < 1 < tt.high and "not known" in tt.basis


def test_quality_and_the_trims_fast_tau_take_the_term():
    ref = reference_tokens("dflash")
    kw = dict(epochs=6, regenerated=True, workload={"general": 0.5, "math": 0.5}, engine="paper", reference=ref)
    same = quality("dflash", ref, target="qwen3-8b", **kw)
    other = quality("dflash", ref, target="qwen3.6-27b", **kw)
    # at the reference's data the paper harness returns the levels: 0.5 x 4.24 + 0.5 x 7.163 = 5.7015,
    # times the size factor 0.987040 = 5.627609
    assert same.acceptance_length == pytest.approx(5.7015, rel=1e-9)
    assert other.acceptance_length == pytest.approx(5.7015 * 0.987040, rel=1e-5)
    assert other.target_factor == pytest.approx(0.987040, abs=2e-6)
    assert other.acceptance_low < same.acceptance_low and other.acceptance_high > same.acceptance_high
    fast = tau_function("dflash", target="qwen3.6-27b", **kw)(ref)
    assert fast == pytest.approx(other.acceptance_length, rel=1e-4)


def test_fidelity_scores_the_new_points_with_their_publication_left_out():
    import sys
    from pathlib import Path
    sys.path.insert(0, str(Path(__file__).resolve().parents[4] / "bench"))
    from fidelity import absolute_tau
    rows = absolute_tau()
    new = [r for r in rows if r["source"] in ("EAGLE3P", "DFLASHP")]
    assert len(new) == 9 and len({r["source"] for r in rows}) >= 10
    assert sum(r["inside"] for r in rows) / len(rows) >= 0.8
    # held out: the EAGLE-3 70B points are predicted with beta from the DFlash paper's EAGLE-3 pair and
    # AngelSlim's series only
    held = target_term("eagle3", "llama-3.3-70b", target_params=70.6e9, leave_out=("EAGLE3P",))
    assert held.beta == pytest.approx((-0.032399 + series_beta([("", 1.7, 2.85), ("", 4.0, 3.03), ("", 8.2, 3.72),
                                                                 ("", 14.8, 3.49), ("", 32.8, 2.76)])) / 2, abs=2e-6)
    assert math.sqrt(sum(math.log(r["ratio"]) ** 2 for r in new) / len(new)) < 0.1


def test_a_bad_series_is_refused_with_its_id():
    from planner.phases.quality import check_size_series, quality_presets
    q = quality_presets().model_copy(deep=True)
    s = q.target_size.series[0]
    s.points = [("a", 8.0, 6.0), ("b", 8.0, 5.0)]          # one size twice: no slope
    with pytest.raises(ValueError, match=f"target_size {s.id}: points need two or more distinct sizes"):
        check_size_series(q)
    s.points, s.drafter = [("a", 8.0, 6.0), ("b", 70.0, 5.0)], "medusa"
    with pytest.raises(ValueError, match="drafter 'medusa' is not one of"):
        check_size_series(q)


def test_a_given_size_overrides_the_name_by_hand():
    # DFlash's beta -0.010691 (its one series, above); its reference target Qwen3-8B is 8.2B. A 70B
    # target: ln(70 / 8.2) = 2.144361, factor exp(-0.010691 x 2.144361) = exp(-0.022926) = 0.977335.
    # 70B lies past 8.2B: widen 1 + 2.144361 = 3.144361; band exp((-0.010691 - 0.038713 x 3.144361) x
    # 2.144361) = 0.752801 and exp((-0.010691 + 0.075036 x 3.144361) x 2.144361) = 1.620954
    for name in ("custom", "qwen3-8b"):      # a custom 70B named anyhow, even like the reference's target
        tt = target_term("dflash", name, target_params=70e9)
        assert tt.factor == pytest.approx(0.977335, abs=2e-6)
        assert (tt.low, tt.high) == pytest.approx((0.752801, 1.620954), abs=2e-5)
        assert "70B / 8.2B (qwen3-8b)" in tt.basis
    # the reference's own size: no term, whatever the name
    assert target_term("dflash", "custom", target_params=8.2e9) == target_term("dflash", "qwen3-8b")
    assert target_term("dflash", "qwen3-8b", target_params=8.2e9).basis == ""


def _custom70(name: str):
    from planner import Scenario, plan
    from planner.presets.specs import ModelSpec
    # a dense 70B shaped like Llama-3.1-70B (hidden 8192, 80 layers, 64 / 8 heads)
    m = ModelSpec(id=name, hidden_size=8192, num_layers=80, full_attention_layers=80, num_q_heads=64, num_kv_heads=8,
                  head_dim=128, vocab_size=128256, params=70e9, active_params=70e9)
    return plan(Scenario(model="custom", custom_model=m, layout="specforge-dflash",
                         mix=[{"id": "openorca", "rows": 20_000}]), band=False)


def test_a_custom_70b_target_gets_its_size_term_in_the_plan_and_the_json():
    from planner.export.plan_json import to_json_dict
    for name in ("custom", "qwen3-8b"):
        p = _custom70(name)
        # as by hand above: 0.977335, band 0.752801-1.620954
        assert p.quality.target_factor == pytest.approx(0.977335, abs=2e-6)
        q = to_json_dict(p)["quality"]
        assert q["target_factor"] == pytest.approx(0.977335, abs=2e-6)
        assert (q["target_factor_low"], q["target_factor_high"]) == pytest.approx((0.752801, 1.620954), abs=2e-5)
        assert not any("size is not known" in f.text for f in p.findings)

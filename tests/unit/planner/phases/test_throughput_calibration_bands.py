"""Issue 22, honest throughput bands: a calibration's band comes from the held-out transfers of the same
reach among the other publications (planner/phases/extraction.py rules / decide), and bench/fidelity.py scores
the band the plan gives, leaving one publication out."""
import math
import sys
from pathlib import Path

import pytest

from planner.phases.extraction import REACH, calibrate, decide, reach, row_phase, rules, source_key, transfers
from planner.phases.throughput_calibration import measurements
from planner.presets.specs import gpu_presets, model_presets

ROOT = Path(__file__).resolve().parents[4]


def test_a_level_with_enough_transfers_takes_the_better_way_and_its_prediction_interval():
    # three held-out transfers (log calibrated / measured, log roofline / measured):
    mine = [(0.1, 0.3), (-0.2, 0.25), (0.05, -0.4)]
    # calibrated rms sqrt((0.01 + 0.04 + 0.0025) / 3) = sqrt(0.0175) = 0.1323; roofline rms
    # sqrt((0.09 + 0.0625 + 0.16) / 3) = sqrt(0.104167) = 0.3227: scale by the row. The band is the 90%
    # prediction interval of the next transfer, not the largest of three (which covers ~3/4 of new ones):
    # residuals log(measured / calibrated) -0.1, 0.2, -0.05: mean 0.016667, deviations -0.116667, 0.183333,
    # -0.066667, squares 0.013611 + 0.033611 + 0.004444 = 0.051667, / 2 = 0.025833, sd 0.160728;
    # t(2 dof, 95% one-sided) 2.920 x 0.160728 x sqrt(4/3) 1.154701 = 0.541932; ends -0.525265, 0.558599:
    # symmetric by the farther, 0.558599 (a nearer level's 0.15 is narrower, the roofline's 0.7 is not used)
    r = decide("engine", mine, 0.15, 0.7)
    assert r.calibrate and r.band == pytest.approx(0.558599, abs=1e-5) and r.evidence == 3
    # a nearer level's band of 0.6 is wider: kept (a further reach is never banded narrower)
    assert decide("engine", mine, 0.6, 0.7).band == pytest.approx(0.6)
    # swap the columns: now the roofline did better (0.1323 < 0.3227), so it is kept, with its own
    # largest error over every published row (0.7), not the three transfers' 0.4
    r = decide("engine", [(b, a) for a, b in mine], 0.15, 0.7)
    assert not r.calibrate and r.band == pytest.approx(0.7) and r.evidence == 0


def test_a_level_without_enough_transfers_scales_only_a_same_match():
    # one transfer is below MIN_TRANSFERS (2): a `same` match (nothing nearer exists) still scales,
    # any farther reach keeps the roofline; both take the roofline's spread, 0.65
    one = [(0.9, 0.1)]
    # (the one transfer is named in the basis, too few for an interval; it sets neither use nor band)
    a, b = decide("same", one, 0.0, 0.65), decide("same", [], 0.0, 0.65)
    assert (a.calibrate, a.band, a.evidence) == (b.calibrate, b.band, b.evidence) and (a.tested, b.tested) == (1, 0)
    assert decide("same", one, 0.0, 0.65).calibrate and decide("same", one, 0.0, 0.65).band == 0.65
    assert not decide("class", one, 0.0, 0.65).calibrate
    # `none` (no row near) never scales, however many transfers
    assert not decide("none", [(0.0, 0.5), (0.0, 0.5)], 0.0, 0.65).calibrate


def test_reach_is_the_furthest_difference():
    models = model_presets()
    row = next(r for r in measurements().rows if r.id == "vllm-q32b-h100-sharegpt")   # dense, H100, vLLM, memory-bound
    q32, q36 = models["qwen3-32b"], models["qwen3.6-27b"]
    assert reach(row, q32, "h100-sxm", "vllm", "memory bandwidth", "decode") == "same"
    assert reach(row, q32, "h200", "vllm", "memory bandwidth", "decode") == "same"          # same generation
    assert reach(row, q32, "h100-sxm", "vllm", "compute", "decode") == "concurrency"
    assert reach(row, q32, "h100-sxm", "vllm", "compute", "prefill") == "same"              # prefill has no regime
    assert reach(row, q32, "h100-sxm", "trtllm", "compute", "decode") == "engine"
    assert reach(row, q32, "b200", "trtllm", "compute", "decode") == "generation"
    assert reach(row, q36, "b200", "trtllm", "compute", "decode") == "class"
    assert REACH[-1] == "none"


def test_holding_a_source_out_removes_all_its_rows():
    models, gpus = model_presets(), gpu_presets()
    rows = {r.id: r for r in measurements().rows}
    for src in {source_key(r) for r in rows.values()}:
        out = frozenset({src})
        for phase in ("prefill", "decode"):
            held = transfers(phase, out)
            # neither calibrated nor calibrating
            assert all(source_key(rows[t[0]]) != src and (not t[1] or source_key(rows[t[1]]) != src) for t in held)
            # and every other row of the phase is there, each calibrated by another publication's row
            assert {t[0] for t in held} == {r.id for r in rows.values()
                                            if source_key(r) != src and row_phase(r.id) == phase}
            assert all(not t[1] or source_key(rows[t[1]]) != source_key(rows[t[0]]) for t in held)
            for r in rows.values():
                if source_key(r) == src and row_phase(r.id) == phase:
                    c = calibrate(models[r.model], gpus[r.gpu], weight_dtype=r.weight_dtype, isl=r.isl, osl=r.osl,
                                  phase=phase, exclude_sources=out)
                    assert not c.row or source_key(rows[c.row]) != src


def test_the_hybrid_rows_held_out_fall_back_to_the_roofline_and_its_spread():
    # SGLang's Qwen3.6-27B cells are the only hybrid rows: held out, a hybrid case finds no row near
    # (the dense rows are farther than MAX_DISTANCE), keeps the roofline, and the band is the roofline's
    # largest |log roofline / measured| over the rows left in
    from planner.phases.extraction import _preset_roofline
    m, g = model_presets()["qwen3.6-27b"], gpu_presets()["b200"]
    out = frozenset({"SGLQ36"})
    c = calibrate(m, g, weight_dtype="fp8", isl=8192, osl=1024, phase="prefill", exclude_sources=out)
    left = [r for r in measurements().rows if source_key(r) != "SGLQ36"]
    spread = max(abs(math.log(_preset_roofline(r.id)[0] / r.value)) for r in left)
    assert c.row == "" and c.factor == 1.0 and c.extrapolated and c.band == (-spread, spread)
    assert rules("prefill", out)["none"].band == spread


def test_fidelity_scores_the_plans_band_with_the_source_held_out(monkeypatch):
    sys.path.insert(0, str(ROOT / "bench"))
    import fidelity

    from planner.phases import extraction
    seen = []
    real = extraction.calibrate

    def spy(*a, **kw):
        seen.append((kw.get("exclude_sources"), kw.get("decode_mfu")))
        return real(*a, **kw)
    monkeypatch.setattr(extraction, "calibrate", spy)
    rows = fidelity.phase_area("decode")
    # every scored row went through the plan's calibrate, with exactly its own publication held out and
    # the decode MFU refitted without it
    from planner.phases.extraction import fit_decode_mfu
    assert len(seen) == len(rows) and all(len(x[0]) == 1 for x in seen)
    assert [next(iter(x[0])) for x in seen] == [r["source"] for r in rows]
    assert [x[1] for x in seen] == [fit_decode_mfu(x[0])[0] for x in seen] == [r["decode_mfu"] for r in rows]
    for r in rows:
        assert r["low"] <= r["predicted"] <= r["high"]
        assert r["inside"] == (r["low"] <= r["measured"] <= r["high"])


def test_the_default_plan_says_its_extraction_is_an_extrapolation_with_its_band():
    # Qwen3.6-27B on the RTX PRO 6000: prefill on SGLang's B200/B300 hybrid cells (another GPU), decode on
    # the roofline alone (no decode-phase row near); both say so in the findings and the assumptions,
    # with the hours' band x exp(-m)-exp(m)
    from planner import default_scenario, plan
    p = plan(default_scenario())
    e = p.extraction
    for c in (e.prefill_calibration, e.decode_calibration):
        assert c.extrapolated
        lo, hi = f"{math.exp(c.band[0]):.2f}", f"{math.exp(c.band[1]):.2f}"
        assert any(f.code == "calibration" and c.phase in f.text and f"{lo}-{hi}x" in f.text for f in p.findings)
        row = next(a for a in p.assumptions if a.name == f"{c.phase} calibration")
        assert f"x{lo}-{hi}" in row.value
    assert "an extrapolation" in next(a for a in p.assumptions if a.name == "prefill calibration").value


def test_two_transfers_are_too_few_for_an_interval_and_take_the_roofline_spread():
    # two transfers, calibrated errors 0.1 and 0.3 (the roofline's 0.5 and 0.6 did worse): scaled, but the
    # larger of two, 0.3, would cover about 2/3 of new transfers, and their t interval (1 degree of freedom:
    # 6.314 x sd 0.141421 x sqrt(1.5) = 1.0936 about the mean -0.2, band 1.29) is the t's tail, not the
    # errors: below MIN_INTERVAL (3) the level takes the roofline's spread, 0.65, and says why
    r = decide("concurrency", [(0.1, 0.5), (0.3, 0.6)], 0.0, 0.65, rows=20)
    assert r.calibrate and r.evidence == 0 and r.band == pytest.approx(0.65)
    assert "2 held-out transfers of that reach are too few for an interval, fewer than 3" in r.basis()
    assert "over the 20 published rows (covers about 20/21 of new rows)" in r.basis()
    # three transfers give the interval, and the note says it: errors 0.1, 0.3, 0.2, residuals -0.1, -0.3,
    # -0.2: mean -0.2, sd 0.1, half 2.920 x 0.1 x sqrt(4/3) = 0.337166, ends -0.537166, 0.137166: 0.537166
    r = decide("concurrency", [(0.1, 0.5), (0.3, 0.6), (0.2, 0.6)], 0.0, 0.65, rows=20)
    assert r.evidence == 3 and r.band == pytest.approx(0.537166, abs=1e-5)
    assert "90% prediction interval of 3 held-out transfers" in r.basis() and "2 degrees of freedom" in r.basis()


def test_a_farther_level_is_never_banded_narrower_than_a_nearer_scaled_one():
    # every level at or beyond a scaling level is at least as wide (rules(): the floor)
    for phase in ("prefill", "decode"):
        rs = rules(phase)
        scaled = [rs[lv].band for lv in REACH if rs[lv].calibrate]
        for i, lv in enumerate(REACH):
            nearer = [rs[x].band for x in REACH[:i] if rs[x].calibrate]
            assert rs[lv].band >= max(nearer, default=0.0), (phase, lv)
        assert scaled


def test_the_decode_mfu_is_fitted_in_one_place_and_refitted_without_a_held_out_source():
    # planner.phases.extraction.fit_decode_mfu is the fit: the preset's value is it on every row, and each held-out
    # refit is the grid's argmin of rms log(roofline / measured) over the other publications' rows, worked
    # here through measured_ratio directly at each grid value
    from planner.phases.extraction import DECODE_MFU_GRID, fit_decode_mfu, measured_ratio
    from planner.presets.specs import efficiency
    from planner.scenario import Throughput
    models, gpus = model_presets(), gpu_presets()
    assert fit_decode_mfu()[0] == efficiency("decode_mfu")
    for src in sorted({source_key(r) for r in measurements().rows}):
        left = [r for r in measurements().rows if source_key(r) != src]

        def rms(m, left=left):   # called in this iteration only; the default binds it all the same
            xs = [math.log(measured_ratio(r, models, gpus, Throughput(mode="roofline", decode_mfu=m))[0] / r.value)
                  for r in left]
            return math.sqrt(sum(x * x for x in xs) / len(xs))
        best = min(DECODE_MFU_GRID, key=rms)
        assert fit_decode_mfu(frozenset({src})) == (best, pytest.approx(rms(best))), src
    # and the held-out refits differ from the preset (the leak the refit removes): TensorRT-LLM's rows run
    # faster than the roofline, so without them a lower MFU fits, with only them a higher one
    assert fit_decode_mfu(frozenset({"TRT"}))[0] < efficiency("decode_mfu") < fit_decode_mfu(frozenset({"GPUSTACK"}))[0]


def test_a_refitted_decode_mfu_reaches_the_calibration_factor():
    # the calibrating row's roofline, its phase and the band all take the decode MFU given. At MFU 0.9 the
    # ShareGPT rows' decode runs faster than their prefill, so vllm-q14b-h100-sharegpt (3,173.92 output
    # tok/s per GPU, a mixed row) becomes a prefill row and calibrates Qwen3-14B's prefill, its factor
    # measured / the roofline at 0.9 (at the preset's 0.25 the row is a decode row)
    from planner.phases.extraction import _preset_roofline, row_phase
    m, g = model_presets()["qwen3-14b"], gpu_presets()["h100-sxm"]
    assert row_phase("vllm-q14b-h100-sharegpt") == "decode" and row_phase("vllm-q14b-h100-sharegpt", 0.9) == "prefill"
    c = calibrate(m, g, weight_dtype="bf16", isl=217, osl=202, phase="prefill", decode_mfu=0.9)
    roof9, measured = _preset_roofline(c.row, 0.9)
    assert c.row == "vllm-q14b-h100-sharegpt" and measured == 3173.92
    assert c.factor == pytest.approx(3173.92 / roof9)
    # the decode MFU moves that row's roofline (its decode is compute-bound at 0.25): the factor differs
    assert abs(_preset_roofline(c.row)[0] / roof9 - 1) > 0.05
    assert calibrate(m, g, weight_dtype="bf16", isl=217, osl=202, phase="prefill").row != c.row


def test_an_unevidenced_same_match_carries_the_roofline_spread():
    # the default plan's prefill scales by sglang-q36-27b-b200-bf16 (a `same` reach: hybrid, Blackwell,
    # vLLM-family; another GPU) though no held-out prefill transfer of that reach exists: its band is then
    # the widest the table gives, the roofline's largest error over every row, as for the roofline alone
    from planner import default_scenario, plan
    c = plan(default_scenario()).extraction.prefill_calibration
    r = rules("prefill")
    assert c.row == "sglang-q36-27b-b200-bf16" and r["same"].evidence == 0 and r["same"].tested == 0
    assert c.band == (-r["none"].band, r["none"].band) and "no held-out transfer of that reach bounds it" in c.note

"""Issue 22, honest throughput bands: a calibration's band comes from the held-out transfers of the same
reach among the other publications (planner/extraction.py rules / decide), and bench/fidelity.py scores
the band the plan gives, leaving one publication out."""
import math
import sys
from pathlib import Path

import pytest

from planner.calibration import measurements
from planner.extraction import (REACH, calibrate, decide, reach, row_phase, rules, source_key, transfers)
from planner.specs import gpu_presets, model_presets

ROOT = Path(__file__).resolve().parents[3]


def test_a_level_with_enough_transfers_takes_the_better_way_and_its_largest_error():
    # three held-out transfers (log calibrated / measured, log roofline / measured):
    mine = [(0.1, 0.3), (-0.2, 0.25), (0.05, -0.4)]
    # calibrated rms sqrt((0.01 + 0.04 + 0.0025) / 3) = sqrt(0.0175) = 0.1323; roofline rms
    # sqrt((0.09 + 0.0625 + 0.16) / 3) = sqrt(0.104167) = 0.3227: scale by the row; band the largest
    # |calibrated error|, 0.2 (a nearer level's 0.15 is narrower, the roofline's 0.7 is not used)
    r = decide("engine", mine, 0.15, 0.7)
    assert r.calibrate and r.band == pytest.approx(0.2) and r.evidence == 3
    # a nearer level's band of 0.3 is wider: kept (a further reach is never banded narrower)
    assert decide("engine", mine, 0.3, 0.7).band == pytest.approx(0.3)
    # swap the columns: now the roofline did better (0.1323 < 0.3227), so it is kept, with its own
    # largest error over every published row (0.7), not the three transfers' 0.4
    r = decide("engine", [(b, a) for a, b in mine], 0.15, 0.7)
    assert not r.calibrate and r.band == pytest.approx(0.7) and r.evidence == 0


def test_a_level_without_enough_transfers_scales_only_a_same_match():
    # one transfer is below MIN_TRANSFERS (2): a `same` match (nothing nearer exists) still scales,
    # any farther reach keeps the roofline; both take the roofline's spread, 0.65
    one = [(0.9, 0.1)]
    assert decide("same", one, 0.0, 0.65) == decide("same", [], 0.0, 0.65)
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
            assert {t[0] for t in held} == {r.id for r in rows.values() if source_key(r) != src and row_phase(r.id) == phase}
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
    from planner.extraction import _preset_roofline
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
    from planner import extraction
    seen = []
    real = extraction.calibrate

    def spy(*a, **kw):
        seen.append(kw.get("exclude_sources"))
        return real(*a, **kw)
    monkeypatch.setattr(extraction, "calibrate", spy)
    rows = fidelity.phase_area("decode")
    # every scored row went through the plan's calibrate, with exactly its own publication held out
    assert len(seen) == len(rows) and all(len(x) == 1 for x in seen)
    assert [next(iter(x)) for x in seen] == [r["source"] for r in rows]
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

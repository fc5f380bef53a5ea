"""A sampled profile's 95% interval carries into the plan as a band on storage and extraction time
(issue 15): JSON storage_bytes_low/high and extraction.wall_hours_low/high."""
import json

import pytest

from planner import plan
from planner.catalog.profile import profile_file
from planner.catalog.stats import get_catalog
from planner.scenario import MixItem, Scenario
from tests.helpers import run_cli
from tests.unit.planner.catalog.test_sampling import known_corpus, turn_mean


@pytest.fixture()
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("PLANNER_HOME", str(tmp_path / "home"))
    return tmp_path


def _scenario(cid: str, rows: int, **kw) -> Scenario:
    # no cap and no batch padding: storage is then rows x mean tokens x 51,216 B + rows x 3,584 B of
    # file overhead (specforge-dflash on Qwen3.6-27B), so the band scales the token part exactly
    return Scenario(mix=[MixItem(id=cid, rows=rows)], max_seq_len="none", capture_batch_size=1, **kw)


def test_the_band_is_the_interval_scaled_through_the_plan(home):
    f = known_corpus(home / "k.jsonl", 4_000)
    r = profile_file(f, "smp", sample=400, seed=3)
    lo, hi = r.sampled["mean_tokens_ci"]
    mean = r.component["mean_tokens"]
    p = plan(_scenario("smp", 4_000), get_catalog())
    assert p.sampled_components == ["smp"]
    overhead = 4_000 * 3_584
    token_part = p.storage_bytes - overhead
    assert token_part == pytest.approx(4_000 * mean * 51_216, rel=1e-9)
    # low end: 4,000 x lo x 51,216 + the same overhead; high end likewise
    assert p.storage_bytes_low == pytest.approx(4_000 * lo * 51_216 + overhead, rel=1e-9)
    assert p.storage_bytes_high == pytest.approx(4_000 * hi * 51_216 + overhead, rel=1e-9)
    assert p.storage_bytes_low < p.storage_bytes < p.storage_bytes_high
    e = p.extraction
    assert e.sampled_wall_hours_low < e.wall_hours < e.sampled_wall_hours_high
    # the band to bet on widens the calibration band to the sampled ends (issue 22)
    assert e.wall_hours_low < e.sampled_wall_hours_low and e.wall_hours_high > e.sampled_wall_hours_high
    # exactly: the low end's calibration band low and the high end's calibration band high
    from planner.phases.compose import capture, in_force, resolve, stored
    sc = _scenario("smp", 4_000)
    res = resolve(sc, None)
    ends = [capture(sc, res, stored(sc, get_catalog(), res, in_force(sc, res.spec), i), None)[1] for i in (0, 1)]
    assert (e.sampled_wall_hours_low, e.sampled_wall_hours_high) == (ends[0].wall_hours, ends[1].wall_hours)
    assert (e.wall_hours_low, e.wall_hours_high) == (ends[0].calibrated_wall_hours_low,
                                                     ends[1].calibrated_wall_hours_high)
    # in the turn unit the per-turn interval applies (its own, not the conversation's)
    t = plan(_scenario("smp", 4_000, unit="turn"), get_catalog())
    tlo, thi = r.sampled["mean_turn_tokens_ci"]
    # (high - mid) / mid's token part = thi / the turn mean - 1 (the overhead of a row does not scale)
    ratio = (t.storage_bytes_high - t.storage_bytes) / (t.storage_bytes - t.samples * 3_584)
    assert ratio == pytest.approx(thi / turn_mean(r.component) - 1, rel=1e-6)
    assert (t.storage_bytes - t.storage_bytes_low) / (t.storage_bytes - t.samples * 3_584) == pytest.approx(
        1 - tlo / turn_mean(r.component), rel=1e-6)


def test_a_full_scan_has_no_band_and_the_json_says_so(home):
    f = known_corpus(home / "k.jsonl", 500)
    profile_file(f, "full")
    p = plan(_scenario("full", 500), get_catalog())
    # a full scan's lengths are exact: the storage band (issue 33) is a point, and no sampled band
    assert p.storage_bytes_low == p.storage_bytes == p.storage_bytes_high
    assert p.extraction.sampled_wall_hours_low is None and p.sampled_components == []
    profile_file(f, "smp", sample=100, seed=1)
    r = run_cli("estimate", "--components", "smp=500", "--max-seq-len", "none", "--capture-batch-size", "1", "--json",
                env={"PLANNER_HOME": str(home / "home")})
    assert r.returncode == 0, r.stderr
    d = json.loads(r.stdout)
    assert d["storage_bytes_low"] < d["storage_bytes"] < d["storage_bytes_high"]
    assert d["extraction"]["wall_hours_low"] < d["extraction"]["wall_hours"] < d["extraction"]["wall_hours_high"]
    assert d["sampled_components"] == ["smp"]


def _headline_of_sampled_mix():
    from drafter_dashboard.metrics import headline
    from planner import plan
    from planner.catalog.stats import get_catalog
    from planner.scenario import MixItem, Scenario
    p = plan(Scenario(mix=[MixItem(id="smp", rows=4_000)], max_seq_len="none", capture_batch_size=1), get_catalog())
    headline(p, None, "TB")


def test_the_dashboard_shows_the_band_as_a_plus_minus(home):
    from streamlit.testing.v1 import AppTest
    f = known_corpus(home / "k.jsonl", 4_000)
    profile_file(f, "smp", sample=400, seed=3)
    p = plan(_scenario("smp", 4_000), get_catalog())
    app = AppTest.from_function(_headline_of_sampled_mix, default_timeout=60)
    app.run()
    assert not app.exception, app.exception
    storage = next(m for m in app.metric if m.label.startswith("Storage (TB)"))
    half = (p.storage_bytes_high - p.storage_bytes_low) / 2 / 1e12
    assert storage.label == f"Storage (TB) ±{half:,.2f}"
    assert storage.value == f"{p.storage_bytes_compressed / 1e12:,.2f}"
    assert "95% band" in storage.help and "smp" in storage.help
    ex = next(m for m in app.metric if m.label.startswith("Extraction (days)"))
    e = p.extraction
    assert ex.label == f"Extraction (days) ±{(e.sampled_wall_hours_high - e.sampled_wall_hours_low) / 2 / 24:,.2f}"


def test_a_sampled_component_with_no_rows_makes_no_band(home):
    f = known_corpus(home / "k.jsonl", 500)
    profile_file(f, "smp", sample=100, seed=1)
    p = plan(Scenario(mix=[MixItem(id="smp", rows=0), MixItem(id="openorca", rows=1000)]), get_catalog())
    # no sampled band; the storage band is openorca's own (an estimated mean: storage_phase.length_band)
    assert p.sampled_components == [] and p.extraction.sampled_wall_hours_low is None
    assert p.storage_bytes_low < p.storage_bytes < p.storage_bytes_high


def test_trim_skips_the_band_inside_and_its_output_carries_it(home, monkeypatch):
    import planner.decisions.trim as trim_mod
    from planner.decisions.trim import Budget, trim
    f = known_corpus(home / "k.jsonl", 2_000)
    profile_file(f, "smp", sample=300, seed=2)
    s = _scenario("smp", 2_000)
    seen = []
    real = trim_mod.plan
    monkeypatch.setattr(trim_mod, "plan", lambda *a, **k: seen.append(k.get("band", True)) or real(*a, **k))
    full = plan(s, get_catalog())
    r = trim(s, Budget(storage_tb=full.storage_bytes_compressed / 2e12), "proportional", catalog=get_catalog())
    assert seen and not any(seen)          # none of trim's inner plans made the band
    monkeypatch.undo()
    assert sum(m.rows for m in r.scenario.mix) < 2_000
    out = run_cli("trim", "--components", "smp=2000", "--max-seq-len", "none", "--capture-batch-size", "1",
                  "--budget-storage-tb", f"{full.storage_bytes_compressed / 2e12:.6f}", "--out", str(home / "t.yaml"),
                  "--json", env={"PLANNER_HOME": str(home / "home")})
    assert out.returncode == 0, out.stderr
    d = json.loads(out.stdout)
    assert d["storage_bytes_low"] < d["storage_bytes"] < d["storage_bytes_high"]

"""What plan() keeps between calls (issue 23) is keyed by everything it depends on: a scenario
changed in place, or another catalog, is planned afresh, never from a kept result."""
from planner import plan
from planner.catalog.stats import get_catalog
from planner.scenario import default_scenario


def _fix(p) -> str:
    return next(f.fix for f in p.findings if f.code == "disk-capacity")


def test_the_lossless_fixes_follow_a_scenario_changed_in_place(monkeypatch):
    import importlib
    plan_module = importlib.import_module("planner.plan")
    cat = get_catalog()
    s = default_scenario()            # 82 TB on a 30.72 TB disk: the fixes are offered
    first = _fix(plan(s, cat))
    assert first.startswith("lossless first: a capture batch of 1: ")
    assert _fix(plan(s, cat)) == first           # asked again: the same text
    # another extraction price, set on the scenario's own sub-model: the fixes' offline USD move
    s.costs.extraction_usd_per_gpu_hour = 10.0
    changed = _fix(plan(s, cat))
    assert changed != first
    # worked out afresh, with nothing kept, it is the same text
    monkeypatch.setattr(plan_module, "_FIXES", type(plan_module._FIXES)(256))
    assert _fix(plan(s, cat)) == changed


def test_a_custom_gpu_changed_in_place_is_calibrated_afresh():
    # the calibration caches key the model and GPU by identity: a custom GPU edited in place after a
    # plan must not get the first plan's calibration (found by review: the distances stayed at the
    # H100 copy's). Reference: the same edit on a fresh scenario, planned with nothing shared.
    from planner.specs import gpu_presets
    s = default_scenario().with_changes(extraction_gpu="custom", custom_gpu=gpu_presets()["h100-sxm"].model_dump())
    cat = get_catalog()
    first = plan(s, cat).extraction.prefill_calibration
    s.custom_gpu.id = "b200"
    again = plan(s, cat).extraction.prefill_calibration
    fresh = plan(default_scenario().with_changes(extraction_gpu="custom", custom_gpu={
        **gpu_presets()["h100-sxm"].model_dump(), "id": "b200"}), cat).extraction.prefill_calibration
    assert again == fresh
    assert first != again          # the GPU's id moves the nearest row's distance (1.265 -> 0.0, by review)

"""What plan() keeps between calls (issue 23) is keyed by everything it depends on: a scenario
changed in place, or another catalog, is planned afresh, never from a kept result."""
from planner import plan
from planner.catalog.stats import get_catalog
from planner.scenario import default_scenario


def _fix(p) -> str:
    return next(f.fix for f in p.findings if f.code == "disk-capacity")


def test_the_lossless_fixes_follow_a_scenario_changed_in_place(monkeypatch):
    import importlib
    unblock = importlib.import_module("planner.decisions.unblock")      # the fixes are planned and kept there (issue 35)
    cat = get_catalog()
    s = default_scenario()            # 82 TB on a 30.72 TB disk: the fixes are offered
    first = _fix(plan(s, cat))
    assert first.startswith("lossless first: a capture batch of 1 on 2 extraction nodes (16 GPUs): ")
    assert _fix(plan(s, cat)) == first           # asked again: the same text
    # another extraction price, set on the scenario's own sub-model: the fixes' offline USD move
    s.costs.extraction_usd_per_gpu_hour = 10.0
    changed = _fix(plan(s, cat))
    assert changed != first
    # worked out afresh, with nothing kept, it is the same text
    monkeypatch.setattr(unblock, "_FIXES", type(unblock._FIXES)(256))
    assert _fix(plan(s, cat)) == changed


def test_a_custom_gpu_changed_in_place_is_calibrated_afresh():
    # the calibration caches key the model and GPU by identity: a custom GPU edited in place after a
    # plan must not get the first plan's calibration (found by review: the distances stayed at the
    # H100 copy's). Reference: the same edit on a fresh scenario, planned with nothing shared.
    from planner.presets.specs import gpu_presets
    s = default_scenario().with_changes(extraction_gpu="custom", custom_gpu=gpu_presets()["h100-sxm"].model_dump())
    cat = get_catalog()
    first = plan(s, cat).extraction.prefill_calibration
    s.custom_gpu.id = "b200"
    again = plan(s, cat).extraction.prefill_calibration
    fresh = plan(default_scenario().with_changes(extraction_gpu="custom", custom_gpu={
        **gpu_presets()["h100-sxm"].model_dump(), "id": "b200"}), cat).extraction.prefill_calibration
    assert again == fresh
    assert first != again          # the GPU's id moves the nearest row's distance (1.265 -> 0.0, by review)


def _cold():
    """Empty what plan() keeps between calls of the quality estimate (the reference tokens per catalog,
    the harness, the target-size term) and of the training rows (their sums per component and mix,
    the padding-free part) and the storage phase: the next plan works them out afresh."""
    import importlib
    from planner.phases import harness, quality
    importlib.import_module("planner.planning")._REFERENCE._kept.clear()
    importlib.import_module("planner.planning")._STORED._kept.clear()
    phases = importlib.import_module("planner.phases.compose")
    for kept in (phases._ROW_SUMS, phases._ROW_BASES, phases._MIX_ROW_SUMS):
        kept._kept.clear()
    for cached in (harness.resolve, quality.target_term, quality._preset_curves, quality._speedup_line):
        cached.cache_clear()


# An EAGLE-3 layout, whose reference run's components are in the catalog: the reference tokens are
# counted as the plan counts (its cap, unit, overflow and length scale). Each change is one of what
# the quality estimate's kept results are keyed by; the cap and unit are given, so that the layout
# change moves the overflow alone (modelopt-eagle3 skips over-long rows, specforge-eagle3 cuts them).
BASE = {"layout": "specforge-eagle3", "max_seq_len": 2048, "unit": "conversation"}
QUALITY_INPUTS = {
    "length_scale": {"length_scale": 1.3},
    "cap": {"max_seq_len": 1024},
    "unit": {"unit": "turn"},
    "overflow": {"layout": "modelopt-eagle3"},
    "drafter": {"layout": "specforge-dflash"},
    "target": {"model": "llama-3.1-8b"},
    "engine": {"quality": {"eval_engine": "sglang"}},
    "temperature": {"quality": {"temperature": 0.7}},
    "k": {"quality": {"num_speculative_tokens": 6}},
}


def test_a_plan_after_another_is_the_plan_worked_out_afresh():
    """Each change planned right after the base (whose kept results are then in place) is the same
    plan, to the byte, as the change planned with nothing kept; and each change moves the quality
    estimate (so a kept result that missed it would show)."""
    _warm_is_cold(default_scenario().with_changes(**BASE), QUALITY_INPUTS, lambda p: p.quality.model_dump_json())


def _warm_is_cold(base, changes: dict, figure) -> None:
    """Each change, planned right after `base`, is the plan of it worked out with nothing kept, to the
    byte; and it moves `figure` of the plan (so a kept result that missed it would show)."""
    cat = get_catalog()
    before = figure(plan(base, cat))
    for name, change in changes.items():
        s = base.with_changes(**change)
        plan(base, cat)
        warm = plan(s, cat).model_dump_json()
        _cold()
        cold = plan(s, cat)
        assert warm == cold.model_dump_json(), name
        assert figure(cold) != before, name


ROW_INPUTS = {   # what the training rows' kept sums are keyed by: anchors, rows, padding, the window
    "anchors": {"training": {"num_anchors": 64}},
    "rows": {"mix": [{"id": "openorca", "rows": 1000}, {"id": "sharegpt", "rows": 777}]},
    "padding": {"capture_batch_size": 3},
    "eagle3": {"layout": "specforge-eagle3"},
}


def test_the_training_rows_after_another_plan_are_worked_out_afresh():
    _warm_is_cold(default_scenario(), ROW_INPUTS, lambda p: p.training.flops_per_epoch)


MIX = [{"id": "openorca", "rows": 1000}, {"id": "sharegpt", "rows": 777}, {"id": "ultrachat", "rows": 500}]
UNIFORM = {"samples": 1000, "tokens": 800, "response_tokens": 300, "turns": 1}
STORAGE_INPUTS = {   # what the kept storage phase is keyed by, from a base with a mix of its own
    "rows": {"mix": [dict(MIX[0], rows=1001), *MIX[1:]]},
    "include": {"mix": [dict(MIX[0], include=False), *MIX[1:]]},
    "selection": {"mix": [dict(MIX[0], selection="shortest"), *MIX[1:]]},
    "uniform": {"mix": None, "uniform": UNIFORM},
    "regenerate": {"regenerate": False},
    "multiplier": {"response_multiplier": 1.5},
    "length_scale": {"length_scale": 0.8},
    "compression": {"compression": 1.3},
    "bytes": {"hidden_dtype": "fp8"},
    "layers": {"layer_count": 3},
    "model": {"model": "qwen3-8b"},
    "in_force": {"capture_batch_size": 5},
    "spec": {"layout": "specforge-eagle3"},
}


def test_the_storage_phase_after_another_plan_is_worked_out_afresh():
    _warm_is_cold(default_scenario().with_changes(mix=MIX), STORAGE_INPUTS,
                  lambda p: (p.storage_bytes_compressed, p.output_tokens, p.files))
    # the uniform mix's own fields (one row per turn, so that the turns count)
    uniform = {f: {"uniform": {**UNIFORM, f: v}} for f, v in
               (("samples", 999), ("tokens", 801.0), ("response_tokens", 301.0), ("turns", 2))}
    _warm_is_cold(default_scenario().with_changes(uniform=UNIFORM, unit="turn"), uniform,
                  lambda p: (p.storage_bytes_compressed, p.output_tokens, p.files))

"""The headline metrics take their label, getter and delta colour from planner/decisions/headlines.py (issue 19)."""
from types import SimpleNamespace

from drafter_dashboard.metrics import _item
from planner.decisions.headlines import HEADLINES
from planner.units import TiB


def _plan(**kw):
    return SimpleNamespace(**kw)


def test_a_storage_metric_is_the_headlines_bytes_in_the_pages_unit_and_lower_is_better():
    label, fmt, _, get, colour = _item(HEADLINES["storage"], str, "", None, " ±0.10", div=TiB, unit="TiB")
    assert label == "Storage (TiB) ±0.10"
    # 2^41 bytes on disk = 2 TiB (not 2.2, the TB figure)
    assert get(_plan(storage_bytes_compressed=2 * 2**40)) == 2.0
    assert colour == "inverse"                   # a rise in storage is shown red


def test_counts_show_no_unit_and_tau_rises_green():
    assert _item(HEADLINES["samples"], str, "", None, div=1e12, unit="TB")[0] == "Samples"
    label, _, _, get, colour = _item(HEADLINES["acceptance_length"], str, "", "vllm K=3 T=0", div=1e12, unit="TB")
    assert label == "Acceptance length (vllm K=3 T=0)" and colour == "normal"
    assert get(_plan(quality=_plan(acceptance_length=3.25))) == 3.25     # not scaled: tau is not bytes


def test_a_speedup_below_one_is_named_a_slowdown():
    label = _item(HEADLINES["speedup"], str, "", "batch 32, below 1x", div=1e12, unit="TB", name="Slowdown")[0]
    assert label == "Slowdown (batch 32, below 1x)"


def test_a_layout_switch_that_changes_the_drafter_kind_says_tau_is_not_like_for_like():
    # issue 35: specforge-dflash (DFlash, vllm K=15) -> specforge-eagle3 (EAGLE-3, vllm K=3): 3.16 -> 2.66
    # read as a loss; a change that keeps the kind and the harness (8 -> 16 GPUs) compares as before
    from drafter_dashboard.metrics import not_like_for_like
    from planner import default_scenario, plan
    dflash = plan(default_scenario())
    eagle = plan(default_scenario().with_changes(layout="specforge-eagle3"))
    why = not_like_for_like(eagle, dflash)
    assert why.startswith(f"τ {dflash.quality.acceptance_length:.2f} -> {eagle.quality.acceptance_length:.2f} is not "
                          "like for like")
    assert "the drafter kind (DFlash -> EAGLE-3)" in why and "(vllm K=15 T=0 -> vllm K=3 T=0)" in why
    assert not_like_for_like(plan(default_scenario().with_changes(extraction_gpus=16)), dflash) == ""
    assert not_like_for_like(dflash, None) == ""


def test_compare_rounds_as_the_headline():
    # Compare's table showed extraction GPU-days to 1 decimal (10.6) beside the headline's 10.64 (issue 35)
    from drafter_dashboard.compare import DECIMALS
    assert DECIMALS["GPU-days"] == 2 and DECIMALS["USD"] == 0 and DECIMALS["h"] == 1 and DECIMALS["TB"] == 2


def test_a_tabs_error_hides_the_notice_of_the_run_before():
    # a tab reruns alone (a fragment): its error comes with a page-wide rule hiding the notice's container
    from streamlit.testing.v1 import AppTest

    def page():
        from drafter_dashboard import notices
        notices.show("success", "Imported plan.yaml")
        notices.error("Manifest not imported: *x*")
    at = AppTest.from_function(page).run()
    assert [s.value for s in at.success] == ["Imported plan\\.yaml"]
    assert [e.value.replace("\u200b", "") for e in at.error] == ["Manifest not imported\\: \\*x\\*"]   # escaped
    from drafter_dashboard.notices import HIDE_NOTICE, KEY
    assert f".st-key-{KEY}" in HIDE_NOTICE and any(HIDE_NOTICE in h.proto.body for h in at.get("html"))

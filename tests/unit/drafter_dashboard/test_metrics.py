"""The headline metrics take their label, getter and delta colour from planner/headlines.py (issue 19)."""
from types import SimpleNamespace

from drafter_dashboard.metrics import _item
from planner.headlines import HEADLINES
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
